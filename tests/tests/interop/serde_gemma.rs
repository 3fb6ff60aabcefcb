//! The Gemma 3 270M model's metadata through a typed struct: values equal to gguf-py's reading,
//! borrowed tokens, and the key/value block written back byte for byte.

use gguf_serde::{Gguf, MetadataOptions};
use gguf_tests::metadata_structs::gemma::Gemma3Metadata;
use gguf_tests::{model, owned_type_name, owned_value_json, py_cache, python};

const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

#[test]
fn gemma_metadata_equals_gguf_py_and_writes_back_identically() {
    let Some(path) = model(GEMMA) else { return };
    let file = Gguf::open(&path).unwrap();
    let meta: Gemma3Metadata<String> = file.deserialize_metadata().unwrap();
    assert_eq!(meta.general.architecture, "gemma3");
    assert_eq!(meta.tokenizer.ggml.tokens.len(), 262_144);

    // Borrowed tokens read the same strings, pointing into the mapped file.
    let borrowed: Gemma3Metadata<&str> = file.deserialize_metadata().unwrap();
    assert_eq!(borrowed.tokenizer.ggml.tokens, meta.tokenizer.ggml.tokens);
    let range = file.bytes().as_ptr_range();
    assert!(borrowed.tokenizer.ggml.tokens.iter().all(|t| range.contains(&t.as_ptr()) || t.is_empty()));

    // Written back in field order: the file's own key/value block, byte for byte. The block is
    // bytes 24.. (after magic, version, tensor and key counts) up to the first tensor info.
    let ours = gguf_serde::to_vec(&meta).unwrap();
    let kv_end = file.tensors().next().unwrap().info_offset as usize;
    let theirs = &file.bytes()[24..kv_end];
    let ours_file = Gguf::from_slice(&ours).unwrap();
    assert_eq!(ours_file.kv_count(), file.kv_count());
    assert_eq!(ours_file.tensor_count(), 0);
    let ours_kv = &ours[24..ours_file.tensor_infos_end() as usize];
    assert_eq!(ours_kv.len(), theirs.len(), "key/value block length");
    assert!(
        ours_kv == theirs,
        "key/value block differs at byte {:?}",
        ours_kv.iter().zip(theirs).position(|(a, b)| a != b)
    );
    // Header counts: version 3, no tensors, 33 keys.
    assert_eq!(
        &ours[..24],
        &[b"GGUF".as_slice(), &3u32.to_le_bytes(), &0u64.to_le_bytes(), &33u64.to_le_bytes()].concat()
    );

    // Every value equals gguf-py's reading of the file, with the same type.
    let Some(py) = python() else { return };
    // Kept per file content ([`gguf_tests::py_cache`]): `standard_keys.rs` reads the same.
    let expected = py_cache::run_py_cached(&py, "kv_dump.py", &[path.to_str().unwrap()], &[&path]);
    let expected = expected.as_array().unwrap();
    let pairs = MetadataOptions::new().to_pairs(&meta).unwrap();
    assert_eq!(pairs.len(), expected.len(), "number of keys");
    assert_eq!(expected.len(), 33);
    for ((key, value), e) in pairs.iter().zip(expected) {
        assert_eq!(key, e["key"].as_str().unwrap(), "key order");
        assert_eq!(owned_type_name(value), e["type"].as_str().unwrap(), "type of {key}");
        assert!(owned_value_json(value) == e["value"], "value of {key} differs from gguf-py's");
    }
    // A few directly against gguf-py's numbers.
    let find = |k: &str| &expected.iter().find(|e| e["key"] == k).unwrap()["value"];
    assert_eq!(find("gemma3.context_length"), meta.hparams.context_length);
    assert_eq!(
        find("gemma3.attention.layer_norm_rms_epsilon").as_f64().unwrap(),
        f64::from(meta.hparams.layer_norm_rms_epsilon)
    );
    assert_eq!(find("tokenizer.ggml.tokens")[262_143], meta.tokenizer.ggml.tokens[262_143].as_str());
    assert_eq!(find("tokenizer.ggml.scores")[1000].as_f64().unwrap(), f64::from(meta.tokenizer.ggml.scores[1000]));
}

#[test]
fn gemma_from_slice_and_from_reader_agree() {
    let Some(path) = model(GEMMA) else { return };
    let bytes = std::fs::read(&path).unwrap();
    let a: Gemma3Metadata<&str> = gguf_serde::from_slice(&bytes).unwrap();
    let b: Gemma3Metadata<String> = gguf_serde::from_reader(std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!(a.tokenizer.ggml.tokens, b.tokenizer.ggml.tokens);
    assert_eq!(a.hparams, b.hparams);
    // A caller-given architecture that the file does not use: the hparams keys are missing.
    let e = MetadataOptions::new().arch("llama").from_slice::<Gemma3Metadata<&str>>(&bytes).unwrap_err();
    assert_eq!(e.to_string(), "missing (no key of this name, nor under it) at key \"llama\"");
}

#[test]
fn gemma_wrong_field_type_names_the_full_key() {
    let Some(path) = model(GEMMA) else { return };
    let file = Gguf::open(&path).unwrap();
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Wrong {
        #[serde(rename = "{arch}.attention.head_count")]
        head_count: String,
    }
    let offset = file.metadata().find(|kv| kv.key == "gemma3.attention.head_count").unwrap().value_offset;
    let e = file.deserialize_metadata::<Wrong>().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "invalid type: expected a string, found u32 4 at key \"gemma3.attention.head_count\" (offset {offset})"
        )
    );
}

/// The tokenizer's three arrays as plain `Vec`s of a plain serde derive, the tokens borrowed.
#[derive(serde::Deserialize)]
struct TokenizerBorrowed<'a> {
    #[serde(borrow, rename = "tokenizer.ggml.tokens")]
    tokens: Vec<&'a str>,
    #[serde(rename = "tokenizer.ggml.scores")]
    scores: Vec<f32>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i32>,
}

/// The same, owned (the tokens into `Vec<String>` in one pass); the scores and token types visited
/// element by element (not `Vec`s of the stored type).
#[derive(serde::Deserialize)]
struct TokenizerOwned {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: Vec<String>,
    #[serde(rename = "tokenizer.ggml.scores")]
    scores: std::collections::VecDeque<f32>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i64>,
}

/// The tokens, owned, visited string by string (a `Box<str>` is not a `String`).
#[derive(serde::Deserialize)]
struct TokensVisited {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: Vec<Box<str>>,
}

/// `tokenizer.ggml.tokens`, `.scores` and `.token_type` of Gemma 3 (262,144 each) into `Vec<&str>`,
/// `Vec<f32>` and `Vec<i32>` (the numbers by one copy of their stored bytes), into `Vec<String>`
/// (one pass over the strings), and into element-by-element targets: equal to gguf-py's reading,
/// the scores bit for bit; the same from a big-endian file that gguf-py's writer makes of
/// gguf-py's reading of those arrays.
#[test]
fn gemma_tokenizer_arrays_equal_gguf_py_in_both_byte_orders() {
    let Some(path) = model(GEMMA) else { return };
    let Some(py) = python() else { return };
    // gguf-py's reading and its big-endian file, made once per model content and kept
    // ([`gguf_tests::py_cache`]).
    let (big, expected) =
        py_cache::cached_py_file(&py, "tokenizer_arrays.py", &[path.to_str().unwrap()], &[&path], "tokenizer-be.gguf");
    let expected: serde_json::Value = serde_json::from_str(&expected).expect("JSON from python");
    let tokens: Vec<&str> = expected["tokens"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let scores: Vec<u32> =
        expected["scores"].as_array().unwrap().iter().map(|x| u32::try_from(x.as_u64().unwrap()).unwrap()).collect();
    let token_type: Vec<i32> = expected["token_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| i32::try_from(x.as_i64().unwrap()).unwrap())
        .collect();
    assert_eq!((tokens.len(), scores.len(), token_type.len()), (262_144, 262_144, 262_144));
    for (file, endian) in [(&path, gguf_serde::Endian::Little), (&big, gguf_serde::Endian::Big)] {
        let f = Gguf::open(file).unwrap();
        assert_eq!(f.endian(), endian);
        let b: TokenizerBorrowed<'_> = f.deserialize_metadata().unwrap();
        assert!(b.tokens == tokens, "tokens of the {endian:?} file");
        assert!(b.scores.iter().map(|x| x.to_bits()).eq(scores.iter().copied()), "scores of the {endian:?} file");
        assert!(b.token_type == token_type, "token types of the {endian:?} file");
        let o: TokenizerOwned = f.deserialize_metadata().unwrap();
        assert!(o.tokens == tokens, "owned tokens of the {endian:?} file");
        assert!(o.scores.iter().map(|x| x.to_bits()).eq(scores.iter().copied()), "visited scores, {endian:?}");
        assert!(o.token_type.iter().copied().eq(token_type.iter().map(|&t| i64::from(t))), "visited types, {endian:?}");
        let v: TokensVisited = f.deserialize_metadata().unwrap();
        assert!(v.tokens.iter().map(|t| &**t).eq(tokens.iter().copied()), "visited tokens of the {endian:?} file");
    }
}
