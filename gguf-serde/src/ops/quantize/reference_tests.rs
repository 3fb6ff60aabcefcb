//! The rules against llama-quantize itself: `tests/data/quantize-plans.json` holds, for small
//! synthetic models (metadata and tensor shapes only; see `tests/py/make_quantize_plans.py`,
//! which writes each with gguf-py and records `llama-quantize --dry-run` for every file type,
//! plain, with `--pure` or with some of its type options, `--override-kv` and `--imatrix`),
//! the type llama-quantize gives each tensor, in its output order, whether it warns that a real
//! run needs an importance matrix, and how many tensors it says fell back; the
//! `general.file_type` its `COPY` writes; and the plans of a model split by `llama-gguf-split`.
//! Each model is rebuilt here byte by byte (F32 or F16 tensors, zero data) and planned for every
//! file type.
//!
//! A unit test rather than one of `tests/suite`, so that a mutation run of the rules
//! (`TESTING.md`) needs only the library's test build.

use std::collections::BTreeMap;
use std::sync::Arc;

use gguf_test_support::{gt, ty, B};
use serde_json::Value;

use super::{
    plan_file_type, plan_file_type_sharded, source_file_type, QuantizeParams, Rule, TensorPlan, TensorTypeOverride,
};
use crate::container::{Gguf, ShardedGguf};
use crate::ops::file_type::LlamaFileType;
use crate::ops::imatrix::{Imatrix, ImatrixFormat};
use crate::ops::kv_override::KvOverride;
use crate::ops::split::{split_file, SplitBy, SplitOptions};

const PLANS: &str = include_str!("../../../tests/data/quantize-plans.json");

/// A tensor of a model: name, `ne` (fastest first), F16 (else F32).
type Tensor = (String, Vec<u64>, bool);

/// A little-endian GGUF v3 file with `metadata` (`{key: [type, value]}`, types `u32`, `f32`,
/// `str`) and F32 or F16 tensors of the given `ne` (fastest first), data zeros, alignment 32.
fn model_file(arch: &str, metadata: &serde_json::Map<String, Value>, tensors: &[Tensor]) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, tensors.len() as u64, metadata.len() as u64 + 1);
    b.kv("general.architecture", ty::STRING).str(arch);
    for (k, v) in metadata {
        match (v[0].as_str().unwrap(), &v[1]) {
            ("u32", v) => b.kv(k, ty::U32).u32(v.as_u64().unwrap() as u32),
            ("f32", v) => b.kv(k, ty::F32).f32(v.as_f64().unwrap() as f32),
            ("str", v) => b.kv(k, ty::STRING).str(v.as_str().unwrap()),
            (t, _) => panic!("metadata type {t}"),
        };
    }
    let mut offset = 0u64;
    for (name, ne, f16) in tensors {
        let (dtype, size) = if *f16 { (gt::F16, 2) } else { (gt::F32, 4) };
        b.tensor(name, ne, dtype, offset);
        offset += (ne.iter().product::<u64>() * size).next_multiple_of(32);
    }
    b.pad(32);
    let mut bytes = b.bytes();
    bytes.resize(bytes.len() + offset as usize, 0);
    bytes
}

/// The models of the data.
fn reference_models() -> Vec<Value> {
    let refs: Value = serde_json::from_str(PLANS).unwrap();
    refs["models"].as_array().unwrap().clone()
}

/// The model `m` of the data, rebuilt, and its tensors.
fn model(m: &Value) -> (Vec<u8>, Vec<Tensor>) {
    let tensors: Vec<Tensor> = m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let ne = t[1].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
            (t[0].as_str().unwrap().to_owned(), ne, t.get(2).is_some_and(|ty| ty == "F16"))
        })
        .collect();
    (model_file(m["arch"].as_str().unwrap(), m["metadata"].as_object().unwrap(), &tensors), tensors)
}

/// The importance matrix the script wrote for `m` (`m["imatrix"]`: one entry of ones per name,
/// of its row length), as llama-quantize loads it.
fn imatrix(m: &Value) -> Imatrix {
    let entries: BTreeMap<Vec<u8>, Vec<f32>> = m["imatrix"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, n)| (name.as_bytes().to_vec(), vec![1.0; n.as_u64().unwrap() as usize]))
        .collect();
    assert!(!entries.is_empty());
    Imatrix {
        file: "imatrix.gguf".into(),
        entries,
        datasets: vec!["synthetic".into()],
        chunk_count: 1,
        chunk_size: 512,
        format: ImatrixFormat::Gguf,
    }
}

/// llama-quantize's type options `args` (`--output-tensor-type T`, `--token-embedding-type T`,
/// `--tensor-type PATTERN=T`, `--leave-output-tensor`), `--override-kv KEY=TYPE:VALUE` and
/// `--imatrix FILE` (the importance matrix of model `m`) into `p`.
fn apply_options(p: &mut QuantizeParams, args: &Value, m: &Value) {
    let args: Vec<&str> = args.as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a {
            "--leave-output-tensor" => p.leave_output_tensor = true,
            "--output-tensor-type" => p.output_tensor_type = Some(it.next().unwrap().parse().unwrap()),
            "--token-embedding-type" => p.token_embedding_type = Some(it.next().unwrap().parse().unwrap()),
            "--tensor-type" => p.tensor_types.push(TensorTypeOverride::parse(it.next().unwrap()).unwrap()),
            "--override-kv" => p.kv_overrides.push(KvOverride::parse(it.next().unwrap()).unwrap()),
            "--imatrix" => {
                assert_eq!(it.next(), Some("IMATRIX"));
                p.imatrix = Some(Arc::new(imatrix(m)));
            }
            other => panic!("option {other}"),
        }
    }
}

/// Our plan `ours` against llama-quantize's: `want`, its types in its output `order`, or null
/// where it failed. The plan, where both made one.
fn check_plan(
    what: &str,
    ours: crate::Result<Vec<TensorPlan>>,
    want: &Value,
    order: &Value,
) -> Option<Vec<TensorPlan>> {
    let Some(want) = want.as_str() else {
        assert!(ours.is_err(), "{what}: llama-quantize fails, we do not");
        return None;
    };
    let ours = ours.unwrap_or_else(|e| panic!("{what}: we fail ({e}), llama-quantize does not"));
    let names: Vec<&[u8]> = ours.iter().map(|t| t.name.as_slice()).collect();
    let order: Vec<&[u8]> = order.as_array().unwrap().iter().map(|n| n.as_str().unwrap().as_bytes()).collect();
    assert_eq!(names, order, "{what}: tensor order");
    let types: Vec<&str> = ours.iter().map(|t| t.target.name()).collect();
    let rules: Vec<String> = ours.iter().map(|t| t.rule.to_string()).collect();
    assert_eq!(types, want.split(' ').collect::<Vec<_>>(), "{what} (our rules: {rules:?})");
    Some(ours)
}

#[test]
fn plans_equal_llama_quantizes_dry_runs() {
    let mut compared = 0;
    for m in &reference_models() {
        let name = m["name"].as_str().unwrap();
        let (bytes, tensors) = model(m);
        let file = Gguf::from_vec(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let sources: BTreeMap<&str, &str> =
            tensors.iter().map(|(n, _, f16)| (n.as_str(), if *f16 { "F16" } else { "F32" })).collect();
        for (key, want) in m["plans"].as_object().unwrap() {
            let (ft, variant) = key.split_once('/').unwrap_or((key, ""));
            let mut p = QuantizeParams::new(ft.parse::<LlamaFileType>().unwrap());
            if variant == "pure" {
                p.pure = true;
            } else if !variant.is_empty() {
                apply_options(&mut p, &m["options"][variant], m);
            }
            let Some(ours) = check_plan(&format!("{name} {key}"), plan_file_type(&file, &p), want, &m["order"]) else {
                continue;
            };
            for (t, want) in ours.iter().zip(want.as_str().unwrap().split(' ')) {
                // llama-quantize converts the tensors it gives another type than the file's.
                assert_eq!(
                    t.converts(),
                    want != sources[std::str::from_utf8(&t.name).unwrap()],
                    "{name} {key}: {} converts",
                    crate::GgufStr::from(&t.name)
                );
            }
            // The rule reported: the file type's default type is `Default` (llama-quantize gave
            // the tensor that type), a mix rule changed it (another type).
            let default = p.ftype.default_type();
            for t in &ours {
                let shown = crate::GgufStr::from(&t.name);
                match &t.rule {
                    Rule::Default => assert_eq!(t.target, default, "{name} {key}: {shown} by {}", t.rule),
                    Rule::Mix(_) => assert_ne!(t.target, default, "{name} {key}: {shown} by {}", t.rule),
                    _ => {}
                }
            }
            // llama-quantize's closing warnings: a real run needs an importance matrix (given
            // none); N tensors fell back.
            let needs_imatrix = ours.iter().any(|t| t.requires_imatrix) && p.active_imatrix().is_none();
            assert_eq!(Value::Bool(needs_imatrix), m["requires_imatrix"][key], "{name} {key}: requires imatrix");
            let fallbacks = ours.iter().filter(|t| matches!(t.rule, Rule::Fallback { .. })).count();
            assert_eq!(Some(fallbacks as u64), m["fallbacks"][key].as_u64(), "{name} {key}: fallbacks");
            compared += 1;
        }
    }
    assert!(compared >= 7 * 35, "only {compared} plans compared");
}

#[test]
fn copy_keeps_the_file_type_llama_cpp_reads() {
    // `llama-quantize MODEL OUT COPY` writes the loader's file type: `general.file_type` (or an
    // `--override-kv` of it), else the type of most tensors (the first to reach that count in
    // its order) with bit 1024 set.
    let mut compared = 0;
    for m in &reference_models() {
        let name = m["name"].as_str().unwrap();
        let file = Gguf::from_vec(model(m).0).unwrap();
        for (variant, want) in m["copy_file_type"].as_object().unwrap() {
            let mut p = QuantizeParams::new(LlamaFileType::F32);
            if !variant.is_empty() {
                apply_options(&mut p, &m["copy_options"][variant], m);
            }
            assert_eq!(Some(u64::from(source_file_type(&file, &p.kv_overrides))), want.as_u64(), "{name} {variant}");
            compared += 1;
        }
    }
    assert!(compared >= 15, "only {compared} compared");
}

#[test]
fn split_plans_equal_llama_quantizes() {
    // The model split as `llama-gguf-split --split-max-tensors N` splits it, planned from its
    // shards: by layer as unsplit, or with `--keep-split` shard by shard in file order.
    let dir = gguf_test_support::temp_dir();
    let mut compared = 0;
    for m in reference_models().iter().filter(|m| m.get("split").is_some()) {
        let name = m["name"].as_str().unwrap();
        let split = &m["split"];
        let input = dir.path().join(format!("{name}.gguf"));
        std::fs::write(&input, model(m).0).unwrap();
        let n = split["max_tensors"].as_u64().unwrap() as usize;
        let shards = split_file(&input, dir.path().join(name), &SplitOptions::new(SplitBy::MaxTensors(n))).unwrap();
        assert!(shards.len() > 1, "{name}: {} shards", shards.len());
        let sharded = ShardedGguf::open(&shards[0]).unwrap();
        for (key, want) in split["plans"].as_object().unwrap() {
            let (ft, keep_split) = match key.split_once('/') {
                Some((ft, "keep-split")) => (ft, true),
                None => (key.as_str(), false),
                _ => panic!("{key}"),
            };
            let mut p = QuantizeParams::new(ft.parse::<LlamaFileType>().unwrap());
            p.keep_split = keep_split;
            let order = &split[if keep_split { "keep_split_order" } else { "order" }];
            if check_plan(&format!("{name} split {key}"), plan_file_type_sharded(&sharded, &p), want, order).is_some() {
                compared += 1;
            }
        }
    }
    assert!(compared >= 60, "only {compared} plans compared");
}

/// A tensor name is read up to its first NUL byte, as llama.cpp reads it (a C string): the model
/// `llama16` with `\0junk` after two of its names plans as llama-quantize planned the model
/// itself, under the cut names; two names equal up to a NUL are refused, as llama-quantize
/// refuses them (`invalid model: tensor 'x.weight' is duplicated`, the CLI's interop test
/// `not_utf8` runs both).
#[test]
fn names_are_read_up_to_a_nul_byte_as_llama_quantize_reads_them() {
    let models = reference_models();
    let m = models.iter().find(|m| m["name"] == "llama16").unwrap();
    let (_, mut tensors) = model(m);
    for t in tensors.iter_mut().filter(|t| t.0 == "blk.0.attn_v.weight" || t.0 == "output.weight") {
        t.0.push_str("\0junk");
    }
    let file = model_file("llama", m["metadata"].as_object().unwrap(), &tensors);
    let file = Gguf::from_vec(file).unwrap();
    for ft in ["Q4_K_M", "Q2_K", "IQ3_XS"] {
        let p = QuantizeParams::new(ft.parse::<LlamaFileType>().unwrap());
        check_plan(&format!("llama16 with NUL bytes {ft}"), plan_file_type(&file, &p), &m["plans"][ft], &m["order"])
            .unwrap();
    }

    let (_, mut tensors) = model(m);
    tensors[0].0 = "x.weight\0a".into();
    tensors[1].0 = "x.weight\0b".into();
    let file = Gguf::from_vec(model_file("llama", m["metadata"].as_object().unwrap(), &tensors)).unwrap();
    let e = plan_file_type(&file, &QuantizeParams::new(LlamaFileType::Q4_0)).unwrap_err();
    assert!(e.to_string().contains(r#"two tensors are named "x.weight" up to a NUL byte"#), "{e}");
}

/// A `--tensor-type` rule read from a `--tensor-type-file` is reported with the file and line it
/// came from (the plan's rule column; ours), and chooses as the same rule given alone.
#[test]
fn a_rule_read_from_a_file_is_reported_with_its_file_and_line() {
    use super::rules::Override;
    let models = reference_models();
    let m = models.iter().find(|m| m["name"] == "llama16").unwrap();
    let file = Gguf::from_vec(model(m).0).unwrap();
    let mut alone = QuantizeParams::new(LlamaFileType::Q4_K_M);
    alone.tensor_types.push(TensorTypeOverride::parse("attn_v=q8_0").unwrap());
    let mut read = alone.clone();
    read.tensor_types = vec![TensorTypeOverride::parse("attn_v=q8_0").unwrap().read_from("types.txt", 3)];
    let (alone, read) = (plan_file_type(&file, &alone).unwrap(), plan_file_type(&file, &read).unwrap());
    let mut overridden = 0;
    for (a, r) in alone.iter().zip(&read) {
        assert_eq!((&a.name, a.target), (&r.name, r.target));
        if a.rule == Rule::Override(Override::TensorType("attn_v".into())) {
            overridden += 1;
            assert_eq!(a.target, crate::GgmlType::Q8_0);
            let want = Override::TensorTypeFile { pattern: "attn_v".into(), file: "types.txt".into(), line: 3 };
            assert_eq!(r.rule, Rule::Override(want));
        } else {
            assert_eq!(a.rule, r.rule);
        }
    }
    assert_eq!(overridden, 16);
}
