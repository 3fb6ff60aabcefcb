//! The serde mapping, one behaviour at a time: exact bytes of small structs (hand-computed),
//! attributes, enums, arrays, key rules, the architecture placeholder and the error messages of
//! the common mistakes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use gguf_serde::{
    from_slice, to_value, to_vec, Array, ErrorKind, Gguf, GgufWriter, MetadataError, MetadataOptions, Value, ValueRef,
};
use serde::{Deserialize, Serialize};

/// A GGUF v3 file with no tensors: header, `kv` (already encoded), zero padding to 32 bytes.
fn file(n_kv: u64, kv: &[u8]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&n_kv.to_le_bytes());
    out.extend_from_slice(kv);
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out
}

fn key(k: &str) -> Vec<u8> {
    [&(k.len() as u64).to_le_bytes()[..], k.as_bytes()].concat()
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Small {
    general: SmallGeneral,
    count: u16,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct SmallGeneral {
    name: String,
    alignment: u32,
}

#[test]
fn exact_bytes_nested_struct() {
    let v = Small { general: SmallGeneral { name: "ab".into(), alignment: 64 }, count: 7 };
    let mut kv = Vec::new();
    kv.extend(key("general.name"));
    kv.extend(8u32.to_le_bytes()); // STRING
    kv.extend(2u64.to_le_bytes());
    kv.extend(b"ab");
    kv.extend(key("general.alignment"));
    kv.extend(4u32.to_le_bytes()); // UINT32
    kv.extend(64u32.to_le_bytes());
    kv.extend(key("count"));
    kv.extend(2u32.to_le_bytes()); // UINT16
    kv.extend(7u16.to_le_bytes());
    let mut expected = file(3, &kv);
    // general.alignment = 64 pads the (empty) data section to 64.
    while !expected.len().is_multiple_of(64) {
        expected.push(0);
    }
    assert_eq!(to_vec(&v).unwrap(), expected);
    assert_eq!(from_slice::<Small>(&expected).unwrap(), v);
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Widths {
    a: u8,
    b: i8,
    c: i16,
    d: i32,
    e: u64,
    f: i64,
    g: f32,
    h: f64,
    i: bool,
    j: char,
    k: Vec<i16>,
    #[serde(with = "serde_bytes_like")]
    l: Vec<u8>,
    m: (u32, u32),
    n: Vec<Vec<u8>>,
}

/// `serialize_bytes` without the serde_bytes crate.
mod serde_bytes_like {
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let b: &[u8] = serde::Deserialize::deserialize(d)?;
        Ok(b.to_vec())
    }
}

#[test]
fn exact_bytes_every_width() {
    let v = Widths {
        a: 0xab,
        b: -2,
        c: -300,
        d: -70000,
        e: 1 << 40,
        f: -(1 << 40),
        g: 0.5,
        h: -0.25,
        i: true,
        j: 'é',
        k: vec![1, -1],
        l: vec![9, 8],
        m: (1, 2),
        n: vec![vec![1], vec![]],
    };
    let mut kv = Vec::new();
    let mut put = |k: &str, t: u32, bytes: &[u8]| {
        kv.extend(key(k));
        kv.extend(t.to_le_bytes());
        kv.extend(bytes);
    };
    put("a", 0, &[0xab]);
    put("b", 1, &(-2i8).to_le_bytes());
    put("c", 3, &(-300i16).to_le_bytes());
    put("d", 5, &(-70000i32).to_le_bytes());
    put("e", 10, &(1u64 << 40).to_le_bytes());
    put("f", 11, &(-(1i64 << 40)).to_le_bytes());
    put("g", 6, &0.5f32.to_le_bytes());
    put("h", 12, &(-0.25f64).to_le_bytes());
    put("i", 7, &[1]);
    put("j", 8, &[&2u64.to_le_bytes()[..], "é".as_bytes()].concat());
    put("k", 9, &[&3u32.to_le_bytes()[..], &2u64.to_le_bytes(), &1i16.to_le_bytes(), &(-1i16).to_le_bytes()].concat());
    put("l", 9, &[&0u32.to_le_bytes()[..], &2u64.to_le_bytes(), &[9, 8]].concat());
    put("m", 9, &[&4u32.to_le_bytes()[..], &2u64.to_le_bytes(), &1u32.to_le_bytes(), &2u32.to_le_bytes()].concat());
    let kv_without_n = kv.clone();
    // array<array<u8>>: the outer array's elements are (element type, count, elements).
    let nested = |kv: &mut Vec<u8>, inner: &[u8]| {
        kv.extend(key("n"));
        kv.extend(9u32.to_le_bytes());
        kv.extend(9u32.to_le_bytes());
        kv.extend(2u64.to_le_bytes());
        kv.extend(0u32.to_le_bytes());
        kv.extend(1u64.to_le_bytes());
        kv.push(1);
        kv.extend(0u32.to_le_bytes());
        kv.extend((inner.len() as u64).to_le_bytes());
        kv.extend(inner);
    };
    // The empty inner array of `n` takes the element type of its sibling: array<u8>, 0 elements.
    let mut kv_empty = kv_without_n.clone();
    nested(&mut kv_empty, &[]);
    let expected = file(14, &kv_empty);
    assert_eq!(to_vec(&v).unwrap(), expected);
    assert_eq!(from_slice::<Widths>(&expected).unwrap(), v);
    let v = Widths { n: vec![vec![1], vec![0]], ..v };
    let mut kv = kv_without_n;
    nested(&mut kv, &[0]);
    let expected = file(14, &kv);
    assert_eq!(to_vec(&v).unwrap(), expected);
    assert_eq!(from_slice::<Widths>(&expected).unwrap(), v);
}

#[test]
fn any_integer_that_fits_is_accepted() {
    #[derive(Serialize)]
    struct W {
        a: u64,
        b: i8,
        c: u8,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct R {
        a: u8,
        b: i64,
        c: i128,
    }
    let bytes = to_vec(&W { a: 255, b: -5, c: 200 }).unwrap();
    assert_eq!(from_slice::<R>(&bytes).unwrap(), R { a: 255, b: -5, c: 200 });
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Narrow {
        a: u32,
        b: u16,
    }
    let e = from_slice::<Narrow>(&bytes).unwrap_err();
    // b = -5 (i8) at offset 24 + (8+1+4+8) + (8+1+4).
    assert_eq!(e.to_string(), "integer -5 (stored as i8) does not fit in u16 at key \"b\" (offset 58)");
    let v: u128 = gguf_serde::from_value(Value::U64(u64::MAX)).unwrap();
    assert_eq!(v, u128::from(u64::MAX));
    assert_eq!(gguf_serde::to_value(&u128::from(u64::MAX)).unwrap(), Value::U64(u64::MAX));
    assert_eq!(
        gguf_serde::to_value(&(u128::from(u64::MAX) + 1)).unwrap_err().to_string(),
        "u128 value 18446744073709551616 does not fit in u64"
    );
    assert_eq!(gguf_serde::to_value(&-5i128).unwrap(), Value::I64(-5));
}

/// A FLOAT64 read as `f32`: rounded to the nearest `f32` (Rust's `as`, IEEE 754 round to
/// nearest), a value that does not fit refused as an integer that does not fit is; as `f64`,
/// FLOAT32 and FLOAT64 exactly.
#[test]
fn a_float64_into_f32_rounds_or_is_refused_when_it_does_not_fit() {
    #[derive(Serialize)]
    struct W {
        a: f64,
        b: Vec<f64>,
    }
    #[derive(Deserialize, Debug)]
    struct R32 {
        a: f32,
        b: Vec<f32>,
    }
    #[derive(Deserialize, Debug)]
    struct R64 {
        a: f64,
        b: Vec<f64>,
    }
    let ok = [0.1, -0.0, f64::INFINITY, f64::NEG_INFINITY, 3.4028234663852886e38, 1.401298464324817e-45];
    let bytes = to_vec(&W { a: 0.1, b: ok.to_vec() }).unwrap();
    let r = from_slice::<R32>(&bytes).unwrap();
    // 0.1 as f32 is 0x3DCCCCCD; f32::MAX and the smallest subnormal are exact.
    assert_eq!(r.a.to_bits(), 0x3dcc_cccd);
    let bits: Vec<u32> = r.b.iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits, [0x3dcc_cccd, 0x8000_0000, 0x7f80_0000, 0xff80_0000, 0x7f7f_ffff, 0x0000_0001]);
    assert_eq!(from_slice::<R64>(&bytes).unwrap().b, ok);
    let nan = from_slice::<R32>(&to_vec(&W { a: f64::NAN, b: vec![0.0] }).unwrap()).unwrap();
    assert!(nan.a.is_nan());
    // Too large for f32 (past f32::MAX by more than half a unit), and too small (under half the
    // smallest subnormal): refused with key, value, stored type and offset.
    // a's value at offset 24 + 8 + 1 + 4 (header, key "a", type).
    for (x, shown) in [(1e300, "1e300"), (-3.5e38, "-3.5e38"), (-1e-300, "-1e-300"), (7e-46, "7e-46")] {
        let bytes = to_vec(&W { a: x, b: vec![0.0] }).unwrap();
        let e = from_slice::<R32>(&bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("float {shown} (stored as f64) does not fit in f32 at key \"a\" (offset 37)")
        );
        assert_eq!(from_slice::<R64>(&bytes).unwrap().a, x);
    }
    // An element of an array names its index.
    let bytes = to_vec(&W { a: 0.0, b: vec![1.0, 1e39] }).unwrap();
    let e = from_slice::<R32>(&bytes).unwrap_err();
    assert_eq!(e.key(), Some("b[1]"), "{e}");
}

#[test]
fn wrong_type_names_key_types_and_offset() {
    #[derive(Serialize)]
    struct W {
        general: G,
    }
    #[derive(Serialize)]
    struct G {
        name: &'static str,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        general: RG,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct RG {
        name: u32,
    }
    let bytes = to_vec(&W { general: G { name: "x" } }).unwrap();
    let e = from_slice::<R>(&bytes).unwrap_err();
    assert_eq!(e.to_string(), "invalid type: expected u32, found string \"x\" at key \"general.name\" (offset 48)");
    assert!(matches!(e.kind(), ErrorKind::Metadata(MetadataError::Message { .. })), "{e:?}");
    assert_eq!((e.key(), e.offset(), e.tensor()), (Some("general.name"), Some(48), None));
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R2 {
        general: u32,
    }
    let e = from_slice::<R2>(&bytes).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid type: expected u32, found a group of keys (1 key, first \"general.name\") at key \"general\" (offset 48)"
    );
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R3 {
        general: RG3,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct RG3 {
        name: String,
        architecture: String,
    }
    let e = from_slice::<R3>(&bytes).unwrap_err();
    assert_eq!(e.to_string(), "missing (no key of this name, nor under it) at key \"general.architecture\"");
    assert!(matches!(e.as_metadata(), Some(MetadataError::MissingKey { .. })), "{e:?}");
    assert_eq!((e.key(), e.offset()), (Some("general.architecture"), None));
}

#[test]
fn option_default_rename_skip() {
    #[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
    struct S {
        present: Option<u32>,
        absent: Option<u32>,
        #[serde(default)]
        defaulted: u8,
        #[serde(rename = "general.file_type")]
        file_type: u32,
        #[serde(skip_serializing_if = "Vec::is_empty", default)]
        list: Vec<u32>,
        #[serde(skip)]
        skipped: u64,
    }
    let v = S { present: Some(1), file_type: 15, skipped: 9, ..S::default() };
    let bytes = to_vec(&v).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let keys: Vec<&str> = f.metadata().map(|kv| kv.key.to_str().unwrap()).collect();
    assert_eq!(keys, ["present", "defaulted", "general.file_type"]);
    assert_eq!(from_slice::<S>(&bytes).unwrap(), S { skipped: 0, ..v });
}

#[test]
fn unknown_keys_ignored_or_denied() {
    #[derive(Serialize)]
    struct W {
        a: u32,
        b: Vec<String>,
        c: C,
    }
    #[derive(Serialize)]
    struct C {
        d: bool,
    }
    let bytes = to_vec(&W { a: 1, b: vec!["x".into()], c: C { d: true } }).unwrap();
    #[derive(Deserialize, Debug, PartialEq)]
    struct Lenient {
        a: u32,
    }
    assert_eq!(from_slice::<Lenient>(&bytes).unwrap(), Lenient { a: 1 });
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        a: u32,
        b: Vec<String>,
    }
    let e = from_slice::<Strict>(&bytes).unwrap_err();
    assert_eq!(e.to_string(), "unknown field `c.d`, expected `a` or `b` at key \"c.d\" (offset 90)");
}

#[test]
fn flatten_and_maps_see_flat_keys() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    let mut rest = BTreeMap::new();
    rest.insert("llama.context_length".to_owned(), Value::U32(4096));
    rest.insert("llama.rope.scale".to_owned(), Value::F32(0.5));
    rest.insert("tokenizer.ggml.tokens".to_owned(), Value::from(vec!["a", "b"]));
    // An array of each element type (serde buffers a flattened struct's values: each element is
    // read on its own, and the array must keep the stored element type).
    for a in [
        Array::U8(vec![1, 2]),
        Array::I8(vec![-1, 2]),
        Array::U16(vec![1, 2]),
        Array::I16(vec![-1, 2]),
        Array::U32(vec![1, 2]),
        Array::I32(vec![-1, 2]),
        Array::U64(vec![1, 2]),
        Array::I64(vec![-1, 2]),
        Array::F32(vec![0.5, -2.0]),
        Array::F64(vec![0.25, -2.0]),
        Array::Bool(vec![true, false]),
        Array::String(vec!["x".into(), "y".into()]),
        Array::Array(vec![Array::I32(vec![1, 2]), Array::I32(vec![3])]),
    ] {
        rest.insert(format!("arrays.{}", a.elem_type()), Value::Array(a));
    }
    let v = S { arch: "llama".into(), rest };
    let bytes = to_vec(&v).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.get("llama.rope.scale"), Some(ValueRef::F32(0.5)));
    // In a struct with a flattened field, keys of the architecture are named with `{arch}` (as
    // a flattened struct's fields would be); written back, they are the same keys.
    let back = from_slice::<S>(&bytes).unwrap();
    let names: Vec<&str> = back.rest.keys().map(String::as_str).collect();
    assert_eq!(names[13..], ["tokenizer.ggml.tokens", "{arch}.context_length", "{arch}.rope.scale"]);
    assert_eq!(back.rest["{arch}.rope.scale"], Value::F32(0.5));
    let pairs = |b: &[u8]| -> BTreeMap<String, Value> {
        Gguf::from_slice(b).unwrap().metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect()
    };
    assert_eq!(pairs(&to_vec(&back).unwrap()), pairs(&bytes));
    // A map at the top level takes every key.
    let all: BTreeMap<String, Value> = from_slice(&bytes).unwrap();
    assert_eq!(all.len(), 17);
    assert_eq!(all["general.architecture"], Value::String("llama".into()));
    // A map nested under a key takes the keys under it.
    #[derive(Deserialize)]
    struct L {
        llama: BTreeMap<String, Value>,
    }
    let l: L = from_slice(&bytes).unwrap();
    assert_eq!(l.llama.keys().collect::<Vec<_>>(), ["context_length", "rope.scale"]);
}

#[test]
fn borrowed_strings() {
    #[derive(Serialize)]
    struct W {
        s: &'static str,
        c: &'static str,
        v: Vec<&'static str>,
    }
    #[derive(Deserialize)]
    struct R<'a> {
        s: &'a str,
        #[serde(borrow)]
        c: Cow<'a, str>,
        #[serde(borrow)]
        v: Vec<&'a str>,
    }
    let bytes = to_vec(&W { s: "hello", c: "cow", v: vec!["x", "yz"] }).unwrap();
    let r: R<'_> = from_slice(&bytes).unwrap();
    // From an opened slice-backed file, the result may outlive the `Gguf`.
    let r2: R<'_> = {
        let f = Gguf::from_slice(&bytes).unwrap();
        f.deserialize_metadata_borrowed().unwrap()
    };
    assert_eq!(r2.s, "hello");
    assert_eq!((r.s, r.v.as_slice()), ("hello", &["x", "yz"][..]));
    assert!(matches!(r.c, Cow::Borrowed("cow")));
    let range = bytes.as_ptr_range();
    assert!(range.contains(&r.s.as_ptr()) && range.contains(&r.v[1].as_ptr()));
}

#[test]
fn enums() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Pooling {
        #[serde(rename = "mean")]
        Mean,
        Cls,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        a: Pooling,
        b: Vec<Pooling>,
    }
    let v = S { a: Pooling::Mean, b: vec![Pooling::Cls, Pooling::Mean] };
    let bytes = to_vec(&v).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.get("a"), Some(ValueRef::String("mean".into())));
    assert_eq!(from_slice::<S>(&bytes).unwrap(), v);

    // A variant with data of each of serde's kinds (newtype, tuple, struct) is refused at its
    // key, the offset where its value would be (header 24, key length 8 + "d", type 4).
    #[derive(Serialize)]
    enum Data {
        One(u32),
        Pair(u32, u32),
        Named { x: u32 },
    }
    #[derive(Serialize)]
    struct D {
        d: Data,
    }
    for (d, variant) in [(Data::One(1), "One"), (Data::Pair(1, 2), "Pair"), (Data::Named { x: 1 }, "Named")] {
        assert_eq!(
            to_vec(&D { d }).unwrap_err().to_string(),
            format!(
                "enum variant Data::{variant} has data; GGUF stores only unit variants (as STRING): for variants \
                 with fields use an internally tagged enum, #[serde(tag = \"type\")] at key \"d\" (offset 37)"
            )
        );
    }
    #[derive(Serialize)]
    struct Bad {
        a: &'static str,
    }
    let e = from_slice::<S>(&to_vec(&Bad { a: "median" }).unwrap()).unwrap_err();
    assert_eq!(e.to_string(), "unknown variant `median`, expected `mean` or `Cls` at key \"a\" (offset 37)");
}

#[test]
fn arrays_mixed_empty_forced() {
    #[derive(Serialize)]
    struct Mixed {
        t: (u32, String),
    }
    assert_eq!(
        to_vec(&Mixed { t: (1, "x".into()) }).unwrap_err().to_string(),
        "mixed array element types: element 1 is string, but the elements are u32 (the type of element 0) at key \"t\" \
         (offset 37)"
    );
    #[derive(Serialize)]
    struct Values {
        v: Vec<Value>,
    }
    assert_eq!(
        to_vec(&Values { v: vec![Value::U32(1), Value::U32(2), Value::I32(3)] }).unwrap_err().to_string(),
        "mixed array element types: element 2 is i32, but the elements are u32 (the type of element 0) at key \"v\" \
         (offset 37)"
    );
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Forced {
        #[serde(with = "gguf_serde::elem::u64")]
        ids: Vec<u64>,
        #[serde(with = "gguf_serde::elem::string")]
        names: Vec<String>,
        any: Value,
    }
    let v = Forced { ids: vec![], names: vec![], any: Value::Array(Array::F64(vec![])) };
    let bytes = to_vec(&v).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let types: Vec<String> = f.metadata().map(|kv| kv.value.type_name()).collect();
    assert_eq!(types, ["array<u64>", "array<string>", "array<f64>"]);
    assert_eq!(from_slice::<Forced>(&bytes).unwrap(), v);
    let v = Forced { ids: vec![1], ..v };
    assert_eq!(from_slice::<Forced>(&to_vec(&v).unwrap()).unwrap(), v);
    #[derive(Serialize)]
    struct WrongForced {
        #[serde(with = "gguf_serde::elem::u64")]
        ids: Vec<u32>,
    }
    assert_eq!(
        to_vec(&WrongForced { ids: vec![1] }).unwrap_err().to_string(),
        "mixed array element types: element 0 is u32, but the elements are u64 (the array type forced for this \
         field) at key \"ids\" (offset 39)"
    );
    // Nested arrays round-trip, and a wrong element type on read names the index.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Nested {
        m: Vec<Vec<i32>>,
    }
    let v = Nested { m: vec![vec![1, 2], vec![3]] };
    let bytes = to_vec(&v).unwrap();
    assert_eq!(from_slice::<Nested>(&bytes).unwrap(), v);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct NestedU8 {
        m: Vec<Vec<u8>>,
    }
    let e = from_slice::<NestedU8>(&to_vec(&Nested { m: vec![vec![1], vec![2, 300]] }).unwrap()).unwrap_err();
    // m at 24; value at 24 + 8+1 + 4 = 37; elements from 37 + 12 = 49; element 1 at 49 + 12 + 4 = 65;
    // its element 1 at 65 + 12 + 4 = 81.
    assert_eq!(e.to_string(), "integer 300 (stored as i32) does not fit in u8 at key \"m[1][1]\" (offset 81)");
    // A tuple reads an array of its exact length.
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct T {
        m: (Vec<i32>,),
    }
    let e = from_slice::<T>(&bytes).unwrap_err();
    assert_eq!(e.to_string(), "invalid length: the array has 2 elements, fewer were expected at key \"m\" (offset 37)");
}

#[test]
fn key_rules_on_write() {
    #[derive(Serialize)]
    struct Conflict {
        a: u32,
        #[serde(rename = "a.b")]
        ab: u32,
    }
    // A key that is also a prefix (llama.cpp's named chat templates) is allowed.
    let bytes = to_vec(&Conflict { a: 1, ab: 2 }).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!((f.get("a"), f.get("a.b")), (Some(ValueRef::U32(1)), Some(ValueRef::U32(2))));
    let mut m = BTreeMap::new();
    m.insert("ключ".to_owned(), 1u8);
    assert_eq!(
        to_vec(&m).unwrap_err().to_string(),
        "invalid key \"ключ\": not ASCII (the spec requires ASCII keys) (offset 24)"
    );
    let mut m = BTreeMap::new();
    m.insert(String::new(), 1u8);
    assert_eq!(to_vec(&m).unwrap_err().to_string(), "invalid key \"\": empty (offset 24)");
    let mut m = BTreeMap::new();
    m.insert("k".repeat(65_536), 1u8);
    assert!(to_vec(&m).unwrap_err().to_string().ends_with(": longer than 65,535 bytes (offset 24)"));
    m.clear();
    m.insert("k".repeat(65_535), 1u8);
    assert!(to_vec(&m).is_ok());
    #[derive(Serialize)]
    struct Dup {
        #[serde(rename = "a.b")]
        x: u32,
        a: A,
    }
    #[derive(Serialize)]
    struct A {
        b: u32,
    }
    assert_eq!(
        to_vec(&Dup { x: 1, a: A { b: 2 } }).unwrap_err().to_string(),
        "invalid key \"a.b\": already added (duplicate key) (offset 43)"
    );
    assert_eq!(
        to_vec(&5u32).unwrap_err().to_string(),
        "the top level must be a struct or map of keys, found u32 (offset 24)"
    );
    #[derive(Serialize)]
    struct Unit {
        u: (),
    }
    assert_eq!(
        to_vec(&Unit { u: () }).unwrap_err().to_string(),
        "unit `()` has no GGUF value at key \"u\" (offset 37)"
    );
}

#[test]
fn architecture_placeholder() {
    #[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
    struct Hp {
        context_length: u32,
        #[serde(rename = "attention.head_count")]
        head_count: u32,
        #[serde(rename = "rope.dimension_count")]
        rope_dims: Option<u32>,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(rename = "{arch}")]
        hp: Hp,
    }
    let hp = Hp { context_length: 2048, head_count: 8, rope_dims: None };
    for arch in ["llama", "gemma3", "qwen2"] {
        let bytes = to_vec(&M { arch: arch.into(), hp: hp.clone() }).unwrap();
        let f = Gguf::from_slice(&bytes).unwrap();
        let keys: Vec<&str> = f.metadata().map(|kv| kv.key.to_str().unwrap()).collect();
        assert_eq!(
            keys,
            [
                "general.architecture".to_owned(),
                format!("{arch}.context_length"),
                format!("{arch}.attention.head_count")
            ]
        );
        assert_eq!(from_slice::<M>(&bytes).unwrap().hp, hp);
    }
    // The struct of hyper-parameters alone, with the prefix given by the caller.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Only {
        #[serde(rename = "{arch}")]
        hp: Hp,
    }
    let bytes = MetadataOptions::new().arch("phi3").to_vec(&Only { hp: hp.clone() }).unwrap();
    assert!(Gguf::from_slice(&bytes).unwrap().get("phi3.context_length").is_some());
    assert_eq!(MetadataOptions::new().arch("phi3").from_slice::<Only>(&bytes).unwrap().hp, hp);
    assert_eq!(
        to_vec(&Only { hp: hp.clone() }).unwrap_err().to_string(),
        "key has an {arch} segment but the architecture is unknown: there is no general.architecture string and none \
         was given with MetadataOptions::arch at key \"{arch}.context_length\" (offset 57)"
    );
    assert_eq!(
        from_slice::<Only>(&bytes).unwrap_err().to_string(),
        "key has an {arch} segment but the architecture is unknown: there is no general.architecture string and none \
         was given with MetadataOptions::arch at key \"{arch}\""
    );
    // Every `{arch}` segment is replaced, in a key that has no other segment too; the name is
    // general.architecture's, not that of a string before it.
    let m = BTreeMap::from([
        ("author".to_owned(), Value::String("someone".into())),
        ("general.architecture".to_owned(), Value::String("llama".into())),
        ("{arch}".to_owned(), Value::U32(1)),
        ("{arch}.{arch}".to_owned(), Value::U32(2)),
    ]);
    let bytes = to_vec(&m).unwrap();
    let keys: Vec<String> = Gguf::from_slice(&bytes).unwrap().metadata().map(|kv| kv.key.to_string()).collect();
    assert_eq!(keys, ["author", "general.architecture", "llama", "llama.llama"]);
    // Also when every key is the placeholder alone, the architecture given by the caller.
    let m = BTreeMap::from([("{arch}".to_owned(), 1u32)]);
    let bytes = MetadataOptions::new().arch("phi3").to_vec(&m).unwrap();
    let keys: Vec<String> = Gguf::from_slice(&bytes).unwrap().metadata().map(|kv| kv.key.to_string()).collect();
    assert_eq!(keys, ["phi3"]);
    // The writer of model files takes the same mapping.
    let mut w = GgufWriter::new(Vec::new());
    w.add_serialize(&M { arch: "llama".into(), hp: hp.clone() }).unwrap();
    w.add_tensor("t", gguf_serde::GgmlType::F32, &[2]).unwrap();
    w.write_tensor_data(&[0; 8]).unwrap();
    let bytes = w.finish().unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.deserialize_metadata::<M>().unwrap().hp, hp);
    assert_eq!(gguf_serde::from_gguf::<M, _>(&f).unwrap().arch, "llama");
}

#[test]
fn two_fields_that_name_one_key_once_the_placeholder_is_replaced_the_first_takes_it() {
    // `{arch}.n` and `llama.n` name the same key in a `llama` file. serde's derive gives a key
    // to the first field of that name (its `match` on the field names takes the first arm); the
    // same here, whichever of the two spellings comes first.
    #[derive(Deserialize, Debug, PartialEq)]
    struct PlaceholderFirst {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(rename = "{arch}.n")]
        a: Option<u32>,
        #[serde(rename = "llama.n")]
        b: Option<u32>,
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct NameFirst {
        #[serde(rename = "general.architecture")]
        arch: String,
        #[serde(rename = "llama.n")]
        a: Option<u32>,
        #[serde(rename = "{arch}.n")]
        b: Option<u32>,
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.n", 5u32).unwrap();
    let bytes = w.finish().unwrap();
    let arch = "llama".to_owned();
    assert_eq!(
        from_slice::<PlaceholderFirst>(&bytes).unwrap(),
        PlaceholderFirst { arch: arch.clone(), a: Some(5), b: None }
    );
    assert_eq!(from_slice::<NameFirst>(&bytes).unwrap(), NameFirst { arch, a: Some(5), b: None });
}

#[test]
fn deserialize_any_and_ignored_any() {
    #[derive(Serialize)]
    struct W {
        a: u16,
        b: Vec<String>,
        c: C,
    }
    #[derive(Serialize)]
    struct C {
        d: f64,
    }
    let bytes = to_vec(&W { a: 3, b: vec!["q".into()], c: C { d: 1.5 } }).unwrap();
    // deserialize_any: the whole block as JSON through serde_transcode-like buffering.
    let j: serde_json::Value = from_slice(&bytes).unwrap();
    assert_eq!(j, serde_json::json!({"a": 3, "b": ["q"], "c.d": 1.5}));
    // ignored_any for every value.
    let _: BTreeMap<String, serde::de::IgnoredAny> = from_slice(&bytes).unwrap();
    #[derive(Deserialize)]
    struct Partial {
        #[allow(dead_code)]
        a: serde::de::IgnoredAny,
    }
    let _: Partial = from_slice(&bytes).unwrap();
}

#[test]
fn nesting_limit() {
    #[derive(Serialize, Deserialize, Debug)]
    struct Node {
        #[serde(skip_serializing_if = "Option::is_none", default)]
        n: Option<Box<Node>>,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        v: Option<u8>,
    }
    fn chain(depth: usize) -> Node {
        let mut n = Node { n: None, v: Some(1) };
        for _ in 1..depth {
            n = Node { n: Some(Box::new(n)), v: None };
        }
        n
    }
    // 63 levels of structs under the root: fine; 64: refused on write.
    let bytes = to_vec(&chain(64)).unwrap();
    assert!(from_slice::<Node>(&bytes).is_ok());
    let e = to_vec(&chain(65)).unwrap_err().to_string();
    assert!(e.starts_with("structs or maps nested deeper than 64 levels at key \"n.n.n."), "{e}");
    // Read: the limit is the writer's. 63 levels of structs under the root read, 64 do not.
    for (levels, ok) in [(63, true), (64, false)] {
        let m = BTreeMap::from([(format!("{}v", "n.".repeat(levels)), 1u8)]);
        let r = from_slice::<Node>(&to_vec(&m).unwrap());
        assert_eq!(r.is_ok(), ok, "{levels}: {r:?}");
    }
    // A key of 100 segments against a recursive type stops at the limit.
    let mut m = BTreeMap::new();
    m.insert(format!("{}v", "n.".repeat(100)), 1u8);
    let bytes = to_vec(&m).unwrap();
    let e = from_slice::<Node>(&bytes).unwrap_err().to_string();
    assert!(e.starts_with("keys nested deeper than 64 levels of structs or maps at key \"n.n.n."), "{e}");
}

#[test]
fn values_keep_exact_types() {
    let values = vec![
        Value::U8(1),
        Value::I8(-1),
        Value::U16(2),
        Value::I16(-2),
        Value::U32(3),
        Value::I32(-3),
        Value::F32(0.5),
        Value::Bool(true),
        Value::String("s".into()),
        Value::U64(4),
        Value::I64(-4),
        Value::F64(0.25),
        Value::Array(Array::U16(vec![])),
        Value::Array(Array::Array(vec![Array::String(vec![]), Array::Bool(vec![true])])),
    ];
    let m: BTreeMap<String, Value> = values.iter().enumerate().map(|(i, v)| (format!("k{i:02}"), v.clone())).collect();
    let bytes = to_vec(&m).unwrap();
    let back: BTreeMap<String, Value> = from_slice(&bytes).unwrap();
    assert_eq!(back, m);
    for v in &values {
        assert_eq!(&gguf_serde::from_value::<Value>(v.clone()).unwrap(), v);
        assert_eq!(&gguf_serde::to_value(v).unwrap(), v);
    }
    assert_eq!(gguf_serde::to_value(&vec!["a", "b"]).unwrap(), Value::from(vec!["a", "b"]));
    assert_eq!(gguf_serde::from_value::<Vec<u64>>(Value::Array(Array::U8(vec![1, 2]))).unwrap(), vec![1, 2]);
    assert_eq!(
        gguf_serde::from_value::<u8>(Value::I32(-1)).unwrap_err().to_string(),
        "integer -1 (stored as i32) does not fit in u8"
    );
}

#[test]
fn internally_tagged_enums_for_variants_with_data() {
    // GGUF's own convention, e.g. `rope.scaling.type = "linear"` beside `rope.scaling.factor`.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(tag = "type", rename_all = "lowercase")]
    enum Scaling {
        None,
        Linear { factor: f32 },
        Yarn { factor: f32, original_context_length: u32 },
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Rope {
        scaling: Scaling,
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct M {
        rope: Rope,
    }
    for s in
        [Scaling::None, Scaling::Linear { factor: 2.0 }, Scaling::Yarn { factor: 4.0, original_context_length: 8192 }]
    {
        let v = M { rope: Rope { scaling: s } };
        let bytes = to_vec(&v).unwrap();
        assert_eq!(from_slice::<M>(&bytes).unwrap(), v);
    }
    let bytes =
        to_vec(&M { rope: Rope { scaling: Scaling::Yarn { factor: 4.0, original_context_length: 8192 } } }).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let keys: Vec<(&str, ValueRef<'_>)> = f.metadata().map(|kv| (kv.key.to_str().unwrap(), kv.value)).collect();
    assert_eq!(
        keys,
        [
            ("rope.scaling.type", ValueRef::String("yarn".into())),
            ("rope.scaling.factor", ValueRef::F32(4.0)),
            ("rope.scaling.original_context_length", ValueRef::U32(8192)),
        ]
    );
}

#[test]
fn a_file_with_a_key_that_is_also_a_prefix() {
    // The writer refuses this; build it with the container writer, which does not know structs.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 1u32).unwrap();
    w.add_kv("a.b", 2u32).unwrap();
    let bytes = w.finish().unwrap();
    // Read as a flat map: both keys.
    let m: BTreeMap<String, u32> = from_slice(&bytes).unwrap();
    assert_eq!(m.len(), 2);
    // A struct that asks for `a` as a value reads the value; the key under it is unknown to it.
    #[derive(Deserialize, Debug, PartialEq)]
    struct S {
        a: u32,
    }
    assert_eq!(from_slice::<S>(&bytes).unwrap(), S { a: 1 });
}

#[test]
fn value_and_elem_with_other_formats() {
    // Plain content in JSON; read back, numbers take JSON's widths and an empty array is array<u8>.
    let v = Value::Array(Array::U16(vec![1, 2]));
    assert_eq!(serde_json::to_string(&v).unwrap(), "[1,2]");
    assert_eq!(serde_json::from_str::<Value>("[1,2]").unwrap(), Value::Array(Array::U64(vec![1, 2])));
    assert_eq!(serde_json::from_str::<Value>("[]").unwrap(), Value::Array(Array::U8(vec![])));
    assert_eq!(serde_json::from_str::<Value>("-3").unwrap(), Value::I64(-3));
    assert_eq!(serde_json::from_str::<Value>("\"s\"").unwrap(), Value::String("s".into()));
    assert_eq!(
        serde_json::from_str::<Value>("[1,\"x\"]").unwrap_err().to_string(),
        "mixed array element types: element 1 differs from element 0 (u64) at line 1 column 7"
    );
    assert!(serde_json::from_str::<Value>("{\"a\":1}").is_err());
    let e = serde_json::from_str::<Array>("{}").unwrap_err();
    assert!(
        e.to_string().starts_with("invalid type: map, expected a GGUF array (a sequence of values of one type)"),
        "{e}"
    );
    // The elem:: modules are transparent to other formats.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct F {
        #[serde(with = "gguf_serde::elem::u32")]
        ids: Vec<u32>,
    }
    let j = serde_json::to_string(&F { ids: vec![] }).unwrap();
    assert_eq!(j, "{\"ids\":[]}");
    assert_eq!(serde_json::from_str::<F>(&j).unwrap(), F { ids: vec![] });
    // A group of keys is not a value.
    #[derive(Serialize)]
    struct W {
        g: G,
    }
    #[derive(Serialize)]
    struct G {
        x: u8,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct R {
        g: Value,
    }
    assert_eq!(
        from_slice::<R>(&to_vec(&W { g: G { x: 1 } }).unwrap()).unwrap_err().to_string(),
        "invalid type: map, expected a GGUF value (number, bool, string or array) at key \"g\""
    );
}

#[test]
fn integers_of_every_stored_width_read_into_a_wider_field() {
    // Each GGUF integer type read into an i64 field gives the stored value.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("u8", Value::U8(200)).unwrap();
    w.add_kv("i8", Value::I8(-100)).unwrap();
    w.add_kv("u16", Value::U16(60000)).unwrap();
    w.add_kv("i16", Value::I16(-30000)).unwrap();
    w.add_kv("u32", Value::U32(4_000_000_000)).unwrap();
    w.add_kv("i32", Value::I32(-2_000_000_000)).unwrap();
    w.add_kv("u64", Value::U64(1 << 40)).unwrap();
    w.add_kv("i64", Value::I64(-(1 << 40))).unwrap();
    let bytes = w.finish().unwrap();
    let m: BTreeMap<String, i64> = from_slice(&bytes).unwrap();
    let want: BTreeMap<String, i64> = [
        ("u8", 200),
        ("i8", -100),
        ("u16", 60000),
        ("i16", -30000),
        ("u32", 4_000_000_000),
        ("i32", -2_000_000_000),
        ("u64", 1 << 40),
        ("i64", -(1 << 40)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(m, want);
    // And into an i128, wider than every stored type (none is read as its own type there).
    let m: BTreeMap<String, i128> = from_slice(&bytes).unwrap();
    assert_eq!(m, want.into_iter().map(|(k, v)| (k, i128::from(v))).collect());
}

#[test]
fn floats_of_either_width_read_into_an_f64_field() {
    // A FLOAT32 read into an f64 is widened, which is exact (every f32 is an f64): 0.1f32 is
    // 13421773 / 2^27 = 0.100000001490116119384765625. The infinities and NaN stay what they are.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("f32", Value::F32(0.1)).unwrap();
    w.add_kv("f32_inf", Value::F32(f32::NEG_INFINITY)).unwrap();
    w.add_kv("f32_nan", Value::F32(f32::NAN)).unwrap();
    w.add_kv("f64", Value::F64(0.1)).unwrap();
    let bytes = w.finish().unwrap();
    let m: BTreeMap<String, f64> = from_slice(&bytes).unwrap();
    assert_eq!(m["f32"], 13_421_773.0 / 134_217_728.0);
    assert_eq!(m["f32_inf"], f64::NEG_INFINITY);
    assert!(m["f32_nan"].is_nan());
    assert_eq!(m["f64"], 0.1);
    assert_eq!(m.len(), 4);
}

#[test]
fn a_type_mismatch_shows_the_arrays_length() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("one", vec![7u32]).unwrap();
    w.add_kv("two", vec![7u32, 8]).unwrap();
    let bytes = w.finish().unwrap();
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct One {
        one: u32,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Two {
        two: u32,
    }
    // The offset is the value's: `one`'s entry starts at 24 (after the header), its value after
    // the key (8 + 3) and the type (4) at 39; `two`'s entry follows at 39 + 4 + 8 + 4 = 55, its
    // value at 70.
    let e = from_slice::<One>(&bytes).unwrap_err().to_string();
    assert_eq!(e, "invalid type: expected u32, found array<u32> of 1 element at key \"one\" (offset 39)");
    let e = from_slice::<Two>(&bytes).unwrap_err().to_string();
    assert_eq!(e, "invalid type: expected u32, found array<u32> of 2 elements at key \"two\" (offset 70)");
}

#[test]
fn a_type_mismatch_shows_a_long_string_cut_at_40_characters() {
    // 40 characters are shown whole; of 41, the first 40 and an ellipsis (characters, not bytes:
    // "é" is 2 bytes). The value of `s` is at 24 + 8 + 1 + 4 = 37.
    let forty = "é".repeat(40);
    for (text, shown) in [(forty.clone(), format!("{forty:?}")), (format!("{forty}x"), format!("{forty:?}…"))] {
        let mut w = GgufWriter::new(Vec::new());
        w.add_kv("s", text.as_str()).unwrap();
        let e = from_slice::<BTreeMap<String, u32>>(&w.finish().unwrap()).unwrap_err().to_string();
        assert_eq!(e, format!("invalid type: expected u32, found string {shown} at key \"s\" (offset 37)"));
    }
}

#[test]
fn map_keys_are_strings_chars_or_integers() {
    // A map key of each kind serde has; GGUF keys are text, so only these become keys.
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    struct Key(u8);
    impl Serialize for Key {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self.0 {
                0 => s.serialize_bool(true),
                1 => s.serialize_f32(1.5),
                2 => s.serialize_f64(1.5),
                3 => s.serialize_bytes(b"k"),
                4 => s.serialize_none(),
                5 => s.serialize_unit(),
                6 => s.serialize_unit_struct("U"),
                7 => s.serialize_newtype_variant("E", 0, "V", &1u8),
                8 => s.serialize_char('c'),
                9 => s.serialize_i16(-7),
                10 => s.serialize_unit_variant("E", 1, "W"),
                11 => s.serialize_some("s"),
                _ => s.serialize_newtype_struct("N", "n"),
            }
        }
    }
    let found = ["bool", "f32", "f64", "bytes", "None", "unit", "a unit struct", "an enum variant with data"];
    for (i, what) in found.iter().enumerate() {
        let m = BTreeMap::from([(Key(i as u8), 1u8)]);
        let e = to_vec(&m).unwrap_err().to_string();
        assert!(e.starts_with(&format!("a map key must be a string, char or integer, found {what}")), "{i}: {e}");
    }
    let m: BTreeMap<Key, u8> = (8..13).map(|i| (Key(i), i)).collect();
    let bytes = to_vec(&m).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let keys: Vec<String> = f.metadata().map(|kv| kv.key.to_string()).collect();
    assert_eq!(keys, ["c", "-7", "W", "s", "n"]);
}

#[test]
fn tuples_and_tuple_structs_are_arrays() {
    // serde's data model: a tuple and a tuple struct are sequences, so GGUF arrays; inside a
    // sequence, arrays of arrays.
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Pair(u32, u32);
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct S {
        p: Pair,
        t: (i16, i16, i16),
        ps: Vec<Pair>,
        ts: Vec<(u8, u8)>,
    }
    let s = S { p: Pair(1, 2), t: (-1, 0, 1), ps: vec![Pair(3, 4), Pair(5, 6)], ts: vec![(7, 8)] };
    let bytes = to_vec(&s).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let got: Vec<(String, Value)> = f.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect();
    assert_eq!(
        got,
        [
            ("p".to_owned(), Value::Array(Array::U32(vec![1, 2]))),
            ("t".to_owned(), Value::Array(Array::I16(vec![-1, 0, 1]))),
            ("ps".to_owned(), Value::Array(Array::Array(vec![Array::U32(vec![3, 4]), Array::U32(vec![5, 6])]))),
            ("ts".to_owned(), Value::Array(Array::Array(vec![Array::U8(vec![7, 8])]))),
        ]
    );
    assert_eq!(from_slice::<S>(&bytes).unwrap(), s);
    // A tuple and a tuple struct alone are arrays too.
    assert_eq!(to_value(&(1u64, 2u64)).unwrap(), Value::Array(Array::U64(vec![1, 2])));
    assert_eq!(to_value(&Pair(9, 10)).unwrap(), Value::Array(Array::U32(vec![9, 10])));
}

#[test]
fn borrowed_bytes_are_a_string_or_an_array_of_u8_only() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("s", "ab").unwrap();
    w.add_kv("u8", vec![1u8, 2]).unwrap();
    w.add_kv("u16", vec![1u16, 2]).unwrap();
    let bytes = w.finish().unwrap();
    #[derive(Deserialize, Debug, PartialEq)]
    struct B<'a> {
        #[serde(borrow)]
        s: &'a [u8],
        #[serde(borrow)]
        u8: &'a [u8],
    }
    assert_eq!(from_slice::<B<'_>>(&bytes).unwrap(), B { s: b"ab", u8: &[1, 2] });
    // An array<u16> is not bytes (its stored bytes are not its elements).
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct W<'a> {
        #[serde(borrow)]
        u16: &'a [u8],
    }
    let e = from_slice::<W<'_>>(&bytes).unwrap_err().to_string();
    assert!(e.starts_with("invalid type: sequence, expected a borrowed byte array"), "{e}");
}

#[test]
fn a_struct_reports_how_many_keys_it_has_left() {
    // A struct's keys as serde's MapAccess gives them: its size hint is the keys not yet given
    // (fields that have a key, then the keys no field names). A map's, the entries not yet given;
    // an array's (SeqAccess), the elements not yet given.
    struct Hints(Vec<Option<usize>>);
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Hints;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a struct, a map or a sequence")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Hints, A::Error> {
            let mut hints = vec![m.size_hint()];
            while m.next_key::<serde::de::IgnoredAny>()?.is_some() {
                let _: serde::de::IgnoredAny = m.next_value()?;
                hints.push(m.size_hint());
            }
            Ok(Hints(hints))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut s: A) -> Result<Hints, A::Error> {
            let mut hints = vec![s.size_hint()];
            while s.next_element::<serde::de::IgnoredAny>()?.is_some() {
                hints.push(s.size_hint());
            }
            Ok(Hints(hints))
        }
    }
    impl<'de> Deserialize<'de> for Hints {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_struct("G", &["a", "b"], V)
        }
    }
    /// The same visitor asked for whatever is there (a group of keys is a map).
    struct AnyHints(Vec<Option<usize>>);
    impl<'de> Deserialize<'de> for AnyHints {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(V).map(|h| AnyHints(h.0))
        }
    }
    #[derive(Deserialize)]
    struct Top {
        g: Hints,
        m: AnyHints,
        s: AnyHints,
    }
    let mut w = GgufWriter::new(Vec::new());
    for k in ["g.a", "g.x", "g.y", "g.z", "m.p", "m.q"] {
        w.add_kv(k, 1u8).unwrap();
    }
    // A key under `g.` that is not UTF-8 is one more key no field names, given last (as bytes).
    w.add_kv_ref(gguf_serde::GgufStr::from_bytes(b"g.\xff"), ValueRef::U8(1)).unwrap();
    w.add_kv("s", vec![1u8, 2, 3]).unwrap();
    let bytes = w.finish().unwrap();
    let top = from_slice::<Top>(&bytes).unwrap();
    assert_eq!(top.g.0, [Some(5), Some(4), Some(3), Some(2), Some(1), Some(0)]);
    assert_eq!(top.m.0, [Some(2), Some(1), Some(0)]);
    assert_eq!(top.s.0, [Some(3), Some(2), Some(1), Some(0)]);
}

#[test]
fn a_typed_value_is_a_newtype_variant_only() {
    // `Value` and `Array` ask the deserializer for an enum whose variant is the stored type's
    // name and whose content is the value: serde's newtype variant. A visitor of its own that
    // asks for that enum and takes the variant as a unit variant (serde's data model: no
    // content) is refused at the key and its value's offset, never given the tag without the
    // value; as a newtype variant it gets the tag and the value.
    use serde::de::{EnumAccess, VariantAccess, Visitor};
    #[derive(Debug, PartialEq)]
    struct Tagged(String, Option<u32>);
    impl<'de> Deserialize<'de> for Tagged {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Tagged;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a typed value")
                }
                fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Tagged, A::Error> {
                    let (tag, v): (String, _) = data.variant()?;
                    if tag == "u32" {
                        return Ok(Tagged(tag, Some(v.newtype_variant()?)));
                    }
                    v.unit_variant()?;
                    Ok(Tagged(tag, None))
                }
            }
            d.deserialize_newtype_struct("\0gguf_serde::Value", V)
        }
    }
    #[derive(Deserialize, Debug)]
    struct S {
        a: Tagged,
        b: Tagged,
    }
    // Header 24; `a`: key 8 + 1, type 4, u32 4 = 41; `b`: key 8 + 1, type 4: its value at 54.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 7u32).unwrap();
    w.add_kv("b", 1.5f32).unwrap();
    let e = from_slice::<S>(&w.finish().unwrap()).unwrap_err();
    assert_eq!((e.key(), e.offset()), (Some("b"), Some(54)), "{e}");
    assert!(matches!(e.kind(), ErrorKind::Metadata(_)), "{e:?}");
    // Both as newtype variants: the stored type's name (`ValueType::name`) and the value written.
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 7u32).unwrap();
    w.add_kv("b", 8u32).unwrap();
    let s = from_slice::<S>(&w.finish().unwrap()).unwrap();
    assert_eq!((s.a, s.b), (Tagged("u32".into(), Some(7)), Tagged("u32".into(), Some(8))));
}
