//! Deserializing the whole metadata of the Gemma 3 270M model (33 keys, 262,144 tokens, scores
//! and token types) into a typed struct, with owned `Vec<String>` tokens and with borrowed
//! `Vec<&str>` tokens, from a memory-mapped file opened once (opening and validating is measured
//! separately).
//!
//! The model is `<workspace>/models/gemma-3-270m-q4_k_m.gguf` (env `GGUF_MODELS` overrides the
//! folder; `scripts/fetch-gemma.sh` makes it).

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use gguf_serde::Gguf;
// The typed structs of the serde interop tests.
use gguf_test_support::metadata_structs::gemma::Gemma3Metadata;

fn model() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("GGUF_MODELS").map(PathBuf::from).unwrap_or_else(|| root.join("models"));
    dir.join("gemma-3-270m-q4_k_m.gguf")
}

fn bench(c: &mut Criterion) {
    let path = model();
    let file = match Gguf::open(&path) {
        Ok(f) => f,
        Err(e) => panic!("{}: {e} (run scripts/fetch-gemma.sh or set GGUF_MODELS)", path.display()),
    };
    let mut g = c.benchmark_group("gemma3_metadata");
    g.sample_size(30);
    g.bench_function("open_and_validate_mmap", |b| b.iter(|| Gguf::open(&path).map(|f| f.kv_count())));
    g.bench_function("deserialize_borrowed_tokens", |b| {
        b.iter(|| {
            let m: Gemma3Metadata<&str> = file.deserialize_metadata().expect("metadata");
            m.tokenizer.ggml.tokens.len()
        })
    });
    g.bench_function("deserialize_owned_tokens", |b| {
        b.iter(|| {
            let m: Gemma3Metadata<String> = file.deserialize_metadata().expect("metadata");
            m.tokenizer.ggml.tokens.len()
        })
    });
    let meta: Gemma3Metadata<String> = file.deserialize_metadata().expect("metadata");
    g.bench_function("serialize_to_vec", |b| b.iter(|| gguf_serde::to_vec(&meta).map(|v| v.len())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
