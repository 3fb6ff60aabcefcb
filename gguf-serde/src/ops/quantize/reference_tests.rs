//! The rules against llama-quantize itself: `tests/data/quantize-plans.json` holds, for small
//! synthetic models (metadata and tensor shapes only; see `tests/py/make_quantize_plans.py`,
//! which writes each with gguf-py and records `llama-quantize --dry-run` for every file type,
//! plain, with `--pure` or with some of its type options and `--override-kv`),
//! the type llama-quantize gives each tensor, in its output order, whether it warns that a real
//! run needs an importance matrix, and how many tensors it says fell back. Each model is rebuilt here
//! byte by byte (F32 tensors, zero data) and planned for every file type.
//!
//! A unit test rather than one of `tests/suite`, so that a mutation run of the rules
//! (`TESTING.md`) needs only the library's test build.

use gguf_test_support::{gt, ty, B};
use serde_json::Value;

use super::{plan_file_type, QuantizeParams, Rule, TensorTypeOverride};
use crate::container::Gguf;
use crate::ops::file_type::LlamaFileType;
use crate::ops::kv_override::KvOverride;

const PLANS: &str = include_str!("../../../tests/data/quantize-plans.json");

/// A little-endian GGUF v3 file with `metadata` (`{key: [type, value]}`, types `u32`, `f32`,
/// `str`) and F32 tensors of the given `ne` (fastest first), data zeros, alignment 32.
fn model_file(arch: &str, metadata: &serde_json::Map<String, Value>, tensors: &[(String, Vec<u64>)]) -> Vec<u8> {
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
    for (name, ne) in tensors {
        b.tensor(name, ne, gt::F32, offset);
        offset += (ne.iter().product::<u64>() * 4).next_multiple_of(32);
    }
    b.pad(32);
    let mut bytes = b.bytes();
    bytes.resize(bytes.len() + offset as usize, 0);
    bytes
}

/// llama-quantize's type options `args` (`--output-tensor-type T`, `--token-embedding-type T`,
/// `--tensor-type PATTERN=T`, `--leave-output-tensor`) and `--override-kv KEY=TYPE:VALUE` into `p`.
fn apply_options(p: &mut QuantizeParams, args: &Value) {
    let args: Vec<&str> = args.as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a {
            "--leave-output-tensor" => p.leave_output_tensor = true,
            "--output-tensor-type" => p.output_tensor_type = Some(it.next().unwrap().parse().unwrap()),
            "--token-embedding-type" => p.token_embedding_type = Some(it.next().unwrap().parse().unwrap()),
            "--tensor-type" => p.tensor_types.push(TensorTypeOverride::parse(it.next().unwrap()).unwrap()),
            "--override-kv" => p.kv_overrides.push(KvOverride::parse(it.next().unwrap()).unwrap()),
            other => panic!("option {other}"),
        }
    }
}

#[test]
fn plans_equal_llama_quantizes_dry_runs() {
    let refs: Value = serde_json::from_str(PLANS).unwrap();
    let mut compared = 0;
    for m in refs["models"].as_array().unwrap() {
        let name = m["name"].as_str().unwrap();
        let tensors: Vec<(String, Vec<u64>)> = m["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let ne = t[1].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
                (t[0].as_str().unwrap().to_owned(), ne)
            })
            .collect();
        let file =
            Gguf::from_vec(model_file(m["arch"].as_str().unwrap(), m["metadata"].as_object().unwrap(), &tensors))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let order: Vec<&[u8]> = m["order"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().as_bytes()).collect();
        for (key, want) in m["plans"].as_object().unwrap() {
            let (ft, variant) = key.split_once('/').unwrap_or((key, ""));
            let mut p = QuantizeParams::new(ft.parse::<LlamaFileType>().unwrap());
            if variant == "pure" {
                p.pure = true;
            } else if !variant.is_empty() {
                apply_options(&mut p, &m["options"][variant]);
            }
            let ours = plan_file_type(&file, &p);
            let Some(want) = want.as_str() else {
                assert!(ours.is_err(), "{name} {key}: llama-quantize fails, we do not");
                continue;
            };
            let ours = ours.unwrap_or_else(|e| panic!("{name} {key}: we fail ({e}), llama-quantize does not"));
            let names: Vec<&[u8]> = ours.iter().map(|t| t.name.as_slice()).collect();
            assert_eq!(names, order, "{name} {key}: tensor order");
            for (t, want) in ours.iter().zip(want.split(' ')) {
                let shown = crate::GgufStr::from(&t.name);
                assert_eq!(t.target.name(), want, "{name} {key}: {shown} ({})", t.rule);
                // Every source tensor is F32: llama-quantize converts those it gives another type.
                assert_eq!(t.converts(), want != "F32", "{name} {key}: {shown} converts");
            }
            assert_eq!(ours.len(), want.split(' ').count(), "{name} {key}");
            // llama-quantize's closing warnings: a real run needs an importance matrix; N
            // tensors fell back.
            let needs_imatrix = ours.iter().any(|t| t.requires_imatrix);
            assert_eq!(Value::Bool(needs_imatrix), m["requires_imatrix"][key], "{name} {key}: requires imatrix");
            let fallbacks = ours.iter().filter(|t| matches!(t.rule, Rule::Fallback { .. })).count();
            assert_eq!(Some(fallbacks as u64), m["fallbacks"][key].as_u64(), "{name} {key}: fallbacks");
            compared += 1;
        }
    }
    assert!(compared >= 7 * 35, "only {compared} plans compared");
}
