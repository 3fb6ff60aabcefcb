//! Numeric arrays into `Vec`s of their stored type (one copy of the stored bytes, see
//! `metadata/de/bulk.rs`), string arrays into `Vec<String>` (one pass, no visit per string), and
//! both into every other sequence target (element by element), from files laid out byte by byte
//! in both byte orders: the values written into the file, bit for bit.

use std::collections::VecDeque;
use std::fmt;

use gguf_serde::{from_slice, Array, Gguf, Value};
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::common::{measure, ty, B};

const U8S: [u8; 4] = [0, 1, 0x7f, 0xff];
const I8S: [i8; 4] = [i8::MIN, -1, 0, i8::MAX];
const U16S: [u16; 3] = [0, 0x1234, u16::MAX];
const I16S: [i16; 3] = [i16::MIN, -2, i16::MAX];
const U32S: [u32; 3] = [0, 0x1234_5678, u32::MAX];
const I32S: [i32; 5] = [i32::MIN, -1, 0, 7, i32::MAX];
const U64S: [u64; 2] = [0x0102_0304_0506_0708, u64::MAX];
const I64S: [i64; 3] = [i64::MIN, -1, i64::MAX];
/// Bit patterns: 0, -0, 1.5, infinity, the smallest subnormal, a NaN with a payload, a negative
/// NaN, -3.25e-8 (every one must come back with its bits).
const F32_BITS: [u32; 8] = [0, 0x8000_0000, 0x3fc0_0000, 0x7f80_0000, 1, 0x7fc0_1234, 0xffc0_0001, 0xb30b_9c4d];
const F64_BITS: [u64; 4] = [0x8000_0000_0000_0000, 0x3ff8_0000_0000_0000, 1, 0x7ff8_0000_dead_beef];

/// One key per numeric element type (`a.u8` … `a.f64`), an array of arrays of i32 (`a.nested`:
/// `[[1, 2], [], [3]]`) and an empty f32 array (`a.empty`), in the byte order of `b`.
fn file(mut b: B) -> Vec<u8> {
    /// `key` = an array of element type `id` holding `values`, each written by `B::$put`.
    macro_rules! array {
        ($key:literal, $id:ident, $values:expr, $put:ident) => {
            b.kv($key, ty::ARRAY).arr(ty::$id, $values.len() as u64);
            for &x in &$values {
                b.$put(x);
            }
        };
    }
    b.header(3, 0, 12);
    array!("a.u8", U8, U8S, u8);
    array!("a.i8", I8, I8S, i8);
    array!("a.u16", U16, U16S, u16);
    array!("a.i16", I16, I16S, i16);
    array!("a.u32", U32, U32S, u32);
    array!("a.i32", I32, I32S, i32);
    array!("a.u64", U64, U64S, u64);
    array!("a.i64", I64, I64S, i64);
    array!("a.f32", F32, F32_BITS, u32);
    array!("a.f64", F64, F64_BITS, u64);
    b.kv("a.nested", ty::ARRAY).arr(ty::ARRAY, 3);
    b.arr(ty::I32, 2).i32(1).i32(2).arr(ty::I32, 0).arr(ty::I32, 1).i32(3);
    b.kv("a.empty", ty::ARRAY).arr(ty::F32, 0);
    b.bytes()
}

/// Every array as a `Vec` of its stored type: the one-copy path.
#[derive(Deserialize, Debug)]
struct Stored {
    #[serde(rename = "a.u8")]
    u8s: Vec<u8>,
    #[serde(rename = "a.i8")]
    i8s: Vec<i8>,
    #[serde(rename = "a.u16")]
    u16s: Vec<u16>,
    #[serde(rename = "a.i16")]
    i16s: Vec<i16>,
    #[serde(rename = "a.u32")]
    u32s: Vec<u32>,
    #[serde(rename = "a.i32")]
    i32s: Vec<i32>,
    #[serde(rename = "a.u64")]
    u64s: Vec<u64>,
    #[serde(rename = "a.i64")]
    i64s: Vec<i64>,
    #[serde(rename = "a.f32")]
    f32s: Vec<f32>,
    #[serde(rename = "a.f64")]
    f64s: Vec<f64>,
    #[serde(rename = "a.nested")]
    nested: Vec<Vec<i32>>,
    #[serde(rename = "a.empty")]
    empty: Vec<f32>,
}

fn check_stored(s: &Stored, order: &str) {
    assert_eq!(s.u8s, U8S, "{order}");
    assert_eq!(s.i8s, I8S, "{order}");
    assert_eq!(s.u16s, U16S, "{order}");
    assert_eq!(s.i16s, I16S, "{order}");
    assert_eq!(s.u32s, U32S, "{order}");
    assert_eq!(s.i32s, I32S, "{order}");
    assert_eq!(s.u64s, U64S, "{order}");
    assert_eq!(s.i64s, I64S, "{order}");
    assert_eq!(s.f32s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), F32_BITS, "{order}");
    assert_eq!(s.f64s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), F64_BITS, "{order}");
    assert_eq!(s.nested, [vec![1, 2], vec![], vec![3]], "{order}");
    assert!(s.empty.is_empty(), "{order}");
}

#[test]
fn vec_of_the_stored_type_reads_every_value_in_both_byte_orders() {
    for (b, order) in [(B::le(), "little-endian"), (B::be(), "big-endian")] {
        let bytes = file(b);
        check_stored(&from_slice::<Stored>(&bytes).unwrap(), order);
        check_stored(&Gguf::from_slice(&bytes).unwrap().deserialize_metadata::<Stored>().unwrap(), order);
        check_stored(&gguf_serde::from_reader::<Stored, _>(bytes.as_slice()).unwrap(), order);
    }
}

/// The same arrays through targets that are not a `Vec` of the stored type: visited element by
/// element (converted where the type differs); a `Box<[T]>`, which serde reads through `Vec<T>`,
/// takes the one copy too.
#[derive(Deserialize, Debug)]
struct Visited {
    #[serde(rename = "a.f32")]
    f32s: VecDeque<f32>,
    #[serde(rename = "a.i32")]
    widened: Vec<i64>,
    #[serde(rename = "a.u16")]
    fixed: [u16; 3],
    #[serde(rename = "a.i64")]
    boxed: Box<[i64]>,
    #[serde(rename = "a.u8")]
    tuple: (u8, u8, u8, u8),
    #[serde(rename = "a.f64", deserialize_with = "reversed")]
    reversed: Vec<f64>,
}

/// A visitor whose value is a `Vec<T>` (`Vec<f64>`, `Vec<String>`) but is not serde's: the
/// deserializer must call it (the one-copy and one-pass paths are for serde's own visitor).
fn reversed<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    struct Rev<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Rev<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(x) = seq.next_element()? {
                out.insert(0, x);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Rev(std::marker::PhantomData))
}

#[test]
fn other_sequence_targets_are_visited_element_by_element() {
    for b in [B::le(), B::be()] {
        let v: Visited = from_slice(&file(b)).unwrap();
        assert_eq!(v.f32s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), F32_BITS);
        assert_eq!(v.widened, I32S.map(i64::from));
        assert_eq!(v.fixed, U16S);
        assert_eq!(&*v.boxed, I64S);
        assert_eq!(v.tuple, (U8S[0], U8S[1], U8S[2], U8S[3]));
        let back: Vec<u64> = F64_BITS.iter().rev().copied().collect();
        assert_eq!(v.reversed.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), back);
    }
}

#[test]
fn vec_from_an_owned_value() {
    let bits: Vec<f32> = F32_BITS.map(f32::from_bits).to_vec();
    let v: Vec<f32> = gguf_serde::from_value(Value::Array(Array::F32(bits))).unwrap();
    assert_eq!(v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), F32_BITS);
    let v: Vec<i64> = gguf_serde::from_value(Value::Array(Array::I64(I64S.to_vec()))).unwrap();
    assert_eq!(v, I64S);
}

#[test]
fn a_vec_of_the_stored_type_is_one_allocation_of_its_size() {
    // 300,000 f32 is more than serde's `Vec` reserves from a size hint (1 MiB, 262,144 f32): a
    // vector filled element by element would grow (1 MiB, then 2 MiB); one copy allocates
    // exactly 1,200,000 bytes, once.
    const N: usize = 300_000;
    let mut b = B::le();
    b.header(3, 0, 1).kv("s", ty::ARRAY).arr(ty::F32, N as u64);
    for i in 0..N {
        b.f32(i as f32 * 0.5);
    }
    let bytes = b.bytes();
    let file = Gguf::from_slice(&bytes).unwrap();
    #[derive(Deserialize)]
    struct S {
        s: Vec<f32>,
    }
    let (s, allocs) = measure(|| file.deserialize_metadata::<S>().unwrap());
    assert_eq!(s.s.len(), N);
    assert!(s.s.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
    assert_eq!(allocs.largest, N * 4);
    // The deserializer's own bookkeeping (the list of entries) is small beside it.
    assert!(allocs.total < N * 4 + 1024, "{allocs:?}");
    // Element by element (a `VecDeque`), the same values, with the growth.
    #[derive(Deserialize)]
    struct D {
        s: VecDeque<f32>,
    }
    let (d, allocs) = measure(|| file.deserialize_metadata::<D>().unwrap());
    assert!(d.s.iter().eq(s.s.iter()));
    assert!(allocs.total > N * 4 + 1024, "{allocs:?}");
}

/// Strings of the kinds a vocabulary holds: ASCII, empty, 2-, 3- and 4-byte UTF-8, the
/// SentencePiece word marker, a NUL inside.
const WORDS: [&str; 7] = ["<pad>", "", "é", "▁the", "日本", "🙂x", "a\0b"];

/// `s.words` = WORDS, `s.nested` = `[["a", ""], ["é"]]`, `s.empty` = an empty `array<string>`, in
/// the byte order of `b`.
fn strings_file(mut b: B) -> Vec<u8> {
    b.header(3, 0, 3).kv("s.words", ty::ARRAY).arr(ty::STRING, WORDS.len() as u64);
    for w in WORDS {
        b.str(w);
    }
    b.kv("s.nested", ty::ARRAY).arr(ty::ARRAY, 2);
    b.arr(ty::STRING, 2).str("a").str("").arr(ty::STRING, 1).str("é");
    b.kv("s.empty", ty::ARRAY).arr(ty::STRING, 0);
    b.bytes()
}

/// Every string array as `Vec<String>` (the one-pass path, inner arrays included) or as a
/// `Box<[String]>`, which serde reads through `Vec<String>`.
#[derive(Deserialize, Debug, PartialEq)]
struct OwnedStrings {
    #[serde(rename = "s.words")]
    words: Vec<String>,
    #[serde(rename = "s.nested")]
    nested: Vec<Vec<String>>,
    #[serde(rename = "s.empty")]
    empty: Box<[String]>,
}

/// The same arrays through targets that are visited element by element.
#[derive(Deserialize, Debug)]
struct VisitedStrings {
    #[serde(rename = "s.words")]
    words: VecDeque<String>,
    #[serde(rename = "s.nested")]
    nested: Vec<VecDeque<Box<str>>>,
    #[serde(rename = "s.empty")]
    empty: Vec<Box<str>>,
}

/// A `Vec<String>` read by a visitor of its own, which reverses the strings.
#[derive(Deserialize, Debug)]
struct ReversedStrings {
    #[serde(rename = "s.words", deserialize_with = "reversed")]
    words: Vec<String>,
}

#[test]
fn vec_of_string_reads_every_string_in_both_byte_orders() {
    let want = OwnedStrings {
        words: WORDS.map(String::from).to_vec(),
        nested: vec![vec!["a".into(), String::new()], vec!["é".into()]],
        empty: Box::new([]),
    };
    for (b, order) in [(B::le(), "little-endian"), (B::be(), "big-endian")] {
        let bytes = strings_file(b);
        assert_eq!(from_slice::<OwnedStrings>(&bytes).unwrap(), want, "{order}");
        let g = Gguf::from_slice(&bytes).unwrap();
        assert_eq!(g.deserialize_metadata::<OwnedStrings>().unwrap(), want, "{order}");
        assert_eq!(gguf_serde::from_reader::<OwnedStrings, _>(bytes.as_slice()).unwrap(), want, "{order}");
        let v: VisitedStrings = from_slice(&bytes).unwrap();
        assert!(v.words.iter().eq(WORDS.iter()), "{order}");
        assert_eq!(v.nested, [VecDeque::from(["a".into(), "".into()]), VecDeque::from(["é".into()])], "{order}");
        assert!(v.empty.is_empty(), "{order}");
        let r: ReversedStrings = from_slice(&bytes).unwrap();
        assert!(r.words.iter().eq(WORDS.iter().rev()), "{order}: {r:?}");
    }
}

#[test]
fn a_vec_of_string_is_one_allocation_of_its_length_and_one_per_string() {
    // 50,000 strings is more than serde's `Vec` reserves from a size hint (1 MiB, 43,690
    // `String`s): a vector filled element by element would grow; the one pass allocates the
    // vector once at 50,000 `String`s, and each non-empty string once at its length.
    const N: usize = 50_000;
    let words: Vec<String> = (0..N).map(|i| if i % 7 == 0 { String::new() } else { format!("t{i}") }).collect();
    let text: usize = words.iter().map(String::len).sum();
    let mut b = B::le();
    b.header(3, 0, 1).kv("s", ty::ARRAY).arr(ty::STRING, N as u64);
    for w in &words {
        b.str(w);
    }
    let bytes = b.bytes();
    let file = Gguf::from_slice(&bytes).unwrap();
    #[derive(Deserialize)]
    struct S {
        s: Vec<String>,
    }
    let vec = N * std::mem::size_of::<String>();
    let (s, allocs) = measure(|| file.deserialize_metadata::<S>().unwrap());
    assert!(s.s == words);
    assert_eq!(allocs.largest, vec);
    // The deserializer's own bookkeeping (the list of entries) is small beside it.
    assert!(allocs.total >= vec + text && allocs.total < vec + text + 1024, "{allocs:?}");
    // Element by element (a `VecDeque`), the same strings, with the growth.
    #[derive(Deserialize)]
    struct D {
        s: VecDeque<String>,
    }
    let (d, allocs) = measure(|| file.deserialize_metadata::<D>().unwrap());
    assert!(d.s.iter().eq(words.iter()));
    assert!(allocs.total > vec + text + 1024, "{allocs:?}");
}
