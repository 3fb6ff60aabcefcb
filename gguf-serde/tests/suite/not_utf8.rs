//! Keys, strings and tensor names that are not UTF-8: ggml (`gguf.cpp`) takes them as bytes and
//! llama.cpp loads such files, so every reader path accepts them and keeps the bytes. The file is
//! `common::not_utf8()`; the oracle is the bytes it was built from (the constants and the file
//! itself, searched for them), not what this crate reads. ggml's own reading of the same file is
//! compared in the CLI tests (`gguf-cli/tests/cli/not_utf8.rs`, through the `ggml_read` harness).

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

/// A file for the serde paths: `a` (u32 1), `b\xff` (u32 2), `zz.\xff` (u32 3), `n.ok` (u32 4),
/// `n.\xfe` (u32 5), `t` = STRING `caf\xe9`, `tok` = `["x", "y", "\xe2\x96"]`; no tensors.
fn serde_file() -> Vec<u8> {
    use crate::common::{ty, B};
    let mut b = B::le();
    b.header(3, 0, 7);
    b.kv("a", ty::U32).u32(1);
    b.kv(b"b\xff", ty::U32).u32(2);
    b.kv(b"zz.\xff", ty::U32).u32(3);
    b.kv("n.ok", ty::U32).u32(4);
    b.kv(b"n.\xfe", ty::U32).u32(5);
    b.kv("t", ty::STRING).str(NOT_UTF8_STRING);
    b.kv("tok", ty::ARRAY).arr(ty::STRING, 3).str("x").str("y").str(NOT_UTF8_TOKEN);
    b.bytes()
}

/// The `InvalidUtf8` error of `e` as `(owner, offset)`.
fn invalid_utf8(e: &gguf_serde::Error) -> (String, u64) {
    match e.kind() {
        ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, owner: Some(k), offset, .. }) => {
            (k.clone(), *offset)
        }
        _ => panic!("not InvalidUtf8 of a string: {e:?}"),
    }
}

/// `deny_unknown_fields` refuses a key that is not UTF-8 as it refuses any unknown key (naming
/// it escaped, at its value's offset); without it the key is ignored.
#[test]
fn deny_unknown_fields_refuses_a_key_that_is_not_utf8() {
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: u32,
        t: serde_bytes_like::Bytes,
        tok: Vec<serde_bytes_like::Bytes>,
        zz: std::collections::BTreeMap<String, u32>,
        n: std::collections::BTreeMap<String, u32>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Lax {
        a: u32,
    }
    let bytes = serde_file();
    assert_eq!(gguf_serde::from_slice::<Lax>(&bytes).unwrap().a, 1);
    let e = gguf_serde::from_slice::<Strict>(&bytes).unwrap_err();
    let value_at = find(&bytes, b"b\xff") + 2 + 4;
    assert_eq!(e.key(), Some(r"b\xff"), "{e}");
    assert_eq!(e.offset(), Some(value_at), "{e}");
    assert!(e.to_string().contains("unknown field"), "{e}");
    // Under a nested struct too: `n.\xfe` is unknown to a struct at `n`.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Outer {
        n: Inner,
    }
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        ok: u32,
    }
    let e = gguf_serde::from_slice::<Outer>(&bytes).unwrap_err();
    assert_eq!(e.key(), Some(r"n.\xfe"), "{e}");
    assert!(e.to_string().contains("unknown field"), "{e}");
    // Only a key under a field's name belongs to that field's group: `c\xff.d` does not start
    // with `ab` (though it has a `.` where a key under `ab.` would), so it is unknown.
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Ab {
        ab: std::collections::BTreeMap<String, u32>,
    }
    let mut b = crate::common::B::le();
    b.header(3, 0, 2);
    b.kv("ab.x", crate::common::ty::U32).u32(1);
    b.kv(b"c\xff.d", crate::common::ty::U32).u32(2);
    let bytes = b.bytes();
    let e = gguf_serde::from_slice::<Ab>(&bytes).unwrap_err();
    assert_eq!(e.key(), Some(r"c\xff.d"), "{e}");
    assert_eq!(e.offset(), Some(find(&bytes, b"c\xff.d") + 4 + 4), "{e}");
    assert!(e.to_string().contains("unknown field"), "{e}");
    // A key under `ab.` that is not UTF-8 is in `ab`'s group, not unknown to the struct (the
    // map of `String` keys skips it, as the serde view does).
    let mut b = crate::common::B::le();
    b.header(3, 0, 2);
    b.kv("ab.x", crate::common::ty::U32).u32(1);
    b.kv(b"ab.\xfe", crate::common::ty::U32).u32(2);
    let ab = gguf_serde::from_slice::<Ab>(&b.bytes()).unwrap().ab;
    assert_eq!(ab, std::collections::BTreeMap::from([("x".to_owned(), 1)]));
}

/// A minimal `serde_bytes`: the stored bytes of a STRING.
mod serde_bytes_like {
    #[derive(Debug, PartialEq)]
    pub struct Bytes(pub Vec<u8>);
    impl<'de> serde::Deserialize<'de> for Bytes {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Bytes;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                    Ok(Bytes(v.to_vec()))
                }
                fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Bytes, E> {
                    Ok(Bytes(v.as_bytes().to_vec()))
                }
            }
            d.deserialize_bytes(V)
        }
    }
}

/// A STRING that is not UTF-8 under `#[serde(flatten)]` (serde buffers it): a `Value` there
/// gives the `InvalidUtf8` a `Value` field gives (key and offset of its bytes, which are found in
/// the file), not an `array<u8>`; bytes there are its bytes.
#[test]
fn a_flattened_value_refuses_a_string_that_is_not_utf8_as_a_value_field_does() {
    use std::collections::BTreeMap;
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Plain {
        t: Value,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Flat {
        a: u32,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    #[derive(Deserialize, Debug)]
    struct FlatBytes {
        #[serde(flatten)]
        rest: BTreeMap<String, serde_bytes_like::Bytes>,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct FlatTokens {
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    let mut bytes = serde_file();
    let want = ("t".to_owned(), find(&bytes, NOT_UTF8_STRING));
    assert_eq!(invalid_utf8(&gguf_serde::from_slice::<Plain>(&bytes).unwrap_err()), want);
    assert_eq!(invalid_utf8(&gguf_serde::from_slice::<Flat>(&bytes).unwrap_err()), want);
    let b = gguf_serde::from_slice::<FlatBytes>(&only(&bytes, &["t"])).unwrap();
    assert_eq!(b.rest["t"].0, NOT_UTF8_STRING);
    // An element of an array: `key[i]`, as `Vec<String>` names it.
    let tok = only(&bytes, &["tok"]);
    let want = ("tok[2]".to_owned(), find(&tok, NOT_UTF8_TOKEN));
    assert_eq!(invalid_utf8(&gguf_serde::from_slice::<FlatTokens>(&tok).unwrap_err()), want);
    // With the bad string made valid, the flattened map reads it as a STRING.
    let at = find(&bytes, NOT_UTF8_STRING) as usize;
    bytes[at + 3] = b'e';
    let f = gguf_serde::from_slice::<Flat>(&only(&bytes, &["a", "t"])).unwrap();
    assert_eq!(f.rest.get("t"), Some(&Value::from("cafe")));
}

/// Two STRINGs that are not UTF-8 under `#[serde(flatten)]`, each with bytes of its own: the
/// error names the one serde reported (the first in the file: a map is read in order), at the
/// offset of its bytes, not the other one.
#[test]
fn a_flattened_value_names_the_string_that_is_not_utf8_not_another_one() {
    use crate::common::{ty, B};
    use std::collections::BTreeMap;
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Flat {
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    for (first, second) in [(NOT_UTF8_STRING, NOT_UTF8_TOKEN), (NOT_UTF8_TOKEN, NOT_UTF8_STRING)] {
        let mut b = B::le();
        b.header(3, 0, 2);
        b.kv("s", ty::STRING).str(first);
        b.kv("t", ty::STRING).str(second);
        let bytes = b.bytes();
        let e = gguf_serde::from_slice::<Flat>(&bytes).unwrap_err();
        assert_eq!(invalid_utf8(&e), ("s".to_owned(), find(&bytes, first)));
    }
}

/// The file of `serde_file` with only the keys `keep` (and their values).
fn only(bytes: &[u8], keep: &[&str]) -> Vec<u8> {
    let g = Gguf::from_slice(bytes).unwrap();
    let mut w = GgufWriter::new(Vec::new());
    for kv in g.metadata().filter(|kv| keep.iter().any(|k| kv.key == *k)) {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    w.finish().unwrap()
}

/// `StringArray::from_array` is `None` for an `array<string>` with a string that is not UTF-8
/// (its docs: a `StringArray` holds text); with that string made valid, the stored strings.
#[test]
fn a_string_array_is_not_made_from_an_array_with_a_string_that_is_not_utf8() {
    let mut bytes = not_utf8();
    let tokens = |bytes: &[u8]| {
        let g = Gguf::from_slice(bytes).unwrap();
        let a = g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap();
        (a.is_utf8(), gguf_serde::StringArray::from_array(&a))
    };
    let (utf8, got) = tokens(&bytes);
    assert!(!utf8);
    // Not `assert_eq!`: a `StringArray` of bytes that are not UTF-8 cannot be printed.
    assert!(got.is_none(), "a StringArray made of a string that is not UTF-8");
    // `\xe2\x96` cut short of `\xe2\x96\x81` (U+2581); made `\xc3\xa9` (é), of the same length.
    let at = find(&bytes, NOT_UTF8_TOKEN) as usize;
    bytes[at..at + 2].copy_from_slice("é".as_bytes());
    let (utf8, got) = tokens(&bytes);
    assert!(utf8);
    assert_eq!(got.unwrap().iter().collect::<Vec<_>>(), ["a", "é", "\u{2581}b"]);
}

/// A `StringArray` refuses a string that is not UTF-8 with the error `Vec<String>` gives: the
/// element (`tok[2]`) and the offset of its bytes.
#[test]
fn a_string_array_names_the_element_that_is_not_utf8() {
    use std::collections::BTreeMap;
    let bytes = only(&serde_file(), &["tok"]);
    let want = ("tok[2]".to_owned(), find(&bytes, NOT_UTF8_TOKEN));
    let e = gguf_serde::from_slice::<BTreeMap<String, gguf_serde::StringArray>>(&bytes).unwrap_err();
    assert_eq!(invalid_utf8(&e), want);
    let e = gguf_serde::from_slice::<BTreeMap<String, Vec<String>>>(&bytes).unwrap_err();
    assert_eq!(invalid_utf8(&e), want);
}

/// A field whose only key under it is not UTF-8 is missing, and the error says which key the
/// serde view skipped.
#[test]
fn a_missing_field_names_the_key_that_is_not_utf8_under_it() {
    use std::collections::BTreeMap;
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Zz {
        zz: BTreeMap<String, u32>,
    }
    let bytes = serde_file();
    let e = gguf_serde::from_slice::<Zz>(&bytes).unwrap_err();
    assert!(matches!(e.as_metadata(), Some(gguf_serde::MetadataError::MissingKey { not_utf8: Some(_), .. })), "{e:?}");
    assert_eq!(e.key(), Some("zz"));
    let at = find(&bytes, b"zz.\xff") + 4 + 4;
    assert!(e.to_string().contains(&format!(r#"the key "zz.\xff" at offset {at} is not"#)), "{e}");
}

/// `ShardedGguf::get` looks keys up by bytes, as `Gguf::get` does (a key that is not UTF-8
/// included).
#[test]
fn a_sharded_model_gets_keys_by_bytes() {
    let dir = temp_dir();
    let p = dir.path().join("m.gguf");
    std::fs::write(&p, not_utf8()).unwrap();
    let m = gguf_serde::ShardedGguf::open(&p).unwrap();
    assert_eq!(m.get(NOT_UTF8_KEY), Some(ValueRef::U32(7)));
    assert_eq!(m.get(b"general.architecture").and_then(|v| v.as_str()), Some("llama"));
    assert_eq!(m.get("general.architecture").and_then(|v| v.as_str()), Some("llama"));
}

/// A string array whose strings are all UTF-8 is known to be so (`ArrayRef::is_utf8`), whatever
/// their lengths: strings of 128 bytes or more (a length field with a byte of 0x80 or more) are
/// read one by one, not in a run of short ones, and a reader gives the parser the array in
/// pieces (here of every string, of a byte, and of 8 KiB ahead). The flag of an array with one
/// string that is not UTF-8 is in `every_source_opens_it_with_the_bytes_as_stored`.
#[test]
fn an_array_of_long_strings_that_are_all_utf8_is_known_to_be() {
    let strings: Vec<String> = [0usize, 1, 2, 127, 128, 129, 200, 255, 256, 300, 4097, 70_001]
        .iter()
        .map(|&n| "é".repeat(n / 2) + &"x".repeat(n % 2))
        .collect();
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("tokenizer.ggml.tokens", strings.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    let bytes = w.finish().unwrap();
    let want: Vec<&[u8]> = strings.iter().map(String::as_bytes).collect();
    let check = |source: &str, tokens: gguf_serde::ArrayRef<'_>| {
        assert!(tokens.is_utf8(), "{source}");
        let got: Vec<&[u8]> = tokens.strings().unwrap().map(|s| s.as_bytes()).collect();
        assert!(got == want, "{source}: other strings");
    };
    let g = Gguf::from_slice(&bytes).unwrap();
    check("slice", g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap());
    for read_ahead in [0, 1, 8192] {
        let g = Gguf::from_reader_in_pieces(std::io::Cursor::new(&bytes), read_ahead).unwrap();
        check(&format!("read-ahead {read_ahead}"), g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap());
    }
}
