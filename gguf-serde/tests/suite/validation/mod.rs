//! Validation of the container: one hand-built file per error case (exact variant, fields and, for
//! the common ones, message), files cut or corrupted anywhere, and valid edge cases.
//!
//! Files are built byte by byte with `common::B`, never with the crate's writer. Offsets in the
//! assertions are computed from the layout of ggml `docs/gguf.md` (a 24-byte header, KV pairs of
//! u64 key length + key + u32 type + value, tensor infos of u64 name length + name + u32 n_dims +
//! u64 dims + u32 type + u64 offset). One file per section: the header and counts, keys and
//! values, tensor infos, files cut or corrupted anywhere, valid edge cases, other sources.

mod cut_and_corrupt;
mod edge_cases;
mod header;
mod keys_and_values;
mod sources;
mod tensor_infos;

use std::io::Cursor;

use crate::common;
use crate::common::{all_types, gt, largest_alloc, sample, ty, B};
use gguf_serde::{AlignmentProblem, Item};
use gguf_serde::{Endian, Error, ErrorKind, FormatError, GgmlType, Gguf, ValueRef, ValueType};

// The helpers of every section.

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
