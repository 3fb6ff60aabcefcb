//! Keys, strings and tensor names that are not UTF-8: ggml (`gguf.cpp`) takes them as bytes and
//! llama.cpp loads such files, so every reader path accepts them and keeps the bytes. The file is
//! `common::not_utf8()`; the oracle is the bytes it was built from (the constants and the file
//! itself, searched for them), not what this crate reads. ggml's own reading of the same file is
//! compared in the interop suite (`tests/tests/interop/not_utf8.rs`).

use std::borrow::Cow;

use gguf_serde::ops::edit::{rewrite_file, Edit};
use gguf_serde::{Endian, ErrorKind, FormatError, Gguf, GgufStr, GgufWriter, Item, Value, ValueRef};
use serde::Deserialize;

use crate::common::{not_utf8, temp_dir, NOT_UTF8_KEY, NOT_UTF8_STRING, NOT_UTF8_TENSOR, NOT_UTF8_TOKEN};

/// Where `needle` first starts in `hay` (found in the file's bytes, not by the reader).
fn find(hay: &[u8], needle: &[u8]) -> u64 {
    hay.windows(needle.len()).position(|w| w == needle).expect("the bytes are in the file") as u64
}

#[test]
fn every_source_opens_it_with_the_bytes_as_stored() {
    let bytes = not_utf8();
    let from_slice = Gguf::from_slice(&bytes).unwrap();
    let from_reader = Gguf::from_reader(std::io::Cursor::new(&bytes)).unwrap();
    for (keys, names) in [
        (
            from_slice.metadata().map(|kv| kv.key.as_bytes().to_vec()).collect::<Vec<_>>(),
            from_slice.tensors().map(|t| t.name.as_bytes().to_vec()).collect::<Vec<_>>(),
        ),
        (
            from_reader.metadata().map(|kv| kv.key.as_bytes().to_vec()).collect(),
            from_reader.tensors().map(|t| t.name.as_bytes().to_vec()).collect(),
        ),
    ] {
        let want_keys: [&[u8]; 4] = [b"general.architecture", NOT_UTF8_KEY, b"tokenizer.ggml.tokens", b"general.name"];
        assert_eq!(keys, want_keys);
        assert_eq!(names, [NOT_UTF8_TENSOR, b"ok"]);
    }
    let g = from_slice;
    // Looked up by bytes; the usual `&str` lookups still work.
    assert_eq!(g.get(NOT_UTF8_KEY), Some(ValueRef::U32(7)));
    assert_eq!(g.get("general.architecture").and_then(|v| v.as_str()), Some("llama"));
    assert_eq!(g.tensor(NOT_UTF8_TENSOR).unwrap().relative_offset, 0);
    assert_eq!(g.tensor_data_by_name(NOT_UTF8_TENSOR).unwrap().len(), 16);
    assert_eq!(g.tensor("ok").unwrap().relative_offset, 32);
    // The string array: its flag says not all UTF-8, its strings are the stored bytes.
    let tokens = g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap();
    assert!(!tokens.is_utf8());
    let got: Vec<&[u8]> = tokens.strings().unwrap().map(|s| s.as_bytes()).collect();
    assert_eq!(got, [b"a", NOT_UTF8_TOKEN, "\u{2581}b".as_bytes()]);
    let oks: Vec<bool> = tokens.strings().unwrap().map(|s| s.to_str().is_ok()).collect();
    assert_eq!(oks, [true, false, true]);
    assert_eq!(g.get("general.name").and_then(|v| v.as_gguf_str()).map(|s| s.as_bytes()), Some(NOT_UTF8_STRING));
    // `as_str` is text only.
    assert_eq!(g.get("general.name").and_then(|v| v.as_str()), None);
}

#[test]
fn text_accessors_name_the_key_or_tensor_and_the_offset() {
    let bytes = not_utf8();
    let g = Gguf::from_slice(&bytes).unwrap();
    let kv = g.metadata().nth(1).unwrap();
    let e = kv.key_str().unwrap_err();
    let at = find(&bytes, NOT_UTF8_KEY);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::Key, owner: Some(k), offset, .. })
            if k == r"test.k\xffey" && *offset == at),
        "{e:?}"
    );
    // the bad byte escaped once, as the key's own `Debug` shows it
    assert_eq!(e.to_string(), format!(r#"key at offset {at} is not valid UTF-8 (key "test.k\xffey")"#));
    assert!(e.to_string().ends_with(&format!("(key {:?})", kv.key)), "{e}");
    assert_eq!(e.key(), Some(r"test.k\xffey"));

    let e = g.get_str("general.name").unwrap_err();
    let at = find(&bytes, NOT_UTF8_STRING);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, owner: Some(k), offset, .. })
            if k == "general.name" && *offset == at),
        "{e:?}"
    );
    assert_eq!(g.get_str("general.architecture").unwrap(), Some("llama"));
    assert_eq!(g.get_str("no.such.key").unwrap(), None);

    let t = g.tensor_at(0).unwrap();
    let e = t.name_str().unwrap_err();
    let at = find(&bytes, NOT_UTF8_TENSOR);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::TensorName, owner: Some(n), offset, .. })
            if n == r"w.\xc3(" && *offset == at),
        "{e:?}"
    );
    assert_eq!(e.tensor(), Some(r"w.\xc3("));
    assert_eq!(e.to_string(), format!(r#"tensor name at offset {at} is not valid UTF-8 (tensor "w.\xc3(")"#));
    assert_eq!(g.tensor_at(1).unwrap().name_str().unwrap(), "ok");
}

#[test]
fn display_escapes_the_bad_bytes() {
    let bytes = not_utf8();
    let g = Gguf::from_slice(&bytes).unwrap();
    let t = g.tensor_at(0).unwrap();
    assert_eq!(t.name.to_string(), r"w.\xc3(");
    assert_eq!(format!("{:?}", t.name), r#""w.\xc3(""#);
    assert_eq!(t.name.to_string_lossy(), "w.\u{fffd}(");
    assert_eq!(GgufStr::from_bytes(NOT_UTF8_STRING).to_string(), r"caf\xe9");
}

#[derive(Deserialize, Debug)]
struct Borrowed<'a> {
    #[serde(rename = "tokenizer.ggml.tokens", borrow)]
    tokens: Vec<&'a [u8]>,
    #[serde(rename = "general.name")]
    name: &'a [u8],
    #[serde(rename = "general.architecture")]
    arch: &'a str,
}

#[derive(Deserialize, Debug)]
struct Text<'a> {
    #[serde(rename = "tokenizer.ggml.tokens", borrow)]
    #[allow(dead_code)]
    tokens: Vec<Cow<'a, str>>,
}

/// The same text target as an owned `Vec<String>` (which a string array of UTF-8 strings fills in
/// one pass, `metadata/de/bulk.rs`; one of these is not).
#[derive(Deserialize, Debug)]
struct Owned {
    #[serde(rename = "tokenizer.ggml.tokens")]
    #[allow(dead_code)]
    tokens: Vec<String>,
}

#[derive(Deserialize, Debug)]
struct Name {
    #[serde(rename = "general.name")]
    #[allow(dead_code)]
    name: String,
}

#[test]
fn serde_bytes_targets_read_them_and_text_targets_name_key_and_offset() {
    let bytes = not_utf8();
    let b: Borrowed<'_> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(b.tokens, [b"a", NOT_UTF8_TOKEN, "\u{2581}b".as_bytes()]);
    assert_eq!((b.name, b.arch), (NOT_UTF8_STRING, "llama"));

    // The element's length field, then its bytes.
    let at = find(&bytes, &[&2u64.to_le_bytes()[..], NOT_UTF8_TOKEN].concat()) + 8;
    for e in
        [gguf_serde::from_slice::<Text<'_>>(&bytes).unwrap_err(), gguf_serde::from_slice::<Owned>(&bytes).unwrap_err()]
    {
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, owner: Some(k), offset, .. })
                if k == "tokenizer.ggml.tokens[1]" && *offset == at),
            "{e:?}"
        );
    }
    let e = gguf_serde::from_slice::<Name>(&bytes).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, owner: Some(k), offset, .. })
            if k == "general.name" && *offset == find(&bytes, NOT_UTF8_STRING)),
        "{e:?}"
    );
    // A StringArray holds text: the array is refused with its key.
    let e = gguf_serde::from_slice::<std::collections::BTreeMap<String, gguf_serde::StringArray>>(&bytes);
    assert!(e.is_err());
}

#[test]
fn copies_keep_the_bytes() {
    let bytes = not_utf8();
    // Every pair and tensor written back as read: the file itself (ggml's writer does the same).
    assert_eq!(crate::roundtrip_props::rewrite(&bytes, Endian::Little), bytes);

    // A new key given as text must be ASCII, as before; a copied one keeps its bytes.
    let mut w = GgufWriter::new(Vec::new());
    assert!(w.add_kv("caf\u{e9}", 1u8).is_err());
    w.add_kv_ref(GgufStr::from_bytes(NOT_UTF8_KEY), ValueRef::U8(1)).unwrap();
    assert!(w.add_kv_ref(GgufStr::from_bytes(NOT_UTF8_KEY), ValueRef::U8(1)).is_err(), "a duplicate");

    // An edit of another key: everything else as it was, byte for byte.
    let dir = temp_dir();
    let (src, out) = (dir.path().join("in.gguf"), dir.path().join("out.gguf"));
    std::fs::write(&src, &bytes).unwrap();
    let edits = [Edit::Set { key: "general.architecture".into(), value: Value::from("gemma") }];
    rewrite_file(&src, &out, &edits).unwrap();
    let edited = std::fs::read(&out).unwrap();
    let mut want = bytes.clone();
    let at = find(&want, b"llama") as usize;
    want.splice(at - 8..at + 5, [&5u64.to_le_bytes()[..], b"gemma"].concat());
    assert_eq!(edited, want);
}
