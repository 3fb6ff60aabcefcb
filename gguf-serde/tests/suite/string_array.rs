//! `StringArray`: an owned `array<string>` in one buffer, read from GGUF (its dedicated path and
//! the generic sequence path), written as `array<string>`, and through serde_json.

use gguf_serde::{from_slice, to_vec, ErrorKind, Gguf, StringArray, ValueRef, ValueType};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Vocab {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: StringArray,
}

/// A GGUF v3 file of one pair `key` = array<string> `strings`, little- or big-endian (the
/// version, counts, type ids and lengths in that byte order, as the spec's big-endian variant).
fn file(key: &str, strings: &[&[u8]], big: bool) -> Vec<u8> {
    let u32b = |x: u32| if big { x.to_be_bytes() } else { x.to_le_bytes() };
    let u64b = |x: u64| if big { x.to_be_bytes() } else { x.to_le_bytes() };
    let mut out = b"GGUF".to_vec();
    out.extend(u32b(3));
    out.extend(u64b(0));
    out.extend(u64b(1));
    out.extend(u64b(key.len() as u64));
    out.extend(key.as_bytes());
    out.extend(u32b(9)); // ARRAY
    out.extend(u32b(8)); // of STRING
    out.extend(u64b(strings.len() as u64));
    for s in strings {
        out.extend(u64b(s.len() as u64));
        out.extend(*s);
    }
    out
}

const WORDS: [&str; 5] = ["<pad>", "", "é", "▁the", "日本"];

#[test]
fn reads_a_string_array_from_gguf_in_both_byte_orders() {
    let raw: Vec<&[u8]> = WORDS.iter().map(|s| s.as_bytes()).collect();
    for big in [false, true] {
        let bytes = file("tokenizer.ggml.tokens", &raw, big);
        let v: Vocab = from_slice(&bytes).unwrap();
        assert_eq!(v.tokens.len(), 5);
        assert_eq!(v.tokens.iter().collect::<Vec<_>>(), WORDS, "big-endian: {big}");
        assert_eq!(v.tokens.get(4), Some("日本"));
        assert_eq!(v.tokens.get(5), None);
        assert_eq!(&v.tokens[2], "é");
        assert_eq!(v.tokens.as_str(), "<pad>é▁the日本");
        assert_eq!(v.tokens.iter().rev().collect::<Vec<_>>(), ["日本", "▁the", "é", "", "<pad>"]);
        // The same through an opened file, and from a reader (an owned result).
        let g = Gguf::from_slice(&bytes).unwrap();
        assert_eq!(g.deserialize_metadata::<Vocab>().unwrap(), v);
        assert_eq!(gguf_serde::from_reader::<Vocab, _>(&bytes[..]).unwrap(), v);
        // And from the container's view of the array.
        let a = g.get("tokenizer.ggml.tokens").and_then(|x| x.as_array()).unwrap();
        assert_eq!(StringArray::from_array(&a).unwrap(), v.tokens);
    }
}

#[test]
fn writes_array_of_string_also_when_empty() {
    for words in [&WORDS[..], &[][..]] {
        let v = Vocab { tokens: StringArray::from(words.to_vec()) };
        let bytes = to_vec(&v).unwrap();
        let g = Gguf::from_slice(&bytes).unwrap();
        let Some(ValueRef::Array(a)) = g.get("tokenizer.ggml.tokens") else { panic!("no array") };
        assert_eq!(a.elem_type(), ValueType::String);
        assert_eq!(a.strings().unwrap().collect::<Vec<_>>(), words);
        // And reads back.
        assert_eq!(from_slice::<Vocab>(&bytes).unwrap(), v);
    }
    // The empty one is the spec's empty array<string>: type 9, element type 8, count 0.
    let bytes = to_vec(&Vocab { tokens: StringArray::new() }).unwrap();
    let mut want = Vec::new();
    want.extend(21u64.to_le_bytes());
    want.extend(b"tokenizer.ggml.tokens");
    want.extend(9u32.to_le_bytes());
    want.extend(8u32.to_le_bytes());
    want.extend(0u64.to_le_bytes());
    assert_eq!(bytes.get(24..24 + want.len()), Some(&want[..]));
}

#[test]
fn the_generic_path_reads_what_a_vec_of_strings_reads() {
    // An empty array of another element type (what `Vec<String>` reads as empty) and a struct
    // field through serde's flatten buffer both go through the sequence path.
    let mut kv = Vec::new();
    kv.extend(1u64.to_le_bytes());
    kv.extend(b"t");
    kv.extend(9u32.to_le_bytes());
    kv.extend(4u32.to_le_bytes()); // of UINT32
    kv.extend(0u64.to_le_bytes());
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(kv);
    #[derive(Deserialize)]
    struct T {
        t: StringArray,
    }
    assert!(from_slice::<T>(&bytes).unwrap().t.is_empty());

    #[derive(Deserialize)]
    struct Outer {
        #[serde(flatten)]
        inner: Vocab,
    }
    let raw: Vec<&[u8]> = WORDS.iter().map(|s| s.as_bytes()).collect();
    let o: Outer = from_slice(&file("tokenizer.ggml.tokens", &raw, false)).unwrap();
    assert_eq!(o.inner.tokens.to_vec(), WORDS);
}

#[test]
fn a_wrong_element_type_names_the_element() {
    let mut bytes = b"GGUF".to_vec();
    bytes.extend(3u32.to_le_bytes());
    bytes.extend(0u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(1u64.to_le_bytes());
    bytes.extend(b"t");
    bytes.extend(9u32.to_le_bytes());
    bytes.extend(4u32.to_le_bytes()); // of UINT32
    bytes.extend(2u64.to_le_bytes());
    bytes.extend(7u32.to_le_bytes());
    bytes.extend(8u32.to_le_bytes());
    #[derive(Deserialize, Debug)]
    struct T {
        #[allow(dead_code)]
        t: StringArray,
    }
    let e = from_slice::<T>(&bytes).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(_)), "{e}");
    assert_eq!(e.key(), Some("t[0]"), "{e}");
    // The first element's offset: header 24, key 9, type 4, element type 4, count 8.
    assert_eq!(e.offset(), Some(49), "{e}");
    assert!(e.to_string().contains("expected a string, found u32 7"), "{e}");
}

#[test]
fn round_trips_through_serde_json() {
    let v = Vocab { tokens: StringArray::from(WORDS.to_vec()) };
    let json = serde_json::to_string(&v).unwrap();
    assert_eq!(json, r#"{"tokenizer.ggml.tokens":["<pad>","","é","▁the","日本"]}"#);
    let back: Vocab = serde_json::from_str(&json).unwrap();
    assert_eq!(back, v);
    // Escaped strings are not borrowed by serde_json: they are copied in all the same.
    let back: StringArray = serde_json::from_str(r#"["a\nb", "\u00e9"]"#).unwrap();
    assert_eq!(back.to_vec(), ["a\nb", "é"]);
    // serde's messages: what was found, then what was expected.
    let e = serde_json::from_str::<StringArray>("[1]").unwrap_err();
    assert!(e.to_string().starts_with("invalid type: integer `1`, expected a string"), "{e}");
    assert!(serde_json::from_str::<StringArray>(r#"{"a": 1}"#).is_err());
    // Not an array at all: serde's message names what `StringArray` expects (its visitor's
    // `expecting`), as serde_json reports it (with the line and column).
    for (json, found) in [("5", "integer `5`"), (r#""ab""#, "string \"ab\""), (r#"{"a": 1}"#, "map")] {
        let e = serde_json::from_str::<StringArray>(json).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("invalid type: {found}, expected an array of strings at line 1")),
            "{e}"
        );
    }
}

#[test]
fn raw_elements_from_another_deserializer_are_checked() {
    // The raw entry our deserializer sends (a map of one entry, its key naming the byte order,
    // its value the stored elements) can be imitated by any deserializer that answers with a
    // map: a cut length and a length past the end are errors, never a panic.
    use serde::de::value::{BytesDeserializer, Error as DeError, MapDeserializer};
    let read = |bytes: &[u8]| {
        let entry = ("\0gguf_serde::StringArray::le", BytesDeserializer::<DeError>::new(bytes));
        StringArray::deserialize(MapDeserializer::<_, DeError>::new(std::iter::once(entry)))
    };
    let ok = [&2u64.to_le_bytes()[..], b"ab", &0u64.to_le_bytes()].concat();
    assert_eq!(read(&ok).unwrap().to_vec(), ["ab", ""]);
    let e = read(&[2, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("length field is cut at byte 0"), "{e}");
    let e = read(&[&9u64.to_le_bytes()[..], b"ab"].concat()).unwrap_err();
    assert!(e.to_string().contains("length 9 at byte 0 runs past its end (10 bytes)"), "{e}");
    // "é" (C3 A9) split over two strings: valid UTF-8 as a whole, not string by string.
    let split = [&1u64.to_le_bytes()[..], &[0xc3], &1u64.to_le_bytes(), &[0xa9]].concat();
    let e = read(&split).unwrap_err();
    assert!(e.to_string().contains("string 0 of the raw array is not UTF-8"), "{e}");
    // A value that is not bytes is not the stored elements.
    let entry = ("\0gguf_serde::StringArray::le", 5u32);
    let e = StringArray::deserialize(MapDeserializer::<_, DeError>::new(std::iter::once(entry))).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: integer `5`, expected the stored elements of a string array");
    // Another key is not the raw entry: serde's message for a wrong type, with what was expected.
    let other = ("tokens", BytesDeserializer::<DeError>::new(&ok));
    let e = StringArray::deserialize(MapDeserializer::<_, DeError>::new(std::iter::once(other))).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: map, expected an array of strings");
    let other = (5u32, BytesDeserializer::<DeError>::new(&ok));
    let e = StringArray::deserialize(MapDeserializer::<_, DeError>::new(std::iter::once(other))).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: integer `5`, expected an array of strings");
}

#[test]
fn collection_helpers() {
    let mut a: StringArray = ["x", "yz"].into_iter().collect();
    a.push("é");
    a.extend(["w"]);
    assert_eq!(a.len(), 4);
    assert_eq!(format!("{a:?}"), r#"["x", "yz", "é", "w"]"#);
    let v: Vec<String> = a.clone().into();
    assert_eq!(v, ["x", "yz", "é", "w"]);
    assert_eq!((&a).into_iter().len(), 4);
    assert_eq!(StringArray::from(v), a);
    assert!(StringArray::new().is_empty());
    assert!(!a.is_empty());
    assert!(!StringArray::from(vec![String::new()]).is_empty(), "one empty string is one string");
}

#[test]
fn with_capacity_has_room_for_what_it_was_given() {
    // Room for 3 strings of 10 bytes in all (as `Vec::with_capacity` and `String::with_capacity`
    // promise): pushing them allocates nothing more (the counting allocator of `common`).
    let (mut a, _) = crate::common::measure(|| StringArray::with_capacity(3, 10));
    let ((), allocs) = crate::common::measure(|| {
        for s in ["abc", "defg", "hij"] {
            a.push(s);
        }
    });
    assert_eq!(allocs.total, 0, "{allocs:?}");
    assert_eq!(a.iter().collect::<Vec<_>>(), ["abc", "defg", "hij"]);
}

/// Strings of every length from 0 to 40 bytes, each placed last in its array and in the middle
/// of one, so that a short string is read both where 16 bytes follow its start inside the array
/// and where fewer do (the end of the array), multi-byte text included: what each path returns is
/// the strings written, in both byte orders.
#[test]
fn every_length_reads_back_wherever_it_lies() {
    let text: String = "a▁é日本x".chars().cycle().take(40).collect();
    // Prefixes of `text` at character boundaries: lengths 0 to 40 bytes (some skipped by the
    // multi-byte characters), then the same in reverse, and single strings.
    let mut cuts: Vec<&str> = (0..=text.len()).filter(|&n| text.is_char_boundary(n)).map(|n| &text[..n]).collect();
    let forward = cuts.clone();
    cuts.reverse();
    let mut arrays: Vec<Vec<&str>> = vec![forward.clone(), cuts];
    arrays.extend(forward.iter().map(|s| vec![*s]));
    arrays.extend(forward.iter().map(|s| vec!["<s>", *s]));
    for strings in &arrays {
        let raw: Vec<&[u8]> = strings.iter().map(|s| s.as_bytes()).collect();
        for big in [false, true] {
            let bytes = file("tokenizer.ggml.tokens", &raw, big);
            // This crate's deserializer: the array at once.
            let v: Vocab = from_slice(&bytes).unwrap();
            assert_eq!(v.tokens.iter().collect::<Vec<_>>(), *strings, "big-endian: {big}");
            assert_eq!(v.tokens.as_str(), strings.concat());
            let g = Gguf::from_slice(&bytes).unwrap();
            assert_eq!(g.deserialize_metadata::<Vocab>().unwrap(), v);
            // `Vec<String>` reads the same strings.
            #[derive(Deserialize)]
            struct Owned {
                #[serde(rename = "tokenizer.ggml.tokens")]
                tokens: Vec<String>,
            }
            assert_eq!(from_slice::<Owned>(&bytes).unwrap().tokens, *strings);
            // The raw entry from another deserializer: the stored elements after the count.
            use serde::de::value::{BytesDeserializer, Error as DeError, MapDeserializer};
            let elems = &bytes[24 + 8 + 21 + 4 + 4 + 8..];
            let key = if big { "\0gguf_serde::StringArray::be" } else { "\0gguf_serde::StringArray::le" };
            let entry = (key, BytesDeserializer::<DeError>::new(elems));
            let r = StringArray::deserialize(MapDeserializer::<_, DeError>::new(std::iter::once(entry))).unwrap();
            assert_eq!(r, v.tokens);
        }
    }
}

/// The other side of the protocol above: what this crate's deserializer hands a visitor that is
/// not `StringArray`'s own and asks for the string-array newtype (`StringArray`'s is answered
/// with the array at once). The crate's docs of the protocol: a map of one entry, whose key
/// names the byte order and whose value is the stored elements (after the count) as borrowed
/// bytes; serde's `MapAccess::size_hint` is the entries left, 1 before it and 0 after.
#[test]
fn the_raw_entry_is_one_map_entry_of_the_stored_elements() {
    use serde::de::{Error as _, MapAccess, Visitor};
    #[derive(Debug, PartialEq)]
    struct Raw {
        key: String,
        elems: Vec<u8>,
        hints: (Option<usize>, Option<usize>),
    }
    impl<'de> Deserialize<'de> for Raw {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Raw;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("the raw entry")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                    let before = map.size_hint();
                    let (key, elems) =
                        map.next_entry::<String, &'de [u8]>()?.ok_or_else(|| A::Error::custom("no entry"))?;
                    let after = map.size_hint();
                    if map.next_key::<String>()?.is_some() {
                        return Err(A::Error::custom("a second entry"));
                    }
                    Ok(Raw { key, elems: elems.to_vec(), hints: (before, after) })
                }
            }
            d.deserialize_newtype_struct("\0gguf_serde::StringArray", V)
        }
    }
    #[derive(Deserialize)]
    struct Tokens {
        #[serde(rename = "tokenizer.ggml.tokens")]
        tokens: Raw,
    }
    let raw: Vec<&[u8]> = WORDS.iter().map(|s| s.as_bytes()).collect();
    for big in [false, true] {
        let bytes = file("tokenizer.ggml.tokens", &raw, big);
        // Header 24, key 8 + 21, type 4, element type 4, count 8.
        let elems = &bytes[24 + 8 + 21 + 4 + 4 + 8..];
        let key = if big { "\0gguf_serde::StringArray::be" } else { "\0gguf_serde::StringArray::le" };
        let got = from_slice::<Tokens>(&bytes).unwrap().tokens;
        assert_eq!(
            got,
            Raw { key: key.to_owned(), elems: elems.to_vec(), hints: (Some(1), Some(0)) },
            "big-endian: {big}"
        );
    }
    // The visitor is called even when its value is a `StringArray` (here one it makes itself):
    // only `StringArray`'s own visitor is answered with the array at once.
    struct Made(StringArray);
    impl<'de> Deserialize<'de> for Made {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = StringArray;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("the raw entry")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringArray, A::Error> {
                    while map.next_entry::<String, &'de [u8]>()?.is_some() {}
                    Ok(StringArray::from(vec!["made".to_owned()]))
                }
            }
            d.deserialize_newtype_struct("\0gguf_serde::StringArray", V).map(Made)
        }
    }
    #[derive(Deserialize)]
    struct MadeTokens {
        #[serde(rename = "tokenizer.ggml.tokens")]
        tokens: Made,
    }
    let bytes = file("tokenizer.ggml.tokens", &raw, false);
    assert_eq!(from_slice::<MadeTokens>(&bytes).unwrap().tokens.0.to_vec(), ["made"]);
}
