//! Walking the 262,144-token vocabulary of Gemma 3 270M (`tokenizer.ggml.tokens`) three ways:
//! through [`ArrayRef::strings`](gguf_serde::ArrayRef::strings) (borrowed `&str`s, summing their
//! lengths), and through serde into `Vec<&str>` (borrowed) and `Vec<String>` (owned); plus
//! opening the file (mmap + validating everything) with and without the walk.
//!
//! The model is `<workspace>/models/gemma-3-270m-q4_k_m.gguf` (env `GGUF_MODELS` overrides the
//! folder; `scripts/fetch-gemma.sh` makes it). `cargo bench -p gguf-serde --bench tokens`.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};
use gguf_serde::{Gguf, Source};
use serde::Deserialize;

const KEY: &str = "tokenizer.ggml.tokens";

fn model() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("GGUF_MODELS").map(PathBuf::from).unwrap_or_else(|| root.join("models"));
    dir.join("gemma-3-270m-q4_k_m.gguf")
}

/// Only `tokenizer.ggml.tokens`; the other 32 keys are ignored.
#[derive(Deserialize)]
struct Tokens<S> {
    tokenizer: Tokenizer<S>,
}

#[derive(Deserialize)]
struct Tokenizer<S> {
    ggml: Ggml<S>,
}

#[derive(Deserialize)]
struct Ggml<S> {
    tokens: Vec<S>,
}

/// The summed byte length of every token, through `strings()`.
fn walk<S: Source>(file: &Gguf<S>) -> usize {
    let tokens = file.get(KEY).and_then(|v| v.as_array()).expect("tokens array");
    tokens.strings().expect("strings").map(|s| s.len()).sum()
}

/// The number of tokens, deserialized into `Vec<S>` (dropped).
fn deserialize<'a, S: Deserialize<'a>, Src: Source>(file: &'a Gguf<Src>) -> usize {
    let t: Tokens<S> = file.deserialize_metadata().expect("metadata");
    t.tokenizer.ggml.tokens.len()
}

fn bench(c: &mut Criterion) {
    let path = model();
    let file = match Gguf::open(&path) {
        Ok(f) => f,
        Err(e) => panic!("{}: {e} (run scripts/fetch-gemma.sh or set GGUF_MODELS)", path.display()),
    };
    let total = walk(&file);
    let borrowed: Tokens<&str> = file.deserialize_metadata().expect("metadata");
    assert_eq!(borrowed.tokenizer.ggml.tokens.len(), 262_144);
    assert_eq!(borrowed.tokenizer.ggml.tokens.iter().map(|s| s.len()).sum::<usize>(), total);

    let mut g = c.benchmark_group("gemma3_tokens");
    g.sample_size(30);
    g.bench_function("open_mmap", |b| b.iter(|| Gguf::open(&path).map(|f| f.kv_count())));
    g.bench_function("open_mmap_and_strings_walk", |b| b.iter(|| walk(&Gguf::open(&path).expect("open"))));
    g.bench_function("strings_walk", |b| b.iter(|| walk(&file)));
    g.bench_function("serde_borrowed_vec_str", |b| b.iter(|| deserialize::<&str, _>(&file)));
    g.bench_function("serde_owned_vec_string", |b| b.iter(|| deserialize::<String, _>(&file)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
