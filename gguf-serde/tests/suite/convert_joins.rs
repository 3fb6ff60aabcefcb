//! The converter's tensor model (cargo feature `convert`): experts stacked into one tensor per
//! layer (`Mapped::Part`, as the reference's `torch.stack`), fused tensors split
//! (`Mapped::Split` with `Transform::Slice`, as its `data[..., a:b, :]`), concatenations
//! (`torch.cat`) and an architecture's own row transforms, written a chunk at a time. The
//! expected bytes are made here from the source values by the operation's definition (numpy's
//! semantics, written out), never by the converter.
#![cfg(feature = "convert")]

use std::path::Path;

use gguf_serde::convert::arch::{ArchContext, Architecture};
use gguf_serde::convert::{
    convert_with, plan, plan_with, Checkpoint, ConvertError, ConvertOptions, Join, Kvs, Mapped, OutType, RowFn,
    RowTransform, Target, Transform,
};
use gguf_serde::{GgmlType, Gguf, Value};

use crate::common::temp_dir;

/// Writes a safetensors file of F32 tensors (the format: an 8-byte little-endian header length,
/// the JSON header, the data).
fn write_safetensors(path: &Path, tensors: &[(&str, Vec<u64>, Vec<f32>)]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let start = data.len();
        for v in values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        header.insert(
            (*name).to_owned(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut h = serde_json::to_vec(&serde_json::Value::Object(header)).unwrap();
    while !h.len().is_multiple_of(8) {
        h.push(b' ');
    }
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    std::fs::write(path, out).unwrap();
}

/// Distinct values for tensor number `seed`.
fn values(seed: u32, n: u64) -> Vec<f32> {
    (0..n).map(|i| seed as f32 * 1000.0 + i as f32 * 0.25 - 3.0).collect()
}

const H: u64 = 32;
const FF: u64 = 64;
const EXPERTS: u64 = 3;

/// A Mixtral-style checkpoint of one layer: `EXPERTS` experts, 2 used.
fn mixtral(dir: &Path, leave_out: Option<&str>) -> Vec<(String, Vec<u64>, Vec<f32>)> {
    let config = serde_json::json!({
        "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": H,
        "intermediate_size": FF, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
        "num_local_experts": EXPERTS, "num_experts_per_tok": 2, "vocab_size": 40, "rms_norm_eps": 1e-5,
        "max_position_embeddings": 128, "rope_theta": 1e6, "head_dim": 8,
    });
    std::fs::write(dir.join("config.json"), serde_json::to_vec(&config).unwrap()).unwrap();
    let mut t: Vec<(String, Vec<u64>, Vec<f32>)> = Vec::new();
    let mut add = |name: &str, shape: Vec<u64>| {
        let n = shape.iter().product();
        let seed = t.len() as u32;
        t.push((name.to_owned(), shape, values(seed, n)));
    };
    add("model.embed_tokens.weight", vec![40, H]);
    add("model.norm.weight", vec![H]);
    add("lm_head.weight", vec![40, H]);
    let p = "model.layers.0.";
    add(&format!("{p}input_layernorm.weight"), vec![H]);
    add(&format!("{p}post_attention_layernorm.weight"), vec![H]);
    add(&format!("{p}self_attn.q_proj.weight"), vec![32, H]);
    add(&format!("{p}self_attn.k_proj.weight"), vec![16, H]);
    add(&format!("{p}self_attn.v_proj.weight"), vec![16, H]);
    add(&format!("{p}self_attn.o_proj.weight"), vec![H, 32]);
    add(&format!("{p}block_sparse_moe.gate.weight"), vec![EXPERTS, H]);
    for x in 0..EXPERTS {
        add(&format!("{p}block_sparse_moe.experts.{x}.w1.weight"), vec![FF, H]);
        add(&format!("{p}block_sparse_moe.experts.{x}.w2.weight"), vec![H, FF]);
        add(&format!("{p}block_sparse_moe.experts.{x}.w3.weight"), vec![FF, H]);
    }
    t.retain(|(n, _, _)| Some(n.as_str()) != leave_out);
    let refs: Vec<(&str, Vec<u64>, Vec<f32>)> = t.iter().map(|(n, s, v)| (n.as_str(), s.clone(), v.clone())).collect();
    write_safetensors(&dir.join("model.safetensors"), &refs);
    t
}

fn source<'t>(t: &'t [(String, Vec<u64>, Vec<f32>)], name: &str) -> &'t [f32] {
    &t.iter().find(|(n, _, _)| n == name).unwrap().2
}

fn no_vocab(outtype: OutType) -> ConvertOptions<'static> {
    let mut o = ConvertOptions::new(outtype);
    o.vocab = false;
    o
}

fn f32_data(g: &Gguf<memmap2::Mmap>, name: &str) -> Vec<f32> {
    let t = g.tensor(name).unwrap();
    assert_eq!(t.dtype, GgmlType::F32, "{name}");
    g.tensor_data_by_name(name).unwrap().chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
}

#[test]
fn experts_are_stacked_in_expert_order_a_chunk_at_a_time() {
    let dir = temp_dir();
    let t = mixtral(dir.path(), None);
    let out = dir.path().join("out.gguf");
    let mut opts = no_vocab(OutType::F32);
    // chunks of one row of 32: every expert is many chunks, written into its place
    opts.chunk_elems = 32;
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let arch = gguf_serde::convert::arch::builtin("MixtralForCausalLM").unwrap();
    let planned = plan_with(&ckpt, arch, &opts).unwrap();
    let names: Vec<&str> = planned.tensors.iter().map(|t| t.name.as_str()).collect();
    // the stacks come where the reference yields them: after the last expert tensor of the layer,
    // gate (w1), down (w2), up (w3); the router is F32 whatever the output type
    let first_stack = names.iter().position(|n| n.ends_with("_exps.weight")).unwrap();
    assert_eq!(
        &names[first_stack..first_stack + 3],
        ["blk.0.ffn_gate_exps.weight", "blk.0.ffn_down_exps.weight", "blk.0.ffn_up_exps.weight"]
    );
    assert_eq!(planned.params.expert_count, EXPERTS);
    drop(planned);
    convert_with(dir.path(), &out, arch, &opts).unwrap();
    let g = Gguf::open(&out).unwrap();
    for (w, gguf, shape) in [
        ("w1", "ffn_gate_exps", [EXPERTS, FF, H]),
        ("w2", "ffn_down_exps", [EXPERTS, H, FF]),
        ("w3", "ffn_up_exps", [EXPERTS, FF, H]),
    ] {
        let name = format!("blk.0.{gguf}.weight");
        assert_eq!(g.tensor(&name).unwrap().shape.dims(), shape.as_slice(), "{name}");
        let want: Vec<f32> = (0..EXPERTS)
            .flat_map(|x| source(&t, &format!("model.layers.0.block_sparse_moe.experts.{x}.{w}.weight")).to_vec())
            .collect();
        assert_eq!(f32_data(&g, &name), want, "{name}");
    }
    assert_eq!(g.tensor("blk.0.ffn_gate_inp.weight").unwrap().dtype, GgmlType::F32);
    assert_eq!(g.get("llama.expert_count").and_then(|v| v.as_u64()), Some(EXPERTS));
}

#[test]
fn a_layers_stacks_come_together_when_its_experts_straddle_two_files() {
    // The reference stacks a layer's experts once all 3 * n_expert of them have come
    // (LlamaModel.modify_tensors), then yields w1, w2, w3. Here every w1 is in the first file and
    // the rest in the second (files in name order, names sorted within a file), so the gate stack
    // is complete long before the others: it must still come with them, after the layer's last
    // expert tensor (experts.2.w3), before the router and the norms of the second file.
    let dir = temp_dir();
    let t = mixtral(dir.path(), None);
    std::fs::remove_file(dir.path().join("model.safetensors")).unwrap();
    let first = |n: &str| n == "model.embed_tokens.weight" || n.ends_with(".w1.weight");
    let (a, b): (Vec<_>, Vec<_>) = t.iter().partition(|(n, _, _)| first(n));
    let files = [("model-00001-of-00002.safetensors", a), ("model-00002-of-00002.safetensors", b)];
    let mut map = serde_json::Map::new();
    for (file, tensors) in &files {
        let refs: Vec<(&str, Vec<u64>, Vec<f32>)> =
            tensors.iter().map(|(n, s, v)| (n.as_str(), s.clone(), v.clone())).collect();
        write_safetensors(&dir.path().join(file), &refs);
        for (n, _, _) in tensors {
            map.insert(n.clone(), serde_json::Value::String((*file).to_owned()));
        }
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(dir.path().join("model.safetensors.index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let planned = plan(&ckpt, &no_vocab(OutType::F16)).unwrap();
    let names: Vec<&str> = planned.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "token_embd.weight",
            "output.weight",
            "blk.0.ffn_gate_exps.weight",
            "blk.0.ffn_down_exps.weight",
            "blk.0.ffn_up_exps.weight",
            "blk.0.ffn_gate_inp.weight",
            "blk.0.attn_norm.weight",
            "blk.0.ffn_norm.weight",
            "blk.0.attn_k.weight",
            "blk.0.attn_output.weight",
            "blk.0.attn_q.weight",
            "blk.0.attn_v.weight",
            "output_norm.weight",
        ]
    );
}

#[test]
fn a_stack_in_f16_rounds_each_value_as_the_reference_does() {
    let dir = temp_dir();
    let t = mixtral(dir.path(), None);
    let out = dir.path().join("out.gguf");
    let arch = gguf_serde::convert::arch::builtin("MixtralForCausalLM").unwrap();
    convert_with(dir.path(), &out, arch, &no_vocab(OutType::F16)).unwrap();
    let g = Gguf::open(&out).unwrap();
    let name = "blk.0.ffn_up_exps.weight";
    assert_eq!(g.tensor(name).unwrap().dtype, GgmlType::F16);
    let want: Vec<u8> = (0..EXPERTS)
        .flat_map(|x| source(&t, &format!("model.layers.0.block_sparse_moe.experts.{x}.w3.weight")).to_vec())
        .flat_map(|v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    assert_eq!(g.tensor_data_by_name(name).unwrap(), want.as_slice());
    assert_eq!(g.tensor("blk.0.ffn_gate_inp.weight").unwrap().dtype, GgmlType::F32);
}

#[test]
fn a_missing_expert_is_named_before_anything_is_written() {
    let dir = temp_dir();
    mixtral(dir.path(), Some("model.layers.0.block_sparse_moe.experts.1.w2.weight"));
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let err = plan(&ckpt, &no_vocab(OutType::F16)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, ConvertError::Layout(_)), "{err:?}");
    assert!(msg.contains("blk.0.ffn_down_exps.weight") && msg.contains("part 1 is missing"), "{msg}");
}

#[test]
fn a_missing_tensor_the_model_needs_is_named_as_the_checkpoint_names_it() {
    let dir = temp_dir();
    mixtral(dir.path(), Some("model.layers.0.self_attn.q_proj.weight"));
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let err = plan(&ckpt, &no_vocab(OutType::F16)).unwrap_err();
    assert!(
        matches!(&err, ConvertError::MissingTensor { name, hf }
            if name == "blk.0.attn_q.weight" && hf.as_deref() == Some("model.layers.0.self_attn.q_proj.weight")),
        "{err:?}"
    );
}

/// A user's architecture: a fused `[2 * FF, H]` gate/up split in two, a `[n, 3, H]` tensor
/// split along its middle dimension, two tensors concatenated along rows, and a row transform.
#[derive(Debug)]
struct Fused;

#[derive(Debug)]
struct Scale;

impl RowTransform for Scale {
    fn apply(&self, first_row: u64, row_len: usize, values: &mut [f32]) -> Result<(), ConvertError> {
        for (i, row) in values.chunks_mut(row_len).enumerate() {
            let r = (first_row + i as u64) as f32;
            row.iter_mut().for_each(|v| *v = *v * 2.0 + r);
        }
        Ok(())
    }
}

impl Architecture for Fused {
    fn name(&self) -> &'static str {
        "fused"
    }

    fn map_tensor(&self, hf: &str, shape: &[u64], _cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        Ok(match hf {
            "gate_up.weight" => {
                let ff = shape[0] / 2;
                Mapped::Split(vec![
                    Target::new("gate.weight", vec![Transform::Slice { dim: 0, start: 0, len: ff }]),
                    Target::new("up.weight", vec![Transform::Slice { dim: 0, start: ff, len: ff }]),
                ])
            }
            "qkv.weight" => Mapped::Split(vec![
                Target::new("k.weight", vec![Transform::Slice { dim: 1, start: 1, len: 1 }]),
                Target::new(
                    "qv.weight",
                    vec![Transform::Slice { dim: 1, start: 0, len: 1 }, Transform::Rows(RowFn::new(Scale))],
                ),
            ]),
            "a.weight" => Mapped::Part {
                name: "ab.weight".into(),
                index: 0,
                count: 2,
                join: Join::Concat { dim: 0 },
                transforms: vec![],
                batch: None,
            },
            "b.weight" => Mapped::Part {
                name: "ab.weight".into(),
                index: 1,
                count: 2,
                join: Join::Concat { dim: 0 },
                transforms: vec![Transform::Add(1.0)],
                batch: None,
            },
            _ => Mapped::Unknown,
        })
    }

    fn parameters(&self, _cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        kv.set("general.file_type", Value::U32(file_type));
        Ok(())
    }

    fn vocab(&self, _cx: &ArchContext<'_>, _kv: &mut Kvs) -> Result<(), ConvertError> {
        Ok(())
    }
}

#[test]
fn splits_concatenations_and_row_transforms_follow_numpy() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("config.json"), br#"{"architectures": ["Fused"], "num_hidden_layers": 1}"#).unwrap();
    let w = 4u64;
    let gate_up = values(1, 6 * w);
    let qkv = values(2, 2 * 3 * w);
    let a = values(3, 2 * w);
    let b = values(4, 3 * w);
    write_safetensors(
        &dir.path().join("model.safetensors"),
        &[
            ("gate_up.weight", vec![6, w], gate_up.clone()),
            ("qkv.weight", vec![2, 3, w], qkv.clone()),
            ("a.weight", vec![2, w], a.clone()),
            ("b.weight", vec![3, w], b.clone()),
        ],
    );
    let out = dir.path().join("out.gguf");
    let mut opts = no_vocab(OutType::F32);
    opts.chunk_elems = 1;
    convert_with(dir.path(), &out, &Fused, &opts).unwrap();
    let g = Gguf::open(&out).unwrap();
    let wu = w as usize;
    assert_eq!(f32_data(&g, "gate.weight"), gate_up[..3 * wu]);
    assert_eq!(f32_data(&g, "up.weight"), gate_up[3 * wu..]);
    // qkv[:, 1:2, :] and qkv[:, 0:1, :] * 2 + row
    assert_eq!(g.tensor("k.weight").unwrap().shape.dims(), [2, 1, w].as_slice());
    let k: Vec<f32> = [1, 4].iter().flat_map(|r| qkv[r * wu..(r + 1) * wu].to_vec()).collect();
    assert_eq!(f32_data(&g, "k.weight"), k);
    let qv: Vec<f32> = [0usize, 3]
        .iter()
        .enumerate()
        .flat_map(|(i, r)| qkv[r * wu..(r + 1) * wu].iter().map(move |v| v * 2.0 + i as f32).collect::<Vec<_>>())
        .collect();
    assert_eq!(f32_data(&g, "qv.weight"), qv);
    // torch.cat([a, b + 1], dim=0)
    assert_eq!(g.tensor("ab.weight").unwrap().shape.dims(), [5, w].as_slice());
    let ab: Vec<f32> = a.iter().copied().chain(b.iter().map(|v| v + 1.0)).collect();
    assert_eq!(f32_data(&g, "ab.weight"), ab);
    // tensors in the order the sources come (names sorted): a, b (the join), gate_up, qkv
    let order: Vec<String> = g.tensors().map(|t| t.name.to_string()).collect();
    assert_eq!(order, ["ab.weight", "gate.weight", "up.weight", "k.weight", "qv.weight"]);
}

/// A row transform that fails from row `from` on, as an architecture's own check of the values
/// would.
#[derive(Debug)]
struct FailFrom(u64);

impl RowTransform for FailFrom {
    fn apply(&self, first_row: u64, _row_len: usize, _values: &mut [f32]) -> Result<(), ConvertError> {
        if first_row >= self.0 {
            return Err(ConvertError::Config(format!("row {first_row} refused")));
        }
        Ok(())
    }
}

/// `a.weight` as it is, then `b.weight` through [`FailFrom`].
#[derive(Debug)]
struct FailsLate;

impl Architecture for FailsLate {
    fn name(&self) -> &'static str {
        "fails-late"
    }

    fn map_tensor(&self, hf: &str, _shape: &[u64], _cx: &ArchContext<'_>) -> Result<Mapped, ConvertError> {
        Ok(match hf {
            "a.weight" => Mapped::To { name: "a.weight".into(), transforms: vec![] },
            "b.weight" => {
                Mapped::To { name: "b.weight".into(), transforms: vec![Transform::Rows(RowFn::new(FailFrom(2)))] }
            }
            _ => Mapped::Unknown,
        })
    }

    fn parameters(&self, _cx: &ArchContext<'_>, file_type: u32, kv: &mut Kvs) -> Result<(), ConvertError> {
        kv.set("general.file_type", Value::U32(file_type));
        Ok(())
    }

    fn vocab(&self, _cx: &ArchContext<'_>, _kv: &mut Kvs) -> Result<(), ConvertError> {
        Ok(())
    }
}

/// Converting and writing run on two threads (the writing thread a chunk behind): an error
/// while converting, after earlier chunks and a whole tensor were written, is the error the
/// caller gets (not the writing side's stop), and no file is left at the output nor beside it.
#[test]
fn an_error_while_converting_leaves_no_file_and_is_the_error_returned() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("config.json"), br#"{"architectures": ["FailsLate"], "num_hidden_layers": 1}"#)
        .unwrap();
    let w = 8u64;
    write_safetensors(
        &dir.path().join("model.safetensors"),
        &[("a.weight", vec![16, w], values(5, 16 * w)), ("b.weight", vec![6, w], values(6, 6 * w))],
    );
    let out = dir.path().join("out.gguf");
    std::fs::write(&out, b"the previous file").unwrap();
    let mut opts = no_vocab(OutType::F16);
    opts.chunk_elems = w;
    let err = convert_with(dir.path(), &out, &FailsLate, &opts).unwrap_err();
    assert!(matches!(&err, ConvertError::Config(m) if m == "row 2 refused"), "{err:?}");
    assert_eq!(std::fs::read(&out).unwrap(), b"the previous file");
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["config.json", "model.safetensors", "out.gguf"]);
}

/// `quantization_config.quant_method = "mxfp4"` on an architecture that repacks no MXFP4
/// tensors: the reference leaves MXFP4 to gpt-oss and stops elsewhere ("Quant method is not yet
/// supported"); refused naming the method, before anything is written.
#[test]
fn mxfp4_outside_an_architecture_that_repacks_it_is_refused() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("config.json"),
        br#"{"architectures": ["FailsLate"], "num_hidden_layers": 1, "quantization_config": {"quant_method": "mxfp4"}}"#,
    )
    .unwrap();
    let w = 8u64;
    write_safetensors(
        &dir.path().join("model.safetensors"),
        &[("a.weight", vec![2, w], values(7, 2 * w)), ("b.weight", vec![1, w], values(8, w))],
    );
    let out = dir.path().join("out.gguf");
    let err = convert_with(dir.path(), &out, &FailsLate, &no_vocab(OutType::F16)).unwrap_err();
    assert!(matches!(&err, ConvertError::UnsupportedQuantization { method, .. } if method == "mxfp4"), "{err:?}");
    assert!(!out.exists());
}
