//! The streaming writer: exact bytes against hand-computed layouts (ggml `docs/gguf.md` and ggml's
//! `gguf_write_to_buf`: offsets are running sums of padded sizes, 0x00 padding from the start of
//! the file after the tensor infos and after every tensor including the last), errors, and atomic
//! writing to a path.

use std::io::{Cursor, Read};
use std::path::Path;

use crate::common::{all_types, gt, largest_alloc, sample, ty, Count, B};
use gguf_serde::AlignmentProblem;
use gguf_serde::{
    Array, Endian, Error, ErrorKind, GgmlType, Gguf, GgufWriter, Value, ValueRef, WriteError, WriteOptions,
};

/// Bytes from hex digits; whitespace and `|` are ignored.
use crate::common::unhex as hex;

fn be() -> WriteOptions {
    WriteOptions::new().with_endian(Endian::Big)
}

#[test]
fn exact_bytes_of_a_small_file() {
    let mut w = GgufWriter::new(Vec::new());
    assert_eq!(w.endian(), Endian::Little);
    w.add_kv("a", 7u32).unwrap();
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    w.write_tensor_data(&(1..=12).collect::<Vec<u8>>()).unwrap();
    let got = w.finish().unwrap();

    let want = hex("47475546 03000000 0100000000000000 0100000000000000
         0100000000000000 61 04000000 07000000
         0100000000000000 74 01000000 0300000000000000 00000000 0000000000000000
         00000000000000000000 00000000000000000000 0000
         0102030405060708090a0b0c
         0000000000000000000000000000000000000000");
    // 24 header + 17 KV + 33 tensor info = 74, padded to 96; 12 bytes of data, padded to 128.
    assert_eq!(want.len(), 128);
    assert_eq!(got, want);
}

#[test]
fn exact_bytes_big_endian() {
    let mut w = GgufWriter::with_options(Vec::new(), be()).unwrap();
    // The byte order tensor data must be given in: that of the bytes below (version 3 as
    // `00000003`).
    assert_eq!(w.endian(), Endian::Big);
    w.add_kv("a", 7u32).unwrap();
    w.add_kv("b", -2i16).unwrap();
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    w.write_tensor_data(&[9; 12]).unwrap();
    let got = w.finish().unwrap();
    let want = hex("47475546 00000003 0000000000000001 0000000000000002
         0000000000000001 61 00000004 00000007
         0000000000000001 62 00000003 fffe
         0000000000000001 74 00000001 0000000000000003 00000000 0000000000000000
         00000000000000
         090909090909090909090909 0000000000000000000000000000000000000000");
    assert_eq!(got, want);
    // And the reader takes it as big-endian with the same values.
    let g = Gguf::from_slice(&got).unwrap();
    assert_eq!((g.version(), g.endian()), (3, Endian::Big));
    assert_eq!((g.get("a"), g.get("b")), (Some(ValueRef::U32(7)), Some(ValueRef::I16(-2))));
    assert_eq!(&*g.tensor("t").unwrap().shape, &[3]);
}

/// Also a tensor of `GGML_MAX_DIMS` (4, ggml.h) dimensions, the most ggml has.
#[test]
fn canonical_shape_is_stored_reversed_and_a_scalar_as_one_dim() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("m", GgmlType::F32, &[2, 3]).unwrap(); // 2 rows of 3: ne = [3, 2]
    w.add_tensor("s", GgmlType::F32, &[]).unwrap(); // a scalar: ne = [1]
    w.add_tensor("q", GgmlType::F32, &[1, 2, 1, 3]).unwrap(); // ne = [3, 1, 2, 1]
    w.write_tensor_data(&[0; 24]).unwrap();
    w.write_tensor_data(&[0; 4]).unwrap();
    w.write_tensor_data(&[5; 24]).unwrap();
    let got = w.finish().unwrap();
    let mut b = B::le();
    b.header(3, 3, 0).tensor("m", &[3, 2], gt::F32, 0).tensor("s", &[1], gt::F32, 32);
    b.tensor("q", &[3, 1, 2, 1], gt::F32, 64);
    b.pad(32).raw(&[0; 24]).pad(32).raw(&[0; 4]).pad(32).raw(&[5; 24]).pad(32);
    assert_eq!(got, b.buf);
}

#[test]
fn padding_after_every_tensor_and_alignment_from_general_alignment() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.alignment", 8u32).unwrap();
    assert_eq!(w.alignment(), 8);
    w.add_tensor("a", GgmlType::I8, &[3]).unwrap();
    w.add_tensor("b", GgmlType::F16, &[1]).unwrap();
    w.add_tensor("c", GgmlType::I32, &[2]).unwrap();
    w.write_tensor_data(&[1, 2, 3]).unwrap();
    w.write_tensor_data(&[4, 5]).unwrap();
    w.write_tensor_data(&[6; 8]).unwrap();
    let got = w.finish().unwrap();

    // 24 + 33 (KV) + 3 × 33 (infos) = 156, padded to 160; a at 0 (3 bytes, padded to 8), b at 8
    // (2, padded to 16), c at 16 (8 bytes, ends on a multiple of 8: no padding).
    let mut b = B::le();
    b.header(3, 3, 1).kv("general.alignment", ty::U32).u32(8);
    b.tensor("a", &[3], GgmlType::I8.id(), 0).tensor("b", &[1], gt::F16, 8).tensor("c", &[2], 26, 16);
    assert_eq!(b.pos(), 156);
    b.pad(8).raw(&[1, 2, 3]).pad(8).raw(&[4, 5]).pad(8).raw(&[6; 8]).pad(8);
    assert_eq!(b.pos(), 184);
    assert_eq!(got, b.buf);
}

#[test]
fn padding_after_the_last_tensor_too() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::I8, &[1]).unwrap();
    w.write_tensor_data(&[0xaa]).unwrap();
    let got = w.finish().unwrap();
    // 24 + 33 = 57 → 64; one byte → 65 → 96.
    assert_eq!(got.len(), 96);
    assert_eq!(got[64], 0xaa);
    assert!(got[57..64].iter().chain(&got[65..]).all(|&b| b == 0));
}

#[test]
fn alignment_added_after_tensors_still_applies() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[1]).unwrap();
    w.add_tensor("b", GgmlType::I8, &[1]).unwrap();
    w.add_kv("general.alignment", 64u32).unwrap();
    w.write_tensor_data(&[1]).unwrap();
    w.write_tensor_data(&[2]).unwrap();
    let got = w.finish().unwrap();
    let mut b = B::le();
    b.header(3, 2, 1).kv("general.alignment", ty::U32).u32(64);
    b.tensor("a", &[1], GgmlType::I8.id(), 0).tensor("b", &[1], GgmlType::I8.id(), 64);
    b.pad(64).u8(1).pad(64).u8(2).pad(64);
    assert_eq!(got, b.buf);
}

#[test]
fn zero_tensors_padding_option() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 1u8).unwrap();
    let padded = w.finish().unwrap();
    let mut b = B::le();
    b.header(3, 0, 1).kv("a", ty::U8).u8(1);
    let unpadded = b.buf.clone();
    b.pad(32);
    assert_eq!(padded, b.buf);

    let opts = WriteOptions::new().with_pad_empty_data(false);
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    w.add_kv("a", 1u8).unwrap();
    assert_eq!(w.finish().unwrap(), unpadded);

    // No keys, no tensors.
    assert_eq!(
        GgufWriter::new(Vec::new()).finish().unwrap(),
        hex("47475546 03000000 00000000 00000000 00000000 00000000 0000000000000000")
    );
}

#[test]
fn version_option() {
    let opts = WriteOptions::new().with_version(2);
    let got = GgufWriter::with_options(Vec::new(), opts).unwrap().finish().unwrap();
    assert_eq!(got[..8], *b"GGUF\x02\0\0\0");
    for (version, endian) in [(2, Endian::Big), (1, Endian::Little), (4, Endian::Little), (0, Endian::Big)] {
        let opts = WriteOptions::new().with_version(version).with_endian(endian);
        let e = GgufWriter::with_options(Vec::new(), opts).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Write(WriteError::Misuse { .. })), "{version} {endian:?}: {e:?}");
    }
}

#[test]
fn big_endian_output_reads_back() {
    let mut w = GgufWriter::with_options(Vec::new(), be()).unwrap();
    w.add_kv("general.alignment", 16u32).unwrap();
    w.add_kv("s", "héllo").unwrap();
    w.add_kv("f", vec![1.5f32, -2.0]).unwrap();
    w.add_kv("u", u64::MAX - 5).unwrap();
    w.add_value("n", &Value::Array(Array::Array(vec![Array::I16(vec![-1, 2]), Array::String(vec!["x".into()])])))
        .unwrap();
    w.add_tensor("t", GgmlType::BF16, &[2, 2]).unwrap();
    let data = [1u8, 2, 3, 4, 5, 6, 7, 8];
    w.write_tensor_data(&data).unwrap();
    let bytes = w.finish().unwrap();
    let g = Gguf::from_slice(&bytes).unwrap();
    assert_eq!((g.endian(), g.alignment()), (Endian::Big, 16));
    assert_eq!(g.get("s"), Some(ValueRef::String("héllo".into())));
    let f: Vec<_> = g.get("f").unwrap().as_array().unwrap().iter().collect();
    assert_eq!(f, [ValueRef::F32(1.5), ValueRef::F32(-2.0)]);
    assert_eq!(g.get("u"), Some(ValueRef::U64(u64::MAX - 5)));
    assert_eq!(
        g.get("n").unwrap().to_owned_value(),
        Value::Array(Array::Array(vec![Array::I16(vec![-1, 2]), Array::String(vec!["x".into()])]))
    );
    assert_eq!(g.tensor_data_by_name("t").unwrap(), data);
    assert_eq!(g.data_offset() % 16, 0);
    // The u64 is stored big-endian: find its bytes.
    let needle = (u64::MAX - 5).to_be_bytes();
    assert!(bytes.windows(8).any(|w| w == needle));
}

#[test]
fn wrong_data_size_is_a_size_mismatch() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    let e = w.write_tensor_data(&[0; 11]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { name, expected: 12, found: 11, .. }) if name == "t"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), r#"tensor "t": got 11 bytes of data, expected 12 (from its dtype and shape)"#);
    let e = w.write_tensor_data(&[0; 13]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { expected: 12, found: 13, .. })), "{e:?}");
    // Q8_0 [2, 64]: 2 rows × 2 blocks × 34 bytes.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("q", GgmlType::Q8_0, &[2, 64]).unwrap();
    let e = w.write_tensor_data(&[0; 128]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { expected: 136, found: 128, .. })), "{e:?}");
    w.write_tensor_data(&[0; 136]).unwrap();
    w.finish().unwrap();
}

#[test]
fn too_many_or_too_few_tensors() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::I8, &[1]).unwrap();
    w.write_tensor_data(&[1]).unwrap();
    let e = w.write_tensor_data(&[1]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::Misuse { .. })), "{e:?}");
    assert_eq!(e.to_string(), "writer misuse: data given for more tensors than the 1 declared");
    let e = w.copy_tensor_data(&[1u8][..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::Misuse { .. })), "{e:?}");

    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[1]).unwrap();
    w.add_tensor("b", GgmlType::I8, &[1]).unwrap();
    w.add_tensor("c", GgmlType::I8, &[1]).unwrap();
    w.write_tensor_data(&[1]).unwrap();
    let e = w.finish().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::Misuse { .. })), "{e:?}");
    assert_eq!(e.to_string(), r#"writer misuse: no data written for tensors ["b", "c"]"#);

    // Declared but never given data, header not even written.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[1]).unwrap();
    assert!(matches!(w.finish().map_err(Error::into_kind), Err(ErrorKind::Write(WriteError::Misuse { .. }))));
}

#[test]
fn declarations_after_data_started_are_refused() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[1]).unwrap();
    w.add_tensor("b", GgmlType::I8, &[1]).unwrap();
    w.write_tensor_data(&[1]).unwrap();
    assert!(matches!(w.add_kv("k", 1u8).map_err(Error::into_kind), Err(ErrorKind::Write(WriteError::Misuse { .. }))));
    assert!(matches!(
        w.add_tensor("c", GgmlType::I8, &[1]).map_err(Error::into_kind),
        Err(ErrorKind::Write(WriteError::Misuse { .. }))
    ));
    assert!(matches!(w.write_header().map_err(Error::into_kind), Err(ErrorKind::Write(WriteError::Misuse { .. }))));
    w.write_tensor_data(&[2]).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().tensor_count(), 2);
}

#[test]
fn tensor_name_of_64_bytes_refused_63_accepted() {
    let mut w = GgufWriter::new(Vec::new());
    let e = w.add_tensor(&"x".repeat(64), GgmlType::F32, &[1]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name.len() == 64), "{e:?}");
    w.add_tensor(&"y".repeat(63), GgmlType::F32, &[1]).unwrap();
    w.write_tensor_data(&[0; 4]).unwrap();
    let bytes = w.finish().unwrap();
    let g = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(g.tensors().map(|t| t.name.len()).collect::<Vec<_>>(), [63]);
}

#[test]
fn invalid_tensor_declarations() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[1]).unwrap();
    let cases: Vec<(&str, GgmlType, Vec<u64>)> = vec![
        ("", GgmlType::F32, vec![1]),
        ("t", GgmlType::F32, vec![1]),                   // duplicate
        ("five", GgmlType::F32, vec![1, 1, 1, 1, 1]),    // 5 dims
        ("q", GgmlType::Q8_0, vec![33]),                 // row not a multiple of 32
        ("k", GgmlType::Q4_K, vec![2, 128]),             // row not a multiple of 256
        ("neg", GgmlType::F32, vec![1 << 63]),           // negative as int64
        ("wrap", GgmlType::F32, vec![1 << 32, 1 << 32]), // element count wraps to 0
        ("big", GgmlType::F32, vec![1 << 62]),           // 2^64 bytes
    ];
    for (name, dtype, shape) in cases {
        let e = w.add_tensor(name, dtype, &shape).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Write(WriteError::InvalidTensor { name: n, .. }) if n == name),
            "{name}: {e:?}"
        );
    }
    // ggml's `ne` is int64 (gguf.cpp refuses a negative one): a dimension of 2^63 is refused
    // as such, also where its size in bytes would fit in 64 bits.
    for dtype in [GgmlType::F32, GgmlType::I8] {
        let e = w.add_tensor_ne("neg", dtype, &[1 << 63]).unwrap_err();
        assert!(e.to_string().contains("dimension larger than int64 in ne [9223372036854775808]"), "{e}");
    }
    // INT64_MAX itself is a dimension (gguf.cpp's overflow check, `INT64_MAX / ne[i] <
    // nelements`, lets it through): here beside a 0, a tensor of no bytes.
    let mut max = GgufWriter::new(Vec::new());
    max.add_tensor_ne("max", GgmlType::I8, &[0, i64::MAX as u64]).unwrap();
    max.write_tensor_data(&[]).unwrap();
    let mut b = B::le();
    b.header(3, 1, 0).tensor("max", &[0, i64::MAX as u64], gt::I8, 0).pad(32);
    assert_eq!(max.finish().unwrap(), b.buf);
    // The failed declarations left nothing behind.
    w.write_tensor_data(&[0; 4]).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().tensor_count(), 1);
}

#[test]
fn invalid_keys_and_alignment() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("a", 1u8).unwrap();
    for key in ["", "a", "ключ"] {
        let e = w.add_kv(key, 1u8).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::Write(WriteError::InvalidKey { key: k, .. }) if k == key),
            "{key:?}: {e:?}"
        );
    }
    let e = w.add_kv("general.alignment", 32u64).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Write(WriteError::BadAlignment { problem: AlignmentProblem::WrongType("u64"), offset: 38, .. })
        ),
        "{e:?}"
    );
    let e = w.add_kv("general.alignment", 0u32).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Write(WriteError::BadAlignment { problem: AlignmentProblem::Zero, .. })),
        "{e:?}"
    );
    let e = w.add_kv("general.alignment", 48u32).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Write(WriteError::BadAlignment { problem: AlignmentProblem::NotPowerOfTwo(48), .. })
        ),
        "{e:?}"
    );
    // The offset is where the pair would start in the output: after the 24-byte header and the
    // 14 bytes of `a` (8-byte length + 1 byte of key, 4 of type, 1 of value), named as such.
    assert_eq!((e.offset(), e.key()), (Some(38), Some("general.alignment")));
    assert_eq!(
        e.to_string(),
        "general.alignment is 48, not a power of two (the key/value pair would start at byte 38 of the output)"
    );
    assert_eq!(w.alignment(), 32);
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().kv_count(), 1);
}

fn nested(depth: usize) -> Array {
    let mut a = Array::U8(vec![7]);
    for _ in 1..depth {
        a = Array::Array(vec![a]);
    }
    a
}

#[test]
fn nesting_limit_on_write() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("ok", nested(32)).unwrap();
    let e = w.add_kv("deep", nested(33)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::TooDeep { key, limit: 32, .. }) if key == "deep"), "{e:?}");
    // The offset the refused array would have in the output, as the reader reports it: "deep"
    // alone at 24 (8 + 4 bytes of key, 4 of type) has its outer array at 40 and each level's
    // header (4-byte element type, 8-byte count) 12 bytes further in, so the 33rd starts at 424.
    let e = GgufWriter::new(Vec::new()).add_kv("deep", nested(33)).unwrap_err();
    assert_eq!((e.offset(), e.key()), (Some(424), Some("deep")));
    assert_eq!(
        e.to_string(),
        r#"arrays nested deeper than 32 levels for key "deep" (the array would start at byte 424 of the output)"#
    );
    let bytes = w.finish().unwrap();
    let g = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(g.get("ok").unwrap().to_owned_value(), Value::Array(nested(32)));
    assert!(g.get("deep").is_none());
}

#[test]
fn copy_tensor_data_exact_short_and_long() {
    let data: Vec<u8> = (0..12).collect();
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    w.copy_tensor_data(&data[..]).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().tensor_data_by_name("t").unwrap(), data);

    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    let e = w.copy_tensor_data(&data[..10]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { name, expected: 12, found: 10, .. }) if name == "t"),
        "{e:?}"
    );

    // A longer reader: the first byte past the declared size is noticed (found = 12 + 1).
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    let long: Vec<u8> = (0..100).collect();
    let e = w.copy_tensor_data(&long[..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { expected: 12, found: 13, .. })), "{e:?}");

    // A reader that yields in small pieces is fine.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(5);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("t", GgmlType::F32, &[3]).unwrap();
    w.copy_tensor_data(Trickle(&data)).unwrap();
    assert_eq!(w.finish().unwrap(), bytes);
}

/// Whether `r` is the writer's refusal after an error that left the output partly written (a
/// `Misuse` that says so, not another one such as "already finished").
fn poisoned<T: std::fmt::Debug>(r: gguf_serde::Result<T>) -> bool {
    matches!(
        r.map_err(Error::into_kind),
        Err(ErrorKind::Write(WriteError::Misuse { reason, .. })) if reason.contains("left the output partly written")
    )
}

#[test]
fn a_partly_written_tensor_poisons_the_writer() {
    // Two of four bytes went out before the short reader was noticed: the file can no longer be
    // completed correctly, so every later call must fail rather than write a corrupt file.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[4]).unwrap();
    w.add_tensor("b", GgmlType::I8, &[4]).unwrap();
    let e = w.copy_tensor_data(&[1u8, 2][..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { expected: 4, found: 2, .. })), "{e:?}");
    assert!(poisoned(w.copy_tensor_data(&[1u8, 2, 3, 4][..])));
    assert!(poisoned(w.write_tensor_data(&[5; 4])));
    assert!(poisoned(w.tensor_data_writer().map(|_| ())));
    assert!(poisoned(w.finish()));

    // All four bytes and one more: the four went out.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[4]).unwrap();
    w.copy_tensor_data(&[1u8, 2, 3, 4, 5][..]).unwrap_err();
    assert!(poisoned(w.copy_tensor_data(&[1u8, 2, 3, 4][..])));
    assert!(poisoned(w.finish()));

    // Pieces given through a `TensorDataWriter` dropped before its `finish` (an error or a panic
    // of the code making them): two of four bytes went out, the writer is failed
    // (`TensorDataWriter`'s docs).
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[4]).unwrap();
    w.add_tensor("b", GgmlType::I8, &[4]).unwrap();
    let mut piece = w.tensor_data_writer().unwrap();
    piece.write(&[1, 2]).unwrap();
    drop(piece);
    assert!(poisoned(w.write_tensor_data(&[1, 2, 3, 4])));
    assert!(poisoned(w.tensor_data_writer().map(|_| ())));
    assert!(poisoned(w.finish()));

    // Dropped before any piece: nothing went out, and the data can be given again. The file is
    // the one the byte builder writes.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[4]).unwrap();
    drop(w.tensor_data_writer().unwrap());
    w.write_tensor_data(&[1, 2, 3, 4]).unwrap();
    let mut b = B::le();
    b.header(3, 1, 0);
    b.tensor("a", &[4], gt::I8, 0);
    b.pad(32);
    b.raw(&[1, 2, 3, 4]);
    b.pad(32);
    assert_eq!(w.finish().unwrap(), b.bytes());
}

#[test]
fn a_refused_write_that_wrote_nothing_can_be_retried() {
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a", GgmlType::I8, &[4]).unwrap();
    w.write_tensor_data(&[1; 3]).unwrap_err();
    w.copy_tensor_data(&[][..]).unwrap_err();
    w.write_tensor_data(&[1, 2, 3, 4]).unwrap();
    let bytes = w.finish().unwrap();
    assert_eq!(Gguf::from_slice(&bytes).unwrap().tensor_data_by_name("a").unwrap(), [1, 2, 3, 4]);
}

/// Accepts `n` bytes, fails once, then accepts everything again (a transient error).
struct FailOnceAfter(usize, bool);

impl std::io::Write for FailOnceAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0 == 0 && !self.1 {
            self.1 = true;
            return Err(std::io::Error::other("disk full"));
        }
        let n = if self.1 { buf.len() } else { buf.len().min(self.0) };
        self.0 = self.0.saturating_sub(n);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_io_error_poisons_the_writer() {
    // Fails inside the header, inside tensor data and inside padding; part of the bytes went
    // out, so the file cannot be completed even though the output works again.
    for limit in [10, 100, 130] {
        let mut w = GgufWriter::new(FailOnceAfter(limit, false));
        w.add_kv("a", 7u32).unwrap();
        w.add_tensor("t", GgmlType::F32, &[8]).unwrap();
        w.add_tensor("u", GgmlType::F32, &[1]).unwrap();
        let first = w.write_tensor_data(&[0; 32]);
        assert!(matches!(first.as_ref().map_err(Error::kind), Err(ErrorKind::Io(_))), "{limit}: {first:?}");
        assert!(w.write_tensor_data(&[0; 32]).is_err(), "{limit}");
        assert!(w.write_tensor_data(&[0; 4]).is_err(), "{limit}");
        assert!(w.finish().is_err(), "{limit}");
    }
}

#[test]
fn padding_does_not_allocate_the_alignment() {
    use gguf_serde::format::MAX_ALIGNMENT;
    // The largest alignment (2^31, which ggml takes): the header padded to 2^31, one byte of
    // tensor data padded to 2^32, as ggml's `gguf_write_to_file` lays it out. 4 GiB of zeros go
    // to the counting sink in pieces of at most 4 KiB, none of them allocated.
    let (written, big) = largest_alloc(|| {
        let mut w = GgufWriter::new(Count::default());
        w.add_kv("general.alignment", MAX_ALIGNMENT).unwrap();
        w.add_tensor("t", GgmlType::I8, &[1]).unwrap();
        w.write_tensor_data(&[1]).unwrap();
        w.finish().unwrap().0
    });
    assert_eq!(written, 2 * u64::from(MAX_ALIGNMENT));
    assert!(big < 4096, "largest allocation {big} bytes");
}

/// The same through a file: [`GgufWriter::create`] (an `AtomicFile`, with direct I/O where the
/// file system takes it, which holds the bytes in an 8 MiB buffer) at an alignment of 32 MiB.
/// The padding streams through that buffer: no allocation near the alignment's size, and the
/// file is ggml's layout (data at 32 MiB, the tensor padded to 64 MiB).
#[test]
fn padding_to_a_file_does_not_allocate_the_alignment() {
    let align = 1u32 << 25;
    let dir = crate::common::temp_dir();
    let path = dir.path().join("aligned.gguf");
    let ((), big) = largest_alloc(|| {
        let mut w = GgufWriter::create(&path).unwrap();
        w.add_kv("general.alignment", align).unwrap();
        w.add_tensor("t", GgmlType::I8, &[3]).unwrap();
        w.write_tensor_data(&[1, 2, 3]).unwrap();
        w.commit().unwrap();
    });
    assert!(big <= (8 << 20) + (1 << 20), "largest allocation {big} bytes");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, 2 * u64::from(align));
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!((f.alignment(), f.data_offset()), (align, u64::from(align)));
    assert_eq!(f.tensor_data_by_name("t").unwrap(), [1, 2, 3]);
    let infos_end = f.tensor_infos_end() as usize;
    assert!(bytes[infos_end..align as usize].iter().all(|&b| b == 0));
    assert!(bytes[align as usize + 3..].iter().all(|&b| b == 0));
}

#[test]
fn rewriting_a_ggml_layout_file_is_byte_identical() {
    for big in [false, true] {
        let s = sample(big);
        let g = Gguf::from_slice(&s.bytes).unwrap();
        let opts = WriteOptions::new().with_endian(g.endian()).with_version(g.version());
        let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
        for kv in g.metadata() {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
        for t in g.tensors() {
            w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
        }
        for t in g.tensors() {
            w.copy_tensor_data(Cursor::new(g.tensor_data(&t).unwrap())).unwrap();
        }
        assert_eq!(w.finish().unwrap(), s.bytes, "big-endian: {big}");
    }
}

#[test]
fn rewriting_little_endian_as_big_endian_converts_values() {
    let s = sample(false);
    let g = Gguf::from_slice(&s.bytes).unwrap();
    let mut w = GgufWriter::with_options(Vec::new(), be()).unwrap();
    for kv in g.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    for t in g.tensors() {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in g.tensors() {
        w.write_tensor_data(g.tensor_data(&t).unwrap()).unwrap();
    }
    // Tensor data is copied as given; the sample's data is the same raw bytes in both orders.
    assert_eq!(w.finish().unwrap(), sample(true).bytes);
}

#[test]
fn rewriting_every_value_type_in_the_other_byte_order() {
    for (from, to, endian) in [(false, true, Endian::Big), (true, false, Endian::Little)] {
        let src = all_types(from, 3);
        let g = Gguf::from_slice(&src).unwrap();
        let opts = WriteOptions::new().with_endian(endian);
        let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
        for kv in g.metadata() {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
        for t in g.tensors() {
            w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
        }
        w.write_tensor_data(g.tensor_data_by_name("t").unwrap()).unwrap();
        let out = w.finish().unwrap();
        // Everything up to the tensor data is the hand-built file in the other order.
        let want = all_types(to, 3);
        let data = g.data_offset() as usize;
        // (The hand-built file has no padding after its last tensor; the writer adds it.)
        assert_eq!(out.len(), want.len().div_ceil(32) * 32);
        assert_eq!(out[..data], want[..data], "{endian:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic writing to a path

fn dir_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn existing(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let path = dir.join("model.gguf");
    let old = sample(false).bytes;
    std::fs::write(&path, &old).unwrap();
    (path, old)
}

#[test]
fn atomic_write_dropped_after_header_leaves_the_file_untouched() {
    let dir = crate::common::temp_dir();
    let (path, old) = existing(dir.path());
    let mut w = GgufWriter::create(&path).unwrap();
    w.add_kv("general.architecture", "new").unwrap();
    w.add_tensor("t", GgmlType::F32, &[1 << 19]).unwrap(); // 2 MiB, past the 1 MiB write buffer
    w.write_header().unwrap();
    w.write_header().unwrap_err();
    // 2 MiB - 1 bytes reach the temporary file before the short reader is noticed.
    let short = vec![0x5a; (2 << 20) - 1];
    let e = w.copy_tensor_data(&short[..]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { expected: 2097152, found: 2097151, .. })),
        "{e:?}"
    );
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), old);
    assert_eq!(dir_entries(dir.path()), ["model.gguf"]);
}

#[test]
fn atomic_write_size_mismatch_then_commit_fails_and_leaves_the_file_untouched() {
    let dir = crate::common::temp_dir();
    let (path, old) = existing(dir.path());
    let mut w = GgufWriter::create(&path).unwrap();
    w.add_tensor("a", GgmlType::F32, &[4]).unwrap();
    w.add_tensor("b", GgmlType::F32, &[4]).unwrap();
    w.write_tensor_data(&[1; 16]).unwrap();
    let e = w.write_tensor_data(&[1; 15]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::SizeMismatch { .. })));
    let e = w.commit().unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Write(WriteError::Misuse { .. })), "{e:?}");
    assert_eq!(std::fs::read(&path).unwrap(), old);
    assert_eq!(dir_entries(dir.path()), ["model.gguf"]);
}

#[test]
fn atomic_write_success_replaces_the_file() {
    let dir = crate::common::temp_dir();
    let (path, old) = existing(dir.path());
    fn build<W: std::io::Write>(w: &mut GgufWriter<W>) {
        w.add_kv("general.architecture", "new").unwrap();
        w.add_tensor("t", GgmlType::I8, &[5]).unwrap();
        w.write_tensor_data(b"hello").unwrap();
    }
    let mut w = GgufWriter::create(&path).unwrap();
    build(&mut w);
    // Until commit, the old file is in place.
    assert_eq!(std::fs::read(&path).unwrap(), old);
    w.commit().unwrap();
    let mut m = GgufWriter::new(Vec::new());
    build(&mut m);
    let new = std::fs::read(&path).unwrap();
    assert_eq!(new, m.finish().unwrap());
    assert_eq!(Gguf::open(&path).unwrap().get("general.architecture"), Some(ValueRef::String("new".into())));
    assert_eq!(dir_entries(dir.path()), ["model.gguf"]);

    // A file that did not exist is created.
    let fresh = dir.path().join("fresh.gguf");
    let mut w = GgufWriter::create_with_options(&fresh, be()).unwrap();
    w.add_kv("x", 1u8).unwrap();
    w.commit().unwrap();
    assert_eq!(Gguf::open(&fresh).unwrap().endian(), Endian::Big);
    assert_eq!(dir_entries(dir.path()), ["fresh.gguf", "model.gguf"]);
}

/// Arrays nested `MAX_DEPTH` levels deep, the most a file may hold (the parser reads them, one
/// level more is refused), are copied by `add_kv_ref` as they are stored: the output is the byte
/// builder's file, padded after the (empty) tensor infos as ggml pads it.
#[test]
fn copying_arrays_nested_to_the_limit_keeps_their_bytes() {
    let mut b = B::le();
    b.header(3, 0, 1).kv("deep", ty::ARRAY);
    for _ in 1..gguf_serde::format::MAX_DEPTH {
        b.arr(ty::ARRAY, 1);
    }
    b.arr(ty::U8, 1).u8(7);
    let g = Gguf::from_slice(&b.buf).unwrap();
    let mut w = GgufWriter::new(Vec::new());
    for kv in g.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    assert_eq!(w.finish().unwrap(), b.pad(32).buf);
}

/// `WriteOptions::like` gives back the options a file was written with: its version and byte
/// order, and the padding after the tensor infos exactly when the file has it (always with
/// tensors; for a metadata-only file, as it was written), so a file written again is the same.
#[test]
fn options_like_a_file_are_the_ones_it_was_written_with() {
    let le = WriteOptions::default();
    let v2 = |mut o: WriteOptions| {
        o.version = 2;
        o
    };
    for opts in [
        le,
        le.with_pad_empty_data(false),
        be(),
        be().with_pad_empty_data(false),
        v2(le),
        v2(le.with_pad_empty_data(false)),
    ] {
        for tensors in [false, true] {
            let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
            w.add_kv("general.alignment", 64u32).unwrap();
            w.add_kv("k", "v").unwrap();
            if tensors {
                w.add_tensor("t", GgmlType::F32, &[2]).unwrap();
                w.write_tensor_data(&[0u8; 8]).unwrap();
            }
            let bytes = w.finish().unwrap();
            let g = Gguf::from_slice(&bytes).unwrap();
            // With tensors the padding is there whatever was asked (the data section is aligned).
            let mut want = opts;
            want.pad_empty_data = opts.pad_empty_data || tensors;
            assert_eq!(WriteOptions::like(&g), want, "{opts:?}, tensors {tensors}");
        }
    }
}
