//! Test support of the hermetic tests: everything of `gguf-test-support` (the byte builder
//! [`B`], the seeds, the counting allocator, installed here in every binary that uses this
//! module, temporary folders, deadlines, [`skip`], the range server), and the helpers that take
//! gguf-serde's own types, which that crate cannot have (it does not depend on gguf-serde).
#![allow(dead_code, unused_imports)]

pub use gguf_test_support::*;

gguf_test_support::count_allocations!();

/// Whether `e` is about the header or the key/value pairs, which a read that stops after the
/// pairs (serde's `from_reader`) also checks; the tensor count, tensor infos and tensor data it
/// does not read.
pub fn in_kv_block(e: &gguf_serde::Error) -> bool {
    use gguf_serde::{FormatError as F, Item};
    match e.as_format() {
        Some(F::Truncated { item, .. } | F::TooLong { item, .. } | F::InvalidUtf8 { item, .. }) => {
            !matches!(item, Item::TensorCount | Item::TensorName | Item::Dims)
        }
        Some(
            F::BadMagic { .. }
            | F::UnsupportedVersion { .. }
            | F::EmptyKey { .. }
            | F::DuplicateKey { .. }
            | F::UnknownValueType { .. }
            | F::TooDeep { .. }
            | F::BadAlignment { .. },
        ) => true,
        _ => false,
    }
}

/// The read-aheads [`check_every_source`] reads with: 0 makes the parser stop and resume at
/// every item; `usize::MAX` reads everything at once.
pub const READ_AHEADS: [usize; 5] = [0, 1, 7, 4096, usize::MAX];

/// Opens `bytes` every way the crate reads a file and asserts that each gives the answer of
/// `Gguf::from_slice` (error for error, by `Debug`; or the same pairs, tensor infos and
/// metadata bytes): `from_reader` of a `Read + Seek` with each of `read_aheads`, and the key/value
/// block from a plain `Read` of unknown length (whole, and trickling a few bytes per read with
/// each read-ahead), which agrees with the slice on everything up to the end of the pairs.
pub fn check_every_source(bytes: &[u8], read_aheads: &[usize]) {
    use gguf_serde::{Gguf, Item};
    use std::io::Cursor;
    let slice = Gguf::from_slice(bytes);
    for &ra in read_aheads {
        let r = Gguf::from_reader_in_pieces(Cursor::new(bytes), ra);
        match (&slice, &r) {
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "read-ahead {ra}"),
            (Ok(a), Ok(b)) => {
                assert_eq!(a.metadata().collect::<Vec<_>>(), b.metadata().collect::<Vec<_>>(), "read-ahead {ra}");
                assert_eq!(a.tensors().collect::<Vec<_>>(), b.tensors().collect::<Vec<_>>(), "read-ahead {ra}");
                assert_eq!(b.bytes(), &bytes[..a.tensor_infos_end() as usize], "read-ahead {ra}");
            }
            _ => panic!("read-ahead {ra}: from_slice {slice:?}, from_reader {r:?}"),
        }
    }
    let whole = Gguf::kv_block_from_reader(bytes, usize::MAX);
    for (i, &ra) in read_aheads.iter().enumerate() {
        let k = Gguf::kv_block_from_reader(Trickle { bytes, step: 1 + i % 3 }, ra);
        match (&whole, &k) {
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "plain read, read-ahead {ra}"),
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    format!("{:?}", a.metadata().collect::<Vec<_>>()),
                    format!("{:?}", b.metadata().collect::<Vec<_>>())
                );
                assert_eq!(a.bytes(), b.bytes(), "plain read, read-ahead {ra}");
            }
            _ => panic!("plain read, read-ahead {ra}: whole {whole:?}, in pieces {k:?}"),
        }
    }
    match (&slice, &whole) {
        (Ok(g), Ok(k)) => {
            assert_eq!(
                format!("{:?}", g.metadata().collect::<Vec<_>>()),
                format!("{:?}", k.metadata().collect::<Vec<_>>())
            );
            // Exactly the bytes up to the end of the pairs (the first tensor info).
            let end = g.tensors().next().map_or(g.tensor_infos_end(), |t| t.info_offset);
            assert_eq!((k.bytes(), k.tensor_infos_end(), k.tensor_count()), (&bytes[..end as usize], end, 0));
        }
        (Err(s), Err(k)) => {
            let tensor_count =
                matches!(s.as_format(), Some(gguf_serde::FormatError::TooLong { item: Item::TensorCount, .. }));
            assert!(
                tensor_count || format!("{s:?}") == format!("{k:?}"),
                "from_slice {s:?}, pairs from a plain read {k:?}"
            );
        }
        (Err(s), Ok(_)) => assert!(!in_kv_block(s), "from_slice {s:?}, but the pairs read from a plain read"),
        (Ok(_), Err(k)) => panic!("from_slice opens the file, the pairs from a plain read fail: {k:?}"),
    }
}
