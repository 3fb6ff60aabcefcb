//! One test per input the fuzzers (`fuzz/`) found, with the input inline as hex and the date it
//! was found. Resource findings (allocation in proportion to a claimed count) are in
//! `resources.rs` (`count_claimed_over_a_large_file_does_not_reserve_memory_for_it`).

use std::io::Cursor;

use gguf_serde::{Error, ErrorKind, Gguf};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

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
