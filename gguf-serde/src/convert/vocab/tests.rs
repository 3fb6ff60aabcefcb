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
