//! The converter (`gguf_serde::convert`, `gguf convert`'s library): tiny random checkpoints
//! written by Python in the layout Hugging Face tools write (`config.json`, BF16/F16/F32
//! safetensors, two shards with an index, or one file with tied embeddings), one per
//! architecture (`tests/py/make_hf_llama.py --arch`), converted for every output type, then
//!
//! - checked by `tests/py/check_convert.py`, which applies the reference's conversion itself with
//!   numpy (each class's name map and transforms, type choice, tensor order, key order and
//!   types, read from `convert_hf_to_gguf.py`) and compares with what gguf-py reads: values
//!   exact for F32/F16/BF16, byte-identical to gguf-py's Q8_0 quantizer; and the whole file
//!   byte-identical to gguf-py's `GGUFWriter` given those keys and tensors (the writer
//!   `convert_hf_to_gguf.py` uses: header, alignment, padding);
//! - for Llama, bound by our typed reader (the `Llama` model of `gguf_examples::models`) with
//!   rows of Q and K at hand-computed places.
//!
//! Then the refusals — an unknown architecture, an unknown tensor, a missing tensor, a missing
//! shard, an index that disagrees, a corrupt file, a shape that breaks a transform — each a
//! typed error, with the file at the output path left as it was and no temporary file.
//! The example's custom architecture (`gguf_examples::convert::MyLlama`) passes the same check.

use std::path::Path;

use gguf_examples::models::Llama;
use gguf_serde::convert::{
    convert, convert_with, plan, vocab, Checkpoint, ConvertError, ConvertOptions, OutType, SourceTensor, CHUNK_ELEMS,
};
use gguf_serde::{GgmlType, Gguf, GgufModel, TensorView};
use gguf_tests::{make_hf_checkpoint, make_hf_checkpoint_with, make_hf_llama, python, run_py, HfLayout};
use serde_json::Value as Json;

const OUTTYPES: [(&str, OutType); 4] =
    [("f32", OutType::F32), ("f16", OutType::F16), ("bf16", OutType::BF16), ("q8_0", OutType::Q8_0)];

fn config(ckpt: &Path) -> Json {
    serde_json::from_slice(&std::fs::read(ckpt.join("config.json")).unwrap()).unwrap()
}

fn dir_name(ckpt: &Path) -> String {
    ckpt.file_name().unwrap().to_str().unwrap().to_owned()
}

/// Converts `ckpt` for every output type (chunks of `chunk` elements) and checks each output
/// with `check_convert.py`; returns its summaries.
fn convert_and_check(ckpt: &Path, chunk: u64) -> Vec<Json> {
    let py = python().expect("the generator ran, so Python is there");
    let mut out_summaries = Vec::new();
    for (name, outtype) in OUTTYPES {
        let out = ckpt.parent().unwrap().join(format!("out-{name}-{chunk}.gguf"));
        let opts = ConvertOptions { chunk_elems: chunk, vocab: false, ..ConvertOptions::new(outtype) };
        let report = convert(ckpt, &out, &opts).unwrap();
        let summary =
            run_py(&py, "check_convert.py", &[ckpt.to_str().unwrap(), out.to_str().unwrap(), name, &dir_name(ckpt)]);
        assert_eq!(summary["tensors"], report.tensors.len(), "{name}");
        assert_eq!(summary["same_bytes_as_gguf_py_writer"], true, "{name}");
        out_summaries.push(summary);
    }
    out_summaries
}

/// The Llama-specific checks of the typed reader on an F16 output.
fn llama_binds(ckpt: &Path, tied: bool) {
    let cfg = config(ckpt);
    let u = |k: &str| cfg[k].as_u64().unwrap() as u32;
    let out = ckpt.parent().unwrap().join("bind.gguf");
    convert(ckpt, &out, &ConvertOptions { vocab: false, ..ConvertOptions::new(OutType::F16) }).unwrap();
    let file = Gguf::open(&out).unwrap();
    let m = Llama::<TensorView>::read(&file).unwrap();
    let c = &m.config;
    // general.name as gguf-py's Metadata makes it of the folder name (check_convert.py checks
    // the same with gguf-py itself).
    assert_eq!((c.architecture.as_str(), c.name.as_str()), ("llama", "Tiny Llama Hf"));
    assert_eq!(c.block_count, u("num_hidden_layers"));
    assert_eq!(c.head_count_kv, u("num_key_value_heads"));
    assert_eq!(c.vocab_size, u("vocab_size"));
    assert_eq!(c.rope_dimension_count, 16);
    assert_eq!(m.output.is_none(), tied);
    assert_eq!(&*m.blocks[0].ffn_down.shape, &[64, 80]);
    assert_eq!(m.output_norm.dtype, GgmlType::F32);
}

#[test]
fn sharded_checkpoint_converts_for_every_outtype() {
    let Some(ckpt) = make_hf_llama("convert_sharded", HfLayout::Sharded, 11) else { return };
    assert!(ckpt.join("model.safetensors.index.json").exists());
    // Default chunks (one per tensor here), then 100 elements: a row or two per chunk, crossing
    // chunk boundaries inside every tensor, permuted ones included.
    for summaries in [convert_and_check(&ckpt, CHUNK_ELEMS), convert_and_check(&ckpt, 100)] {
        for (s, (name, _)) in summaries.iter().zip(OUTTYPES) {
            assert_eq!(s["tensors"], 21);
            assert_eq!(s["keys"], 18);
            assert_eq!(s["types"]["blk.0.attn_norm.weight"], "F32");
            // ffn_down rows are 80 long: not whole Q8_0 blocks, so F16 there.
            let down = if name == "q8_0" { "F16".to_owned() } else { name.to_uppercase() };
            assert_eq!(s["types"]["blk.1.ffn_down.weight"], down.as_str());
        }
    }
    llama_binds(&ckpt, false);
}

#[test]
fn tied_embeddings_have_no_output_tensor() {
    let Some(ckpt) = make_hf_llama("convert_tied", HfLayout::TiedSingle, 12) else { return };
    assert!(ckpt.join("model.safetensors").exists());
    for s in convert_and_check(&ckpt, 96) {
        assert_eq!(s["tensors"], 20);
    }
    llama_binds(&ckpt, true);
}

/// One test per architecture: every output type checked by `check_convert.py`.
fn arch_converts(arch: &str, seed: u64, tensors: usize, keys: usize) {
    let Some(ckpt) = make_hf_checkpoint(&format!("convert_{arch}"), arch, HfLayout::Sharded, seed) else { return };
    for s in convert_and_check(&ckpt, 100) {
        assert_eq!(s["tensors"], tensors, "{arch}");
        assert_eq!(s["keys"], keys, "{arch}");
    }
}

#[test]
fn qwen2_converts_with_biases() {
    arch_converts("qwen2", 21, 27, 14);
}

#[test]
fn qwen3_converts_with_head_norms() {
    arch_converts("qwen3", 22, 25, 16);
}

#[test]
fn gemma3_converts_with_norm_offsets_and_a_cut_embedding() {
    arch_converts("gemma3", 23, 28, 18);
    let Some(ckpt) = make_hf_checkpoint("convert_gemma3_rows", "gemma3", HfLayout::Sharded, 23) else { return };
    let ck = Checkpoint::open(&ckpt).unwrap();
    let p = plan(&ck, &ConvertOptions { vocab: false, ..ConvertOptions::new(OutType::F32) }).unwrap();
    // tokenizer.json: 40 tokens + 2 added, of 48 embedding rows.
    let embd = p.tensors.iter().find(|t| t.name == "token_embd.weight").unwrap();
    assert_eq!(embd.shape, [42, 64]);
}

#[test]
fn phi3_converts_fused_with_rope_factors() {
    arch_converts("phi3", 24, 17, 18);
}

/// `auto` takes the type of the first matrix of the checkpoint (BF16 here), as the reference.
#[test]
fn auto_outtype_follows_the_first_matrix() {
    let Some(ckpt) = make_hf_llama("convert_auto", HfLayout::TiedSingle, 16) else { return };
    let ck = Checkpoint::open(&ckpt).unwrap();
    let p = plan(&ck, &ConvertOptions { vocab: false, ..ConvertOptions::new(OutType::Auto) }).unwrap();
    assert_eq!(p.outtype, OutType::BF16);
    let name = p.default_file_name().expect("default file name");
    assert!(name.ends_with("-BF16.gguf"), "{name}");
}

/// Rows of Q and K land where `LlamaModel.permute` puts them, with the query heads for Q and the
/// key/value heads for K (places computed by hand), and F32 output is the source exactly.
#[test]
fn q_and_k_rows_are_interleaved_per_head() {
    let Some(ckpt) = make_hf_llama("convert_rows", HfLayout::Sharded, 13) else { return };
    let out = ckpt.parent().unwrap().join("out.gguf");
    convert(&ckpt, &out, &ConvertOptions { vocab: false, ..ConvertOptions::new(OutType::F32) }).unwrap();
    let file = Gguf::open(&out).unwrap();
    let m = Llama::<Vec<f32>>::read(&file).unwrap();
    let source = Checkpoint::open(&ckpt).unwrap();
    let tensors = source.tensors().unwrap();
    let src = |name: &str| tensors.iter().find(|t| t.name == name).unwrap().clone();
    let row = |t: &SourceTensor<'_>, r: usize| -> Vec<f32> {
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

/// The example's custom architecture, written against the library's trait, converts a Llama
/// that `check_convert.py` accepts.
#[test]
fn the_examples_custom_architecture_converts() {
    let Some(ckpt) = make_hf_llama("convert_custom", HfLayout::Sharded, 17) else { return };
    let py = python().unwrap();
    for (name, outtype) in OUTTYPES {
        let out = ckpt.parent().unwrap().join(format!("custom-{name}.gguf"));
        let opts = ConvertOptions { chunk_elems: 100, vocab: false, ..ConvertOptions::new(outtype) };
        convert_with(&ckpt, &out, &gguf_examples::convert::MyLlama, &opts).unwrap();
        let s =
            run_py(&py, "check_convert.py", &[ckpt.to_str().unwrap(), out.to_str().unwrap(), name, "tiny-llama-hf"]);
        assert_eq!(s["tensors"], 21);
    }
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

/// Renames a tensor inside its safetensors file and the index; a shorter name is padded with
/// JSON whitespace after its closing quote, so the header keeps its size.
fn rename_tensor(d: &Path, from: &str, to: &str) {
    assert!(to.len() <= from.len());
    edit_json(&d.join("model.safetensors.index.json"), |j| {
        let wm = j["weight_map"].as_object_mut().unwrap();
        let file = wm.remove(from).unwrap();
        wm.insert(to.into(), file);
    });
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "safetensors") {
            let mut b = std::fs::read(&p).unwrap();
            let pat = format!("\"{from}\"");
            if let Some(i) = b.windows(pat.len()).position(|w| w == pat.as_bytes()) {
                let new = format!("\"{to}\"{}", " ".repeat(from.len() - to.len()));
                b[i..i + pat.len()].copy_from_slice(new.as_bytes());
                std::fs::write(&p, b).unwrap();
            }
        }
    }
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
    assert!(matches!(&e, ConvertError::UnknownArchitecture(a) if a == "GPT2LMHeadModel"), "{e}");
    assert!(e.to_string().contains("GPT2LMHeadModel"), "{e}");

    let d = copy("no-layers");
    edit_json(&d.join("config.json"), |j| {
        j.as_object_mut().unwrap().remove("num_hidden_layers");
    });
    // transformers' LlamaConfig fills in its default block count (32), which the reference
    // converts with: the first block the checkpoint does not have is missing
    let have = config(&base)["num_hidden_layers"].as_u64().expect("num_hidden_layers");
    let e = expect_err(&d, &out);
    let first_missing = format!("blk.{have}.");
    assert!(matches!(&e, ConvertError::MissingTensor { name, .. } if name.starts_with(&first_missing)), "{e}");

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

    // A tensor the Llama map does not know.
    let d = copy("unknown");
    rename_tensor(&d, "model.norm.weight", "model.zorm.weight");
    let e = expect_err(&d, &out);
    assert!(matches!(&e, ConvertError::UnknownTensor { name, .. } if name == "model.zorm.weight"), "{e}");

    // A bias the map knows (as the reference's try_suffixes does), so the weight is missing.
    let d = copy("bias");
    rename_tensor(&d, "model.norm.weight", "model.norm.bias");
    let e = expect_err(&d, &out);
    assert!(
        matches!(&e, ConvertError::MissingTensor { name, hf } if name == "output_norm.weight" && hf.as_deref() == Some("model.norm.weight")),
        "{e}"
    );

    // Q rows that are not whole heads of an even width: refused before writing.
    let d = copy("heads");
    edit_json(&d.join("config.json"), |j| j["num_attention_heads"] = 3.into());
    let e = expect_err(&d, &out);
    assert!(matches!(&e, ConvertError::BadShape { name, .. } if name.ends_with("q_proj.weight")), "{e}");
}

/// A missing block tensor is named, and a block past `num_hidden_layers` is not a tensor of the
/// model; the file is not written.
#[test]
fn a_missing_tensor_is_named() {
    let Some(base) = make_hf_llama("convert_missing", HfLayout::Sharded, 18) else { return };
    let out = base.parent().unwrap().join("out.gguf");
    rename_tensor(&base, "model.layers.1.mlp.up_proj.weight", "model.layers.1.mlp.up_proj.bias");
    let e = expect_err(&base, &out);
    assert!(
        matches!(&e, ConvertError::MissingTensor { name, hf } if name == "blk.1.ffn_up.weight" && hf.as_deref() == Some("model.layers.1.mlp.up_proj.weight")),
        "{e}"
    );
    rename_tensor(&base, "model.layers.1.mlp.up_proj.bias", "model.layers.9.mlp.up_proj.bias");
    let e = expect_err(&base, &out);
    assert!(matches!(&e, ConvertError::UnknownTensor { name, .. } if name == "model.layers.9.mlp.up_proj.bias"), "{e}");
}

/// F8_E4M3 weights with their `weight_scale_inv` but no `quantization_config` in config.json: the
/// reference's `dequant_model` does nothing without a `quant_method`, so the scale tensor is a
/// tensor it cannot map ("Can not map tensor"); refused naming it, before anything is written
/// (`expect_err` checks the output untouched).
/// (With `quant_method = "fp8"` such weights are dequantized: the FP8 layout cases of
/// `convert_refs`.)
#[test]
fn fp8_scales_without_a_quantization_config_are_refused_naming_the_tensor() {
    let Some(ckpt) = make_hf_checkpoint_with("convert_f8", "llama", HfLayout::TiedSingle, 19, &["--f8"]) else {
        return;
    };
    let out = ckpt.parent().unwrap().join("out.gguf");
    let e = expect_err(&ckpt, &out);
    assert!(matches!(&e, ConvertError::UnknownTensor { name, .. } if name.ends_with("_scale_inv")), "{e}");
}

/// The reference always converts the tokenizer: a checkpoint without one it can read is refused
/// (before anything is written), naming both files looked for (Llama tries `tokenizer.model`,
/// then `tokenizer.json` for `LlamaHfVocab` and GPT-2 BPE) and `--no-vocab` (`vocab: false`,
/// which converts it without tokenizer keys).
#[test]
fn a_checkpoint_without_a_tokenizer_is_refused_naming_the_files() {
    let Some(ckpt) = make_hf_llama("convert_novocab", HfLayout::TiedSingle, 16) else { return };
    let out = ckpt.parent().unwrap().join("novocab.gguf");
    let err = expect_err(&ckpt, &out);
    // Neither tokenizer file: both are named. The library names no CLI flag (`gguf convert` adds
    // the `--no-vocab` hint: gguf-cli/tests/cli/convert.rs).
    let gguf_serde::convert::ConvertError::UnsupportedTokenizer { what, .. } = &err else { panic!("{err:?}") };
    assert!(what.contains("tokenizer.model") && what.contains("tokenizer.json"), "{what}");
    assert!(!err.to_string().contains("--no-vocab"), "{err}");
}

/// A BPE `tokenizer.json` whose pre-tokenizer the reference's table does not know (the tiny
/// Gemma 3 checkpoint's, 40 tokens and no pre-tokenizer) is refused as the reference refuses it
/// (`NotImplementedError`), naming the hash, and nothing is written.
#[test]
fn an_unknown_bpe_pre_tokenizer_is_refused_naming_its_hash() {
    let Some(ckpt) = make_hf_checkpoint("convert_unknown_pre", "gemma3", HfLayout::TiedSingle, 16) else { return };
    let out = ckpt.parent().unwrap().join("unknown-pre.gguf");
    let err = expect_err(&ckpt, &out);
    let gguf_serde::convert::ConvertError::Vocab(v @ vocab::VocabError::UnknownPreTokenizer { hash, .. }) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(hash.len(), 64, "{hash}");
    assert!(v.to_string().contains(hash.as_str()) && v.to_string().contains("tokenizer.json"), "{v}");
}
