//! Layouts of keys that the serde mapping must read back as written: a key that is
//! also the prefix of other keys (llama.cpp's named chat templates), maps of structs, empty
//! maps, flattened structs with `{arch}` keys, arrays of arrays with an empty inner array, and
//! keys with empty segments. Files are built with the container writer (no serde) and checked
//! with the container reader, so the expected keys and values do not come from the mapping.

use std::collections::{BTreeMap, HashMap};

use gguf_serde::{
    from_slice, to_vec, Array, ErrorKind, Gguf, GgufWriter, MetadataError, MetadataOptions, Value, ValueRef, WriteError,
};
use serde::{Deserialize, Serialize};

/// The keys and values of a file as the container reader (no serde) sees them.
fn stored(bytes: &[u8]) -> Vec<(String, Value)> {
    let f = Gguf::from_slice(bytes).unwrap();
    f.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect()
}

/// llama.cpp's layout of named chat templates (`LLM_KV_TOKENIZER_CHAT_TEMPLATE` with a suffix):
/// `tokenizer.chat_template` beside `tokenizer.chat_template.tool_use` and `.rag`.
fn chat_templates() -> Vec<u8> {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("tokenizer.chat_template", "default {{x}}").unwrap();
    w.add_kv("tokenizer.chat_template.tool_use", "tools {{x}}").unwrap();
    w.add_kv("tokenizer.chat_template.rag", "rag {{x}}").unwrap();
    w.add_kv("tokenizer.chat_templates", vec!["tool_use", "rag"]).unwrap();
    w.finish().unwrap()
}

#[test]
fn a_value_beside_keys_under_it_reads_through_the_field_of_its_name() {
    let bytes = chat_templates();
    #[derive(Deserialize, Debug, PartialEq)]
    struct Flat<'a> {
        #[serde(rename = "tokenizer.chat_template")]
        t: &'a str,
    }
    assert_eq!(from_slice::<Flat<'_>>(&bytes).unwrap(), Flat { t: "default {{x}}" });
    #[derive(Deserialize, Debug, PartialEq)]
    struct Opt {
        #[serde(rename = "tokenizer.chat_template")]
        t: Option<String>,
    }
    assert_eq!(from_slice::<Opt>(&bytes).unwrap(), Opt { t: Some("default {{x}}".into()) });
    #[derive(Deserialize, Debug, PartialEq)]
    struct Nested {
        tokenizer: Tok,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Tok {
        chat_template: String,
    }
    assert_eq!(from_slice::<Nested>(&bytes).unwrap().tokenizer.chat_template, "default {{x}}");
    // A Value field reads the value too.
    #[derive(Deserialize, Debug, PartialEq)]
    struct V {
        #[serde(rename = "tokenizer.chat_template")]
        t: Value,
    }
    assert_eq!(from_slice::<V>(&bytes).unwrap().t, Value::String("default {{x}}".into()));

    // The issue's minimal case: a struct { a } over keys `a` and `a.b`.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 1u32).unwrap();
    w.add_kv("a.b", 2u32).unwrap();
    let ab = w.finish().unwrap();
    #[derive(Deserialize, Debug, PartialEq)]
    struct A {
        a: u32,
    }
    assert_eq!(from_slice::<A>(&ab).unwrap(), A { a: 1 });
    // The keys under it are keys the struct does not name: refused with deny_unknown_fields.
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: u32,
    }
    let e = from_slice::<Strict>(&ab).unwrap_err();
    // a.b at 24 + (8+1+4+4) = 41; its value at 41 + 8+3+4 = 56.
    assert_eq!(e.to_string(), "unknown field `a.b`, expected `a` at key \"a.b\" (offset 56)");
    // A struct (or map) field of that name reads the keys under it; the value is not read.
    #[derive(Deserialize, Debug, PartialEq)]
    struct G {
        a: Sub,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Sub {
        b: u32,
    }
    assert_eq!(from_slice::<G>(&ab).unwrap(), G { a: Sub { b: 2 } });
    let m: BTreeMap<String, BTreeMap<String, u32>> = from_slice(&ab).unwrap();
    assert_eq!(m, [("a".to_owned(), [("b".to_owned(), 2)].into())].into());
}

/// The named templates: a field renamed with a trailing `.` takes the keys under that prefix.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Templates {
    #[serde(rename = "tokenizer.chat_template")]
    default: String,
    #[serde(rename = "tokenizer.chat_template.")]
    named: BTreeMap<String, String>,
    #[serde(rename = "tokenizer.chat_templates")]
    names: Vec<String>,
}

#[test]
fn the_keys_under_a_value_read_and_write_through_a_field_named_for_the_prefix() {
    let bytes = chat_templates();
    let t: Templates = from_slice(&bytes).unwrap();
    let named: BTreeMap<String, String> = [("rag", "rag {{x}}"), ("tool_use", "tools {{x}}")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(t, Templates { default: "default {{x}}".into(), named, names: vec!["tool_use".into(), "rag".into()] });
    // Written back: the same keys and values (in field order, the map's keys sorted).
    let out = to_vec(&t).unwrap();
    assert_eq!(
        stored(&out),
        [
            ("tokenizer.chat_template".to_owned(), Value::String("default {{x}}".into())),
            ("tokenizer.chat_template.rag".to_owned(), Value::String("rag {{x}}".into())),
            ("tokenizer.chat_template.tool_use".to_owned(), Value::String("tools {{x}}".into())),
            ("tokenizer.chat_templates".to_owned(), Value::from(vec!["tool_use", "rag"])),
        ]
    );
    assert_eq!(from_slice::<Templates>(&out).unwrap(), t);
    // A struct of the named templates works the same, nested or at the top level.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Tokenizer {
        chat_template: Option<String>,
        #[serde(rename = "chat_template.")]
        named: Named,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Named {
        tool_use: Option<String>,
        rag: Option<String>,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        tokenizer: Tokenizer,
    }
    let m: M = from_slice(&bytes).unwrap();
    assert_eq!(m.tokenizer.chat_template.as_deref(), Some("default {{x}}"));
    assert_eq!(m.tokenizer.named, Named { tool_use: Some("tools {{x}}".into()), rag: Some("rag {{x}}".into()) });
    let out = to_vec(&m).unwrap();
    assert_eq!(stored(&out)[..3], stored(&bytes)[..3]);
    // A dotted rename beside the value also writes and reads the layout.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Dotted {
        a: u32,
        #[serde(rename = "a.b")]
        ab: u32,
    }
    let out = to_vec(&Dotted { a: 1, ab: 2 }).unwrap();
    assert_eq!(stored(&out), [("a".to_owned(), Value::U32(1)), ("a.b".to_owned(), Value::U32(2))]);
    assert_eq!(from_slice::<Dotted>(&out).unwrap(), Dotted { a: 1, ab: 2 });
    // A prefix field must hold keys, not a value.
    #[derive(Serialize)]
    struct Bad {
        #[serde(rename = "a.")]
        a: u32,
    }
    let e = to_vec(&Bad { a: 1 }).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(MetadataError::Message { .. })), "{e:?}");
    assert_eq!(
        e.to_string(),
        "a field renamed with a trailing `.` names the keys under a prefix, and must hold a struct or map, found \
         u32 at key \"a.\" (offset 38)"
    );
}

#[test]
fn a_key_that_is_the_prefix_of_a_trailing_dot_field_is_not_under_it() {
    // `tokenizer.chat_template.` (a key the container accepts; its last segment is empty) has no
    // key under the prefix, so it is not one of the named templates: read as one, the map would
    // have a key `""`, which no file can hold (`keys_with_empty_segments_are_refused`). The file
    // does not fit the struct and is refused.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("tokenizer.chat_template.rag", "r").unwrap();
    w.add_kv("tokenizer.chat_template.", "x").unwrap();
    let bytes = w.finish().unwrap();
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Named {
        #[serde(rename = "tokenizer.chat_template.")]
        named: BTreeMap<String, String>,
    }
    let r = from_slice::<Named>(&bytes);
    assert!(r.is_err(), "{r:?}");
    // A map of maps sees the keys as written, grouped by their first segment.
    let want = BTreeMap::from([
        ("chat_template.rag".to_owned(), "r".to_owned()),
        ("chat_template.".to_owned(), "x".to_owned()),
    ]);
    let m = from_slice::<BTreeMap<String, BTreeMap<String, String>>>(&bytes).unwrap();
    assert_eq!(m, BTreeMap::from([("tokenizer".to_owned(), want)]));
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Expert {
    dim: u32,
    gate: Option<f32>,
    #[serde(rename = "ffn.kind")]
    kind: String,
}

#[test]
fn maps_of_structs_round_trip() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        experts: BTreeMap<String, Expert>,
        count: u32,
    }
    let mut experts = BTreeMap::new();
    experts.insert("e0".to_owned(), Expert { dim: 4, gate: Some(0.5), kind: "silu".into() });
    experts.insert("e1".to_owned(), Expert { dim: 8, gate: None, kind: "gelu".into() });
    let v = M { experts, count: 2 };
    let bytes = to_vec(&v).unwrap();
    assert_eq!(
        stored(&bytes),
        [
            ("experts.e0.dim".to_owned(), Value::U32(4)),
            ("experts.e0.gate".to_owned(), Value::F32(0.5)),
            ("experts.e0.ffn.kind".to_owned(), Value::String("silu".into())),
            ("experts.e1.dim".to_owned(), Value::U32(8)),
            ("experts.e1.ffn.kind".to_owned(), Value::String("gelu".into())),
            ("count".to_owned(), Value::U32(2)),
        ]
    );
    assert_eq!(from_slice::<M>(&bytes).unwrap(), v);
    // HashMap, integer keys, and the top level.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct H {
        blk: HashMap<u32, Expert>,
    }
    let h = H { blk: (0..12).map(|i| (i, Expert { dim: i, gate: Some(i as f32), kind: format!("k{i}") })).collect() };
    let bytes = to_vec(&h).unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().get("blk.11.ffn.kind"), Some(ValueRef::String("k11".into())));
    assert_eq!(from_slice::<H>(&bytes).unwrap(), h);
    let top: BTreeMap<String, Expert> = from_slice(&to_vec(&v.experts).unwrap()).unwrap();
    assert_eq!(top, v.experts);
    // Maps of maps group by the first segment at each level.
    let mm: BTreeMap<String, BTreeMap<String, u8>> = [
        ("x".to_owned(), [("p".to_owned(), 1u8), ("q.r".to_owned(), 2)].into()),
        ("y".to_owned(), [("z".to_owned(), 3)].into()),
    ]
    .into();
    assert_eq!(from_slice::<BTreeMap<String, BTreeMap<String, u8>>>(&to_vec(&mm).unwrap()).unwrap(), mm);
    // Keys of one entry that are not together in the file still make one entry.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("e0.dim", 1u32).unwrap();
    w.add_kv("e1.dim", 2u32).unwrap();
    w.add_kv("e0.ffn.kind", "a").unwrap();
    w.add_kv("e1.ffn.kind", "b").unwrap();
    let bytes = w.finish().unwrap();
    let m: BTreeMap<String, Expert> = from_slice(&bytes).unwrap();
    assert_eq!(m["e0"], Expert { dim: 1, gate: None, kind: "a".into() });
    assert_eq!(m["e1"], Expert { dim: 2, gate: None, kind: "b".into() });
    // An entry that does not fit names its key.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("e0.dim", "x").unwrap();
    w.add_kv("e0.ffn.kind", "a").unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(
        from_slice::<BTreeMap<String, Expert>>(&bytes).unwrap_err().to_string(),
        "invalid type: expected u32, found string \"x\" at key \"e0.dim\" (offset 42)"
    );
    // An entry that is a value with no keys under it, where a struct is expected, is refused
    // naming its key, type and offset: header 24; e0.dim: key 8 + 6, type 4, u32 4 = 46;
    // e0.ffn.kind: key 8 + 11, type 4, string 8 + 1 = 78; e1: key 8 + 2, type 4: 92.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("e0.dim", 1u32).unwrap();
    w.add_kv("e0.ffn.kind", "a").unwrap();
    w.add_kv("e1", 5u32).unwrap();
    let e = from_slice::<BTreeMap<String, Expert>>(&w.finish().unwrap()).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("e1"), Some(92)), "{e}");
    assert_eq!(e.to_string(), "invalid type: expected struct Expert, found u32 5 at key \"e1\" (offset 92)");
    // A map of newtype structs over a struct reads as the map of structs (serde's data model: a
    // newtype struct is its inner value).
    #[derive(Deserialize, Debug, PartialEq)]
    struct Wrapped(Expert);
    let bytes = to_vec(&v.experts).unwrap();
    let wrapped: BTreeMap<String, Wrapped> = from_slice(&bytes).unwrap();
    assert_eq!(wrapped.into_iter().map(|(k, w)| (k, w.0)).collect::<BTreeMap<_, _>>(), v.experts);
    // Maps of values still see the rest of each key flat.
    let flat: BTreeMap<String, u32> = from_slice(&to_vec(&Dotted2 { a: 1, b: 2 }).unwrap()).unwrap();
    assert_eq!(flat.keys().collect::<Vec<_>>(), ["x.a", "x.y.b"]);
}

#[test]
fn a_map_entry_that_is_a_value_where_a_map_is_expected_names_its_key() {
    // As for a struct above: `e1` is a value with no keys under it, where the map's values are
    // maps. serde's `BTreeMap` expects "a map". Offsets: header 24; e0.dim: key 8 + 6, type 4,
    // u32 4 = 46; e0.ffn.kind: key 8 + 11, type 4, string 8 + 1 = 78; e1: key 8 + 2, type 4: 92.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("e0.dim", 1u32).unwrap();
    w.add_kv("e0.ffn.kind", "a").unwrap();
    w.add_kv("e1", 5u32).unwrap();
    let bytes = w.finish().unwrap();
    let e = from_slice::<BTreeMap<String, BTreeMap<String, Value>>>(&bytes).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("e1"), Some(92)), "{e}");
    assert_eq!(e.to_string(), "invalid type: expected a map, found u32 5 at key \"e1\" (offset 92)");
}

#[derive(Serialize)]
struct Dotted2 {
    #[serde(rename = "x.a")]
    a: u32,
    #[serde(rename = "x.y.b")]
    b: u32,
}

#[test]
fn empty_maps_are_refused_on_write_and_the_recipes_read_back() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        m: BTreeMap<String, u32>,
    }
    let e = to_vec(&M { m: BTreeMap::new() }).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(MetadataError::Message { .. })), "{e:?}");
    assert_eq!(e.key(), Some("m"));
    assert_eq!(
        e.to_string(),
        "an empty map or struct writes no keys, and GGUF has no empty group to read back: leave it out with \
         skip_serializing_if (and #[serde(default)] to read it as empty), or use an Option that is None at key \"m\" (offset 37)"
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct O {
        m: Option<BTreeMap<String, u32>>,
    }
    assert_eq!(to_vec(&O { m: Some(BTreeMap::new()) }).unwrap_err().key(), Some("m"));
    // None writes no key and reads back None; a non-empty map reads back as written.
    assert_eq!(from_slice::<O>(&to_vec(&O { m: None }).unwrap()).unwrap(), O { m: None });
    let one = O { m: Some([("k".to_owned(), 1)].into()) };
    assert_eq!(from_slice::<O>(&to_vec(&one).unwrap()).unwrap(), one);
    // The recipe for a map that may be empty.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct D {
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        m: BTreeMap<String, u32>,
        n: u8,
    }
    let d = D { m: BTreeMap::new(), n: 1 };
    let bytes = to_vec(&d).unwrap();
    assert_eq!(stored(&bytes), [("n".to_owned(), Value::U8(1))]);
    assert_eq!(from_slice::<D>(&bytes).unwrap(), d);
    // A struct all of whose fields are left out is an empty group too.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        s: Option<Inner>,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Inner {
        x: Option<u8>,
    }
    assert_eq!(to_vec(&S { s: Some(Inner { x: None }) }).unwrap_err().key(), Some("s"));
    // The top level may be empty: a file with no keys, read back as an empty map.
    let bytes = to_vec(&BTreeMap::<String, u32>::new()).unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().kv_count(), 0);
    assert!(from_slice::<BTreeMap<String, u32>>(&bytes).unwrap().is_empty());
}

#[test]
fn flattened_structs_with_arch_keys_read_back() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Hp {
        #[serde(rename = "{arch}.context_length")]
        context_length: u32,
        #[serde(rename = "{arch}.attention.head_count")]
        head_count: u32,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(flatten)]
        hp: Hp,
    }
    let v = M { arch: "llama".into(), hp: Hp { context_length: 4096, head_count: 32 } };
    let bytes = to_vec(&v).unwrap();
    assert_eq!(
        stored(&bytes),
        [
            ("general.architecture".to_owned(), Value::String("llama".into())),
            ("llama.context_length".to_owned(), Value::U32(4096)),
            ("llama.attention.head_count".to_owned(), Value::U32(32)),
        ]
    );
    assert_eq!(from_slice::<M>(&bytes).unwrap(), v);
    // A key that is the architecture's name alone is the field `{arch}` (every segment that is
    // the name is the placeholder, as on write).
    #[derive(Deserialize, Debug, PartialEq)]
    struct Bare {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(flatten)]
        hp: BareHp,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct BareHp {
        #[serde(rename = "{arch}")]
        whole: u32,
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama", 7u32).unwrap();
    assert_eq!(from_slice::<Bare>(&w.finish().unwrap()).unwrap().hp, BareHp { whole: 7 });
    // With the architecture given by the caller.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Only {
        #[serde(flatten)]
        hp: Hp,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    let opts = MetadataOptions::new().arch("gemma3");
    let only = Only { hp: Hp { context_length: 1, head_count: 2 }, rest: BTreeMap::new() };
    let bytes = opts.to_vec(&only).unwrap();
    assert!(Gguf::from_slice(&bytes).unwrap().get("gemma3.context_length").is_some());
    assert_eq!(opts.from_slice::<Only>(&bytes).unwrap(), only);
    // A missing key names the resolved key.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.attention.head_count", 8u32).unwrap();
    let bytes = w.finish().unwrap();
    let e = from_slice::<M>(&bytes).unwrap_err();
    assert!(matches!(e.as_metadata(), Some(MetadataError::MissingKey { .. })), "{e:?}");
    assert_eq!(e.to_string(), "missing (no key of this name, nor under it) at key \"llama.context_length\"");
    // A value of the wrong type: serde buffers the keys of a struct with a flattened field and
    // checks them after the walk; the error names the key holding the value serde reports, and
    // its offset (header 24; general.architecture: key 8 + 20, type 4, string 8 + 5; then the key
    // llama.context_length 8 + 20 and its type 4).
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.context_length", "long").unwrap();
    w.add_kv("llama.attention.head_count", 8u32).unwrap();
    let e = from_slice::<M>(&w.finish().unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("llama.context_length"), "{e}");
    assert_eq!(e.offset(), Some(24 + 28 + 4 + 13 + 28 + 4), "{e}");
    assert_eq!(
        e.to_string(),
        "invalid type: string \"long\", expected u32 at key \"llama.context_length\" (offset 101)"
    );
    // An integer that does not fit, in a nested flattened struct: the full key.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Small {
        #[serde(rename = "{arch}.attention.head_count")]
        head_count: u8,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct N {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(flatten)]
        small: Small,
        #[serde(rename = "{arch}.context_length")]
        context_length: u32,
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.context_length", 300u32).unwrap();
    w.add_kv("llama.attention.head_count", 300u32).unwrap();
    let e = from_slice::<N>(&w.finish().unwrap()).unwrap_err();
    // Two keys hold 300 (the outer struct's own llama.context_length among them; the
    // deserializer does not see which of them serde buffered): the message lists both.
    assert_eq!(e.key(), None, "{e}");
    assert_eq!(
        e.to_string(),
        "invalid value: integer `300`, expected u8 (the value of one of the keys llama.context_length, \
         llama.attention.head_count)"
    );
    // With context_length of another value, the one key is named.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.context_length", 4096u32).unwrap();
    w.add_kv("llama.attention.head_count", 300u32).unwrap();
    let e = from_slice::<N>(&w.finish().unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("llama.attention.head_count"), "{e}");
}

/// `general.architecture` and a flattened struct of the architecture's keys.
#[derive(Deserialize, Debug)]
#[allow(dead_code)]
struct WithArch<H> {
    #[serde(rename = "general.architecture")]
    arch: String,
    #[serde(flatten)]
    hp: H,
}

#[test]
fn a_map_has_the_stored_keys_the_architecture_in_them_included() {
    // Only a struct's fields name the architecture `{arch}` (a struct with a flattened field
    // reads through a map, whose keys are then named so); a map's keys are the keys stored.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.context_length", 4096u32).unwrap();
    w.add_kv("llama.rope.freq_base", 10000.0f32).unwrap();
    let bytes = w.finish().unwrap();
    let want: BTreeMap<String, Value> = stored(&bytes).into_iter().collect();
    assert_eq!(from_slice::<BTreeMap<String, Value>>(&bytes).unwrap(), want);
    assert_eq!(from_slice::<HashMap<String, Value>>(&bytes).unwrap(), want.into_iter().collect());
}

/// The error of reading `general.architecture` `llama`, `llama.rope.freq_base` = `value` and,
/// if given, `llama.rope.scale` = `other` into a struct with a flattened `u32` field for
/// `{arch}.rope.freq_base`. serde buffers the values of a struct with a flattened field, so the
/// error it raises names no key: the deserializer finds the key holding the value it reports.
/// The value is at 101: header 24; general.architecture: key 8 + 20, type 4, string 8 + 5, to
/// 69; llama.rope.freq_base: key 8 + 20, type 4.
fn freq_base_error(value: &Value, other: Option<Value>) -> gguf_serde::Error {
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Hp {
        #[serde(rename = "{arch}.rope.freq_base")]
        freq_base: u32,
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.rope.freq_base", value.clone()).unwrap();
    if let Some(other) = other {
        w.add_kv("llama.rope.scale", other).unwrap();
    }
    let e = from_slice::<WithArch<Hp>>(&w.finish().unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("llama.rope.freq_base"), "{value:?}: {e}");
    assert_eq!(e.offset(), Some(101), "{value:?}: {e}");
    e
}

#[test]
fn a_float_of_the_wrong_type_inside_a_flattened_struct_names_its_key() {
    // serde reports a float as a 64-bit one: the key is the one holding that value, as f32 or
    // f64, NaN included. Each also with another float key after it, of the same type: NaN
    // equals no number (IEEE 754), so a NaN there is not the number serde reports, nor a number
    // there the NaN it reports.
    for (value, shown, other) in [
        (Value::F32(1.5), "1.5", Value::F32(f32::NAN)),
        (Value::F64(2.5), "2.5", Value::F64(f64::NAN)),
        (Value::F32(f32::NAN), "NaN", Value::F32(1.5)),
        (Value::F64(f64::NAN), "NaN", Value::F64(2.5)),
    ] {
        for other in [None, Some(other)] {
            let e = freq_base_error(&value, other);
            assert_eq!(
                e.to_string(),
                format!(
                    "invalid type: floating point `{shown}`, expected u32 at key \"llama.rope.freq_base\" (offset 101)"
                )
            );
        }
    }
}

#[test]
fn a_bool_of_the_wrong_type_inside_a_flattened_struct_names_its_key() {
    // serde reports a BOOL as the bool it holds (`Unexpected::Bool`): the key is the one holding
    // that bool, also with another BOOL key after it holding the other one.
    for (value, shown, other) in [(true, "true", false), (false, "false", true)] {
        for other in [None, Some(Value::Bool(other))] {
            let e = freq_base_error(&Value::Bool(value), other);
            assert_eq!(
                e.to_string(),
                format!("invalid type: boolean `{shown}`, expected u32 at key \"llama.rope.freq_base\" (offset 101)")
            );
        }
    }
}

#[test]
fn a_negative_integer_of_the_wrong_type_inside_a_flattened_struct_names_its_key() {
    // serde reports a negative integer as a signed one (`Unexpected::Signed`), whatever its
    // stored width; another key after it holds the same magnitude, positive.
    for (value, other) in
        [(Value::I8(-5), Value::U8(5)), (Value::I32(-5), Value::I32(5)), (Value::I64(-5), Value::U64(5))]
    {
        for other in [None, Some(other)] {
            let e = freq_base_error(&value, other);
            assert_eq!(
                e.to_string(),
                "invalid value: integer `-5`, expected u32 at key \"llama.rope.freq_base\" (offset 101)"
            );
        }
    }
}

#[test]
fn a_string_or_an_array_of_the_wrong_type_inside_a_flattened_struct_names_its_key() {
    // A string: the key whose value is that string, not an array holding it as an element
    // (elements are searched only when no whole value is the one reported).
    let strings = Value::Array(Array::String(vec!["x".into(), "y".into()]));
    for other in [None, Some(strings)] {
        let e = freq_base_error(&Value::String("x".into()), other);
        assert_eq!(
            e.to_string(),
            "invalid type: string \"x\", expected u32 at key \"llama.rope.freq_base\" (offset 101)"
        );
    }
    // An array (serde reports a sequence): the one key holding an array.
    for other in [None, Some(Value::String("x".into()))] {
        let e = freq_base_error(&Value::Array(Array::U32(vec![1, 2])), other);
        assert_eq!(e.to_string(), "invalid type: sequence, expected u32 at key \"llama.rope.freq_base\" (offset 101)");
    }
}

#[test]
fn an_array_element_error_inside_a_flattened_struct_names_the_element() {
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Hp {
        #[serde(rename = "{arch}.layers")]
        layers: Vec<u32>,
        #[serde(rename = "{arch}.grid")]
        grid: Option<Vec<Vec<u8>>>,
    }
    type M = WithArch<Hp>;
    // header 24; general.architecture: key 8 + 20, type 4, string 8 + 5, to 69; llama.layers: key
    // 8 + 12, type 4, then the value at 93: element type 4, count 8, elements from 105.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.layers", Value::Array(Array::String(vec!["1".into(), "two".into()]))).unwrap();
    let e = from_slice::<M>(&w.finish().unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("llama.layers[0]"), "{e}");
    assert_eq!(e.offset(), Some(105), "{e}");
    assert_eq!(e.to_string(), "invalid type: string \"1\", expected u32 at key \"llama.layers[0]\" (offset 105)");
    // In a nested array: 256 does not fit a u8. llama.layers' one element ends at 109; the key
    // llama.grid 8 + 10, type 4, then the value at 131: element type 4, count 8, the inner arrays
    // from 143; the first is 12 + 4 bytes, so the second starts at 159, its elements at 171, and
    // its second element is at 175.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.layers", Value::Array(Array::U32(vec![7]))).unwrap();
    let grid = Array::Array(vec![Array::U32(vec![1]), Array::U32(vec![2, 256])]);
    w.add_kv("llama.grid", Value::Array(grid)).unwrap();
    let e = from_slice::<M>(&w.finish().unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("llama.grid[1][1]"), "{e}");
    assert_eq!(e.offset(), Some(175), "{e}");
}

#[test]
fn an_element_value_in_several_arrays_inside_a_flattened_struct_names_them_all() {
    // serde reports 300 for `llama.a`'s first element; `llama.c1`, ... (not fields: a flattened
    // struct ignores them) hold it too, as an element: the message lists the elements holding
    // it, at most 5, and names no key.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Hp {
        #[serde(rename = "{arch}.a")]
        a: Vec<u8>,
    }
    for others in [1, 5] {
        let mut w = GgufWriter::new(Vec::new());
        w.add_kv("general.architecture", "llama").unwrap();
        w.add_kv("llama.a", Value::Array(Array::U32(vec![300]))).unwrap();
        for i in 1..=others {
            w.add_kv(&format!("llama.c{i}"), Value::Array(Array::U32(vec![1, 300]))).unwrap();
        }
        let e = from_slice::<WithArch<Hp>>(&w.finish().unwrap()).unwrap_err();
        assert_eq!((e.key(), e.offset()), (None, None), "{e}");
        let keys: Vec<String> = ["llama.a[0]".to_owned()]
            .into_iter()
            .chain((1..=others.min(4)).map(|i| format!("llama.c{i}[1]")))
            .collect();
        assert_eq!(
            e.to_string(),
            format!("invalid value: integer `300`, expected u8 (the value of one of the keys {})", keys.join(", "))
        );
    }
}

#[test]
fn arrays_of_arrays_with_an_empty_inner_array() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        m: Vec<Vec<String>>,
    }
    // The empty inner array takes its siblings' element type.
    let v = M { m: vec![vec!["a".into()], vec![]] };
    let bytes = to_vec(&v).unwrap();
    let expected = Value::Array(Array::Array(vec![Array::String(vec!["a".into()]), Array::String(vec![])]));
    assert_eq!(stored(&bytes), [("m".to_owned(), expected)]);
    assert_eq!(from_slice::<M>(&bytes).unwrap(), v);
    // All empty: no type to take; the error names the inner array, and the suggested fix works.
    let e = to_vec(&M { m: vec![vec![], vec![]] }).unwrap_err();
    assert_eq!(e.key(), Some("m[0]"), "{e}");
    assert!(e.to_string().starts_with("empty sequence has no element type: force one with"), "{e}");
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct F {
        #[serde(with = "gguf_serde::elem::string")]
        m: Vec<Vec<String>>,
    }
    for m in [vec![vec![], vec![]], vec![vec!["x".to_owned()], vec![]]] {
        let f = F { m };
        let bytes = to_vec(&f).unwrap();
        let inner: Vec<Array> = f.m.iter().map(|v| Array::String(v.clone())).collect();
        assert_eq!(stored(&bytes), [("m".to_owned(), Value::Array(Array::Array(inner)))]);
        assert_eq!(from_slice::<F>(&bytes).unwrap(), f);
    }
    // An empty outer sequence has only the forced type to go by.
    let bytes = to_vec(&F { m: vec![] }).unwrap();
    assert_eq!(stored(&bytes), [("m".to_owned(), Value::Array(Array::String(vec![])))]);
    assert_eq!(from_slice::<F>(&bytes).unwrap(), F { m: vec![] });
    // Errors inside arrays name the index, on write and on read.
    #[derive(Serialize)]
    struct Mixed {
        m: Vec<Vec<Value>>,
    }
    let e = to_vec(&Mixed { m: vec![vec![Value::U32(1)], vec![Value::U32(1), Value::I32(2)]] }).unwrap_err();
    // The offset is that of the value the key names, m[1]: header 24, key 8 + 1, type 4, m's
    // value at 37; its element type and count 12, then m[0] (12 + 4), so m[1] is at 65.
    assert_eq!(
        e.to_string(),
        "mixed array element types: element 1 is i32, but the elements are u32 (the type of element 0) at key \"m[1]\" \
         (offset 65)"
    );
    // Deeper: m at 37, m[0] at 49 (12 + [12 + 4] = 28 bytes), m[1] at 77, m[1][0] (the array
    // of mixed types) at 89.
    #[derive(Serialize)]
    struct Deep {
        m: Vec<Vec<Vec<Value>>>,
    }
    let m = vec![vec![vec![Value::U32(1)]], vec![vec![Value::U32(1), Value::I32(-1)]]];
    let e = to_vec(&Deep { m }).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("m[1][0]"), Some(89)), "{e}");
    #[derive(Serialize)]
    struct Unit {
        m: Vec<Vec<()>>,
    }
    let e = to_vec(&Unit { m: vec![vec![()]] }).unwrap_err();
    // m at 37, m[0] at 49, its element at 61.
    assert_eq!((e.key(), e.offset()), (Some("m[0][0]"), Some(61)), "{e}");
    // Under an empty map key (refused as a key, but the unit is met first): its pair at 24, a
    // key of 0 bytes (8-byte length), the type 4, the value at 36, its element at 48.
    let e = to_vec(&BTreeMap::from([("", vec![()])])).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("[0]"), Some(48)), "{e}");
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        m: Vec<Vec<u8>>,
    }
    let e = from_slice::<R>(&to_vec(&v).unwrap()).unwrap_err();
    assert_eq!(e.key(), Some("m[0][0]"), "{e}");
}

#[test]
fn keys_with_empty_segments_are_refused() {
    for k in ["a..b", "a.", ".x", "."] {
        let m: BTreeMap<String, u32> = [(k.to_owned(), 1)].into();
        let e = to_vec(&m).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidKey { .. })), "{k}: {e:?}");
        assert_eq!(e.key(), Some(k));
        // The output offset of its pair, the first.
        assert_eq!(e.to_string(), format!("invalid key {k:?}: a segment between dots is empty (offset 24)"));
    }
    #[derive(Serialize)]
    struct S {
        #[serde(rename = "general..name")]
        n: u8,
    }
    assert_eq!(to_vec(&S { n: 1 }).unwrap_err().key(), Some("general..name"));
    // A map under a key with an empty key: `p.` — refused as well.
    #[derive(Serialize)]
    struct P {
        p: BTreeMap<String, u8>,
    }
    let e = to_vec(&P { p: [(String::new(), 1)].into() }).unwrap_err();
    assert_eq!(e.key(), Some("p."), "{e}");
}

/// Found by a new user: a map of structs with a dot in a map key (`"x.y"`) wrote
/// `experts.x.y.dim`, which reads back as entry `"x"` holding a group `y` ("missing … at key
/// experts.x.dim"). Refused on write, at the entry's key; a map of values keeps dotted keys.
#[test]
fn a_dotted_key_of_a_map_of_structs_is_refused_on_write() {
    #[derive(Serialize)]
    struct M {
        experts: BTreeMap<String, Expert>,
    }
    let mut experts = BTreeMap::new();
    experts.insert("x.y".to_owned(), Expert { dim: 4, gate: None, kind: "silu".into() });
    let e = to_vec(&M { experts }).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Metadata(_)), "{e:?}");
    assert_eq!(e.key(), Some("experts.x.y"), "{e}");
    assert!(e.to_string().contains("a map key with a dot holds a struct or map"), "{e}");
    // Values under dotted map keys read back flat, as written.
    let mut flat = BTreeMap::new();
    flat.insert("tool_use.v2".to_owned(), "t".to_owned());
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct T {
        templates: BTreeMap<String, String>,
    }
    let t = T { templates: flat };
    assert_eq!(from_slice::<T>(&to_vec(&t).unwrap()).unwrap(), t);
}
