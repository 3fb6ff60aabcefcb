//! Tensor infos: names, dims, element counts, types, offsets, overlaps.

use super::*;

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

    // Overlapping the tensor that ends furthest, which is not the first: a (0..32), b (32..96),
    // c (64..96) inside b. Infos end at 24 + 3 × 33 = 123, data at 128.
    let mut b = B::le();
    b.header(3, 3, 0)
        .tensor("a", &[8], gt::F32, 0)
        .tensor("b", &[16], gt::F32, 32)
        .tensor("c", &[8], gt::F32, 64)
        .pad(32)
        .data(96, 0);
    let e = parse_err(&b.buf);
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::TensorsOverlap { first, second, second_start: 192, first_end: 224, .. })
            if first == "b" && second == "c"),
        "{e:?}"
    );

    // A tensor of no bytes overlaps nothing, even at an offset inside another tensor.
    let mut b = B::le();
    b.header(3, 2, 0).tensor("a", &[16], gt::F32, 0).tensor("z", &[0], gt::F32, 32).pad(32).data(64, 0);
    let g = Gguf::from_slice(&b.buf).unwrap();
    assert_eq!((g.tensor("z").unwrap().data_offset, g.tensor_data_by_name("z").unwrap().len()), (96 + 32, 0));
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
