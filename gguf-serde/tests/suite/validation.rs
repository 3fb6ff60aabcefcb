//! Validation of the container: one hand-built file per error case (exact variant, fields and, for
//! the common ones, message), files cut or corrupted anywhere, and valid edge cases.
//!
//! Files are built byte by byte with `common::B`, never with the crate's writer. Offsets in the
//! assertions are computed from the layout of ggml `docs/gguf.md` (a 24-byte header, KV pairs of
//! u64 key length + key + u32 type + value, tensor infos of u64 name length + name + u32 n_dims +
//! u64 dims + u32 type + u64 offset).

use std::io::Cursor;

use crate::common;
use crate::common::{all_types, gt, largest_alloc, sample, ty, B};
use gguf_serde::{AlignmentProblem, Item};
use gguf_serde::{Endian, Error, ErrorKind, FormatError, GgmlType, Gguf, ValueRef, ValueType};

// ---------------------------------------------------------------------------------------------

/// Parses `bytes` from a slice and through `from_reader`; both must refuse it with the same error.
fn parse_err(bytes: &[u8]) -> Error {
    let e = Gguf::from_slice(bytes).expect_err("file should be refused");
    let r = Gguf::from_reader(Cursor::new(bytes)).expect_err("from_reader should refuse the file too");
    assert_eq!(format!("{e:?}"), format!("{r:?}"), "from_slice and from_reader disagree");
    common::check_every_source(bytes, &common::READ_AHEADS);
    e
}

fn parse_ok(bytes: &[u8]) -> Gguf<&[u8]> {
    let g = Gguf::from_slice(bytes).unwrap_or_else(|e| panic!("valid file refused: {e}"));
    let r = Gguf::from_reader(Cursor::new(bytes)).unwrap_or_else(|e| panic!("from_reader refused: {e}"));
    assert_eq!(r.kv_count(), g.kv_count());
    assert_eq!(r.tensors().collect::<Vec<_>>(), g.tensors().collect::<Vec<_>>());
    assert_eq!(r.metadata().collect::<Vec<_>>(), g.metadata().collect::<Vec<_>>());
    common::check_every_source(bytes, &common::READ_AHEADS);
    g
}

/// Header + one KV pair `k` of type `type_id`; the value is appended by the caller. The key length
/// is at 24, the key byte at 32, the type at 33, the value at 37.
fn one_kv(type_id: u32) -> B {
    let mut b = B::le();
    b.header(3, 0, 1).kv("k", type_id);
    assert_eq!(b.pos(), 37);
    b
}

/// Header + one tensor info `t` (name length at 24, n_dims at 33, ne[0] at 37).
fn one_tensor(ne: &[u64], type_id: u32, offset: u64) -> B {
    let mut b = B::le();
    b.header(3, 1, 0).tensor("t", ne, type_id, offset);
    b
}

// ---------------------------------------------------------------------------------------------
// Header

#[test]
fn bad_magic() {
    let mut b = B::le();
    b.raw(b"GGUX").u32(3).u64(0).u64(0);
    let e = parse_err(&b.buf);
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::BadMagic { found, .. }) if found == b"GGUX"), "{e:?}");
    assert_eq!(
        e.to_string(),
        r#"not a GGUF file: magic at offset 0 is [47, 47, 55, 58], expected "GGUF" (47 47 55 46)"#
    );
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(0), None, None));

    for (bytes, found) in [
        (&b"gguf\x03\0\0\0"[..], &b"gguf"[..]),
        (b"FUGG\0\0\0\x03", b"FUGG"),
        (b"", b""),
        (b"GG", b"GG"),
        (b"GGU", b"GGU"),
        (b"\x7fELF\x02\x01\x01\0", b"\x7fELF"),
    ] {
        let e = parse_err(bytes);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::BadMagic { found: f, .. }) if f == found),
            "{bytes:?}: {e:?}"
        );
    }
}

#[test]
fn version_zero_and_above_three_refused() {
    for v in [0u32, 4, 5, 0xffff, 0x1_0001, u32::MAX] {
        let mut b = B::le();
        b.header(v, 0, 0);
        let e = parse_err(&b.buf);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::UnsupportedVersion { version, .. }) if *version == v),
            "{v}: {e:?}"
        );
    }
    let mut b = B::le();
    b.header(0, 0, 0);
    assert_eq!(parse_err(&b.buf).to_string(), "unsupported GGUF version 0 at offset 4 (supported: 2 and 3)");
    b = B::le();
    b.header(4, 0, 0);
    assert_eq!(parse_err(&b.buf).to_string(), "unsupported GGUF version 4 at offset 4 (supported: 2 and 3)");
    // Big-endian versions are byte-swapped before the check.
    b = B::be();
    b.header(4, 0, 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::UnsupportedVersion { version: 4, .. })));
    // A little-endian 0x0001_0000 has zero low bits: it reads as big-endian version 256.
    b = B::le();
    b.header(0x1_0000, 0, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::UnsupportedVersion { version: 256, .. })
    ));
}

#[test]
fn version_one_refused_with_message() {
    // A real version 1 header: u32 counts.
    let mut b = B::le();
    b.raw(b"GGUF").u32(1).u32(0).u32(1).kv("k", ty::U8).u8(1);
    let e = parse_err(&b.buf);
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::UnsupportedVersion { version: 1, .. })), "{e:?}");
    assert_eq!(e.to_string(), "unsupported GGUF version 1 at offset 4: version 1 is not supported (only 2 and 3)");
    let mut b = B::be();
    b.header(1, 0, 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::UnsupportedVersion { version: 1, .. })));
}

#[test]
fn header_cut_short() {
    let mut b = B::le();
    b.header(3, 0, 0);
    for len in 4..24 {
        let e = parse_err(&b.buf[..len]);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::Truncated { item: Item::Header, owner: None, offset, needed, available, .. })
                if offset + needed > len as u64 && *available == len as u64 - offset),
            "{len}: {e:?}"
        );
    }
    let e = parse_err(&b.buf[..10]);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::Truncated { offset: 8, needed: 8, available: 2, .. })),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "file truncated: header at offset 8 needs 8 bytes, only 2 remain");
}

// ---------------------------------------------------------------------------------------------
// Counts and lengths

#[test]
fn kv_count_larger_than_the_file_can_hold() {
    let mut b = B::le();
    b.header(3, 0, 1000).raw(&[0; 76]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong {
                item: Item::KvCount,
                owner: None,
                offset: 16,
                count: 1000,
                remaining: 76,
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "key/value count at offset 16 claims 1000 entries, more than the 76 bytes left can hold");

    let mut b = B::le();
    b.header(3, 0, u64::MAX);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong { item: Item::KvCount, count: u64::MAX, remaining: 0, .. })
        ),
        "{e:?}"
    );

    // A pair takes at least 14 bytes: 5 pairs fit in 70 bytes (and the zeros then give an empty
    // key), not in 69.
    let mut b = B::le();
    b.header(3, 0, 5).raw(&[0; 70]);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::EmptyKey { offset: 24, .. })));
    let e = parse_err(&b.buf[..b.buf.len() - 1]);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong { item: Item::KvCount, count: 5, remaining: 69, .. })
        ),
        "{e:?}"
    );
}

#[test]
fn tensor_count_larger_than_the_file_can_hold() {
    let mut b = B::le();
    b.header(3, 5, 0).raw(&[0; 100]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong {
                item: Item::TensorCount,
                owner: None,
                offset: 8,
                count: 5,
                remaining: 100,
                ..
            })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tensor count at offset 8 claims 5 entries, more than the 100 bytes left can hold");

    // The KV pairs' minimum size counts too: 2 pairs (28) leave 42 bytes, one tensor info (24).
    let mut b = B::le();
    b.header(3, 2, 2).raw(&[0; 70]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong { item: Item::TensorCount, count: 2, remaining: 70, .. })
        ),
        "{e:?}"
    );

    let mut b = B::le();
    b.header(3, u64::MAX, 0).raw(&[0; 30]);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TooLong { item: Item::TensorCount, count: u64::MAX, .. })
    ));
}

#[test]
fn key_length_longer_than_the_file() {
    let mut b = B::le();
    b.header(3, 0, 1).u64(1 << 60).raw(b"general.name").u32(ty::U8).u8(0);
    let remaining = b.pos() - 32;
    let (e, big) = largest_alloc(|| parse_err(&b.buf));
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::Key, owner: None, offset: 24, count, remaining: r, .. })
            if *count == 1 << 60 && *r == remaining),
        "{e:?}"
    );
    assert!(big < 4096, "allocated {big} bytes");
}

#[test]
fn string_length_longer_than_the_bytes_left() {
    let mut b = one_kv(ty::STRING);
    b.u64(1000).raw(b"short");
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::String, owner: Some(k), offset: 37, count: 1000, remaining: 5, .. })
            if k == "k"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"string (key "k") at offset 37 claims 1000 bytes, more than the 5 bytes left can hold"#
    );

    // One byte more than is left; exactly what is left is fine.
    let mut b = one_kv(ty::STRING);
    b.u64(6).raw(b"short");
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TooLong { item: Item::String, count: 6, remaining: 5, .. })
    ));
    let mut b = one_kv(ty::STRING);
    b.u64(5).raw(b"short");
    assert_eq!(parse_ok(&b.buf).get("k"), Some(ValueRef::String("short")));

    // A string inside an array.
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::STRING, 2).str("ok").u64(1 << 62).raw(b"xyz");
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::String, owner: Some(k), offset: 59, count, remaining: 3, .. })
            if k == "k" && *count == 1 << 62),
        "{e:?}"
    );
}

#[test]
fn huge_array_counts_fail_fast_without_allocating() {
    for elem in [ty::U8, ty::U32, ty::F64, ty::BOOL, ty::STRING, ty::ARRAY] {
        let mut b = one_kv(ty::ARRAY);
        b.arr(elem, 1 << 60).raw(&[0; 64]);
        let (e, big) = largest_alloc(|| parse_err(&b.buf));
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::Array, owner: Some(k), offset: 41, count, remaining: 64, .. })
                if k == "k" && *count == 1 << 60),
            "elem {elem}: {e:?}"
        );
        assert!(big < 4096, "elem {elem}: allocated {big} bytes");
    }
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::U32, u64::MAX);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TooLong { item: Item::Array, count: u64::MAX, remaining: 0, .. })
    ));

    // 10 u32 need 40 bytes: 39 is too few, 40 is fine.
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::U32, 10).raw(&[0; 39]);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TooLong { item: Item::Array, count: 10, remaining: 39, .. })
    ));
    b.u8(0);
    let g = parse_ok(&b.buf);
    let a = g.get("k").and_then(|v| v.as_array()).unwrap();
    assert_eq!((a.elem_type(), a.len()), (ValueType::U32, 10));

    // Inside an array of arrays: the inner count is checked too.
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::ARRAY, 1).arr(ty::I64, 1 << 61).raw(&[0; 16]);
    let (e, big) = largest_alloc(|| parse_err(&b.buf));
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong { item: Item::Array, offset: 53, remaining: 16, .. })
        ),
        "{e:?}"
    );
    assert!(big < 4096, "allocated {big} bytes");
}

#[test]
fn tensor_name_length_longer_than_the_file() {
    let mut b = B::le();
    b.header(3, 1, 0).u64(1000).raw(b"name").u32(1).u64(1).u32(0).u64(0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::TooLong {
                item: Item::TensorName,
                owner: None,
                offset: 24,
                count: 1000,
                remaining: 28,
                ..
            })
        ),
        "{e:?}"
    );
}

#[test]
fn hostile_counts_allocate_no_more_than_a_few_times_the_file() {
    // The largest counts a 64 KiB body may claim (a pair takes at least 14 bytes, a tensor info
    // 24); every entry after the first is garbage. At most 64 index entries are reserved before
    // parsing, so nothing grows with the claim (tests/resources.rs measures the exact bounds).
    let body = 1 << 16;
    let mut b = B::le();
    b.header(3, 0, (body / 14) as u64).kv("a", ty::U8).u8(1).raw(&vec![0xee; body - 14]);
    let (e, big) = largest_alloc(|| Gguf::from_slice(&b.buf).unwrap_err());
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::Key, .. })), "{e:?}");
    assert!(big <= 8 * b.buf.len(), "allocated {big} bytes for a {} byte file", b.buf.len());

    let mut b = B::le();
    b.header(3, (body / 24) as u64, 0).tensor("t", &[1], gt::F32, 0);
    let rest = body - (b.buf.len() - 24);
    b.raw(&vec![0xee; rest]);
    let (e, big) = largest_alloc(|| Gguf::from_slice(&b.buf).unwrap_err());
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::TensorName, .. })), "{e:?}");
    assert!(big <= 8 * b.buf.len(), "allocated {big} bytes for a {} byte file", b.buf.len());
}

// ---------------------------------------------------------------------------------------------
// Keys and values

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

#[test]
fn bool_byte_other_than_zero_or_one() {
    let mut b = one_kv(ty::BOOL);
    b.u8(2);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidBool { key, byte: 2, offset: 37, .. }) if key == "k"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"invalid bool byte 0x02 for key "k" at offset 37 (expected 0 or 1)"#);
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(37), Some("k"), None));

    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::BOOL, 4).u8(1).u8(0).u8(2).u8(1);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidBool { key, byte: 2, offset: 51, .. }) if key == "k"),
        "{e:?}"
    );

    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::ARRAY, 2).arr(ty::BOOL, 1).u8(1).arr(ty::BOOL, 1).u8(0xff);
    let e = parse_err(&b.buf);
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::InvalidBool { byte: 0xff, offset: 74, .. })), "{e:?}");

    // 0 and 1 read as false and true.
    let mut b = B::le();
    b.header(3, 0, 2).kv("t", ty::BOOL).u8(1).kv("f", ty::ARRAY).arr(ty::BOOL, 2).u8(0).u8(1);
    let g = parse_ok(&b.buf);
    assert_eq!(g.get("t"), Some(ValueRef::Bool(true)));
    let f: Vec<_> = g.get("f").unwrap().as_array().unwrap().iter().collect();
    assert_eq!(f, [ValueRef::Bool(false), ValueRef::Bool(true)]);
}

#[test]
fn key_not_utf8() {
    let mut b = B::le();
    b.header(3, 0, 1).kv([b'k', 0xff], ty::U8).u8(0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::Key, key: None, offset: 32, .. })),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "key at offset 32 is not valid UTF-8");
}

#[test]
fn string_value_not_utf8() {
    let mut b = one_kv(ty::STRING);
    b.str([b'a', 0xc3]); // a cut two-byte sequence
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, key: Some(k), offset: 45, .. }) if k == "k"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"string at offset 45 is not valid UTF-8 (key "k")"#);

    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::STRING, 2).str("ok").str([0xed, 0xa0, 0x80]); // an encoded surrogate
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::String, offset: 67, .. })),
        "{e:?}"
    );
}

#[test]
fn tensor_name_not_utf8() {
    let mut b = B::le();
    b.header(3, 1, 0).tensor([0xff, 0xfe], &[1], gt::F32, 0).pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::InvalidUtf8 { item: Item::TensorName, key: None, offset: 32, .. })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tensor name at offset 32 is not valid UTF-8");
}

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

// ---------------------------------------------------------------------------------------------
// Tensor infos

#[test]
fn tensor_name_of_65_bytes_refused_64_accepted() {
    let long = "x".repeat(65);
    let mut b = B::le();
    b.header(3, 1, 0).tensor(&long, &[1], gt::F32, 0).pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorNameTooLong { name, len: 65, max: 64, offset: 24, .. }) if *name == long),
        "{e:?}"
    );
    assert_eq!(e.to_string(), format!("tensor name {long:?} at offset 24 is 65 bytes, more than the 64 allowed"));

    let name = "y".repeat(64);
    let mut b = B::le();
    b.header(3, 1, 0).tensor(&name, &[1], gt::F32, 0).pad(32).data(4, 0);
    let g = parse_ok(&b.buf);
    assert_eq!(g.tensors().next().unwrap().name, name);
}

#[test]
fn long_tensor_name_is_shown_alone_and_read_fully_by_from_reader() {
    // The error shows the name, not the bytes after it; a longer one is cut to 256 bytes.
    let long = "n".repeat(300);
    let mut b = B::le();
    b.header(3, 1, 0).tensor(&long, &[1], gt::F32, 0).pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorNameTooLong { name, len: 300, .. }) if *name == long[..256]),
        "{e:?}"
    );

    // A 70-byte name that crosses from_reader's first 64 KiB read: both paths name it fully.
    let mut b = B::le();
    b.header(3, 1, 1).kv("pad", ty::STRING).str(vec![b'p'; 65_475]);
    assert_eq!(b.pos() + 8, 65_530);
    let name = "z".repeat(70);
    b.tensor(&name, &[1], gt::F32, 0).pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorNameTooLong { name: n, len: 70, offset: 65_522, .. }) if *n == name),
        "{e:?}"
    );
}

#[test]
fn duplicate_tensor_name() {
    let mut b = B::le();
    b.header(3, 3, 0).tensor("t", &[1], gt::F32, 0).tensor("u", &[1], gt::F32, 32);
    assert_eq!(b.pos(), 90);
    b.tensor("t", &[1], gt::F32, 64).pad(32).data(68, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::DuplicateTensor { name, offset: 90, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"duplicate tensor name "t" at offset 90"#);
}

#[test]
fn too_many_dims() {
    let mut b = one_tensor(&[1, 1, 1, 1, 1], gt::F32, 0);
    b.pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooManyDims { name, n_dims: 5, offset: 33, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"tensor "t" at offset 33 has 5 dimensions, at most 4 are allowed"#);
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(33), None, Some("t")));

    let mut b = B::le();
    b.header(3, 1, 0).str("t").u32(u32::MAX).raw(&[0; 64]);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TooManyDims { n_dims: u32::MAX, offset: 33, .. })
    ));
}

#[test]
fn dimension_negative_as_int64() {
    let mut b = one_tensor(&[4, 1 << 63], gt::F32, 0);
    b.pad(32).data(64, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::BadDim { name, index: 1, value, offset: 45, .. }) if name == "t" && *value == 1 << 63),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"tensor "t": stored dimension ne[1] = 9223372036854775808 at offset 45 is negative as int64"#
    );
    let b = one_tensor(&[u64::MAX], gt::F32, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::BadDim { index: 0, value: u64::MAX, offset: 37, .. })
    ));
    // 2^63 - 1 is the largest dimension; it overflows the byte size instead.
    let b = one_tensor(&[i64::MAX as u64], gt::I8, 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::TensorOutOfBounds { .. })));
}

#[test]
fn element_count_wrapping_to_zero_is_an_error() {
    // 2^32 × 2^32 = 2^64 wraps to 0: not an empty tensor.
    let mut b = one_tensor(&[1 << 32, 1 << 32], gt::F32, 0);
    b.pad(32);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::SizeOverflow { name, ne, .. }) if name == "t" && *ne == [1 << 32, 1 << 32]),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"tensor "t": element count or byte size of stored dims [4294967296, 4294967296] overflows int64"#
    );
    // Four dims of 2^16 wrap to 0 as well.
    let mut b = one_tensor(&[1 << 16; 4], gt::I8, 0);
    b.pad(32);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::SizeOverflow { .. })));
}

#[test]
fn element_count_wrapping_to_a_small_number_is_an_error() {
    // 274177 × 67280421310721 = 2^64 + 1 wraps to 1 element (4 bytes, which are present).
    let mut b = one_tensor(&[274_177, 67_280_421_310_721], gt::F32, 0);
    b.pad(32).data(4, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::SizeOverflow { ne, .. }) if *ne == [274_177, 67_280_421_310_721]),
        "{e:?}"
    );
    // 3 × 6148914691236517206 = 2^64 + 2 wraps to 2.
    let mut b = one_tensor(&[3, 6_148_914_691_236_517_206], gt::I8, 0);
    b.pad(32).data(2, 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::SizeOverflow { .. })));
    // Above int64 without wrapping u64: 2^32 × (2^31 + 1).
    let mut b = one_tensor(&[1 << 32, (1 << 31) + 1], gt::I8, 0);
    b.pad(32);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::SizeOverflow { .. })));
}

#[test]
fn byte_size_overflowing_int64() {
    // 2^61 F32 elements fit int64; their 2^63 bytes do not.
    let b = one_tensor(&[1 << 61], gt::F32, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::SizeOverflow { name, ne, .. }) if name == "t" && *ne == [1 << 61]),
        "{e:?}"
    );
    // 2^62 F64 elements: 2^65 bytes wrap u64 to 2.
    let b = one_tensor(&[1 << 62], GgmlType::F64.id(), 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::SizeOverflow { .. })));
    // Q8_0: 31 × 2^58 elements fit int64; their 31 × 2^53 blocks of 34 bytes (about 9.5e18) do not.
    let b = one_tensor(&[1 << 58, 31], gt::Q8_0, 0);
    assert!(matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::SizeOverflow { .. })));
}

#[test]
fn row_length_not_a_multiple_of_the_block_size() {
    let mut b = one_tensor(&[33], gt::Q8_0, 0);
    b.pad(32).data(68, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::NotBlockMultiple { name, dtype: GgmlType::Q8_0, ne0: 33, block_size: 32, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"tensor "t": row length ne[0] = 33 is not a multiple of the Q8_0 block size 32"#);
    let mut b = one_tensor(&[32, 8], gt::Q4_K, 0);
    b.pad(32).data(144 * 8, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::NotBlockMultiple { ne0: 32, block_size: 256, .. })
    ));
    // Only ne[0] must be a multiple: ne [32, 3] is three Q8_0 rows.
    let mut b = one_tensor(&[32, 3], gt::Q8_0, 0);
    b.pad(32).data(34 * 3, 0);
    assert_eq!(parse_ok(&b.buf).tensor("t").unwrap().nbytes, 102);
}

#[test]
fn offset_not_a_multiple_of_the_alignment() {
    let mut b = one_tensor(&[4], gt::F32, 16);
    b.pad(32).data(32, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::MisalignedTensor { name, relative_offset: 16, alignment: 32, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"tensor "t": data offset 16 (relative to the data section) is not a multiple of the alignment 32"#
    );
    // The stored offset is relative to the data section: no absolute offset to give.
    assert_eq!((e.offset(), e.key(), e.tensor()), (None, None, Some("t")));

    let mut b = B::le();
    b.header(3, 1, 1).kv("general.alignment", ty::U32).u32(64).tensor("t", &[4], gt::F32, 32).pad(64).data(64, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::MisalignedTensor { relative_offset: 32, alignment: 64, .. })
    ));
}

#[test]
fn tensors_overlapping() {
    // a: 16 F32 = 64 bytes at 0; b: 8 F32 at 32. Infos end at 24 + 2 × 33 = 90, data at 96.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("a", &[16], gt::F32, 0).tensor("b", &[8], gt::F32, 32).pad(32).data(64, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorsOverlap { first, second, second_start: 128, first_end: 160, .. })
            if first == "a" && second == "b"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"tensors "a" and "b" overlap: bytes 128..160 (absolute) belong to both"#);
    assert_eq!((e.offset(), e.tensor()), (Some(128), Some("b")));

    // Declared in the other order: still found, named by data order.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("b", &[8], gt::F32, 32).tensor("a", &[16], gt::F32, 0).pad(32).data(64, 0);
    assert!(
        matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::TensorsOverlap { first, .. }) if first == "a")
    );

    // Two tensors at one offset.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("a", &[1], gt::F32, 0).tensor("b", &[1], gt::F32, 0).pad(32).data(4, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TensorsOverlap { second_start: 96, first_end: 100, .. })
    ));

    // Overlapping a tensor that is not the previous one: c (0..128) contains b (64..68).
    let mut b = B::le();
    b.header(3, 3, 0)
        .tensor("c", &[32], gt::F32, 0)
        .tensor("a", &[1], gt::F32, 32)
        .tensor("b", &[1], gt::F32, 64)
        .pad(32)
        .data(128, 0);
    assert!(
        matches!(parse_err(&b.buf).kind(), ErrorKind::Format(FormatError::TensorsOverlap { first, second, .. }) if first == "c" && second == "a")
    );
}

#[test]
fn tensor_data_past_the_end_of_the_file() {
    // Infos end at 57, data at 64; 32 bytes needed, 31 present.
    let mut b = one_tensor(&[8], gt::F32, 0);
    b.pad(32).data(31, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorOutOfBounds { name, start: 64, end: 96, file_len: 95, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"tensor "t": data at bytes 64..96 (absolute) lies past the end of the file (95 bytes)"#
    );

    // An offset so large the absolute start overflows u64.
    let mut b = one_tensor(&[1], gt::F32, !31u64);
    b.pad(32);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorOutOfBounds { start: u64::MAX, file_len: 64, .. })),
        "{e:?}"
    );

    // The file ends right after the tensor infos.
    let b = one_tensor(&[1], gt::F32, 0);
    assert!(matches!(
        parse_err(&b.buf).kind(),
        ErrorKind::Format(FormatError::TensorOutOfBounds { start: 64, end: 68, file_len: 57, .. })
    ));
}

#[test]
fn removed_tensor_types_name_the_tensor_and_id() {
    for id in [4u32, 5, 31, 32, 33, 36, 37, 38] {
        let mut b = one_tensor(&[256], id, 0);
        b.pad(32).data(1024, 0);
        let e = parse_err(&b.buf);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::RemovedTensorType { name, id: i, offset: 45, .. }) if name == "t" && *i == id),
            "{id}: {e:?}"
        );
        assert_eq!(e.to_string(), format!(r#"tensor "t" at offset 45 has type id {id}, which ggml removed"#));
    }
}

#[test]
fn unknown_tensor_types_name_the_tensor_and_id() {
    for id in [43u32, 44, 1000, u32::MAX] {
        let mut b = one_tensor(&[256], id, 0);
        b.pad(32).data(1024, 0);
        let e = parse_err(&b.buf);
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::UnknownTensorType { name, id: i, offset: 45, .. }) if name == "t" && *i == id),
            "{id}: {e:?}"
        );
    }
    let b = one_tensor(&[256], 43, 0);
    assert_eq!(parse_err(&b.buf).to_string(), r#"tensor "t" at offset 45 has unknown type id 43"#);
}

/// ggml's type table (id, name, elements per block, bytes per block), from ggml `ggml.c`.
const TYPES: [(u32, &str, u64, u64); 35] = [
    (0, "F32", 1, 4),
    (1, "F16", 1, 2),
    (2, "Q4_0", 32, 18),
    (3, "Q4_1", 32, 20),
    (6, "Q5_0", 32, 22),
    (7, "Q5_1", 32, 24),
    (8, "Q8_0", 32, 34),
    (9, "Q8_1", 32, 36),
    (10, "Q2_K", 256, 84),
    (11, "Q3_K", 256, 110),
    (12, "Q4_K", 256, 144),
    (13, "Q5_K", 256, 176),
    (14, "Q6_K", 256, 210),
    (15, "Q8_K", 256, 292),
    (16, "IQ2_XXS", 256, 66),
    (17, "IQ2_XS", 256, 74),
    (18, "IQ3_XXS", 256, 98),
    (19, "IQ1_S", 256, 50),
    (20, "IQ4_NL", 32, 18),
    (21, "IQ3_S", 256, 110),
    (22, "IQ2_S", 256, 82),
    (23, "IQ4_XS", 256, 136),
    (24, "I8", 1, 1),
    (25, "I16", 1, 2),
    (26, "I32", 1, 4),
    (27, "I64", 1, 8),
    (28, "F64", 1, 8),
    (29, "IQ1_M", 256, 56),
    (30, "BF16", 1, 2),
    (34, "TQ1_0", 256, 54),
    (35, "TQ2_0", 256, 66),
    (39, "MXFP4", 32, 17),
    (40, "NVFP4", 64, 36),
    (41, "Q1_0", 128, 18),
    (42, "Q2_0", 64, 18),
];

#[test]
fn every_known_tensor_type_reads_with_its_size() {
    for (id, name, blk, size) in TYPES {
        // Two rows of two blocks each.
        let mut b = one_tensor(&[2 * blk, 2], id, 0);
        b.pad(32).data(4 * size as usize, 0);
        let g = parse_ok(&b.buf);
        let t = g.tensor("t").unwrap();
        assert_eq!((t.dtype.id(), t.dtype.name()), (id, name));
        assert_eq!((&*t.shape, t.nbytes, t.n_elements), (&[2, 2 * blk][..], 4 * size, 4 * blk), "{name}");
        assert_eq!(g.tensor_data(&t).unwrap().len() as u64, 4 * size);
        // One byte short of data is out of bounds.
        let short = &b.buf[..b.buf.len() - 1];
        assert!(matches!(parse_err(short).kind(), ErrorKind::Format(FormatError::TensorOutOfBounds { .. })), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Cut anywhere, corrupt anywhere

fn check_prefix(bytes: &[u8], len: usize, infos_end: u64, data_end: u64) {
    let prefix = &bytes[..len];
    common::check_every_source(prefix, &common::READ_AHEADS);
    let l = len as u64;
    let slice = Gguf::from_slice(prefix);
    let reader = Gguf::from_reader(Cursor::new(prefix));
    match (&slice, &reader) {
        (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {len}"),
        (Ok(a), Ok(b)) => assert_eq!(a.tensors().collect::<Vec<_>>(), b.tensors().collect::<Vec<_>>()),
        _ => panic!("cut at {len}: from_slice {slice:?} but from_reader {reader:?}"),
    }
    match slice.map_err(Error::into_kind) {
        Err(ErrorKind::Format(FormatError::BadMagic { found, .. })) => {
            assert!(len < 4 && found == prefix, "cut at {len}")
        }
        Err(ErrorKind::Format(FormatError::Truncated { offset, needed, available, .. })) => {
            assert!(l < infos_end && offset + needed > l && available == l - offset, "cut at {len}")
        }
        Err(ErrorKind::Format(FormatError::TooLong { .. })) => assert!(l < infos_end, "cut at {len}"),
        Err(ErrorKind::Format(FormatError::TensorOutOfBounds { end, file_len, .. })) => {
            assert!(l >= infos_end && l < data_end && end > l && file_len == l, "cut at {len}")
        }
        Err(e) => panic!("cut at {len}: unexpected {e:?}"),
        Ok(g) => {
            assert!(l >= data_end, "cut at {len} accepted");
            assert_eq!((g.kv_count(), g.tensor_count()), (7, 3));
        }
    }
}

#[test]
fn a_file_cut_anywhere_is_refused_cleanly() {
    for big in [false, true] {
        let s = sample(big);
        parse_ok(&s.bytes);
        for len in 0..=s.bytes.len() {
            check_prefix(&s.bytes, len, s.infos_end, s.data_end);
        }
    }
}

#[test]
fn every_seed_cut_anywhere_reads_the_same_from_every_source() {
    // The parser stops wherever its bytes end: each seed (every value type, both byte orders,
    // each kind of error), cut at every length and read in pieces of every size, gives the
    // answer of the whole cut file in memory.
    for s in common::seeds() {
        for len in 0..=s.bytes.len() {
            common::check_every_source(&s.bytes[..len], &common::READ_AHEADS);
        }
    }
}

/// Walks every value, array element and tensor of an accepted file (no accessor may panic).
fn touch_everything<S: gguf_serde::container::Source>(g: &Gguf<S>) {
    fn walk(v: ValueRef<'_>) -> usize {
        match v {
            ValueRef::Array(a) => {
                let _ = a.type_name();
                let _ = a.to_owned_array();
                a.iter().map(walk).sum::<usize>() + 1
            }
            v => {
                let _ = v.to_owned_value();
                1
            }
        }
    }
    for kv in g.metadata() {
        walk(kv.value);
    }
    for t in g.tensors() {
        let _ = g.tensor_data(&t);
        let _ = g.tensor(t.name);
    }
}

#[test]
fn every_byte_corrupted_never_panics() {
    for big in [false, true] {
        let s = sample(big);
        let mut accepted = 0;
        for i in 0..s.bytes.len() {
            for op in 0..6u8 {
                let mut b = s.bytes.clone();
                b[i] = match op {
                    0 => b[i] ^ 0xff,
                    1 => b[i] ^ 0x01,
                    2 => b[i] ^ 0x80,
                    3 => 0,
                    4 => 0xff,
                    _ => b[i].wrapping_add(2),
                };
                let slice = Gguf::from_slice(&b);
                let reader = Gguf::from_reader(Cursor::new(&b));
                common::check_every_source(&b, &[0, usize::MAX]);
                match (&slice, &reader) {
                    (Ok(g), Ok(r)) => {
                        accepted += 1;
                        touch_everything(g);
                        touch_everything(r);
                        assert_eq!(g.tensors().collect::<Vec<_>>(), r.tensors().collect::<Vec<_>>());
                    }
                    (Err(a), Err(r)) => assert_eq!(format!("{a:?}"), format!("{r:?}"), "byte {i} op {op}"),
                    _ => panic!("byte {i} op {op}: from_slice and from_reader disagree"),
                }
            }
        }
        // Corrupting tensor data or padding keeps the file valid: many are accepted.
        assert!(accepted > 6 * 100, "{accepted}");
    }
}

/// A file whose metadata is larger than `from_reader`'s first 64 KiB read: a string array of 9000
/// entries, then two tensors.
fn large_metadata() -> (Vec<u8>, u64, u64) {
    let mut b = B::le();
    b.header(3, 2, 2).kv("general.architecture", ty::STRING).str("llama");
    b.kv("tokenizer.ggml.tokens", ty::ARRAY).arr(ty::STRING, 9000);
    for i in 0..9000 {
        b.str(format!("tok{i:05}"));
    }
    b.tensor("a", &[8], gt::F32, 0).tensor("b", &[64], gt::BF16, 32);
    let infos_end = b.pos();
    assert!(infos_end > 65536 + 4096);
    b.pad(32).data(32, 1).pad(32).data(128, 2);
    let data_end = b.pos();
    (b.buf, infos_end, data_end)
}

#[test]
fn large_metadata_cut_anywhere_through_from_reader() {
    let (bytes, infos_end, data_end) = large_metadata();
    let g = parse_ok(&bytes);
    assert_eq!(g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap().len(), 9000);
    let r = Gguf::from_reader(Cursor::new(&bytes)).unwrap();
    assert_eq!(r.tensor_infos_end(), infos_end);
    assert_eq!(r.bytes().len() as u64, infos_end, "from_reader holds exactly the metadata");
    assert!(
        matches!(r.tensor_data_by_name("a").map_err(Error::into_kind), Err(ErrorKind::DataNotLoaded { name, .. }) if name == "a")
    );
    let near = |x: u64| (x.saturating_sub(40)..x + 40).map(|v| v as usize);
    let lens: Vec<usize> = (0..bytes.len())
        .step_by(997)
        .chain(near(65536))
        .chain(near(131072))
        .chain(near(infos_end))
        .chain(near(data_end))
        .filter(|&l| l <= bytes.len())
        .collect();
    for len in lens {
        let prefix = &bytes[..len];
        let l = len as u64;
        let slice = Gguf::from_slice(prefix);
        let reader = Gguf::from_reader(Cursor::new(prefix));
        common::check_every_source(prefix, &[0, 4096]);
        match (&slice, &reader) {
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {len}"),
            (Ok(_), Ok(_)) => assert!(l >= data_end),
            _ => panic!("cut at {len}: from_slice {slice:?} but from_reader {reader:?}"),
        }
        if l < data_end {
            assert!(slice.is_err(), "cut at {len} accepted");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Valid edge cases

#[test]
fn zero_tensors() {
    let mut b = B::le();
    b.header(3, 0, 1).kv("a", ty::U32).u32(5);
    let g = parse_ok(&b.buf);
    assert_eq!((g.kv_count(), g.tensor_count(), g.get("a")), (1, 0, Some(ValueRef::U32(5))));
    assert_eq!(g.tensor_infos_end(), 41);
    // With ggml's padding after the (empty) tensor infos too.
    b.pad(32);
    assert_eq!(parse_ok(&b.buf).tensor_count(), 0);
}

#[test]
fn a_tensor_info_cut_short_names_its_tensor() {
    // Name "t" at 24 (8-byte length + 1 byte), n_dims = 1 at 33, ne[0] at 37, the type id at 45:
    // 3 of its 4 bytes are there (24 bytes after the header, enough for the tensor count).
    let mut b = B::le();
    b.header(3, 1, 0).str("t").u32(1).u64(4).raw(&[0; 3]);
    let e = parse_err(&b.buf);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Format(FormatError::Truncated { item: Item::Dims, owner: Some(t), offset: 45, needed: 4, available: 3, .. })
                if t == "t"
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        r#"file truncated: tensor info field (tensor "t") at offset 45 needs 4 bytes, only 3 remain"#
    );
    // The owner of a tensor info field is a tensor, not a key.
    assert_eq!((e.offset(), e.key(), e.tensor()), (Some(45), None, Some("t")));
}

#[test]
fn header_only_file() {
    for version in [2, 3] {
        let mut b = B::le();
        b.header(version, 0, 0);
        let g = parse_ok(&b.buf);
        assert_eq!((g.version(), g.endian(), g.kv_count(), g.tensor_count()), (version, Endian::Little, 0, 0));
        assert_eq!((g.alignment(), g.tensor_infos_end(), g.file_len()), (32, 24, 24));
    }
}

#[test]
fn dimension_of_zero() {
    // An empty tensor takes no bytes, so it may share an offset with a real one.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("z", &[0, 4], gt::F32, 0).tensor("w", &[2], gt::F32, 0).pad(32).data(8, 5);
    let g = parse_ok(&b.buf);
    let z = g.tensor("z").unwrap();
    // Infos end at 24 + 41 + 33 = 98; data at 128.
    assert_eq!((&*z.shape, z.nbytes, z.n_elements, z.data_offset), (&[4, 0][..], 0, 0, 128));
    assert_eq!(g.tensor_data(&z).unwrap(), b"");
    assert_eq!(g.tensor_data_by_name("w").unwrap(), &b.buf[128..136]);
}

#[test]
fn alignment_one() {
    let mut b = B::le();
    b.header(3, 2, 1).kv("general.alignment", ty::U32).u32(1);
    b.tensor("a", &[3], GgmlType::I8.id(), 0).tensor("b", &[1], gt::F32, 3);
    let infos_end = b.pos();
    b.raw(&[1, 2, 3]).f32(1.5);
    let g = parse_ok(&b.buf);
    assert_eq!((g.alignment(), g.data_offset()), (1, infos_end));
    assert_eq!(g.tensor_data_by_name("a").unwrap(), [1, 2, 3]);
    assert_eq!(g.tensor_data_by_name("b").unwrap(), 1.5f32.to_le_bytes());
    assert_eq!(g.tensor("b").unwrap().data_offset, infos_end + 3);
}

#[test]
fn alignment_sixty_four() {
    let mut b = B::le();
    b.header(3, 2, 1).kv("general.alignment", ty::U32).u32(64);
    b.tensor("a", &[4], gt::F32, 0).tensor("b", &[2], gt::F16, 64);
    let infos_end = b.pos();
    b.pad(64);
    let data = b.pos();
    b.data(16, 1).pad(64).data(4, 2);
    let g = parse_ok(&b.buf);
    assert_eq!((g.alignment(), g.tensor_infos_end(), g.data_offset()), (64, infos_end, data));
    assert_eq!(data % 64, 0);
    assert_eq!(g.tensor("b").unwrap().data_offset, data + 64);
    assert_eq!(g.tensor_data_by_name("b").unwrap(), &b.buf[data as usize + 64..]);
}

#[test]
fn no_padding_after_the_last_tensor_and_trailing_bytes() {
    let s = sample(false);
    let g = parse_ok(&s.bytes[..s.data_end as usize]);
    assert_eq!(g.file_len(), s.data_end);
    assert_eq!(g.tensor_data_by_name("c").unwrap().len(), 6);

    let mut long = s.bytes.clone();
    long.extend_from_slice(&[0xab; 1000]);
    let g = parse_ok(&long);
    assert_eq!(g.file_len(), s.bytes.len() as u64 + 1000);
    assert_eq!(g.tensor_data_by_name("c").unwrap(), &s.bytes[s.data_end as usize - 6..s.data_end as usize]);
}

fn check_all_types(g: &Gguf<&[u8]>) {
    use ValueRef as V;
    let scalars = [
        ("u8", V::U8(200)),
        ("i8", V::I8(-100)),
        ("u16", V::U16(0xbeef)),
        ("i16", V::I16(-12345)),
        ("u32", V::U32(0xdead_beef)),
        ("i32", V::I32(-123_456_789)),
        ("f32", V::F32(-1.25)),
        ("bool", V::Bool(true)),
        ("string", V::String("héllo")),
        ("u64", V::U64(0x0123_4567_89ab_cdef)),
        ("i64", V::I64(-0x0123_4567_89ab_cdef)),
        ("f64", V::F64(std::f64::consts::PI)),
    ];
    for (k, v) in scalars {
        assert_eq!(g.get(k), Some(v), "{k}");
    }
    let arr = |k: &str| g.get(k).unwrap().as_array().unwrap().iter().collect::<Vec<_>>();
    assert_eq!(arr("a.u8"), [V::U8(1), V::U8(255)]);
    assert_eq!(arr("a.i8"), [V::I8(-1), V::I8(1)]);
    assert_eq!(arr("a.u16"), [V::U16(1), V::U16(0xff00)]);
    assert_eq!(arr("a.i16"), [V::I16(-2)]);
    assert_eq!(arr("a.u32"), [V::U32(7), V::U32(0x0102_0304)]);
    assert_eq!(arr("a.i32"), [V::I32(-7)]);
    assert_eq!(arr("a.f32"), [V::F32(0.5), V::F32(f32::INFINITY)]);
    assert_eq!(arr("a.bool"), [V::Bool(true), V::Bool(false), V::Bool(true)]);
    assert_eq!(arr("a.string"), [V::String("a"), V::String(""), V::String("ü")]);
    assert_eq!(arr("a.u64"), [V::U64(u64::MAX - 1)]);
    assert_eq!(arr("a.i64"), [V::I64(i64::MIN)]);
    let f = arr("a.f64");
    assert!(matches!(f[..], [V::F64(z)] if z == 0.0 && z.is_sign_negative()));
    let nested = arr("a.array");
    let inner: Vec<Vec<_>> = nested.iter().map(|v| v.as_array().unwrap().iter().collect()).collect();
    assert_eq!(inner, [vec![V::U16(0x1234)], vec![V::String("in")]]);
    assert_eq!(g.get("a.array").unwrap().type_name(), "array<array<u16>>");
    let empty = g.get("a.empty").unwrap().as_array().unwrap();
    assert_eq!((empty.elem_type(), empty.len()), (ValueType::F32, 0));
    // Key order is file order.
    let keys: Vec<_> = g.metadata().map(|kv| kv.key).collect();
    assert_eq!(keys.len(), 26);
    assert_eq!(keys[..3], ["u8", "i8", "u16"]);
    assert_eq!(keys[25], "a.empty");
    let t = g.tensor("t").unwrap();
    assert_eq!((&*t.shape, t.dtype, t.nbytes), (&[2][..], GgmlType::F32, 8));
}

#[test]
fn little_endian_values_read_exactly() {
    let bytes = all_types(false, 3);
    let g = parse_ok(&bytes);
    assert_eq!(g.endian(), Endian::Little);
    check_all_types(&g);
    let mut data = 1.0f32.to_le_bytes().to_vec();
    data.extend_from_slice(&(-2.0f32).to_le_bytes());
    assert_eq!(g.tensor_data_by_name("t").unwrap(), data);
}

#[test]
fn big_endian_files_read_with_correct_values() {
    let bytes = all_types(true, 3);
    assert_eq!(bytes[4..8], [0, 0, 0, 3]);
    let g = parse_ok(&bytes);
    assert_eq!((g.version(), g.endian()), (3, Endian::Big));
    check_all_types(&g);
    // Tensor data is handed out as stored (big-endian).
    let mut data = 1.0f32.to_be_bytes().to_vec();
    data.extend_from_slice(&(-2.0f32).to_be_bytes());
    assert_eq!(g.tensor_data_by_name("t").unwrap(), data);

    // The sample file in big-endian order.
    let s = sample(true);
    let g = parse_ok(&s.bytes);
    assert_eq!(g.get("test.i16"), Some(ValueRef::I16(-3)));
    assert_eq!(g.get("test.f64"), Some(ValueRef::F64(0.25)));
    assert_eq!(g.data_offset(), s.data_offset);
    let b = g.tensor("b").unwrap();
    assert_eq!((&*b.shape, b.dtype, b.data_offset, b.nbytes), (&[32][..], GgmlType::Q8_0, s.data_offset + 32, 34));
}

#[test]
fn version_two_reads() {
    let bytes = all_types(false, 2);
    let g = parse_ok(&bytes);
    assert_eq!(g.version(), 2);
    check_all_types(&g);
}

#[test]
fn sample_reads_with_expected_layout() {
    let s = sample(false);
    let g = parse_ok(&s.bytes);
    assert_eq!((g.tensor_infos_end(), g.data_offset()), (s.infos_end, s.data_offset));
    let got: Vec<_> = g.tensors().map(|t| (t.name, t.dtype, t.shape.to_vec(), t.data_offset, t.nbytes)).collect();
    let d = s.data_offset;
    assert_eq!(
        got,
        [
            ("a", GgmlType::F32, vec![2, 4], d, 32),
            ("b", GgmlType::Q8_0, vec![32], d + 32, 34),
            ("c", GgmlType::F16, vec![3], d + 96, 6),
        ]
    );
    let nested = g.get("test.nested").unwrap().as_array().unwrap();
    assert_eq!(nested.len(), 3);
    assert_eq!(nested.type_name(), "array<array<u8>>");
}

// ---------------------------------------------------------------------------------------------
// Other sources: a reader not at the start of its stream, a reader that lies, a mapped file

#[test]
fn from_reader_starts_at_the_current_position() {
    use std::io::{Seek, SeekFrom};
    let s = sample(false);
    let mut stream = vec![0xcc; 100];
    stream.extend_from_slice(&s.bytes);
    let mut c = Cursor::new(&stream);
    c.seek(SeekFrom::Start(100)).unwrap();
    let g = Gguf::from_reader(c).unwrap();
    assert_eq!((g.kv_count(), g.tensor_count(), g.file_len()), (7, 3, s.bytes.len() as u64));
    assert_eq!(g.tensor("c").unwrap().data_offset, s.data_offset + 96);
}

#[test]
fn from_reader_whose_length_lies_is_an_io_error() {
    use std::io::{Read, Seek, SeekFrom};
    /// Claims 1000 more bytes than it yields.
    struct Liar(Cursor<Vec<u8>>);
    impl Read for Liar {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0.read(buf)
        }
    }
    impl Seek for Liar {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            match pos {
                SeekFrom::End(d) => Ok((self.0.get_ref().len() as i64 + 1000 + d) as u64),
                p => self.0.seek(p),
            }
        }
    }
    // Metadata cut short by the lie: an I/O error.
    let s = sample(false);
    let e = Gguf::from_reader(Liar(Cursor::new(s.bytes[..100].to_vec()))).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(source) if source.kind() == std::io::ErrorKind::UnexpectedEof), "{e:?}");
    // Metadata whole: from_reader reads no tensor data, so it trusts the claimed length.
    let g = Gguf::from_reader(Liar(Cursor::new(s.bytes.clone()))).unwrap();
    assert_eq!(g.file_len(), s.bytes.len() as u64 + 1000);
    assert_eq!(g.bytes().len() as u64, s.infos_end);
}

#[test]
fn mapped_files_are_validated_the_same() {
    let dir = crate::common::temp_dir();
    let s = sample(false);
    for len in [0, 3, 4, 23, 24, 100, s.infos_end as usize, s.data_end as usize - 1, s.data_end as usize] {
        let path = dir.path().join(format!("cut{len}.gguf"));
        std::fs::write(&path, &s.bytes[..len]).unwrap();
        let mapped = Gguf::open(&path).map(|g| g.tensor_count());
        let slice = Gguf::from_slice(&s.bytes[..len]).map(|g| g.tensor_count());
        assert_eq!(format!("{mapped:?}"), format!("{slice:?}"), "cut at {len}");
    }
    let e = Gguf::open(dir.path().join("missing.gguf")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(source) if source.kind() == std::io::ErrorKind::NotFound), "{e:?}");
    assert!(e.to_string().starts_with("I/O error opening "), "{e}");
}

#[test]
fn from_reader_reads_no_tensor_data() {
    use std::io::{Read, Seek, SeekFrom};
    /// Records the furthest byte read.
    struct Watch {
        inner: Cursor<Vec<u8>>,
        furthest: u64,
    }
    impl Read for Watch {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.furthest = self.furthest.max(self.inner.position());
            Ok(n)
        }
    }
    impl Seek for Watch {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }
    // One key, one 1 MiB F32 tensor.
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_tensor("big", gguf_serde::GgmlType::F32, &[512, 512]).unwrap();
    w.write_tensor_data(&vec![0u8; 512 * 512 * 4]).unwrap();
    let bytes = w.finish().unwrap();
    let mut watch = Watch { inner: Cursor::new(bytes), furthest: 0 };
    let g = Gguf::from_reader(&mut watch).unwrap();
    assert_eq!(g.tensor("big").unwrap().nbytes, 1 << 20);
    // Header 24 + key/value 45 + tensor info 43 = 112 bytes; the read-ahead adds at most 8 KiB.
    assert_eq!(g.tensor_infos_end(), 112);
    assert!(watch.furthest <= 112 + 8192, "read up to byte {}", watch.furthest);
}
