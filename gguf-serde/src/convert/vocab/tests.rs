//! Hermetic tests: folders written here, expected values from the reference's rules.

use super::*;

/// A temporary folder under `<target>/test-tmp/` (removed when dropped) holding `files`.
fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    // The test binary is `<target>/<profile>/deps/NAME`.
    let exe = std::env::current_exe().unwrap();
    let root = exe.ancestors().nth(3).unwrap().join("test-tmp");
    std::fs::create_dir_all(&root).unwrap();
    let dir = tempfile::Builder::new().prefix("vocab-").tempdir_in(root).unwrap();
    for (name, data) in files {
        std::fs::write(dir.path().join(name), data).unwrap();
    }
    dir
}

fn piece(text: &str, score: f32, kind: u8) -> Vec<u8> {
    let mut p = vec![0x0a, text.len() as u8];
    p.extend_from_slice(text.as_bytes());
    p.push(0x15);
    p.extend_from_slice(&score.to_le_bytes());
    p.extend([0x18, kind]);
    let mut out = vec![0x0a, p.len() as u8];
    out.extend(p);
    out
}

#[test]
fn sentencepiece_keys_in_reference_order() {
    let mut model = piece("<unk>", 0.0, 2);
    model.extend(piece("<s>", 0.0, 3));
    model.extend(piece("</s>", 0.0, 3));
    model.extend(piece("<0x41>", 0.0, 6));
    model.extend(piece("▁a", -2.0, 1));
    let config = br#"{"add_bos_token": true, "add_eos_token": false, "bos_token": "<s>", "eos_token": "</s>",
        "added_tokens_decoder": {"5": {"content": "<|im_end|>", "special": false}, "6": {"content": "x\u2581y", "special": false}},
        "chat_template": "{{ x }}"}"#;
    let tok =
        br#"{"added_tokens": [{"id": 1, "content": "<s>"}, {"id": 2, "content": "</s>"}], "model": {"type": "BPE"}}"#;
    let dir = folder(&[("tokenizer.model", &model), ("tokenizer_config.json", config), ("tokenizer.json", tok)]);
    let kvs = set_vocab_sentencepiece(dir.path(), Some(8)).unwrap();
    let keys: Vec<&str> = kvs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "tokenizer.ggml.model",
            "tokenizer.ggml.pre",
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.scores",
            "tokenizer.ggml.token_type",
            "tokenizer.ggml.bos_token_id",
            "tokenizer.ggml.eos_token_id",
            "tokenizer.ggml.add_bos_token",
            "tokenizer.ggml.add_eos_token",
            "tokenizer.chat_template",
        ]
    );
    let Value::Array(Array::String(tokens)) = &kvs[2].1 else { panic!() };
    assert_eq!(tokens, &["<unk>", "<s>", "</s>", "<0x41>", "▁a", "<|im_end|>", "x y", "[PAD7]"]);
    let Value::Array(Array::F32(scores)) = &kvs[3].1 else { panic!() };
    assert_eq!(scores, &[0.0, 0.0, 0.0, 0.0, -2.0, -1000.0, -1000.0, -10000.0]);
    let Value::Array(Array::I32(types)) = &kvs[4].1 else { panic!() };
    assert_eq!(types, &[2, 3, 3, 6, 1, 3, 4, 5]);
    assert_eq!(kvs[5].1, Value::U32(1));
    assert_eq!(kvs[7].1, Value::Bool(true));
}

#[test]
fn hostile_files_are_typed_errors() {
    let dir = folder(&[("tokenizer.model", b"\x0a\xff")]);
    assert!(matches!(set_vocab_sentencepiece(dir.path(), None), Err(VocabError::Proto { .. })));
    let dir = folder(&[("tokenizer.model", &piece("a", 0.0, 1)), ("added_tokens.json", b"{\"x\": -1}")]);
    assert!(matches!(set_vocab_sentencepiece(dir.path(), None), Err(VocabError::Invalid { .. })));
    let dir = folder(&[
        ("tokenizer.model", &piece("a", 0.0, 1)),
        ("tokenizer_config.json", b"{\"added_tokens_decoder\": {\"q\": {}}}"),
    ]);
    assert!(matches!(set_vocab_sentencepiece(dir.path(), None), Err(VocabError::Invalid { .. })));
    let dir = folder(&[("tokenizer.model", &piece("a", 0.0, 1)), ("tokenizer.json", b"{\"model\": {\"merges\": [1]}")]);
    assert!(matches!(set_vocab_sentencepiece(dir.path(), None), Err(VocabError::Json { .. })));
    let dir = folder(&[]);
    assert!(matches!(set_vocab_sentencepiece(dir.path(), None), Err(VocabError::NotFound { .. })));
}

/// A byte-level BPE `tokenizer.json`: model tokens 0–9 and 11 (no 10), of which 5–9 are also
/// added tokens (the `tokenizers` library keeps the model's id for an added token the model has,
/// and numbers the others from the model's size on), and `merges` as given (`"a b"` strings or
/// `["a", "b"]` pairs).
fn bpe_json(merges: serde_json::Value) -> Vec<u8> {
    let added = |id: u32, content: &str, normalized: bool, special: bool| {
        serde_json::json!({"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false,
            "normalized": normalized, "special": special})
    };
    let j = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [
            added(5, "<|end|>", false, true),
            added(6, "<x>", false, false),
            added(7, "a\u{2581}b", true, false),
            added(8, "<|tool|>", true, false),
            added(9, "\u{120}hi", false, false),
        ],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": {"a": 0, "b": 1, "\u{120}": 2, "ab": 3, "\u{120}a": 4, "<|end|>": 5, "<x>": 6, "a\u{2581}b": 7,
                "<|tool|>": 8, "\u{120}hi": 9, "zz": 11},
            "merges": merges},
    });
    serde_json::to_vec(&j).unwrap()
}

fn any_name(_: &str) -> Option<&'static str> {
    Some("test-pre")
}

fn gpt2_keys(dir: &Path, vocab_size: Option<usize>) -> Result<Vec<(String, Value)>, VocabError> {
    let mut kvs = Kvs::default();
    bpe::gpt2_into_with(&mut kvs, dir, vocab_size, any_name)?;
    Ok(kvs.0)
}

#[test]
fn bpe_tokens_types_padding_and_merges_in_both_forms() {
    let config = br#"{"bos_token": "<|end|>", "eos_token": "<|end|>", "add_bos_token": false}"#;
    for merges in [serde_json::json!(["a b", "Ġ a"]), serde_json::json!([["a", "b"], ["Ġ", "a"]])] {
        let json = bpe_json(merges.clone());
        let dir = folder(&[("tokenizer.json", &json), ("tokenizer_config.json", config)]);
        let kvs = gpt2_keys(dir.path(), Some(13)).unwrap();
        let keys: Vec<&str> = kvs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "tokenizer.ggml.model",
                "tokenizer.ggml.pre",
                "tokenizer.ggml.tokens",
                "tokenizer.ggml.token_type",
                "tokenizer.ggml.merges",
                "tokenizer.ggml.bos_token_id",
                "tokenizer.ggml.eos_token_id",
                "tokenizer.ggml.add_bos_token",
            ],
            "{merges}"
        );
        assert_eq!(kvs[0].1, Value::String("gpt2".into()));
        assert_eq!(kvs[1].1, Value::String("test-pre".into()));
        let Value::Array(Array::String(tokens)) = &kvs[2].1 else { panic!() };
        // An added token that is not `normalized` is its decoded encoding (`Ġhi` → ` hi`); a
        // user-defined one has `▁` as a space; `<|tool|>` looks special.
        assert_eq!(
            tokens,
            &["a", "b", "Ġ", "ab", "Ġa", "<|end|>", "<x>", "a b", "<|tool|>", " hi", "[PAD10]", "zz", "[PAD12]"]
        );
        let Value::Array(Array::I32(types)) = &kvs[3].1 else { panic!() };
        assert_eq!(types, &[1, 1, 1, 1, 1, 3, 4, 4, 3, 4, 5, 1, 5]);
        let Value::Array(Array::String(m)) = &kvs[4].1 else { panic!() };
        assert_eq!(m, &["a b", "Ġ a"], "{merges}");
        assert_eq!(kvs[5].1, Value::U32(5));
        assert_eq!(kvs[7].1, Value::Bool(false));
        // Without config.json's vocab_size, the vocabulary's size (11 tokens): id 11 is not
        // below it (the reference's assertion fails).
        assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::Invalid { .. })));
    }
}

#[test]
fn bpe_unknown_pre_tokenizer_is_an_error_naming_the_hash() {
    let json = bpe_json(serde_json::json!(["a b"]));
    let dir = folder(&[("tokenizer.json", &json)]);
    let tok = bpe::HfTokenizer::open(dir.path()).unwrap();
    let hash = bpe::pre_tokenizer_hash(&tok).unwrap();
    assert_eq!(hash.len(), 64);
    match bpe::set_vocab_gpt2(dir.path(), Some(12)) {
        Err(e @ VocabError::UnknownPreTokenizer { .. }) => {
            let VocabError::UnknownPreTokenizer { hash: h, path, imposed } = &e else { unreachable!() };
            assert_eq!(*h, hash);
            assert_eq!(*imposed, None);
            assert!(path.ends_with("tokenizer.json"));
            assert!(e.to_string().contains(&hash), "{e}");
            assert!(!e.to_string().contains("AutoTokenizer"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // model_type qwen2: transformers 5.24 builds Qwen2Tokenizer (bpe.rs's class test) even when
    // GPT2Tokenizer is declared; the message names the class and that it was imposed.
    let config = r#"{"tokenizer_class": "GPT2Tokenizer"}"#;
    let dir = folder(&[
        ("tokenizer.json", &json),
        ("tokenizer_config.json", config.as_bytes()),
        ("config.json", br#"{"model_type": "qwen2"}"#),
    ]);
    match bpe::set_vocab_gpt2(dir.path(), Some(12)) {
        Err(e @ VocabError::UnknownPreTokenizer { .. }) => {
            let VocabError::UnknownPreTokenizer { imposed, .. } = &e else { unreachable!() };
            assert_eq!(imposed.as_deref(), Some("Qwen2Tokenizer"));
            let m = e.to_string();
            assert!(m.contains("Qwen2Tokenizer") && m.contains("whatever tokenizer.json declares"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bpe_hostile_files_are_typed_errors() {
    let good = bpe_json(serde_json::json!(["a b"]));
    // Every truncation: an error, never a panic.
    for n in (0..good.len()).step_by(7) {
        let dir = folder(&[("tokenizer.json", &good[..n])]);
        assert!(gpt2_keys(dir.path(), None).is_err(), "prefix of {n} bytes");
    }
    let dir = folder(&[("tokenizer.json", b"{\"model\": ")]);
    assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::Json { .. })));
    let dir = folder(&[("tokenizer.json", br#"{"model": {"type": "WordPiece", "vocab": {}}}"#)]);
    assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::Unsupported { .. })));
    let dir = folder(&[("tokenizer.json", br#"{"model": {"vocab": {}}}"#)]);
    assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::Invalid { .. })));
    // A merge of a token the vocabulary lacks: the library refuses it.
    let dir = folder(&[("tokenizer.json", &bpe_json(serde_json::json!(["a q"])))]);
    assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::Tokenizer { .. })));
    // An id not below vocab_size (the reference's assertion).
    let dir = folder(&[("tokenizer.json", &good)]);
    assert!(matches!(gpt2_keys(dir.path(), Some(8)), Err(VocabError::Invalid { .. })));
    let dir = folder(&[]);
    assert!(matches!(gpt2_keys(dir.path(), None), Err(VocabError::NotFound { .. })));
}

#[test]
fn llama_chooses_bpe_or_llama_hf_as_the_reference() {
    // Llama 3's tokenizer.json (ignore_merges, no byte fallback): GPT-2 BPE, which fails here
    // only on the pre-tokenizer hash of this tiny tokenizer.
    let mut j: serde_json::Value = serde_json::from_slice(&bpe_json(serde_json::json!(["a b"]))).unwrap();
    j["model"]["ignore_merges"] = true.into();
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    assert!(matches!(set_vocab_llama(dir.path(), Some(12)), Err(VocabError::UnknownPreTokenizer { .. })));
    assert!(matches!(llama_hf::set_vocab_llama_hf(dir.path()), Err(VocabError::Unsupported { .. })));
    // Byte fallback and a Sequence decoder: gguf-py's LlamaHfVocab. Id 10 has no token below
    // the model's 12 entries (the reference's KeyError).
    j["model"]["ignore_merges"] = false.into();
    j["model"]["byte_fallback"] = true.into();
    j["decoder"] = serde_json::json!({"type": "Sequence", "decoders": []});
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    assert!(matches!(set_vocab_llama(dir.path(), None), Err(VocabError::Invalid { .. })));
    // Without the gap: ids 0-10 are the model's (the added tokens among them), all -1000, normal
    // unless special (none without tokenizer_config.json), <0x0A> a byte. Values as the reference
    // gives them (tests/py/vocab_reference.py on these folders).
    j["model"]["vocab"].as_object_mut().unwrap().remove("zz");
    j["model"]["vocab"]["<0x0A>"] = 1.into();
    j["model"]["vocab"]["b"] = 10.into();
    j["model"]["merges"] = serde_json::json!([]);
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    let kvs = set_vocab_llama(dir.path(), None).unwrap();
    let keys: Vec<&str> = kvs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "tokenizer.ggml.model",
            "tokenizer.ggml.pre",
            "tokenizer.ggml.tokens",
            "tokenizer.ggml.scores",
            "tokenizer.ggml.token_type"
        ]
    );
    assert_eq!(kvs[0].1, Value::String("llama".into()));
    assert_eq!(kvs[1].1, Value::String("default".into()));
    let Value::Array(Array::String(tokens)) = &kvs[2].1 else { panic!() };
    assert_eq!(tokens, &["a", "<0x0A>", "Ġ", "ab", "Ġa", "<|end|>", "<x>", "a\u{2581}b", "<|tool|>", "Ġhi", "b"]);
    assert_eq!(kvs[3].1, Value::Array(Array::F32(vec![-1000.0; 11])));
    assert_eq!(kvs[4].1, Value::Array(Array::I32(vec![1, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1])));
    // A tokenizer_config.json naming <|end|> bos and eos (one a serialized AddedToken): control.
    let config = br#"{"bos_token": "<|end|>", "eos_token": {"__type": "AddedToken", "content": "<|end|>"}}"#;
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap()), ("tokenizer_config.json", config)]);
    let v = llama_hf::llama_hf_vocab(dir.path()).unwrap();
    assert_eq!(v.tokens.len(), 11);
    assert_eq!(v.types, [1, 6, 1, 1, 1, 3, 1, 1, 1, 1, 1]);
    let kvs = llama_hf::set_vocab_llama_hf(dir.path()).unwrap();
    assert_eq!(kvs[5], ("tokenizer.ggml.bos_token_id".to_owned(), Value::U32(5)));
    assert_eq!(kvs[6], ("tokenizer.ggml.eos_token_id".to_owned(), Value::U32(5)));
    // An object that is not a serialized AddedToken (transformers' TypeError).
    let config = br#"{"eos_token": {"content": "<|end|>"}}"#;
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap()), ("tokenizer_config.json", config)]);
    assert!(matches!(llama_hf::llama_hf_vocab(dir.path()), Err(VocabError::Invalid { .. })));
}

#[test]
fn llama_hf_checks_as_gguf_py() {
    let mut j: serde_json::Value = serde_json::from_slice(&bpe_json(serde_json::json!(["a b"]))).unwrap();
    j["model"]["byte_fallback"] = true.into();
    // A null decoder: the reference's TypeError, caught by LlamaModel.set_vocab, which takes GPT-2
    // BPE (failing here on the tiny tokenizer's pre-tokenizer hash).
    j["decoder"] = serde_json::Value::Null;
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    assert!(matches!(set_vocab_llama(dir.path(), Some(12)), Err(VocabError::UnknownPreTokenizer { .. })));
    assert!(matches!(llama_hf::set_vocab_llama_hf(dir.path()), Err(VocabError::Unsupported { .. })));
    // No decoder, or a model without a type: the reference's KeyError.
    j.as_object_mut().unwrap().remove("decoder");
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    assert!(matches!(set_vocab_llama(dir.path(), Some(12)), Err(VocabError::Invalid { .. })));
    j["decoder"] = serde_json::json!({"type": "Sequence", "decoders": []});
    j["model"].as_object_mut().unwrap().remove("type");
    let dir = folder(&[("tokenizer.json", &serde_json::to_vec(&j).unwrap())]);
    assert!(matches!(set_vocab_llama(dir.path(), Some(12)), Err(VocabError::Invalid { .. })));
    // No tokenizer.json at all.
    let dir = folder(&[]);
    assert!(matches!(llama_hf::set_vocab_llama_hf(dir.path()), Err(VocabError::NotFound { .. })));
}

#[test]
fn glm_special_ids_come_from_added_tokens_after_the_folders() {
    let config = br#"{"bos_token": "<|end|>"}"#;
    let dir = folder(&[("tokenizer.json", &bpe_json(serde_json::json!(["a b"]))), ("tokenizer_config.json", config)]);
    // bos is the folder's (<|end|>, 5): SpecialVocab keeps the first id set; eot (<|tool|>, 8)
    // and unk (<x>, 6) come from the lookups, after the folder's.
    let kvs =
        bpe::glm_with(dir.path(), Some(13), &[("bos", "<x>"), ("eot", "<|tool|>"), ("unk", "<x>")], any_name).unwrap();
    let ids: Vec<(&str, &Value)> =
        kvs.iter().filter(|(k, _)| k.ends_with("_token_id")).map(|(k, v)| (k.as_str(), v)).collect();
    assert_eq!(
        ids,
        [
            ("tokenizer.ggml.bos_token_id", &Value::U32(5)),
            ("tokenizer.ggml.eot_token_id", &Value::U32(8)),
            ("tokenizer.ggml.unknown_token_id", &Value::U32(6))
        ]
    );
    assert_eq!(kvs[0].1, Value::String("gpt2".into()));
    // A text that is not an added token (the reference's KeyError), naming tokenizer.json.
    match bpe::glm_with(dir.path(), Some(13), &[("bos", "[gMASK]")], any_name) {
        Err(e @ VocabError::Invalid { .. }) => {
            assert!(e.path().ends_with("tokenizer.json") && e.to_string().contains("[gMASK]"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}
