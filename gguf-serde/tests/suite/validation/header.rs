//! The header, and counts and lengths larger than the file.

use super::*;

#[test]
fn bad_magic() {
    let mut b = B::le();
    b.raw(b"GGUX").u32(3).u64(0).u64(0);
    let e = parse_err(&b.buf);
    assert!(matches!(e.kind(), ErrorKind::Format(FormatError::BadMagic { found, .. }) if found == b"GGUX"), "{e:?}");
    assert_eq!(
        e.to_string(),
        r#"not a GGUF file: magic at offset 0 is "GGUX" (47 47 55 58), expected "GGUF" (47 47 55 46)"#
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

    // A count of 1 is singular: one pair in 13 bytes.
    let mut b = B::le();
    b.header(3, 0, 1).raw(&[0; 13]);
    let e = parse_err(&b.buf);
    assert_eq!(e.to_string(), "key/value count at offset 16 claims 1 entry, more than the 13 bytes left can hold");
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
    assert_eq!(parse_ok(&b.buf).get("k"), Some(ValueRef::String("short".into())));
    // A count of 1 is singular, as is 1 byte left: one byte more than is left, with none and one
    // left.
    for (len, left, text) in
        [(1, &b""[..], "1 byte, more than the 0 bytes"), (2, b"s", "2 bytes, more than the 1 byte")]
    {
        let mut b = one_kv(ty::STRING);
        b.u64(len).raw(left);
        let msg = format!(r#"string (key "k") at offset 37 claims {text} left can hold"#);
        assert_eq!(parse_err(&b.buf).to_string(), msg);
    }

    // A string inside an array: named by its index.
    let mut b = one_kv(ty::ARRAY);
    b.arr(ty::STRING, 2).str("ok").u64(1 << 62).raw(b"xyz");
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TooLong { item: Item::String, owner: Some(k), offset: 59, count, remaining: 3, .. })
            if k == "k[1]" && *count == 1 << 62),
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
    // parsing, so nothing grows with the claim (tests/suite/resources.rs measures the exact bounds).
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
