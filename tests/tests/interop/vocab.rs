//! `convert::vocab` against llama.cpp's converter: the tokenizer keys of a Hugging Face
//! tokenizer folder (rebuilt from llama.cpp's real vocabularies by `tests/py/hf_tokenizer_from_gguf.py`)
//! equal, key by key with type and value, in order, what the reference's own vocabulary code
//! writes for the same folder (`tests/py/vocab_reference.py`, which runs `conversion/base.py`'s
//! methods and the architectures' `set_vocab` from the llama.cpp source tree), for SentencePiece
//! and GPT-2 BPE vocabularies; and `llama-tokenize` on a vocab-only file with our keys gives the
//! ids of llama.cpp's test vectors (llama-spm, phi-3, llama-bpe, qwen2).

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
fn check(
    gguf: &Path,
    method: &str,
    vocab_size: Option<usize>,
    ours: impl Fn(&Path) -> Result<Vec<(String, Value)>, vocab::VocabError>,
) {
    check_edited(gguf, method, vocab_size, |_| {}, ours)
}

/// [`check`] after `edit` changed the rebuilt folder.
fn check_edited(
    gguf: &Path,
    method: &str,
    vocab_size: Option<usize>,
    edit: impl Fn(&Path),
    ours: impl Fn(&Path) -> Result<Vec<(String, Value)>, vocab::VocabError>,
) {
    let Some(py) = python() else { return };
    let dir = temp_dir("vocab");
    let folder = dir.join("tok");
    run_py_text(&py, "hf_tokenizer_from_gguf.py", &[gguf.to_str().unwrap(), folder.to_str().unwrap()]);
    edit(&folder);
    let src = llama_cpp_dir().join("src");
    if !src.join("conversion/base.py").is_file() {
        gguf_tests::skip(&format!("no llama.cpp source at {}", src.display()));
        return;
    }
    let n = vocab_size.map(|n| n.to_string());
    let mut args = vec![src.to_str().unwrap(), folder.to_str().unwrap(), method];
    args.extend(n.as_deref());
    let reference = run_py(&py, "vocab_reference.py", &args);
    let kvs = ours(&folder).expect("our vocabulary");
    compare(&ours_json(&kvs), &reference);
}

#[test]
fn llama_spm_sentencepiece_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    check(&g, "_set_vocab_sentencepiece", None, |d| vocab::set_vocab_sentencepiece(d, None));
}

#[test]
fn llama_spm_llama_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    check(&g, "llama", None, |d| vocab::set_vocab_llama(d, None));
}

#[test]
fn gemma3_set_vocab_as_reference() {
    let Some(g) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    check(&g, "gemma3", None, |d| vocab::set_vocab_gemma3(d, None));
}

/// The test vectors beside llama.cpp's vocabularies (`models/ggml-vocab-NAME.gguf.inp` / `.out`,
/// read as `tests/test-tokenizer-0` reads them): `llama-tokenize` (no BOS, no special parsing, as
/// that test tokenizes) on a vocab-only file whose tokenizer keys are ours gives the expected ids.
/// The file's other keys (`general.*`, `llama.*`) are copied from llama.cpp's vocabulary file.
fn tokenize_vectors(name: &str, ours: impl Fn(&Path) -> Result<Vec<(String, Value)>, vocab::VocabError>) {
    tokenize_vectors_edited(name, |_| {}, ours)
}

/// [`tokenize_vectors`] after `edit` changed the rebuilt tokenizer folder.
fn tokenize_vectors_edited(
    name: &str,
    edit: impl Fn(&Path),
    ours: impl Fn(&Path) -> Result<Vec<(String, Value)>, vocab::VocabError>,
) {
    let Some(py) = python() else { return };
    let Some(g) = model(&format!("vocab/ggml-vocab-{name}.gguf")) else { return };
    let Some(tok) = gguf_tests::llama_tool("llama-tokenize") else { return };
    let models = llama_cpp_dir().join("src/models");
    let inp = std::fs::read_to_string(models.join(format!("ggml-vocab-{name}.gguf.inp"))).expect(".inp");
    let out = std::fs::read_to_string(models.join(format!("ggml-vocab-{name}.gguf.out"))).expect(".out");
    let dir = temp_dir("vocab-tok");
    let folder = dir.join("tok");
    run_py_text(&py, "hf_tokenizer_from_gguf.py", &[g.to_str().unwrap(), folder.to_str().unwrap()]);
    edit(&folder);
    let kvs = ours(&folder).expect("our vocabulary");

    let original = gguf_serde::Gguf::open(&g).unwrap();
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    for kv in original.metadata() {
        if !kv.key.starts_with("tokenizer.") {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
    }
    for (k, v) in &kvs {
        w.add_kv(k, v.clone()).unwrap();
    }
    let file = dir.join("vocab.gguf");
    std::fs::write(&file, w.finish().unwrap()).unwrap();

    // test-tokenizer-0 splits at the separator and keeps no empty piece after a trailing one.
    let sep = "\n__ggml_vocab_test__\n";
    let inputs: Vec<&str> = inp.strip_suffix(sep).unwrap_or(&inp).split(sep).collect();
    let expected: Vec<&str> = out.lines().collect();
    assert_eq!(inputs.len(), expected.len(), "test vectors of {name}");
    for (i, (text, ids)) in inputs.iter().zip(&expected).enumerate() {
        let prompt = dir.join(format!("p{i}.txt"));
        std::fs::write(&prompt, text).unwrap();
        let o = std::process::Command::new(&tok)
            .args(["-m", file.to_str().unwrap(), "-f", prompt.to_str().unwrap()])
            .args(["--ids", "--no-bos", "--no-parse-special", "--no-escape", "--log-disable"])
            .output()
            .unwrap();
        assert!(o.status.success(), "llama-tokenize: {}", String::from_utf8_lossy(&o.stderr));
        let got: Vec<u64> = String::from_utf8_lossy(&o.stdout)
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().unwrap())
            .collect();
        let want: Vec<u64> = ids.split_whitespace().map(|s| s.parse().unwrap()).collect();
        assert_eq!(got, want, "{name} test {i}: {text:?}");
    }
}

#[test]
fn llama_spm_tokenizes_test_vectors() {
    tokenize_vectors("llama-spm", |d| vocab::set_vocab_llama(d, None));
}

#[test]
fn phi3_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-phi-3.gguf") else { return };
    // Phi-3 mini's config.json: vocab_size 32064 (the vocabulary file's token count).
    check(&g, "phi3", Some(32064), |d| vocab::set_vocab_phi3(d, Some(32064)));
}

#[test]
fn phi3_tokenizes_test_vectors() {
    tokenize_vectors("phi-3", |d| vocab::set_vocab_phi3(d, Some(32064)));
}

/// Named chat templates (`default` plus one whose name needs filtering), a `config.json` with
/// special ids (one out of range, one a list) and `add_eos_token` true: the same keys as the
/// reference's.
#[test]
fn named_templates_and_config_ids_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    let edit = |dir: &Path| {
        let p = dir.join("tokenizer_config.json");
        let mut c: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        c["chat_template"] =
            json!([{"name": "default", "template": "{{ a }}"}, {"name": "tool use", "template": "{{ b }}"}]);
        c["add_eos_token"] = json!(true);
        std::fs::write(&p, serde_json::to_vec(&c).unwrap()).unwrap();
        let cfg = json!({"pad_token_id": 0, "eos_token_id": [2, 3], "mask_token_id": 99999, "text_config": {"sep_token_id": 5}});
        std::fs::write(dir.join("config.json"), serde_json::to_vec(&cfg).unwrap()).unwrap();
    };
    check_edited(&g, "_set_vocab_sentencepiece", None, edit, |d| vocab::set_vocab_sentencepiece(d, None));
}

/// Makes a folder rebuilt from llama-bpe a Llama 3 `tokenizer.json` in what a GGUF does not
/// record, as `tests/py/make_convert_inputs.py` does for the converter references: `ignore_merges`
/// (a whole word in the vocabulary is not merged) and a post-processor that starts every text
/// with `<|begin_of_text|>` (part of the converter's check text encoding), so that the reference
/// names the pre-tokenizer `llama-bpe`.
fn as_llama3(dir: &Path) {
    let p = dir.join("tokenizer.json");
    let mut j: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    j["model"]["ignore_merges"] = json!(true);
    let bos = "<|begin_of_text|>";
    j["post_processor"] = json!({
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos: {"id": bos, "ids": [128000], "tokens": [bos]}},
    });
    std::fs::write(&p, serde_json::to_vec(&j).unwrap()).unwrap();
}

/// GPT-2 BPE (`tokenizer.json` alone): our `_set_vocab_gpt2` keys (pre-tokenizer name from Hugging
/// Face's `tokenizers` crate, tokens, token types, merges, special ids) equal the reference's on
/// the folder rebuilt from llama.cpp's llama-bpe vocabulary (Llama 3).
#[test]
fn llama_bpe_gpt2_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-bpe.gguf") else { return };
    check_edited(&g, "_set_vocab_gpt2", None, as_llama3, |d| vocab::bpe::set_vocab_gpt2(d, None));
}

/// Through `LlamaModel.set_vocab`, which falls back to GPT-2 BPE without `tokenizer.model`, on
/// the folder as rebuilt (without [`as_llama3`]'s edits, the reference names it `smaug-bpe`).
#[test]
fn llama_bpe_llama_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-bpe.gguf") else { return };
    check(&g, "llama", None, |d| vocab::set_vocab_llama(d, None));
}

/// Qwen2's vocabulary through `Qwen2Model.set_vocab` (GPT-2 BPE, pre-tokenizer `qwen2`).
#[test]
fn qwen2_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-qwen2.gguf") else { return };
    check(&g, "qwen2", None, |d| vocab::set_vocab_qwen2(d, None));
}

#[test]
fn llama_bpe_tokenizes_test_vectors() {
    tokenize_vectors_edited("llama-bpe", as_llama3, |d| vocab::set_vocab_llama(d, None));
}

#[test]
fn qwen2_tokenizes_test_vectors() {
    tokenize_vectors("qwen2", |d| vocab::set_vocab_qwen2(d, None));
}

/// The pre-tokenizer check hash (`chkhsh`) of Hugging Face's `tokenizers` crate as this crate
/// builds it (fancy-regex, not Oniguruma) equals the one `transformers` (Python `tokenizers`,
/// Oniguruma) gives, on folders rebuilt from llama.cpp's BPE vocabularies whose pre-tokenizers
/// differ (GPT-2's regex, Falcon's punctuation and digit splits, DeepSeek's sequences of splits,
/// MPT's, Refact's, Command R's); Llama 3's and Qwen2's are checked through their whole
/// vocabularies above.
#[test]
fn bpe_check_hashes_as_transformers() {
    let Some(py) = python() else { return };
    let src = llama_cpp_dir().join("src");
    if !src.join("conversion/base.py").is_file() {
        gguf_tests::skip(&format!("no llama.cpp source at {}", src.display()));
        return;
    }
    for name in ["gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "mpt", "refact", "command-r"] {
        let Some(g) = model(&format!("vocab/ggml-vocab-{name}.gguf")) else { return };
        let dir = temp_dir("vocab-hash");
        let folder = dir.join("tok");
        run_py_text(&py, "hf_tokenizer_from_gguf.py", &[g.to_str().unwrap(), folder.to_str().unwrap()]);
        let reference = run_py(&py, "vocab_reference.py", &[src.to_str().unwrap(), folder.to_str().unwrap(), "chkhsh"]);
        let tok = vocab::bpe::HfTokenizer::open(&folder).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = vocab::bpe::pre_tokenizer_hash(&tok).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ours, reference["chkhsh"].as_str().unwrap(), "{name}: chkhsh");
    }
}

/// `Phi3MiniModel.set_vocab` with `tokenizer_class` `GPT2Tokenizer` (Phi-4) and
/// `Gemma3Model.set_vocab` without `tokenizer.model` both take GPT-2 BPE: on the folder rebuilt
/// from llama.cpp's gpt-2 vocabulary (whose `tokenizer_config.json` names `GPT2Tokenizer`), the
/// same keys as the reference's.
#[test]
fn gpt2_through_phi3_and_gemma3_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-gpt-2.gguf") else { return };
    check(&g, "phi3", None, |d| vocab::set_vocab_phi3(d, None));
    check(&g, "gemma3", None, |d| vocab::set_vocab_gemma3(d, None));
}
