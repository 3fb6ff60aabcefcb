//! A llama-style metadata struct through gguf-py, both ways: we write and gguf-py reads the same
//! keys, types and values; gguf-py writes (`tests/py/write_llama.py`) and we read.

use gguf_tests::metadata_structs::llama::{tiny, LlamaMetadata};
use gguf_tests::{python, run_py, temp_dir, workspace_root};
use serde_json::json;

/// What the file holds, written out by hand: key, GGUF type, value (f32 values widened exactly).
fn expected() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        ("general.architecture", "string", json!("llama")),
        ("general.name", "string", json!("tiny-random-llama")),
        ("general.file_type", "u32", json!(1)),
        ("llama.context_length", "u32", json!(2048)),
        ("llama.embedding_length", "u32", json!(16)),
        ("llama.block_count", "u32", json!(2)),
        ("llama.feed_forward_length", "u32", json!(64)),
        ("llama.rope.dimension_count", "u32", json!(4)),
        ("llama.rope.freq_base", "f32", json!(10000.0)),
        ("llama.attention.head_count", "u32", json!(4)),
        ("llama.attention.head_count_kv", "u32", json!(2)),
        ("llama.attention.layer_norm_rms_epsilon", "f32", json!(f64::from(1e-6f32))),
        ("tokenizer.ggml.model", "string", json!("llama")),
        ("tokenizer.ggml.tokens", "array<string>", json!(["<unk>", "<s>", "</s>", "▁a", "▁b", "é", "<0x0A>", ""])),
        ("tokenizer.ggml.scores", "array<f32>", json!([0.0, 0.0, 0.0, -1.5, -2.25, -3.0, -4.0, -5.5])),
        ("tokenizer.ggml.token_type", "array<i32>", json!([2, 3, 3, 1, 1, 1, 6, 5])),
        ("tokenizer.ggml.bos_token_id", "u32", json!(1)),
        ("tokenizer.ggml.eos_token_id", "u32", json!(2)),
        ("tokenizer.ggml.unknown_token_id", "u32", json!(0)),
        ("tokenizer.ggml.add_bos_token", "bool", json!(true)),
        ("tokenizer.ggml.add_eos_token", "bool", json!(false)),
    ]
}

fn check_against(dump: &serde_json::Value) {
    let dump = dump.as_array().unwrap();
    let mut want = expected();
    let mut got: Vec<(&str, &str, &serde_json::Value)> =
        dump.iter().map(|e| (e["key"].as_str().unwrap(), e["type"].as_str().unwrap(), &e["value"])).collect();
    want.sort_by(|a, b| a.0.cmp(b.0));
    got.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(got.len(), want.len(), "keys: {:?}", got.iter().map(|g| g.0).collect::<Vec<_>>());
    for ((gk, gt, gv), (wk, wt, wv)) in got.iter().zip(&want) {
        assert_eq!((gk, gt), (wk, wt));
        assert_eq!(*gv, wv, "value of {wk}");
    }
}

#[test]
fn we_write_gguf_py_reads() {
    let Some(py) = python() else { return };
    let dir = temp_dir("llama_we_write");
    let path = dir.join("tiny.gguf");
    gguf_serde::to_writer(&tiny(), std::fs::File::create(&path).unwrap()).unwrap();
    check_against(&run_py(&py, "kv_dump.py", &[path.to_str().unwrap()]));
}

#[test]
fn gguf_py_writes_we_read() {
    let Some(py) = python() else { return };
    let dir = temp_dir("llama_py_writes");
    let path = dir.join("tiny.gguf");
    let out = std::process::Command::new(&py)
        .arg(workspace_root().join("tests/py/write_llama.py"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // gguf-py's own reading of its file is the hand-written expectation...
    check_against(&run_py(&py, "kv_dump.py", &[path.to_str().unwrap()]));
    // ...and so is ours, owned and borrowed.
    let bytes = std::fs::read(&path).unwrap();
    let owned: LlamaMetadata<String> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(owned, tiny());
    let borrowed: LlamaMetadata<&str> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(borrowed.tokenizer.ggml.tokens, tiny().tokenizer.ggml.tokens);
}
