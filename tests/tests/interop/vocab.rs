//! `convert::vocab` against llama.cpp's converter: the tokenizer keys of a Hugging Face
//! tokenizer folder (rebuilt from llama.cpp's real vocabularies by `tests/py/hf_tokenizer_from_gguf.py`)
//! equal, key by key with type and value, in order, what the reference's own vocabulary code
//! writes for the same folder (`tests/py/vocab_reference.py`, which runs `conversion/base.py`'s
//! methods and the architectures' `set_vocab` from the llama.cpp source tree), for SentencePiece,
//! GPT-2 BPE and `LlamaHfVocab` vocabularies and the Gemma 2 and GLM entries; libllama's
//! tokenizer (`llama-tokenize`'s call, through `tests/harness/llama_tokenize.c`, and the tool
//! itself on the longest text) on a vocab-only file with our keys gives the ids of llama.cpp's
//! test vectors (llama-spm, phi-3, llama-bpe, qwen2); the pre-tokenizer table is the reference's;
//! and a whole Llama conversion from `tokenizer.json` alone equals the reference's.
//!
//! The rebuilt folders and the reference's outputs are made once per content and kept
//! ([`gguf_tests::py_cache`]); each test edits a copy.

use std::path::Path;

use gguf_serde::convert::vocab;
use gguf_serde::Value;
use gguf_tests::{llama_cpp_dir, model, owned_type_name, owned_value_json, py_cache, python, run_py, temp_dir};
use serde_json::{json, Value as Json};

/// The vendored llama.cpp source (its `conversion/` package), or `None` after a skip.
fn reference_src() -> Option<std::path::PathBuf> {
    let src = llama_cpp_dir().join("src");
    if !src.join("conversion/base.py").is_file() {
        gguf_tests::skip(&format!("no llama.cpp source at {}", src.display()));
        return None;
    }
    Some(src)
}

/// What `tests/py/vocab_reference.py` prints for `folder` and `args` (after `src` and `folder`),
/// run once per folder content, arguments and reference sources (`conversion/`, `gguf-py/`) and
/// kept ([`gguf_tests::py_cache`]).
fn vocab_reference(py: &Path, src: &Path, folder: &Path, args: &[&str]) -> Json {
    let (s, f) = (src.to_str().unwrap(), folder.to_str().unwrap());
    let mut all = vec![s, f];
    all.extend(args);
    let sources = [src.join("conversion"), src.join("gguf-py/gguf")];
    py_cache::run_py_cached(py, "vocab_reference.py", &all, &[folder, &sources[0], &sources[1]])
}

/// The folder `tests/py/hf_tokenizer_from_gguf.py` rebuilds from `gguf`, made once per file
/// content and kept ([`gguf_tests::py_cache`]), copied to `to` (which the test may edit).
fn rebuilt_folder(py: &Path, gguf: &Path, to: &Path) {
    let kept = py_cache::cached_py_folder(py, "hf_tokenizer_from_gguf.py", &[gguf.to_str().unwrap()], &[gguf]);
    py_cache::copy_folder(&kept, to);
}

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
    rebuilt_folder(&py, gguf, &folder);
    edit(&folder);
    let Some(src) = reference_src() else { return };
    let n = vocab_size.map(|n| n.to_string());
    let mut args = vec![method];
    args.extend(n.as_deref());
    let reference = vocab_reference(&py, &src, &folder, &args);
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
/// read as `tests/test-tokenizer-0` reads them): libllama's tokenizer (no BOS, no special parsing,
/// as that test tokenizes) on a vocab-only file whose tokenizer keys are ours gives the expected
/// ids for every text, through one load of the file (`tests/harness/llama_tokenize.c`), and
/// `llama-tokenize` itself gives the same ids for the longest text.
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
    let Some(harness) = gguf_tests::llama_tokenize_harness() else { return };
    let models = llama_cpp_dir().join("src/models");
    let inp = std::fs::read_to_string(models.join(format!("ggml-vocab-{name}.gguf.inp"))).expect(".inp");
    let out = std::fs::read_to_string(models.join(format!("ggml-vocab-{name}.gguf.out"))).expect(".out");
    let dir = temp_dir("vocab-tok");
    let folder = dir.join("tok");
    rebuilt_folder(&py, &g, &folder);
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
    // Every text through one load of the vocabulary (the harness), each framed by its length.
    let mut framed = Vec::new();
    for text in &inputs {
        framed.extend_from_slice(format!("{}\n", text.len()).as_bytes());
        framed.extend_from_slice(text.as_bytes());
        framed.push(b'\n');
    }
    let texts = dir.join("texts");
    std::fs::write(&texts, framed).unwrap();
    let o = gguf_tests::output_with_deadline(
        std::process::Command::new(&harness).arg(&file).arg(&texts),
        std::time::Duration::from_secs(300),
    );
    assert!(o.status.success(), "llama_tokenize: {}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).expect("ids are ASCII");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), inputs.len(), "{name}: one line of ids per text");
    let parse = |ids: &str| -> Vec<u64> { ids.split_whitespace().map(|s| s.parse().unwrap()).collect() };
    for (i, ((text, ids), got)) in inputs.iter().zip(&expected).zip(&lines).enumerate() {
        assert_eq!(parse(got), parse(ids), "{name} test {i}: {text:?}");
    }

    // The harness is `llama-tokenize` without its per-process load: the tool itself on the
    // longest text gives the same ids.
    let (i, text) = inputs.iter().enumerate().max_by_key(|(_, t)| t.len()).unwrap();
    let prompt = dir.join("longest.txt");
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
    assert_eq!(got, parse(lines[i]), "{name} test {i}: llama-tokenize and the harness differ");
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
    let Some(src) = reference_src() else { return };
    for name in ["gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "mpt", "refact", "command-r"] {
        let Some(g) = model(&format!("vocab/ggml-vocab-{name}.gguf")) else { return };
        let dir = temp_dir("vocab-hash");
        let folder = dir.join("tok");
        rebuilt_folder(&py, &g, &folder);
        let reference = vocab_reference(&py, &src, &folder, &["chkhsh"]);
        let tok = vocab::bpe::HfTokenizer::open(&folder).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = vocab::bpe::pre_tokenizer_hash(&tok).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(ours, reference["chkhsh"].as_str().unwrap(), "{name}: chkhsh");
    }
}

/// OpenAI's o200k_base vocabulary (gpt-4o's; gpt-oss's `o200k_harmony` is it with chat special
/// tokens), from npm `tiktoken`'s `encoders/o200k_base.json` (`scripts/fetch-o200k.sh`), made a
/// `tokenizer.json` by transformers' own `TikTokenConverter` (`tests/py/o200k_tokenizer.py`): its
/// 199,998-token BPE and its split rule (case-aware letter runs, 1–3 digit numbers) through this
/// crate's `tokenizers` build (fancy-regex) give the hash `transformers.AutoTokenizer` gives in the
/// reference's own `get_vocab_base_pre` code, which its table names `gpt-4o`; and the GPT-2 BPE
/// keys (`_set_vocab_gpt2`) are the reference's. Skipped without the fetched file.
#[test]
fn o200k_vocabulary_as_reference() {
    let Some(py) = python() else { return };
    let Some(src) = reference_src() else { return };
    let Some(o200k) = model("o200k/o200k_base.json") else { return };
    // Made once per o200k_base.json and kept; not changed here.
    let folder = py_cache::cached_py_folder(&py, "o200k_tokenizer.py", &[o200k.to_str().unwrap()], &[&o200k]);
    let r = vocab_reference(&py, &src, &folder, &["chkhsh"]);
    let theirs = r["chkhsh"].as_str().expect("chkhsh");
    let tok = vocab::bpe::HfTokenizer::open(&folder).expect("o200k tokenizer.json");
    let ours = vocab::bpe::pre_tokenizer_hash(&tok).expect("hash");
    assert_eq!(ours, theirs, "chkhsh");
    assert_eq!(vocab::bpe::PRE_TOKENIZER_HASHES.iter().find(|(h, _)| *h == ours).map(|(_, n)| *n), Some("gpt-4o"));
    let reference = vocab_reference(&py, &src, &folder, &["_set_vocab_gpt2"]);
    let kvs = vocab::bpe::set_vocab_gpt2(&folder, None).expect("our vocabulary");
    compare(&ours_json(&kvs), &reference);
}

/// A Qwen2 checkpoint whose `tokenizer.json` is GPT-2's (the folder rebuilt from llama.cpp's
/// gpt-2 vocabulary, `tokenizer_class` set to `Qwen2Tokenizer`): transformers 5 loads it as
/// `Qwen2Tokenizer`, which rebuilds the pipeline with Qwen2's split rule (and NFC), so the hash the
/// reference computes (`vocab_reference.py ... chkhsh`, its own `AutoTokenizer` call) is not
/// GPT-2's and not in its table: the reference refuses the pre-tokenizer. `set_vocab_qwen2`
/// hashes through the same pipeline and refuses naming that hash; under `GPT2Tokenizer` the
/// same files hash to GPT-2's, as in transformers.
#[test]
fn qwen2_class_imposes_its_split_rule_as_transformers() {
    let Some(py) = python() else { return };
    let Some(src) = reference_src() else { return };
    let Some(g) = model("vocab/ggml-vocab-gpt-2.gguf") else { return };
    let dir = temp_dir("vocab-qwen2-class");
    let folder = dir.join("tok");
    rebuilt_folder(&py, &g, &folder);
    let config_path = folder.join("tokenizer_config.json");
    let mut config: Json = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    let reference = |py: &Path| {
        let r = vocab_reference(py, &src, &folder, &["chkhsh"]);
        r["chkhsh"].as_str().expect("chkhsh").to_owned()
    };
    assert_eq!(config["tokenizer_class"], "GPT2Tokenizer");
    let gpt2 = reference(&py);
    let keys = vocab::set_vocab_qwen2(&folder, None).expect("GPT2Tokenizer");
    let pre = keys.iter().find(|(k, _)| k == "tokenizer.ggml.pre").map(|(_, v)| v.clone());
    assert_eq!(pre, Some(Value::String("gpt-2".into())));
    assert_eq!(vocab::bpe::PRE_TOKENIZER_HASHES.iter().find(|(h, _)| *h == gpt2).map(|(_, n)| *n), Some("gpt-2"));

    config["tokenizer_class"] = json!("Qwen2Tokenizer");
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    let theirs = reference(&py);
    assert_ne!(theirs, gpt2, "transformers' Qwen2Tokenizer did not change the hash");
    assert!(
        vocab::bpe::PRE_TOKENIZER_HASHES.iter().all(|(h, _)| *h != theirs),
        "the reference's table names {theirs}: it would not refuse"
    );
    match vocab::set_vocab_qwen2(&folder, None) {
        Err(vocab::VocabError::UnknownPreTokenizer { hash, .. }) => assert_eq!(hash, theirs),
        other => panic!("not refused as the reference refuses: {:?}", other.map(|k| k.len())),
    }

    // `model_type` `qwen2` is in transformers' MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS: its
    // registered Qwen2Tokenizer is built even when `GPT2Tokenizer` is declared.
    config["tokenizer_class"] = json!("GPT2Tokenizer");
    std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    std::fs::write(folder.join("config.json"), r#"{"model_type": "qwen2"}"#).unwrap();
    let declared_gpt2 = reference(&py);
    assert_eq!(declared_gpt2, theirs, "transformers did not build Qwen2Tokenizer for model_type qwen2");
    match vocab::set_vocab_qwen2(&folder, None) {
        Err(vocab::VocabError::UnknownPreTokenizer { hash, .. }) => assert_eq!(hash, theirs),
        other => panic!("model_type qwen2: not refused as the reference refuses: {:?}", other.map(|k| k.len())),
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

/// The pre-tokenizer table ([`vocab::bpe::PRE_TOKENIZER_HASHES`], generated by
/// `scripts/gen-bpe-pre-hashes.py` with regular expressions) and the check text are those of the
/// vendored reference's `get_vocab_base_pre`, read from its syntax tree by
/// `tests/py/pre_hashes_reference.py`: the same rows in the same order (one per hash, with the name
/// the chain of `if`s returns), and every hash is looked up to its name.
#[test]
fn pre_tokenizer_table_is_the_references() {
    let Some(py) = python() else { return };
    let Some(src) = reference_src() else { return };
    let r = run_py(&py, "pre_hashes_reference.py", &[src.to_str().unwrap()]);
    assert_eq!(r["chktxt"].as_str(), Some(vocab::bpe::CHKTXT), "check text");
    let theirs: Vec<(String, String)> = r["table"]
        .as_array()
        .expect("table")
        .iter()
        .map(|row| (row[0].as_str().unwrap().to_owned(), row[1].as_str().unwrap().to_owned()))
        .collect();
    assert!(theirs.len() > 90, "{} rows read from the reference", theirs.len());
    let ours: Vec<(String, String)> =
        vocab::bpe::PRE_TOKENIZER_HASHES.iter().map(|(h, n)| (h.to_string(), n.to_string())).collect();
    assert_eq!(ours, theirs);
    for (h, n) in &theirs {
        assert_eq!(vocab::bpe::pre_tokenizer_name(h), Some(n.as_str()), "{h}");
    }
}

/// Removes `tokenizer.model` from a folder rebuilt from a SentencePiece vocabulary: what is left
/// is the `tokenizer.json` transformers itself wrote for it (a BPE with byte fallback and a
/// `Sequence` decoder), the folder gguf-py's `LlamaHfVocab` reads.
fn without_tokenizer_model(dir: &Path) {
    std::fs::remove_file(dir.join("tokenizer.model")).unwrap();
}

/// `_set_vocab_llama_hf` (gguf-py's `LlamaHfVocab`, through `transformers.AutoTokenizer`) on the
/// llama-spm folder without `tokenizer.model`: the same keys, and `LlamaModel.set_vocab` takes it.
#[test]
fn llama_spm_llama_hf_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    check_edited(&g, "_set_vocab_llama_hf", None, without_tokenizer_model, vocab::llama_hf::set_vocab_llama_hf);
    check_edited(&g, "llama", Some(32000), without_tokenizer_model, |d| vocab::set_vocab_llama(d, Some(32000)));
}

/// The same with a `tokenizer_config.json` as Llama checkpoints have them (`LlamaTokenizerFast`,
/// so transformers' Llama class with its default `<s>` and `<unk>`), an `eos_token` and an
/// `image_token` the vocabulary lacks (transformers adds them past the vocabulary), extra special
/// tokens (one new, one the model's `</s>`), a user-defined added token and one in
/// `added_tokens_decoder` only: the added and special tokens as the reference lists and types them.
#[test]
fn llama_spm_llama_hf_with_added_and_special_tokens_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-llama-spm.gguf") else { return };
    let edit = |dir: &Path| {
        without_tokenizer_model(dir);
        let p = dir.join("tokenizer_config.json");
        let mut c: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let c = c.as_object_mut().unwrap();
        c.insert("tokenizer_class".into(), json!("LlamaTokenizerFast"));
        c.remove("bos_token");
        c.remove("unk_token");
        c.insert("eos_token".into(), json!("<eot>"));
        c.insert("image_token".into(), json!("<image>"));
        c.insert("additional_special_tokens".into(), json!(["<x1>", "</s>"]));
        let flags = json!({"lstrip": false, "normalized": false, "rstrip": false, "single_word": false});
        let mut only_config = flags.clone();
        only_config["content"] = json!("<|only_config|>");
        only_config["special"] = json!(false);
        c["added_tokens_decoder"]["32005"] = only_config;
        std::fs::write(&p, serde_json::to_vec(&c).unwrap()).unwrap();
        let p = dir.join("tokenizer.json");
        let mut j: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let mut user = flags;
        user["id"] = json!(32000);
        user["content"] = json!("<user_word>");
        user["special"] = json!(false);
        j["added_tokens"].as_array_mut().unwrap().push(user);
        std::fs::write(&p, serde_json::to_vec(&j).unwrap()).unwrap();
    };
    check_edited(&g, "_set_vocab_llama_hf", None, edit, vocab::llama_hf::set_vocab_llama_hf);
}

/// `Gemma2Model.set_vocab` (SentencePiece, then `add_space_prefix` false) on Gemma's
/// vocabulary (the Gemma 3 270M file's, the SentencePiece model Gemma 2 shares in kind).
#[test]
fn gemma_spm_gemma2_set_vocab_as_reference() {
    let Some(g) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    check(&g, "gemma2", None, |d| vocab::set_vocab_gemma2(d, None));
}

/// Makes the folder rebuilt from Qwen2's vocabulary a GLM-4 style one: the generic tokenizer
/// class GLM-4's checkpoints name, and the added tokens GLM's `set_vocab` looks up (`<|user|>`,
/// `[gMASK]`, `<|observation|>`; `<|endoftext|>` is Qwen2's) past the vocabulary, in
/// `tokenizer.json` and `added_tokens_decoder`.
fn as_glm(dir: &Path) {
    let new = ["<|user|>", "[gMASK]", "<|observation|>"];
    let p = dir.join("tokenizer.json");
    let mut j: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let first = j["model"]["vocab"].as_object().unwrap().len();
    let entry = |i: usize, t: &str| {
        json!({"id": first + i, "content": t, "single_word": false, "lstrip": false, "rstrip": false,
               "normalized": false, "special": true})
    };
    let list = j["added_tokens"].as_array_mut().unwrap();
    list.extend(new.iter().enumerate().map(|(i, t)| entry(i, t)));
    std::fs::write(&p, serde_json::to_vec(&j).unwrap()).unwrap();
    let p = dir.join("tokenizer_config.json");
    let mut c: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    c["tokenizer_class"] = json!("PreTrainedTokenizerFast");
    for (i, t) in new.iter().enumerate() {
        let mut e = entry(i, t);
        e.as_object_mut().unwrap().remove("id");
        c["added_tokens_decoder"][(first + i).to_string()] = e;
    }
    std::fs::write(&p, serde_json::to_vec(&c).unwrap()).unwrap();
}

/// `Glm4Model.set_vocab` and `_set_vocab_glm` (GLM-4.5): GPT-2 BPE with special ids taken from
/// the added tokens; the folder's own `bos`/`eos`/`unk` (Qwen2's `<|endoftext|>`) stay, the types
/// it does not set (`eot`, `eom`, GLM-4.5's `bos` when the folder has none) come from the lookups.
#[test]
fn glm_set_vocab_as_reference() {
    let Some(g) = model("vocab/ggml-vocab-qwen2.gguf") else { return };
    check_edited(&g, "glm4", None, as_glm, |d| vocab::bpe::set_vocab_glm4(d, None));
    check_edited(&g, "_set_vocab_glm", None, as_glm, |d| vocab::bpe::set_vocab_glm(d, None));
    // Without a bos_token in tokenizer_config.json, GLM-4.5's is [gMASK].
    let no_bos = |dir: &Path| {
        as_glm(dir);
        let p = dir.join("tokenizer_config.json");
        let mut c: Json = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        c.as_object_mut().unwrap().remove("bos_token");
        std::fs::write(&p, serde_json::to_vec(&c).unwrap()).unwrap();
    };
    check_edited(&g, "_set_vocab_glm", None, no_bos, |d| vocab::bpe::set_vocab_glm(d, None));
}

/// `gguf convert` (the library's `convert`) of the Llama 2 converter-reference checkpoint
/// (`tests/py/make_convert_inputs.py`, checked against the manifest's digests) without its
/// `tokenizer.model`, so that `LlamaModel.set_vocab` takes `LlamaHfVocab`: every key that is not
/// a tokenizer key is the reference's (`tests/data/convert-refs.json`, f32), in order, with the
/// tokenizer keys at the reference's place; the tensors are the reference's (name, type, shape,
/// size, offset within the data section); and the tokenizer keys, in order, with types and values,
/// are those of the reference's `LlamaModel.set_vocab` on the same folder (`vocab_reference.py`,
/// config.json's `vocab_size` 32000).
#[test]
fn llama2_checkpoint_without_tokenizer_model_converts_as_reference() {
    use gguf_serde::convert::{convert, ConvertOptions, OutType};
    use gguf_tests::convert_refs::{convert_ref, describe_gguf, make_convert_case};
    let Some(py) = python() else { return };
    let Some(src) = reference_src() else { return };
    let case = "tiny-Llama-2-chat-hf";
    let Some(dir) = make_convert_case(case) else { return };
    without_tokenizer_model(&dir);
    let card = run_py(&py, "model_card.py", &[&dir.to_string_lossy()]);
    let card = card.as_object().is_some_and(|m| !m.is_empty()).then_some(card);
    let out = dir.tmp.join("llama-hf.gguf");
    convert(&*dir, &out, &ConvertOptions { model_card: card.as_ref(), ..ConvertOptions::new(OutType::F32) })
        .unwrap_or_else(|e| panic!("{e:?}"));
    let ours = describe_gguf(&out).expect("python");
    let theirs = convert_ref(case, "f32");
    let split = |d: &Json| -> (Vec<Json>, Option<usize>) {
        let keys = d["keys"].as_array().expect("keys");
        let first = keys.iter().position(|k| k["key"].as_str().unwrap_or("").starts_with("tokenizer."));
        (keys.iter().filter(|k| !k["key"].as_str().unwrap_or("").starts_with("tokenizer.")).cloned().collect(), first)
    };
    let (a, b) = (split(&ours), split(&theirs));
    assert_eq!(a.0, b.0, "the keys other than tokenizer.*");
    assert_eq!(a.1, b.1, "the place of the tokenizer keys");
    let tensors = |d: &Json| -> Vec<Json> {
        let base = d["data_offset"].as_u64().expect("data_offset");
        d["tensors"]
            .as_array()
            .expect("tensors")
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t["data_offset"] = json!(t["data_offset"].as_u64().expect("offset") - base);
                t
            })
            .collect()
    };
    assert_eq!(tensors(&ours), tensors(&theirs), "tensors");

    let reference = vocab_reference(&py, &src, &dir, &["llama", "32000"]);
    assert_eq!(reference[0]["key"], "tokenizer.ggml.model");
    assert_eq!(reference[0]["value"], "llama");
    let file = gguf_serde::Gguf::open(&out).unwrap();
    let kvs: Vec<(String, Value)> = file
        .metadata()
        .filter(|kv| kv.key.starts_with("tokenizer."))
        .map(|kv| (kv.key.to_string(), kv.value.to_owned_value()))
        .collect();
    compare(&ours_json(&kvs), &reference);
}
