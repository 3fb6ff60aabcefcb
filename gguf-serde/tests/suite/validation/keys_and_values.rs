//! Keys and values, and `general.alignment`.

use super::*;

#[test]
fn empty_key() {
    let mut b = B::le();
    // (A u32 value, so the file is long enough for the 14 bytes a valid pair takes at least.)
    b.header(3, 0, 1).kv("", ty::U32).u32(0);
    let e = parse_err(&b.buf);
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::EmptyKey { offset: 24, .. })), "{e:?}");
    assert_eq!(e.to_string(), "empty key at offset 24");

    let mut b = B::le();
    b.header(3, 0, 2).kv("a", ty::U8).u8(0);
    let at = b.pos();
    b.kv("", ty::U32).u32(0);
    assert!(
        matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::EmptyKey { offset, .. }) if *offset == at)
    );
}

#[test]
fn duplicate_key() {
    let mut b = B::le();
    b.header(3, 0, 3).kv("a", ty::U8).u8(1).kv("b", ty::U8).u8(2);
    assert_eq!(b.pos(), 52);
    b.kv("a", ty::U32).u32(3);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::DuplicateKey { key, offset: 52, .. }) if key == "a"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"duplicate key "a" at offset 52"#);
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(52), Some("a"), None));
}

#[test]
fn unknown_value_type() {
    for id in [13, 14, 255, u32::MAX] {
        let mut b = B::le();
        b.header(3, 0, 1).kv("k", id).u64(0);
        let e = parse_err(&b.buf);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::UnknownValueType { key, id: i, in_array: false, offset: 33, .. }) if key == "k" && *i == id),
            "{e:?}"
        );
    }
    let mut b = B::le();
    b.header(3, 0, 1).kv("k", 13).u64(0);
    assert_eq!(parse_err(&b.buf).to_string(), r#"unknown value type 13 for key "k" at offset 33"#);
}

#[test]
fn unknown_array_element_type() {
    let mut b = one_kv(ty::ARRAY);
    b.arr(13, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::UnknownValueType { key, id: 13, in_array: true, offset: 37, .. }) if key == "k"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"unknown array element type 13 for key "k" at offset 37"#);

    // In an inner array of an array of arrays.
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::ARRAY, 2).arr(ty::U8, 1).u8(9).arr(u32::MAX, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::UnknownValueType { id: u32::MAX, in_array: true, offset: 62, .. })
        ),
        "{e:?}"
    );
}

/// A file with one key `deep` holding arrays nested `depth` levels; the innermost is `[7u8]`.
fn nested(depth: usize) -> Vec<u8> {
    let mut b = B::le();
    b.header(3, 0, 1).kv("deep", ty::ARRAY);
    assert_eq!(b.pos(), 40);
    for _ in 1..depth {
        b.arr(ty::ARRAY, 1);
    }
    b.arr(ty::U8, 1).u8(7);
    b.buf
}

#[test]
fn nesting_at_the_limit_reads() {
    assert_eq!(gguf_serde::format::MAX_DEPTH, 32);
    let bytes = nested(32);
    let g = parse_ok(&bytes);
    let mut v = g.get("deep").unwrap();
    let mut levels = 0;
    while let ValueRef::Array(a) = v {
        levels += 1;
        assert_eq!(a.len(), 1);
        v = a.iter().next().unwrap();
    }
    assert_eq!((levels, v), (32, ValueRef::U8(7)));
}

#[test]
fn nesting_past_the_limit_refused() {
    let e = parse_err(&nested(33));
    // The 33rd array header starts after 32 headers of 12 bytes from offset 40.
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooDeep { key, limit: 32, offset: 424, .. }) if key == "deep"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"arrays nested deeper than 32 levels for key "deep" at offset 424"#);
    // Very deep nesting is refused without recursing that deep (no stack overflow).
    let e = parse_err(&nested(200_000));
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::TooDeep { offset: 424, .. })), "{e:?}");
}

/// A BOOL byte other than 0 and 1 (the spec: "anything else is invalid") is read as ggml's
/// `gguf_reader::read(bool &)` reads it (`int8_t tmp; dst = tmp != 0`): true, in a scalar, an
/// array and an array of arrays, from every source. [`Kv::odd_bool_bytes`] names the first such
/// byte and its offset (where the refusal used to). ggml's own reading of such a file, and what
/// its writer writes back: `gguf-cli/tests/cli/odd_bools.rs`, `tests/tests/interop/split_llama.rs`.
#[test]
fn bool_byte_other_than_zero_or_one_is_true() {
    let odd = |g: &Gguf<&[u8]>| g.metadata().next().unwrap().odd_bool_bytes().map(|o| (o.count, o.first, o.offset));

    let mut b = one_kv(ty::BOOL);
    b.u8(2);
    let g = parse_ok(&b.buf);
    assert_eq!(g.get("k"), Some(ValueRef::Bool(true)));
    assert_eq!(odd(&g), Some((1, 2, 37)));

    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::BOOL, 4).u8(1).u8(0).u8(2).u8(1);
    let g = parse_ok(&b.buf);
    let a = g.get("k").unwrap().as_array().unwrap();
    let want = [true, false, true, true].map(ValueRef::Bool);
    assert_eq!(a.iter().collect::<Vec<_>>(), want);
    assert_eq!((0..4).map(|i| a.get(i).unwrap()).collect::<Vec<_>>(), want);
    assert_eq!(a.raw_bytes(), [1, 0, 2, 1], "the stored bytes");
    assert_eq!(odd(&g), Some((1, 2, 51)));

    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::ARRAY, 2).arr(ty::BOOL, 1).u8(1).arr(ty::BOOL, 2).u8(0xff).u8(0x80);
    let g = parse_ok(&b.buf);
    let inner: Vec<Vec<ValueRef<'_>>> =
        g.get("k").unwrap().as_array().unwrap().iter().map(|v| v.as_array().unwrap().iter().collect()).collect();
    assert_eq!(inner, [vec![ValueRef::Bool(true)], vec![ValueRef::Bool(true), ValueRef::Bool(true)]]);
    assert_eq!(odd(&g), Some((2, 0xff, 74)));

    // 0 and 1 read as false and true, and are not odd.
    let mut b = B::le();
    b.header(3, 0, 2).kv("t", ty::BOOL).u8(1).kv("f", ty::ARRAY).arr(ty::BOOL, 2).u8(0).u8(1);
    let g = parse_ok(&b.buf);
    assert_eq!(g.get("t"), Some(ValueRef::Bool(true)));
    let f: Vec<_> = g.get("f").unwrap().as_array().unwrap().iter().collect();
    assert_eq!(f, [ValueRef::Bool(false), ValueRef::Bool(true)]);
    assert!(g.metadata().all(|kv| kv.odd_bool_bytes().is_none()));
}

// Keys, strings and tensor names that are not UTF-8 are accepted (as ggml accepts them): see
// `not_utf8.rs`.

// ---------------------------------------------------------------------------------------------
// general.alignment

#[test]
fn alignment_of_wrong_type() {
    let mut b = B::le();
    b.header(3, 0, 1).kv("general.alignment", ty::U64).u64(32);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::BadAlignment {
                problem: AlignmentProblem::WrongType("u64"),
                offset: 24,
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "general.alignment at offset 24 has type u64, expected u32");

    let mut b = B::le();
    b.header(3, 0, 2).kv("a", ty::U8).u8(0).kv("general.alignment", ty::I32).i32(32);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::BadAlignment {
                problem: AlignmentProblem::WrongType("i32"),
                offset: 38,
                ..
            })
        ),
        "{e:?}"
    );

    let mut b = B::le();
    b.header(3, 0, 1).kv("general.alignment", ty::STRING).str("32");
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::BadAlignment { problem: AlignmentProblem::WrongType("string"), .. })
    ));
    let mut b = B::le();
    b.header(3, 0, 1).kv("general.alignment", ty::ARRAY).arr(ty::U32, 1).u32(32);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::BadAlignment { problem: AlignmentProblem::WrongType("array"), .. })
    ));
}

#[test]
fn alignment_zero() {
    let mut b = B::le();
    b.header(3, 0, 1).kv("general.alignment", ty::U32).u32(0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::BadAlignment { problem: AlignmentProblem::Zero, offset: 24, .. })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "general.alignment at offset 24 is 0");
}

#[test]
fn alignment_not_a_power_of_two() {
    for a in [48u32, 3, 96, u32::MAX] {
        let mut b = B::le();
        b.header(3, 0, 1).kv("general.alignment", ty::U32).u32(a);
        let e = parse_err(&b.buf);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::BadAlignment { problem: AlignmentProblem::NotPowerOfTwo(v), offset: 24, .. }) if *v == a),
            "{e:?}"
        );
    }
    let mut b = B::le();
    b.header(3, 0, 1).kv("general.alignment", ty::U32).u32(48);
    assert_eq!(parse_err(&b.buf).to_string(), "general.alignment at offset 24 is 48, not a power of two");
}

/// A string of an array cut by the end of the file, or whose length is more than the file has
/// left, is named by its index (`k[2]`, `k[1][1]` inside an array of arrays), from every source.
#[test]
fn a_cut_string_of_an_array_is_named_by_its_index() {
    // Key "k" at 24, type at 33, element type at 37, count at 41, "aaaa" at 49, "bbbb" at 61,
    // the third string's length at 73: here 4 of its 8 bytes (the count's check, 8 bytes a
    // string at least, passes: 28 bytes follow it).
    let mut b = B::le();
    b.header(3, 0, 1).kv("k", ty::ARRAY).u32(ty::STRING).u64(3).str("aaaa").str("bbbb").raw(&[5, 0, 0, 0]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::Truncated { item: Item::String, owner: Some(k), offset: 73, needed: 8, available: 4, .. })
                if k == "k[2]"
        ),
        "{e:?}"
    );
    assert_eq!(e.key(), Some("k[2]"));
    // Its length whole, 5 bytes claimed and 2 there; then more than the whole file.
    for (len, remaining) in [(5u64, 2u64), (1 << 40, 2)] {
        let mut b = B::le();
        b.header(3, 0, 1).kv("k", ty::ARRAY).u32(ty::STRING).u64(3).str("aaaa").str("bbbb").u64(len).raw(b"xy");
        let e = parse_err(&b.buf);
        assert!(
            matches!(
                e.kind(),
                ErrorKind::Format(FormatError::TooLong { item: Item::String, owner: Some(k), offset: 73, count, remaining: r, .. })
                    if k == "k[2]" && *count == len && *r == remaining
            ),
            "{e:?}"
        );
    }
    // Inside an array of arrays: the second inner array's second string.
    let mut b = B::le();
    b.header(3, 0, 1).kv("k", ty::ARRAY).u32(ty::ARRAY).u64(2);
    b.u32(ty::STRING).u64(1).str("x").u32(ty::STRING).u64(2).str("y").u64(2).raw(b"z");
    let e = parse_err(&b.buf);
    assert_eq!(e.key(), Some("k[1][1]"), "{e}");
    assert!(e.to_string().contains(r#"string (key "k[1][1]")"#), "{e}");
}
