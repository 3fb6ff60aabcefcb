//! Format facts: what the GGUF spec and ggml fix, independent of any file.
//!
//! - [`GgmlType`]: every ggml tensor type, with its block size and bytes per block
//!   (ggml `ggml.h` `enum ggml_type`, `ggml.c` `type_traits`);
//! - [`ValueType`]: the 13 metadata value types (`gguf_metadata_value_type`);
//! - [`Shape`] (canonical, outermost first) and [`Ne`] (stored, fastest first): a tensor's dims
//!   in its two orders, as distinct types;
//! - [`GgufStr`]: a key, string value or tensor name as stored (bytes, UTF-8 or not), and its
//!   reversible escaped text ([`GgufStr::escaped`], [`GgufStr::unescape`], [`UnescapeError`]);
//! - [`Endian`]: a file's byte order, and where it is detected ([`Endian::detect`]);
//! - the limits the reader and the writer share ([`MAX_DEPTH`], [`MAX_DIMS`],
//!   [`MAX_TENSOR_NAME`], [`DEFAULT_ALIGNMENT`], [`MAX_ALIGNMENT`]) and [`MAX_USEFUL_ALIGNMENT`];
//! - [`keys`]: the standard metadata keys (every key gguf-py defines), each with the GGUF type
//!   llama.cpp reads it as, and [`keys::lookup`] to resolve a concrete key.
//!
//! Spec: ggml `docs/gguf.md`, "File Structure".

// Sizes computed from a file's dims: every operation is checked, or says why it cannot overflow.
#![deny(clippy::arithmetic_side_effects)]

mod dtype;
mod error;
mod gstr;
pub mod keys;
mod shape;
mod value_type;

pub use dtype::{GgmlType, UnknownTypeName, REMOVED_TYPE_IDS};
pub use error::AlignmentProblem;
pub(crate) use gstr::Quoted;
pub use gstr::{shown_path, GgufStr, UnescapeError, UnescapeProblem};
pub use shape::{Ne, Shape};
pub use value_type::ValueType;

/// `n` and the noun `one`, plural but for 1: `1 byte`, `0 bytes`, `2 dimensions`; the counts of
/// the crate's messages.
pub(crate) fn count<N: Copy + std::fmt::Display + TryInto<u64>>(n: N, one: &str) -> String {
    format!("{n} {one}{}", if n.try_into().ok() == Some(1) { "" } else { "s" })
}

/// Default `general.alignment`, in bytes (the spec's and ggml's `GGUF_DEFAULT_ALIGNMENT`).
pub const DEFAULT_ALIGNMENT: u32 = 32;

/// Largest `general.alignment`, in bytes: 2^31, the largest power of two a UINT32 holds. ggml's
/// `gguf.cpp` and gguf-py's `GGUFReader` / `GGUFWriter.add_custom_alignment` accept any non-zero
/// power of two, and so does this crate, on read and on write ([`AlignmentProblem`] lists what
/// is refused).
///
/// Alignment exists so that tensor data can be mapped and loaded at aligned addresses: ggml and
/// gguf-py write 32 unless told otherwise, and the largest value with a use is a memory page
/// ([`MAX_USEFUL_ALIGNMENT`]). A larger one costs nothing to read, but its padding is paid by
/// whoever writes the file: up to `alignment - 1` zero bytes after the tensor infos and after
/// each tensor (issue 15: a 57-byte file without tensors declaring 2^31, rewritten with the
/// padding ggml's writer adds, is 2 GiB of zeros). The writer writes padding as a stream of
/// zeros in pieces of at most 4 KiB, never a buffer of the padding's size; a file copied with
/// [`WriteOptions::like`](crate::WriteOptions::like) gets padding after empty tensor infos only
/// if it had it; `gguf validate` warns about an alignment above [`MAX_USEFUL_ALIGNMENT`].
pub const MAX_ALIGNMENT: u32 = 1 << 31;

/// The largest alignment with a use, in bytes: 64 KiB (2^16), the largest memory page of the
/// platforms ggml runs on (4 KiB on x86-64, 16 or 64 KiB on arm64 and ppc64le kernels). Not a
/// limit: a larger alignment (up to [`MAX_ALIGNMENT`]) is read and written, as ggml does, but
/// only makes the padding a rewrite writes larger; `gguf validate` warns about one.
pub const MAX_USEFUL_ALIGNMENT: u32 = 1 << 16;

/// What is wrong with a UINT32 `general.alignment` of `a`, if anything: the one rule the reader
/// and the writer apply, ggml's (`gguf.cpp`: a non-zero power of two; every one a UINT32 holds is
/// at most [`MAX_ALIGNMENT`]).
pub(crate) fn alignment_problem(a: u32) -> Option<AlignmentProblem> {
    if a == 0 {
        Some(AlignmentProblem::Zero)
    } else if !a.is_power_of_two() {
        Some(AlignmentProblem::NotPowerOfTwo(a))
    } else {
        None
    }
}

/// What is wrong with a `general.alignment` stored with the type named `type_name`, whose value
/// is `value` when that type is UINT32 (`None` for any other type): [`AlignmentProblem::WrongType`]
/// for another type, else [`alignment_problem`]. The rule of the writer, the edits and
/// llama-quantize's `--override-kv` alike.
pub(crate) fn alignment_value_problem(type_name: &'static str, value: Option<u32>) -> Option<AlignmentProblem> {
    match value {
        None => Some(AlignmentProblem::WrongType(type_name)),
        Some(a) => alignment_problem(a),
    }
}

/// Deepest nesting of arrays of arrays accepted on read and write: an array whose elements are
/// arrays is depth 2; [`MAX_DEPTH`] levels are fine, one more is
/// [`FormatError::TooDeep`](crate::FormatError::TooDeep).
pub const MAX_DEPTH: usize = 32;
/// Most dimensions a tensor may have (ggml's `GGML_MAX_DIMS`).
pub const MAX_DIMS: usize = 4;
/// Longest tensor name accepted on read, in bytes (the spec's limit). The writer accepts at most
/// `MAX_TENSOR_NAME - 1`, since ggml keeps names in a 64-byte buffer with a NUL.
pub const MAX_TENSOR_NAME: u64 = 64;

/// Byte order of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Endian {
    /// Little-endian, the usual GGUF.
    #[default]
    Little,
    /// Big-endian (version 3 allows it; detected from the byte-swapped version field).
    Big,
}

impl Endian {
    /// The version and byte order of a file from its version field read as little-endian
    /// (offset 4). A value whose low 16 bits are zero (and which is not zero) is a byte-swapped
    /// small version: the file is big-endian. The one place the crate decides a file's byte order.
    pub fn detect(raw_version_le: u32) -> (u32, Endian) {
        if raw_version_le & 0xffff == 0 && raw_version_le != 0 {
            (raw_version_le.swap_bytes(), Endian::Big)
        } else {
            (raw_version_le, Endian::Little)
        }
    }

    /// `"little"` or `"big"`.
    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ggml's `gguf.cpp` refuses a `general.alignment` of 0 or one that is not a power of two,
    /// and takes every other UINT32 (up to 2^31): so does ours.
    #[test]
    fn alignment_rules() {
        assert_eq!((MAX_ALIGNMENT, MAX_USEFUL_ALIGNMENT), (1 << 31, 65536));
        assert_eq!(DEFAULT_ALIGNMENT, 32);
        assert_eq!(alignment_problem(0), Some(AlignmentProblem::Zero));
        for a in [3, 24, 33, 65535, 65537, (1 << 31) + 1, (1 << 31) - 1, u32::MAX] {
            assert_eq!(alignment_problem(a), Some(AlignmentProblem::NotPowerOfTwo(a)), "{a}");
        }
        for a in (0..32).map(|s| 1u32 << s) {
            assert_eq!(alignment_problem(a), None, "{a}");
        }
    }

    /// `gguf.cpp` takes a version whose low 16 bits are zero as written in the other byte order.
    #[test]
    fn byte_order_from_the_version_field() {
        assert_eq!(Endian::detect(3), (3, Endian::Little));
        assert_eq!(Endian::detect(2), (2, Endian::Little));
        assert_eq!(Endian::detect(0x0300_0000), (3, Endian::Big));
        assert_eq!(Endian::detect(0x0001_0000), (256, Endian::Big));
        assert_eq!(Endian::detect(0), (0, Endian::Little));
        assert_eq!(Endian::detect(0x0001_0001), (0x0001_0001, Endian::Little));
        assert_eq!((Endian::Little.name(), Endian::Big.name()), ("little", "big"));
        assert_eq!(Endian::default(), Endian::Little);
        assert_eq!((MAX_DEPTH, MAX_DIMS, MAX_TENSOR_NAME), (32, 4, 64));
    }
}
