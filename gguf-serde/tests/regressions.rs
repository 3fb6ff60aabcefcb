//! One test per input the fuzzers (`fuzz/`) found, with the input inline as hex and the date it
//! was found. Resource findings (allocation in proportion to a claimed count) are in
//! `resources.rs` (`count_claimed_over_a_large_file_does_not_reserve_memory_for_it`).

use std::io::Cursor;

use gguf_serde::{Error, ErrorKind, Gguf};
use gguf_test_support::{unhex, Count};

/// Fuzz target `open`, 2026-11-30: a tensor of 0 bytes (`ne = [0]`) whose data starts right at
/// the end of the tensor infos (alignment 1). `from_reader` holds the file up to there, so its
/// `tensor_data` gave the empty slice for this tensor but `DataNotLoaded` for a 0-byte tensor a
/// little further on: the answer depended on an offset. Now a 0-byte tensor has the empty slice
/// from every source, and any other tensor of a metadata-only file is `DataNotLoaded`.
#[test]
fn zero_byte_tensor_data_is_empty_from_every_source() {
    // "GGUF" v3, 2 tensors, 1 KV: general.alignment = 1 (u32); tensor "a": 1 dim [0], F32, offset
    // 0; tensor "b": 1 dim [0], F32, offset 1; then 1 byte of data.
    let bytes = unhex(
        "47475546 03000000 0200000000000000 0100000000000000
         1100000000000000 67656e6572616c2e616c69676e6d656e74 04000000 01000000
         0100000000000000 61 01000000 0000000000000000 00000000 0000000000000000
         0100000000000000 62 01000000 0000000000000000 00000000 0100000000000000
         ee",
    );
    let full = Gguf::from_slice(&bytes).unwrap();
    let meta = Gguf::from_reader(Cursor::new(&bytes)).unwrap();
    assert_eq!(meta.bytes().len() as u64, full.tensor_infos_end());
    for name in ["a", "b"] {
        let t = full.tensor(name).unwrap();
        assert_eq!(t.nbytes, 0);
        assert_eq!(full.tensor_data(&t).unwrap(), &[] as &[u8]);
        assert_eq!(meta.tensor_data(&meta.tensor(name).unwrap()).unwrap(), &[] as &[u8], "{name}");
        assert_eq!(meta.tensor_data_by_name(name).unwrap(), &[] as &[u8]);
        assert_eq!(full.tensor_data_borrowed(name).unwrap(), &[] as &[u8]);
    }
    assert_eq!(full.tensor("b").unwrap().data_offset, full.tensor_infos_end() + 1);
}

/// The other side of the above: a tensor with bytes is never available from a metadata-only file.
#[test]
fn non_empty_tensor_data_is_not_loaded_from_a_reader() {
    let bytes = unhex(
        "47475546 03000000 0100000000000000 0100000000000000
         1100000000000000 67656e6572616c2e616c69676e6d656e74 04000000 01000000
         0100000000000000 61 01000000 0100000000000000 18000000 0000000000000000
         ee",
    );
    let meta = Gguf::from_reader(Cursor::new(&bytes)).unwrap();
    let t = meta.tensor("a").unwrap();
    assert_eq!((t.nbytes, t.dtype.name()), (1, "I8"));
    assert!(
        matches!(meta.tensor_data(&t).map_err(Error::into_kind), Err(ErrorKind::DataNotLoaded { name, .. }) if name == "a")
    );
    assert_eq!(Gguf::from_slice(&bytes).unwrap().tensor_data_by_name("a").unwrap(), &[0xee]);
}

/// Found by the fuzz target `serde` (2026-12-01): 57 bytes, version 3, no tensors, one pair
/// `general.alignment = 2147483648` (UINT32, a power of two). Rewriting it (`gguf set`, `to_vec`
/// of its metadata) padded the empty data section with 2 GiB of zeros; issue 15 then refused
/// every alignment above 64 KiB. ggml's `gguf.cpp` and gguf-py take every non-zero power of two
/// (issue 28: no stricter than the format's consumer), so the file is read as ggml reads it:
/// alignment 2^31, data offset the end of the tensor infos (`gguf_get_data_offset` of a file
/// without tensors; ggml's own reading of it: `gguf-cli/tests/cli/outputs_and_odd_files.rs`).
/// Writing it back costs what its padding costs: none when copied like the file (which has none),
/// 2^31 bytes in all when padded as ggml's writer pads it, streamed (`suite/writer.rs` checks
/// that no buffer of that size is allocated).
#[test]
fn alignment_of_two_gib_is_read_as_ggml_reads_it() {
    use std::collections::BTreeMap;

    use gguf_serde::format::MAX_ALIGNMENT;
    use gguf_serde::ops::edit::{apply, Edit};
    use gguf_serde::{GgufWriter, Value, ValueRef, WriteOptions};

    let bytes = unhex(
        "47475546 03000000 0000000000000000 0100000000000000
         1100000000000000 67656e6572616c2e616c69676e6d656e74 04000000 00000080",
    );
    assert_eq!(bytes.len(), 57);
    assert_eq!(MAX_ALIGNMENT, 1 << 31);
    fn check<S: gguf_serde::Source>(f: &Gguf<S>) {
        assert_eq!(f.alignment(), 1 << 31);
        assert_eq!((f.tensor_infos_end(), f.data_offset(), f.file_len()), (57, 57, 57));
        assert!(!WriteOptions::like(f).pad_empty_data, "the file has no padding");
    }
    check(&Gguf::from_slice(&bytes).unwrap());
    check(&Gguf::from_reader(Cursor::new(&bytes)).unwrap());
    // The serde reader takes the same pair through the same parser.
    let want = BTreeMap::from([("general.alignment".to_owned(), Value::U32(1 << 31))]);
    assert_eq!(gguf_serde::from_slice::<BTreeMap<String, Value>>(&bytes).unwrap(), want);
    assert_eq!(gguf_serde::from_reader::<BTreeMap<String, Value>, _>(&bytes[..]).unwrap(), want);

    // Copied like the file: byte-identical, no padding.
    let f = Gguf::from_slice(&bytes).unwrap();
    let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::like(&f)).unwrap();
    for kv in f.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    assert_eq!(w.alignment(), 1 << 31);
    assert_eq!(w.finish().unwrap(), bytes);
    // Padded as ggml's `gguf_write_to_file` pads it: to 2^31 bytes, the file first.
    let mut w = GgufWriter::new(Count::default());
    w.add_kv("general.alignment", 1u32 << 31).unwrap();
    assert_eq!(w.finish().unwrap().0, 1 << 31);
    // The serde writer and an edit setting it on a file that has none write the same.
    let mut count = Count::default();
    gguf_serde::to_writer(&want, &mut count).unwrap();
    assert_eq!(count.0, 1 << 31);
    let empty = unhex("47475546 03000000 0000000000000000 0000000000000000");
    let file = Gguf::from_slice(&empty).unwrap();
    let edits = [Edit::Set { key: "general.alignment".into(), value: Value::U32(1 << 31) }];
    let out = apply(&file, &edits, GgufWriter::new(Count::default()), |w, _| w.finish()).unwrap();
    assert_eq!(out.0, 1 << 31);
    let out = apply(&file, &edits, GgufWriter::with_options(Vec::new(), WriteOptions::like(&file)).unwrap(), |w, _| {
        w.finish()
    })
    .unwrap();
    assert_eq!(out, bytes, "the edit, unpadded like its input: the 57 bytes");
    assert_eq!(Gguf::from_slice(&out).unwrap().get("general.alignment"), Some(ValueRef::U32(1 << 31)));

    // Every power of two is taken by the writer; its padding follows it.
    for shift in 0..32 {
        let mut w = GgufWriter::new(Count::default());
        w.add_kv("general.alignment", 1u32 << shift).unwrap();
        assert_eq!(w.alignment(), 1 << shift);
        assert_eq!(w.finish().unwrap().0, 57u64.next_multiple_of(1 << shift), "2^{shift}");
    }
}

/// The hostile side of the same alignment: a tensor-carrying file declaring 2^31 has its data
/// section at 2^31 (ggml's reader seeks there and fails: "failed to seek to beginning of data
/// section"), past the end of a small file. Refused as ggml refuses it, with a typed error naming
/// the tensor and where its data would start, without reading or allocating up to there.
#[test]
fn tensor_data_aligned_past_the_end_is_refused() {
    use gguf_serde::FormatError;

    // The 57-byte file with one tensor "t" (1 dim [1], F32, offset 0) and no data.
    let bytes = unhex(
        "47475546 03000000 0100000000000000 0100000000000000
         1100000000000000 67656e6572616c2e616c69676e6d656e74 04000000 00000080
         0100000000000000 74 01000000 0100000000000000 00000000 0000000000000000",
    );
    assert_eq!(bytes.len(), 90);
    for e in [Gguf::from_slice(&bytes).unwrap_err(), Gguf::from_reader(Cursor::new(&bytes)).unwrap_err()] {
        assert!(
            matches!(e.kind(), ErrorKind::Format(FormatError::TensorOutOfBounds { name, start, end, file_len, .. })
                if name == "t" && *start == 1 << 31 && *end == (1 << 31) + 4 && *file_len == 90),
            "{e:?}"
        );
        assert_eq!(e.tensor(), Some("t"));
    }
}

/// Fuzz target `accessors` with overflow checks on, 2026-12-01: a tensor whose stored dims are
/// `[0, 1599506219008, 3703647743558811652, 687865906]`. The product of the last three overflows
/// `u64`, but a zero dim makes the tensor empty, and both this reader and ggml's (its
/// `INT64_MAX / ne[i]` checks compare against a product that is already 0) accept it. The
/// harness multiplied the dims itself and overflowed (a harness mistake, found only because the
/// fuzz build now has overflow checks); the library's sizes were right: 0 elements, 0 bytes.
#[test]
fn zero_dim_with_overflowing_other_dims_is_an_empty_tensor() {
    let bytes = unhex(
        "47475546030000000100000000000000000000000000000000000000000000000400000000000000000000000000006a7401000004000000000066333200002900000000000000000000000000000000000000000000000000000001000000000000007401000000000000b7bfc5cd000100",
    );
    let f = Gguf::from_slice(&bytes).unwrap();
    let t = f.tensors().next().unwrap();
    assert_eq!(t.ne().dims().to_vec(), [0, 1_599_506_219_008, 3_703_647_743_558_811_652, 687_865_906]);
    assert_eq!(&*t.shape, &[687_865_906, 3_703_647_743_558_811_652, 1_599_506_219_008, 0]);
    assert_eq!((t.dtype.name(), t.n_elements, t.nbytes), ("F32", 0, 0));
    assert_eq!(f.tensor_data(&t).unwrap(), &[] as &[u8]);
}

/// Fuzz target `differential` (against ggml's reader), 2026-12-04: a tensor stored with dims
/// `[3377699720527872, 0, 14831058944]` (F16). It has 0 elements, and ggml's GGUF reader accepts
/// its shape, but ggml then creates the tensor with `ggml_new_tensor`, which skips dims of 0 and
/// 1 and asserts `INT64_MAX / ne[i] > product`: 3377699720527872 × 14831058944 overflows, and
/// ggml aborts the process (`GGML_ASSERT(INT64_MAX / ne[i] > current_nelements) failed`, seen
/// with `tests/harness/ggml_read` on this file; kept as `fuzz/ggml-aborts/zero-dim-overflowing-product`).
/// This reader accepted it as an empty tensor; it now refuses it as ggml cannot load it.
#[test]
fn zero_dim_does_not_hide_a_product_ggml_aborts_on() {
    let bytes = unhex(
        "474755460300000001000000000000000000000000000000010000000000000074030000000000000000000c00000000000000000000000074030000000100000000000000000000000001000000000000007403000000010000000000743700",
    );
    let e = Gguf::from_slice(&bytes).unwrap_err();
    match e.kind() {
        ErrorKind::Format(gguf_serde::FormatError::SizeOverflow { name, ne, .. }) => {
            assert_eq!((name.as_str(), ne.as_slice()), ("t", &[3_377_699_720_527_872, 0, 14_831_058_944][..]));
        }
        k => panic!("expected SizeOverflow, got {k:?}"),
    }
}

/// Fuzz target `differential` (against ggml's reader), 2026-12-04: two F32 tensors with a dim of
/// 0, the first stored as `[3238002688, 1677721600, 0, 0]`. Its row of 3238002688 × 4 bytes times
/// 1677721600 overflows `u64`, and this reader refused the file (`SizeOverflow`) although the
/// tensor is empty. ggml's reader accepts it: `tests/harness/ggml_read` prints data offset 192,
/// both tensors at offset 0 with size 0 (`ggml_nbytes` is 0 when a dim is 0, whatever the others).
#[test]
fn zero_dim_makes_zero_bytes_before_the_row_size_overflows() {
    let bytes = unhex(
        "474755460300000002000000000000000000000000000000110000000000000067656e7772616c2e616c69676e6d656e7404000000000000c100000000000000640000000000000000000000000000000000000000000000000000000000000000110000000000000065656e7772616c2e616c69676e6d656e740400000000000000000000000000000000000064000000000000000000000000000000000000000000000000000000000000676e000001000000000000610100000800fdffffff",
    );
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.data_offset(), 192);
    let t: Vec<_> = f.tensors().map(|t| (t.name.as_bytes(), t.relative_offset, t.nbytes, t.n_elements)).collect();
    assert_eq!(t, [(&b"genwral.alignment"[..], 0, 0, 0), (&b"eenwral.alignment"[..], 0, 0, 0)]);
    let first = f.tensors().next().unwrap();
    assert_eq!(first.ne().dims().to_vec(), [3_238_002_688, 1_677_721_600, 0, 0]);
}

/// Found by a new user: `tensor_data` took a `TensorInfo` of another file and returned 1,024
/// unrelated bytes of this one (the info's offset and size were inside it). An info that is not
/// one of this file's is now `NotFound`, named; the file's own infos read as before.
#[test]
fn tensor_data_refuses_an_info_of_another_file() {
    use gguf_serde::{GgmlType, GgufWriter};
    let file = |name: &str, fill: u8| {
        let mut w = GgufWriter::new(Vec::new());
        w.add_tensor(name, GgmlType::F32, &[4, 64]).unwrap();
        w.write_tensor_data(&[fill; 4 * 64 * 4]).unwrap();
        w.finish().unwrap()
    };
    let (a, b) = (file("a.weight", 1), file("b.weight", 2));
    let (a, b) = (Gguf::from_slice(&a).unwrap(), Gguf::from_slice(&b).unwrap());
    let ta = a.tensor_at(0).unwrap();
    assert_eq!(a.tensor_data(&ta).unwrap(), &[1u8; 1024][..]);
    let e = b.tensor_data(&ta).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::NotFound { what: "tensor of this file", name, .. } if name == "a.weight"),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "no tensor of this file named \"a.weight\"");
    // The same name with another shape is not this file's tensor either.
    let mut w = GgufWriter::new(Vec::new());
    w.add_tensor("a.weight", GgmlType::F32, &[2, 64]).unwrap();
    w.write_tensor_data(&[3u8; 2 * 64 * 4]).unwrap();
    let c = w.finish().unwrap();
    let c = Gguf::from_slice(&c).unwrap();
    assert!(matches!(c.tensor_data(&ta).unwrap_err().kind(), ErrorKind::NotFound { .. }));
}
