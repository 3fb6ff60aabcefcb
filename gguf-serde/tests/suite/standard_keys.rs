//! The registry of standard keys (`format::keys`) and the typed `general.*` / tokenizer structs
//! (`metadata::standard`), without Python. The registry's key set and types are checked against
//! gguf-py itself in gguf-tests (`tests/interop/standard_keys.rs`); here: how concrete keys
//! resolve, what llama.cpp's loader accepts (its rules, `src/llama-model-loader.cpp`), that the
//! typed structs write exactly the registry's types, and `ops::edit::parse_value` using it.

use gguf_serde::format::keys::{self, KeyType, STANDARD_KEYS};
use gguf_serde::metadata::standard::{General, StandardMetadata, Tokenizer};
use gguf_serde::ops::edit::parse_value;
use gguf_serde::{ErrorKind, Gguf, MetadataOptions, Value, ValueRef, ValueType};

#[test]
fn lookup_resolves_placeholders() {
    let m = keys::lookup("llama.rope.freq_base").unwrap();
    assert_eq!((m.spec.key, m.arch, m.spec.name), ("{arch}.rope.freq_base", Some("llama"), "ROPE_FREQ_BASE"));
    assert_eq!(m.spec.ty, KeyType::Scalar(ValueType::F32));
    let m = keys::lookup("qwen2.attention.head_count").unwrap();
    assert_eq!((m.spec.key, m.arch), (keys::ATTENTION_HEAD_COUNT, Some("qwen2")));
    assert_eq!(m.spec.ty, KeyType::PerLayer(ValueType::U32));
    // Exact keys win over templates; numbered and named keys.
    let m = keys::lookup("tokenizer.chat_template").unwrap();
    assert_eq!((m.spec.key, m.arch), (keys::TOKENIZER_CHAT_TEMPLATE, None));
    assert_eq!(keys::lookup("tokenizer.chat_template.tool_use").unwrap().spec.key, keys::TOKENIZER_CHAT_TEMPLATE_N);
    assert_eq!(keys::lookup("general.base_model.12.name").unwrap().spec.key, keys::GENERAL_BASE_MODEL_NAME);
    assert_eq!(keys::lookup("gemma-embedding.dense_2_feat_in").unwrap().spec.key, keys::LLM_DENSE_FEAT_IN_SIZE);
    assert_eq!(keys::lookup("general.alignment").unwrap().spec.ty, KeyType::Scalar(ValueType::U32));
    assert_eq!(keys::lookup("split.count").unwrap().spec.ty, KeyType::Scalar(ValueType::U16));
    // Not standard: a number that is not one, an unknown key, an empty segment, non-ASCII.
    for k in [
        "general.base_model.x.name",
        "llama.rope.freq",
        "x",
        "",
        ".rope.freq_base",
        "llama.rope.freq_baseé",
        "é.rope.freq_base.x",
    ] {
        assert!(keys::lookup(k).is_none(), "{k}");
    }
    // Non-ASCII architecture names still resolve (the key is any UTF-8).
    assert_eq!(keys::lookup("é.rope.freq_base").unwrap().arch, Some("é"));
    // The spec's own namespaces are not architectures.
    for k in ["general.rope.freq_base", "tokenizer.context_length", "split.attention.head_count"] {
        assert!(keys::lookup(k).is_none(), "{k}");
    }
}

#[test]
fn every_template_resolves_to_itself_and_constants_match() {
    for s in STANDARD_KEYS {
        let concrete = s
            .key
            .replace("{arch}", "llama")
            .replace("{id}", "0")
            .replace("{name}", "rag")
            .replace("{dense}", "dense_3");
        let m = keys::lookup(&concrete).unwrap_or_else(|| panic!("{concrete}"));
        assert_eq!(m.spec, s, "{concrete}");
        assert!(!s.doc.is_empty() && !s.source.is_empty(), "{}", s.key);
        let (KeyType::Scalar(t) | KeyType::Array(t) | KeyType::PerLayer(t)) = s.ty else {
            panic!("{}: key type {} is new to this test", s.key, s.ty)
        };
        assert_ne!(t, ValueType::Array, "{}", s.key);
    }
    assert_eq!(keys::GENERAL_ALIGNMENT, "general.alignment");
    assert_eq!(keys::SPLIT_TENSORS_COUNT, "split.tensors.count");
}

#[test]
fn accepts_follows_llama_cpp_loader_rules() {
    use ValueType::*;
    let f32_ = KeyType::Scalar(F32);
    assert!(f32_.accepts(F32, None));
    for t in [U32, F64, I32, String] {
        assert!(!f32_.accepts(t, None), "{t}");
    }
    let per_layer = KeyType::PerLayer(U32);
    assert!(
        per_layer.accepts(U32, None) && per_layer.accepts(Array, Some(I32)) && per_layer.accepts(Array, Some(Bool))
    );
    assert!(!per_layer.accepts(I32, None) && !per_layer.accepts(Array, Some(F32)) && !per_layer.accepts(F32, None));
    let strings = KeyType::Array(String);
    assert!(
        strings.accepts(Array, Some(String)) && !strings.accepts(String, None) && !strings.accepts(Array, Some(U8))
    );
    assert_eq!(per_layer.to_string(), "u32 or array<u32>");
    assert_eq!(strings.to_string(), "array<string>");
}

fn full() -> StandardMetadata<std::string::String> {
    let s = |x: &str| Some(x.to_owned());
    StandardMetadata {
        general: General {
            architecture: s("llama"),
            type_: s("model"),
            quantization_version: Some(2),
            alignment: Some(64),
            file_type: Some(15),
            name: s("n"),
            author: s("a"),
            version: s("v"),
            organization: s("o"),
            finetune: s("f"),
            basename: s("b"),
            description: s("d"),
            quantized_by: s("q"),
            size_label: s("1B"),
            license: s("mit"),
            license_name: s("MIT"),
            license_link: s("https://x"),
            url: s("u"),
            doi: s("doi"),
            uuid: s("uuid"),
            repo_url: s("r"),
            source_url: s("su"),
            source_doi: s("sd"),
            source_uuid: s("suu"),
            source_repo_url: s("sr"),
            base_model_count: Some(1),
            dataset_count: Some(2),
            tags: Some(vec!["t".into()]),
            languages: Some(vec!["en".into()]),
        },
        tokenizer: Tokenizer {
            model: s("gpt2"),
            pre: s("qwen2"),
            tokens: Some(vec!["a".into(), "b".into()]),
            token_type: Some(vec![1, 3]),
            token_type_count: Some(2),
            scores: Some(vec![0.0, -1.0]),
            merges: Some(vec!["a b".into()]),
            bos_token_id: Some(0),
            eos_token_id: Some(1),
            eot_token_id: Some(1),
            eom_token_id: Some(1),
            unknown_token_id: Some(0),
            separator_token_id: Some(0),
            padding_token_id: Some(1),
            mask_token_id: Some(1),
            add_bos_token: Some(true),
            add_eos_token: Some(false),
            add_sep_token: Some(false),
            add_space_prefix: Some(false),
            remove_extra_whitespaces: Some(true),
            chat_template: s("{{ x }}"),
        },
    }
}

#[test]
fn standard_structs_write_registry_types_and_read_back() {
    let meta = full();
    let bytes = gguf_serde::to_vec(&meta).unwrap();
    let file = Gguf::from_slice(&bytes).unwrap();
    // Every field is one key (29 general, 21 tokenizer), each a standard key of the type
    // llama.cpp reads.
    assert_eq!(file.kv_count(), 50);
    for kv in file.metadata() {
        let m = keys::lookup(kv.key.to_str().unwrap()).unwrap_or_else(|| panic!("{} is not a standard key", kv.key));
        assert_eq!(m.arch, None, "{}", kv.key);
        let elem = kv.value.as_array().map(|a| a.elem_type());
        assert!(
            m.spec.ty.accepts(kv.value.value_type(), elem),
            "{}: {} but {}",
            kv.key,
            kv.value.type_name(),
            m.spec.ty
        );
    }
    assert_eq!(file.get("general.license.name"), Some(ValueRef::String("MIT".into())));
    assert_eq!(file.get("tokenizer.ggml.seperator_token_id"), Some(ValueRef::U32(0)));
    let back: StandardMetadata<&str> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(back.general, meta.general);
    assert_eq!(back.tokenizer.tokens, Some(vec!["a", "b"]));
    assert_eq!(back.tokenizer.chat_template, meta.tokenizer.chat_template);
    let owned: StandardMetadata = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(owned, meta);

    // Empty groups are left out and read back as the default; other keys are ignored.
    let only =
        StandardMetadata::<std::string::String> { general: meta.general.clone(), tokenizer: Tokenizer::default() };
    let pairs = MetadataOptions::new().to_pairs(&only).unwrap();
    assert!(pairs.iter().all(|(k, _)| k.starts_with("general.")));
    let back: StandardMetadata = gguf_serde::from_slice(&gguf_serde::to_vec(&only).unwrap()).unwrap();
    assert_eq!(back, only);
    assert!(back.tokenizer.is_empty() && !back.general.is_empty());
    let nothing: StandardMetadata =
        gguf_serde::from_slice(&gguf_serde::to_vec(&StandardMetadata::<std::string::String>::default()).unwrap())
            .unwrap();
    assert!(nothing.general.is_empty());
}

#[test]
fn a_group_with_any_one_key_is_written() {
    // A file of one standard key (each of the 50 the structs name, written by the container
    // writer) reads into the structs and writes back as that one key: the group is left out
    // only when every one of its fields is None.
    let stored = |bytes: &[u8]| -> Vec<(std::string::String, Value)> {
        let f = Gguf::from_slice(bytes).unwrap();
        f.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect()
    };
    let all = stored(&gguf_serde::to_vec(&full()).unwrap());
    assert_eq!(all.len(), 50);
    for (key, value) in all {
        let mut w = gguf_serde::GgufWriter::new(Vec::new());
        w.add_kv(&key, value.clone()).unwrap();
        let one: StandardMetadata = gguf_serde::from_slice(&w.finish().unwrap()).unwrap();
        assert_eq!(one.general.is_empty(), !key.starts_with("general."), "{key}");
        assert_eq!(one.tokenizer.is_empty(), !key.starts_with("tokenizer."), "{key}");
        assert_eq!(stored(&gguf_serde::to_vec(&one).unwrap()), [(key.clone(), value)], "{key}");
    }
}

#[test]
fn standard_structs_refuse_a_wrong_type_naming_the_key() {
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("tokenizer.ggml.bos_token_id", "one").unwrap();
    let bytes = w.finish().unwrap();
    let err = gguf_serde::from_slice::<StandardMetadata>(&bytes).unwrap_err();
    assert_eq!(err.key(), Some("tokenizer.ggml.bos_token_id"), "{err}");
}

#[test]
fn parse_value_takes_the_registry_type() {
    // A standard key: the registry's type, whatever the existing value's type.
    assert_eq!(parse_value("llama.rope.freq_base", "10000", None, None).unwrap(), Value::F32(10000.0));
    assert_eq!(
        parse_value("llama.rope.freq_base", "10000", None, Some(ValueRef::U32(1))).unwrap(),
        Value::F32(10000.0)
    );
    assert_eq!(parse_value("tokenizer.ggml.add_bos_token", "1", None, None).unwrap(), Value::Bool(true));
    assert_eq!(parse_value("split.count", "3", None, None).unwrap(), Value::U16(3));
    assert_eq!(parse_value("qwen2.attention.head_count", "14", None, None).unwrap(), Value::U32(14));
    // An explicit type wins.
    assert_eq!(parse_value("llama.rope.freq_base", "10000", Some(ValueType::U32), None).unwrap(), Value::U32(10000));
    // A text that does not fit: the error names the key, the template and the type.
    let err = parse_value("llama.context_length", "-1", None, None).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Edit(_)));
    assert_eq!(err.key(), Some("llama.context_length"));
    assert_eq!(
        err.to_string(),
        "cannot edit \"llama.context_length\": \"-1\" is not a valid u32, the type of the standard key \
         {arch}.context_length (llama.cpp refuses another type)"
    );
    // An array key cannot be set from text; a key that is not standard is inferred as before.
    assert!(parse_value("general.tags", "x", None, None)
        .unwrap_err()
        .to_string()
        .contains("arrays cannot be set from text"));
    assert_eq!(parse_value("llama.my_key", "7", None, None).unwrap(), Value::U32(7));
    assert_eq!(parse_value("llama.my_key", "7", None, Some(ValueRef::U8(1))).unwrap(), Value::U8(7));
}
