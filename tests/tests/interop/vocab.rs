//! `convert::vocab` against llama.cpp's converter: the tokenizer keys of a Hugging Face
//! tokenizer folder (rebuilt from llama.cpp's real vocabularies by `tests/py/hf_tokenizer_from_gguf.py`)
//! equal, key by key with type and value, in order, what the reference's own vocabulary code
//! writes for the same folder (`tests/py/vocab_reference.py`, which runs `conversion/base.py`'s
//! methods and the architectures' `set_vocab` from the llama.cpp source tree).

use std::path::Path;

use gguf_serde::convert::vocab;
use gguf_serde::Value;
use gguf_tests::{llama_cpp_dir, model, owned_type_name, owned_value_json, python, run_py, run_py_text, temp_dir};
use serde_json::{json, Value as Json};

fn ours_json(kvs: &[(String, Value)]) -> Json {
    Json::Array(
        kvs.iter().map(|(k, v)| json!({"key": k, "type": owned_type_name(v), "value": owned_value_json(v)})).collect(),
    )
}

fn compare(ours: &Json, reference: &Json) {
    let (a, b) = (ours.as_array().unwrap(), reference.as_array().unwrap());
    let keys = |l: &[Json]| l.iter().map(|e| e["key"].as_str().unwrap_or("").to_owned()).collect::<Vec<_>>();
    assert_eq!(keys(a), keys(b), "key order");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x["type"], y["type"], "type of {}", x["key"]);
        assert!(x["value"] == y["value"], "value of {} differs", x["key"]);
    }
}

/// Rebuilds the tokenizer folder of `gguf` and returns it with the reference's keys of `method`.
fn check(gguf: &Path, method: &str, ours: impl Fn(&Path) -> Result<Vec<(String, Value)>, vocab::VocabError>) {
    let Some(py) = python() else { return };
    let dir = temp_dir("vocab");
    let folder = dir.join("tok");
    run_py_text(&py, "hf_tokenizer_from_gguf.py", &[gguf.to_str().unwrap(), folder.to_str().unwrap()]);
    let src = llama_cpp_dir().join("src");
    if !src.join("conversion/base.py").is_file() {
        gguf_tests::skip(&format!("no llama.cpp source at {}", src.display()));
        return;
    }
    let reference = run_py(&py, "vocab_reference.py", &[src.to_str().unwrap(), folder.to_str().unwrap(), method]);
    let kvs = ours(&folder).expect("our vocabulary");
    compare(&ours_json(&kvs), &reference);
}

#[test]
fn llama_spm_sentencepiece_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    check(&g, "_set_vocab_sentencepiece", |d| vocab::set_vocab_sentencepiece(d, None));
}

#[test]
fn llama_spm_llama_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    check(&g, "llama", |d| vocab::set_vocab_llama(d, None));
}

#[test]
fn gemma3_set_vocab_as_reference() {
    let Some(g) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    check(&g, "gemma3", |d| vocab::set_vocab_gemma3(d, None));
}
