//! The `convert_safetensors` example: a tiny random Llama checkpoint written by Python in the
//! layout Hugging Face tools write (`config.json`, BF16/F16/F32 safetensors, two shards with an
//! index, or one file with tied embeddings) is converted for every output type, then
//!
//! - checked by `tests/py/check_convert.py`, which applies llama.cpp's documented conversion
//!   itself with numpy (name map, Q/K permutation, type choice) and compares names, canonical
//!   shapes, types, values (exact for F32/F16/BF16, byte-identical to gguf-py's Q8_0 quantizer
//!   and within half a step) and every key with its GGUF type, reading the output with gguf-py;
//! - bound by our typed reader: the `Llama` model of `gguf_examples::models`, with metadata equal
//!   to `config.json`'s numbers and rows of Q and K at hand-computed places.
//!
//! Then the failures: a bad configuration, a missing shard, an index that disagrees with the
//! files, a corrupt file, a shape that breaks the model — each a typed error, and the file at the
//! output path left as it was.

use std::path::Path;

use gguf_examples::convert::{convert, Checkpoint, ConvertError, ConvertOptions, OutType};
use gguf_examples::models::Llama;
use gguf_serde::{GgmlType, Gguf, GgufModel, ModelError, TensorView};
use gguf_tests::{make_hf_llama, python, run_py, HfLayout};
use serde_json::Value as Json;

const OUTTYPES: [(&str, OutType); 4] =
    [("f32", OutType::F32), ("f16", OutType::F16), ("bf16", OutType::BF16), ("q8_0", OutType::Q8_0)];

fn config(ckpt: &Path) -> Json {
    serde_json::from_slice(&std::fs::read(ckpt.join("config.json")).unwrap()).unwrap()
}

/// Converts `ckpt` for every output type (in chunks of `chunk` elements), checks each output with
/// gguf-py and with the typed reader.
fn convert_and_check(ckpt: &Path, chunk: u64, tied: bool) {
    let py = python().expect("make_hf_llama ran, so Python is there");
    let cfg = config(ckpt);
    let u = |k: &str| cfg[k].as_u64().unwrap() as u32;
    let ckpt_s = ckpt.to_str().unwrap();
    for (name, outtype) in OUTTYPES {
        let out = ckpt.parent().unwrap().join(format!("out-{name}-{chunk}.gguf"));
        let opts = ConvertOptions { chunk_elems: chunk, ..ConvertOptions::new(outtype) };
        let report = convert(ckpt, &out, &opts).unwrap();
        assert_eq!(report.tensors.len(), if tied { 20 } else { 21 });

        // gguf-py and numpy, independently of the converter.
        let summary = run_py(&py, "check_convert.py", &[ckpt_s, out.to_str().unwrap(), name, "tiny-llama-hf"]);
        assert_eq!(summary["tensors"], if tied { 20 } else { 21 }, "{name}");
        assert_eq!(summary["keys"], 17, "{name}");
        let types = &summary["types"];
        assert_eq!(types["blk.0.attn_norm.weight"], "F32");
        let matrix = match outtype {
            OutType::F32 => "F32",
            OutType::F16 => "F16",
            OutType::BF16 => "BF16",
            OutType::Q8_0 => "Q8_0",
        };
        assert_eq!(types["blk.1.attn_q.weight"], matrix);
        // ffn_down rows are 80 long: not whole Q8_0 blocks, so F16 there.
        assert_eq!(types["blk.1.ffn_down.weight"], if outtype == OutType::Q8_0 { "F16" } else { matrix });

        // Our typed reader binds it.
        let file = Gguf::open(&out).unwrap();
        let m = Llama::<TensorView>::read(&file).unwrap();
        let c = &m.config;
        assert_eq!((c.architecture.as_str(), c.name.as_str()), ("llama", "tiny-llama-hf"));
        assert_eq!(c.block_count, u("num_hidden_layers"));
        assert_eq!(c.embedding_length, u("hidden_size"));
        assert_eq!(c.feed_forward_length, u("intermediate_size"));
        assert_eq!(c.context_length, u("max_position_embeddings"));
        assert_eq!(c.head_count, u("num_attention_heads"));
        assert_eq!(c.head_count_kv, u("num_key_value_heads"));
        assert_eq!(c.vocab_size, u("vocab_size"));
        assert_eq!(c.rope_dimension_count, 16);
        assert_eq!(c.rms_epsilon, 1e-5);
        assert_eq!(m.blocks.len(), 2);
        assert_eq!(m.output.is_none(), tied);
        assert_eq!(&*m.token_embd.shape, &[48, 64]);
        assert_eq!(&*m.blocks[0].attn_k.shape, &[32, 64]);
        assert_eq!(&*m.blocks[0].ffn_down.shape, &[64, 80]);
        assert_eq!(m.blocks[0].ffn_norm.dtype, GgmlType::F32);
        assert_eq!(m.output_norm.dtype, GgmlType::F32);
    }
}

#[test]
fn sharded_checkpoint_converts_for_every_outtype() {
    let Some(ckpt) = make_hf_llama("convert_sharded", HfLayout::Sharded, 11) else { return };
    assert!(ckpt.join("model.safetensors.index.json").exists());
    // Default chunks (one per tensor here), then 100 elements: a row or two per chunk, crossing
    // chunk boundaries inside every tensor, permuted ones included.
    convert_and_check(&ckpt, gguf_examples::convert::CHUNK_ELEMS, false);
    convert_and_check(&ckpt, 100, false);
}

#[test]
fn tied_embeddings_have_no_output_tensor() {
    let Some(ckpt) = make_hf_llama("convert_tied", HfLayout::TiedSingle, 12) else { return };
    assert!(ckpt.join("model.safetensors").exists());
    convert_and_check(&ckpt, 96, true);
}

/// Rows of Q and K land where `LlamaModel.permute` puts them, with the query heads for Q and the
/// key/value heads for K (places computed by hand), and F32 output is the source exactly.
#[test]
fn q_and_k_rows_are_interleaved_per_head() {
    let Some(ckpt) = make_hf_llama("convert_rows", HfLayout::Sharded, 13) else { return };
    let out = ckpt.parent().unwrap().join("out.gguf");
    convert(&ckpt, &out, &ConvertOptions::new(OutType::F32)).unwrap();
    let file = Gguf::open(&out).unwrap();
    let m = Llama::<Vec<f32>>::read(&file).unwrap();
    let source = Checkpoint::open(&ckpt).unwrap();
    let tensors = source.tensors().unwrap();
    let src = |name: &str| tensors[name].clone();
    let row = |t: &gguf_examples::convert::SourceTensor<'_>, r: usize| -> Vec<f32> {
        // BF16 to f32: the high half of the bits.
        let bytes = &t.data[r * 64 * 2..(r + 1) * 64 * 2];
        bytes.chunks(2).map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16)).collect()
    };
    let out_row = |v: &[f32], r: usize| v[r * 64..(r + 1) * 64].to_vec();
    let q = src("model.layers.1.self_attn.q_proj.weight");
    let k = src("model.layers.1.self_attn.k_proj.weight");
    assert_eq!(q.dtype, GgmlType::BF16);
    // Q: 4 heads of 16 rows; in head h, output row 2j + s is source row 8s + j.
    for (o, s) in [(0, 0), (1, 8), (2, 1), (3, 9), (15, 15), (16, 16), (17, 24), (19, 25), (63, 63), (62, 55)] {
        assert_eq!(out_row(&m.blocks[1].attn_q, o), row(&q, s), "attn_q row {o} from {s}");
    }
    // K: 2 heads of 16 rows (with 4 heads it would be 8-row heads: row 17 from 20).
    for (o, s) in [(1, 8), (17, 24), (18, 17), (31, 31), (30, 23)] {
        assert_eq!(out_row(&m.blocks[1].attn_k, o), row(&k, s), "attn_k row {o} from {s}");
    }
    // V is not permuted (F32 source, copied).
    let v = src("model.layers.1.self_attn.v_proj.weight");
    let v_src: Vec<f32> = v.data.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    assert_eq!(m.blocks[1].attn_v, v_src);
}

fn expect_err(ckpt: &Path, out: &Path) -> ConvertError {
    std::fs::write(out, b"previous contents").unwrap();
    let err = convert(ckpt, out, &ConvertOptions::new(OutType::Q8_0)).unwrap_err();
    assert_eq!(std::fs::read(out).unwrap(), b"previous contents", "output replaced after: {err}");
    let leftovers: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    err
}

fn edit_json(path: &Path, f: impl FnOnce(&mut Json)) {
    let mut j: Json = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut j);
    std::fs::write(path, serde_json::to_vec_pretty(&j).unwrap()).unwrap();
}

#[test]
fn bad_checkpoints_are_typed_errors_and_leave_the_output_alone() {
    let Some(base) = make_hf_llama("convert_errors", HfLayout::Sharded, 14) else { return };
    let root = base.parent().unwrap().to_path_buf();
    let out = root.join("out.gguf");
    let copy = |name: &str| {
        let d = root.join(name);
        std::fs::create_dir_all(&d).unwrap();
        for e in std::fs::read_dir(&base).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
        }
        d
    };

    let d = copy("not-llama");
    edit_json(&d.join("config.json"), |j| j["architectures"] = serde_json::json!(["GPT2LMHeadModel"]));
    let e = expect_err(&d, &out);
    assert!(matches!(e, ConvertError::Config(_)), "{e}");
    assert!(e.to_string().contains("GPT2LMHeadModel"), "{e}");

    let d = copy("head-dim");
    edit_json(&d.join("config.json"), |j| j["head_dim"] = 8.into());
    let e = expect_err(&d, &out);
    assert_eq!(
        e.to_string(),
        "config.json: head_dim 8 differs from hidden_size / num_attention_heads = 16 (not a plain Llama)"
    );

    let d = copy("missing-shard");
    std::fs::remove_file(d.join("model-00002-of-00002.safetensors")).unwrap();
    let e = expect_err(&d, &out);
    assert!(matches!(&e, ConvertError::Io { path, .. } if path.ends_with("model-00002-of-00002.safetensors")), "{e}");

    let d = copy("index-disagrees");
    edit_json(&d.join("model.safetensors.index.json"), |j| {
        j["weight_map"].as_object_mut().unwrap().remove("model.norm.weight");
    });
    let e = expect_err(&d, &out);
    assert!(matches!(e, ConvertError::Layout(_)), "{e}");
    assert!(e.to_string().contains("model.norm.weight is in"), "{e}");

    let d = copy("index-escapes");
    edit_json(&d.join("model.safetensors.index.json"), |j| {
        j["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors".into();
    });
    let e = expect_err(&d, &out);
    assert!(matches!(e, ConvertError::Layout(_)), "{e}");

    let d = copy("corrupt");
    let shard = d.join("model-00001-of-00002.safetensors");
    let mut bytes = std::fs::read(&shard).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&shard, bytes).unwrap();
    let e = expect_err(&d, &out);
    assert!(matches!(e, ConvertError::SafeTensors { .. }), "{e}");

    // A vocabulary size that the embedding does not have: caught by the model's shape constraint
    // when the tensors are declared, before anything is renamed into place.
    let d = copy("vocab");
    edit_json(&d.join("config.json"), |j| j["vocab_size"] = 50.into());
    let e = expect_err(&d, &out);
    assert!(matches!(&e, ConvertError::Gguf(g) if matches!(g.as_model(), Some(ModelError::WrongShape { .. }))), "{e}");
    assert!(e.to_string().contains("token_embd.weight"), "{e}");

    // A tensor the Llama map does not know.
    let d = copy("bias");
    edit_json(&d.join("model.safetensors.index.json"), |j| {
        let wm = j["weight_map"].as_object_mut().unwrap();
        let file = wm.remove("model.norm.weight").unwrap();
        wm.insert("model.norm.bias".into(), file);
    });
    // Rename the tensor inside its file too (same length name: the header keeps its size).
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "safetensors") {
            let b = std::fs::read(&p).unwrap();
            let pat = b"\"model.norm.weight\"";
            if let Some(i) = b.windows(pat.len()).position(|w| w == pat) {
                let mut b2 = b.clone();
                b2[i..i + pat.len()].copy_from_slice(b"\"model.norm.bias\"  ");
                std::fs::write(&p, b2).unwrap();
            }
        }
    }
    let e = expect_err(&d, &out);
    assert!(matches!(&e, ConvertError::Tensor { name, .. } if name == "model.norm.bias"), "{e}");
}

/// The converter's own model reads its output back (`ConvTensor::from_view` over F32/F16 views)
/// and writes it again byte-identically: the metadata struct keeps the keys' order and types.
#[test]
fn converted_file_reads_back_as_the_converter_model_and_writes_identically() {
    use gguf_examples::convert::{ConvTensor, LlamaGguf};
    let Some(ckpt) = make_hf_llama("convert_roundtrip", HfLayout::TiedSingle, 15) else { return };
    let out = ckpt.parent().unwrap().join("out.gguf");
    convert(&ckpt, &out, &ConvertOptions::new(OutType::F16)).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let file = Gguf::from_slice(&bytes).unwrap();
    let m = LlamaGguf::<ConvTensor>::read(&file).unwrap();
    assert_eq!(m.meta.file_type, 1);
    assert_eq!(m.meta.key_length, Some(16));
    assert!(m.output.is_none());
    assert_eq!(m.to_vec().unwrap(), bytes);
}
