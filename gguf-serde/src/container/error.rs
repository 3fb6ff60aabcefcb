//! The container's errors: what the reader refuses in a file ([`FormatError`], with the [`Item`]
//! a length or count belonged to), what the writer refuses ([`WriteError`]), and the shards of a
//! split model that do not fit together ([`ShardError`]). Each says which offset, key, tensor
//! (and shard) it names; [`Error`](crate::Error) wraps them.

// Built from the facts of hostile files, as the parser is: no unwrap/expect/panic/indexing and no
// unchecked arithmetic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
#![deny(clippy::arithmetic_side_effects)]

use std::fmt;
use std::path::{Path, PathBuf};

use crate::format::keys::GENERAL_ALIGNMENT;
use crate::format::{count, AlignmentProblem, GgmlType, Quoted};

/// What a length or count that did not fit belonged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Item {
    /// The tensor count of the header.
    TensorCount,
    /// The key/value count of the header.
    KvCount,
    /// A metadata key.
    Key,
    /// A string value.
    String,
    /// An array value.
    Array,
    /// A tensor name.
    TensorName,
    /// A field of a tensor info after the name (dimension count, dimensions, type, offset).
    Dims,
    /// The header (magic, version and counts).
    Header,
    /// A scalar value or field.
    Value,
}

impl Item {
    /// What a count of this item counts: `bytes` for keys, strings and names, else `entries`.
    /// The unit of a count of `n` of this item: bytes or entries, singular for 1.
    fn unit(&self, n: u64) -> &'static str {
        match (self, n) {
            (Item::Key | Item::String | Item::TensorName, 1) => "byte",
            (Item::Key | Item::String | Item::TensorName, _) => "bytes",
            (_, 1) => "entry",
            _ => "entries",
        }
    }

    /// Whether the owner of this item (see [`FormatError::Truncated`]) is a tensor, not a key.
    fn owned_by_tensor(&self) -> bool {
        matches!(self, Item::Dims | Item::TensorName)
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Item::TensorCount => "tensor count",
            Item::KvCount => "key/value count",
            Item::Key => "key",
            Item::String => "string",
            Item::Array => "array",
            Item::TensorName => "tensor name",
            Item::Dims => "tensor info field",
            Item::Header => "header",
            Item::Value => "value",
        })
    }
}
fn key_suffix(key: &Option<String>) -> String {
    match key {
        Some(k) => format!(" (key {})", Quoted(k)),
        None => String::new(),
    }
}

/// `n bytes`, `1 byte`.
fn bytes(n: u64) -> String {
    count(n, "byte")
}

/// ` (key "K")` or, for the fields of a tensor info, ` (tensor "T")`.
fn owner_suffix(item: &Item, owner: &Option<String>) -> String {
    match owner {
        Some(t) if item.owned_by_tensor() => format!(" (tensor {})", Quoted(t)),
        _ => key_suffix(owner),
    }
}
/// What the reader refuses in a file: every way a GGUF file can break the format (ggml
/// `docs/gguf.md`) or the limits that keep the reader safe. Offsets are absolute byte offsets
/// from the start of the file.
///
/// The writer refuses the two values it would otherwise write wrongly with the same kinds:
/// [`BadAlignment`](FormatError::BadAlignment) and [`TooDeep`](FormatError::TooDeep), with the
/// offset the pair would have in the output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not start with `GGUF`.
    #[error("not a GGUF file: magic at offset 0 is {}, expected \"GGUF\" (47 47 55 46)", magic_bytes(found))]
    #[non_exhaustive]
    BadMagic {
        /// The first four bytes (fewer if the file is shorter).
        found: Vec<u8>,
    },

    /// Version 0, 1 or above 3. Version 1 (u32 counts and lengths, 2023) is not supported; ggml
    /// refuses it too.
    #[error("unsupported GGUF version {version} at offset 4{}", if *.version == 1 { ": version 1 is not supported (only 2 and 3)" } else { " (supported: 2 and 3)" })]
    #[non_exhaustive]
    UnsupportedVersion {
        /// The version as read (after byte-swapping a big-endian file).
        version: u32,
    },

    /// The file ends before an item it declares.
    #[error("file truncated: {item}{} at offset {offset} needs {}, only {available} {}", owner_suffix(.item, .owner), bytes(*.needed), if *.available == 1 { "remains" } else { "remain" })]
    #[non_exhaustive]
    Truncated {
        /// What was being read.
        item: Item,
        /// Whose item it is: the key, for a value in the key/value block; the tensor's name, for a
        /// field of a tensor info ([`Item::Dims`]).
        owner: Option<String>,
        /// Where the item starts.
        offset: u64,
        /// Bytes the item needs.
        needed: u64,
        /// Bytes left in the file from `offset`.
        available: u64,
    },

    /// A count or length larger than the bytes left in the file could possibly hold. Checked
    /// before anything is allocated for it.
    #[error("{item}{} at offset {offset} claims {count} {}, more than the {} left can hold", owner_suffix(.item, .owner), .item.unit(*.count), bytes(*.remaining))]
    #[non_exhaustive]
    TooLong {
        /// What the count belongs to.
        item: Item,
        /// Whose item it is: the key, for strings and arrays in the key/value block.
        owner: Option<String>,
        /// Where the count is stored.
        offset: u64,
        /// The count or length as stored.
        count: u64,
        /// Bytes left after the count.
        remaining: u64,
    },

    /// A key of length 0.
    #[error("empty key at offset {offset}")]
    #[non_exhaustive]
    EmptyKey {
        /// Where the key's length is stored.
        offset: u64,
    },

    /// A key that occurs twice.
    #[error("duplicate key {} at offset {offset}", Quoted(.key))]
    #[non_exhaustive]
    DuplicateKey {
        /// The key.
        key: String,
        /// Where the second occurrence starts.
        offset: u64,
    },

    /// A value type id that is not one of GGUF's 13 (0–12).
    #[error("unknown {} type {id} for key {} at offset {offset}", if *.in_array { "array element" } else { "value" }, Quoted(.key))]
    #[non_exhaustive]
    UnknownValueType {
        /// The key.
        key: String,
        /// The type id as stored.
        id: u32,
        /// Whether it is the element type of an array.
        in_array: bool,
        /// Where the type id is stored.
        offset: u64,
    },

    /// Arrays of arrays nested deeper than [`MAX_DEPTH`](crate::format::MAX_DEPTH).
    #[error("arrays nested deeper than {limit} levels for key {} at offset {offset}", Quoted(.key))]
    #[non_exhaustive]
    TooDeep {
        /// The key.
        key: String,
        /// The limit.
        limit: usize,
        /// Where the array that went past the limit starts.
        offset: u64,
    },

    /// A key, string value or tensor name that is not valid UTF-8, asked for as text (`&str`,
    /// `String`). The file itself is not refused for it (ggml does not check UTF-8): only the
    /// accessors that hand out text give this error ([`Kv::key_str`](crate::Kv::key_str),
    /// [`TensorInfo::name_str`](crate::TensorInfo::name_str), [`Gguf::get_str`](crate::Gguf::get_str),
    /// serde's `&str`/`String`); the bytes are there as a [`GgufStr`](crate::GgufStr).
    #[error("{item} at offset {offset} is not valid UTF-8{}", owner_suffix(.item, .owner))]
    #[non_exhaustive]
    InvalidUtf8 {
        /// A key, string (a value or an element of a string array) or tensor name.
        item: Item,
        /// The key (for a key, itself) or the tensor name, escaped as
        /// [`GgufStr`](crate::GgufStr)'s `Display` shows it (`\xNN` for a bad byte, `\\` for a
        /// backslash).
        owner: Option<String>,
        /// Where the string's bytes start (after its length).
        offset: u64,
    },

    /// `general.alignment` of the wrong type, zero, or not a power of two (what ggml's `gguf.cpp`
    /// refuses; every power of two a UINT32 holds is read).
    #[error("general.alignment at offset {offset} {problem}")]
    #[non_exhaustive]
    BadAlignment {
        /// What is wrong.
        problem: AlignmentProblem,
        /// Where the key/value pair starts.
        offset: u64,
    },

    /// A tensor name longer than the spec's 64 bytes.
    #[error("tensor name {} at offset {offset} is {len} bytes, more than the {max} allowed", Quoted(.name))]
    #[non_exhaustive]
    TensorNameTooLong {
        /// The name (lossily decoded; the first 256 bytes of a longer one).
        name: String,
        /// Its length in bytes.
        len: u64,
        /// The largest allowed length.
        max: u64,
        /// Where the name starts.
        offset: u64,
    },

    /// Two tensors with one name.
    #[error("duplicate tensor name {} at offset {offset}", Quoted(.name))]
    #[non_exhaustive]
    DuplicateTensor {
        /// The name.
        name: String,
        /// Where the second tensor info starts.
        offset: u64,
    },

    /// More than four dimensions (ggml's `GGML_MAX_DIMS`).
    #[error("tensor {} at offset {offset} has {n_dims} dimensions, at most 4 are allowed", Quoted(.name))]
    #[non_exhaustive]
    TooManyDims {
        /// The tensor.
        name: String,
        /// The stored count.
        n_dims: u32,
        /// Where the count is stored.
        offset: u64,
    },

    /// A dimension that is negative as ggml's `int64_t`.
    #[error("tensor {}: stored dimension ne[{index}] = {value} at offset {offset} is negative as int64", Quoted(.name))]
    #[non_exhaustive]
    BadDim {
        /// The tensor.
        name: String,
        /// Which stored dimension (0 is the fastest).
        index: usize,
        /// The stored value.
        value: u64,
        /// Where the dimension is stored.
        offset: u64,
    },

    /// A ggml type id that ggml removed (4, 5, 31–33, 36–38).
    #[error("tensor {} at offset {offset} has type id {id}, which ggml removed", Quoted(.name))]
    #[non_exhaustive]
    RemovedTensorType {
        /// The tensor.
        name: String,
        /// The id.
        id: u32,
        /// Where the id is stored.
        offset: u64,
    },

    /// A ggml type id that is not known.
    #[error("tensor {} at offset {offset} has unknown type id {id}", Quoted(.name))]
    #[non_exhaustive]
    UnknownTensorType {
        /// The tensor.
        name: String,
        /// The id.
        id: u32,
        /// Where the id is stored.
        offset: u64,
    },

    /// The element count or byte size of a tensor overflows `i64` (ggml's `int64_t` sizes).
    #[error("tensor {}: element count or byte size of stored dims {ne:?} overflows int64", Quoted(.name))]
    #[non_exhaustive]
    SizeOverflow {
        /// The tensor.
        name: String,
        /// The stored dims, fastest first.
        ne: Vec<u64>,
    },

    /// `ne[0]` (the last canonical dimension) is not a multiple of the type's block size.
    #[error("tensor {}: row length ne[0] = {ne0} is not a multiple of the {dtype} block size {block_size}", Quoted(.name))]
    #[non_exhaustive]
    NotBlockMultiple {
        /// The tensor.
        name: String,
        /// Its type.
        dtype: GgmlType,
        /// The row length.
        ne0: u64,
        /// The block size.
        block_size: u64,
    },

    /// A tensor data offset that is not a multiple of the alignment.
    #[error("tensor {}: data offset {relative_offset} (relative to the data section) is not a multiple of the alignment {alignment}", Quoted(.name))]
    #[non_exhaustive]
    MisalignedTensor {
        /// The tensor.
        name: String,
        /// The stored offset, relative to the start of the data section.
        relative_offset: u64,
        /// The alignment.
        alignment: u32,
    },

    /// Two tensors whose data overlap.
    #[error("tensors {} and {} overlap: bytes {second_start}..{first_end} (absolute) belong to both", Quoted(.first), Quoted(.second))]
    #[non_exhaustive]
    TensorsOverlap {
        /// The tensor that starts first.
        first: String,
        /// The one that starts inside it.
        second: String,
        /// Absolute start of `second`.
        second_start: u64,
        /// Absolute end of `first`.
        first_end: u64,
    },

    /// Tensor data that extends past the end of the file.
    #[error(
        "tensor {}: data at bytes {start}..{end} (absolute) lies past the end of the file ({file_len} bytes)",
        Quoted(.name)
    )]
    #[non_exhaustive]
    TensorOutOfBounds {
        /// The tensor.
        name: String,
        /// Absolute start (`u64::MAX` if it overflows).
        start: u64,
        /// Absolute end (`u64::MAX` if it overflows).
        end: u64,
        /// The file's length.
        file_len: u64,
    },
}
/// A tensor's name as messages show it: quoted, or `(unnamed)` for an empty one (a storage's
/// tensor before a model field names it, a constructor given `""`).
fn tensor_label(name: &str) -> String {
    if name.is_empty() {
        "(unnamed)".to_owned()
    } else {
        Quoted(name).to_string()
    }
}

/// What the [writer](crate::GgufWriter) refuses: keys and tensors it cannot store, tensor data
/// of the wrong size, calls out of order. (The same checks make [`Tensor`](crate::Tensor)s.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A key the writer refuses: empty, longer than 65,535 bytes, not ASCII, or added twice.
    #[error("invalid key {}: {reason}", Quoted(.key))]
    #[non_exhaustive]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },

    /// A tensor with a name, shape or type that cannot be stored (a name of 64 bytes or more,
    /// more than 4 dimensions, a row that is not whole blocks, an overflowing size), or a
    /// storage's tensor that cannot be converted as asked.
    #[error("invalid tensor {}: {reason}", tensor_label(name))]
    #[non_exhaustive]
    InvalidTensor {
        /// The tensor (empty for one given no name; the message then says `(unnamed)`).
        name: String,
        /// Why.
        reason: String,
    },

    /// Tensor data whose length differs from the declared size.
    #[error(
        "tensor {}: got {} of data, expected {expected} (from its dtype and shape)",
        tensor_label(name),
        bytes(*found)
    )]
    #[non_exhaustive]
    SizeMismatch {
        /// The tensor (empty for one given no name; the message then says `(unnamed)`).
        name: String,
        /// The declared size.
        expected: u64,
        /// The bytes supplied.
        found: u64,
    },

    /// A `general.alignment` the writer refuses: of a type other than UINT32, zero, or not a
    /// power of two (the reader's [`FormatError::BadAlignment`] for a file that holds one).
    #[error("general.alignment {problem} (the key/value pair would start at byte {offset} of the output)")]
    #[non_exhaustive]
    BadAlignment {
        /// What is wrong.
        problem: AlignmentProblem,
        /// Where the pair would start in the output (nothing has been written there).
        offset: u64,
    },

    /// A value whose arrays of arrays nest deeper than [`MAX_DEPTH`](crate::format::MAX_DEPTH)
    /// (the reader's [`FormatError::TooDeep`] for a file that holds one).
    #[error("arrays nested deeper than {limit} levels for key {} (the array would start at byte {offset} of the output)", Quoted(.key))]
    #[non_exhaustive]
    TooDeep {
        /// The key.
        key: String,
        /// The limit.
        limit: usize,
        /// Where the array that goes past the limit would start in the output.
        offset: u64,
    },

    /// The writer was used out of order (data for more tensors than declared, a key after the
    /// data started, a call after an error that left the output partly written), or with options
    /// it cannot write.
    #[error("writer misuse: {reason}")]
    #[non_exhaustive]
    Misuse {
        /// What was wrong.
        reason: String,
    },
}
/// Shards of a split model (`NAME-00001-of-00003.gguf`, …) that do not fit together, or a
/// split or merge that cannot be made. (An error *inside* one shard keeps its own kind, with
/// [`Error::shard`](crate::Error::shard) naming the shard.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardError {
    /// A shard that does not exist.
    #[error("shard {index} of {count} is missing: {}", crate::format::shown_path(.path))]
    #[non_exhaustive]
    Missing {
        /// The path looked for.
        path: PathBuf,
        /// Its 1-based number, as in the file name.
        index: u32,
        /// The number of shards.
        count: u32,
    },

    /// A shard whose `split.no`, `split.count` or `split.tensors.count` is missing, not an
    /// integer, or not the value its place in the split requires (a shard of another split,
    /// renamed or mixed in).
    #[error("shard {}: {key} is {}, expected {expected}", crate::format::shown_path(.path), match .found { Some(v) => v.to_string(), None => "missing or not an integer".into() })]
    #[non_exhaustive]
    Mismatch {
        /// The shard.
        path: PathBuf,
        /// `split.no`, `split.count` or `split.tensors.count`.
        key: &'static str,
        /// The value required.
        expected: u64,
        /// The value stored, if it is an integer.
        found: Option<i64>,
    },

    /// A shard file name that does not follow `PREFIX-NNNNN-of-MMMMM.gguf` although the file
    /// says it is one shard of several.
    #[error("{}: not a shard file name (expected PREFIX-{index:05}-of-{count:05}.gguf)", crate::format::shown_path(.path))]
    #[non_exhaustive]
    BadName {
        /// The path.
        path: PathBuf,
        /// Its 1-based shard number from `split.no`.
        index: u32,
        /// Its `split.count`.
        count: u32,
    },

    /// `split.tensors.count` of a shard differs from the number of tensors in all shards.
    #[error("shard {}: split.tensors.count is {declared}, but the shards hold {}", crate::format::shown_path(.path), count(*.found, "tensor"))]
    #[non_exhaustive]
    TensorCount {
        /// The shard that declares it.
        path: PathBuf,
        /// The declared count.
        declared: i64,
        /// The tensors found in all shards.
        found: u64,
    },

    /// A tensor name that occurs in two shards.
    #[error("tensor {} is in two shards: {} and {}", Quoted(.name), crate::format::shown_path(.first), crate::format::shown_path(.second))]
    #[non_exhaustive]
    TensorInTwoShards {
        /// The tensor.
        name: String,
        /// The shard where it occurs first.
        first: PathBuf,
        /// The other shard.
        second: PathBuf,
    },

    /// A shard whose byte order differs from the first shard's.
    #[error("shard {}: {endian}-endian, unlike the first shard", crate::format::shown_path(.path))]
    #[non_exhaustive]
    ByteOrder {
        /// The shard.
        path: PathBuf,
        /// Its byte order, `"little"` or `"big"`.
        endian: &'static str,
    },

    /// A split that cannot be made: a limit of 0, more than 65,535 shards, more tensors than
    /// `split.tensors.count` holds, a shard path that is the input file.
    #[error("cannot split: {reason}")]
    #[non_exhaustive]
    CannotSplit {
        /// Why.
        reason: String,
    },

    /// A merge that cannot be made: an input that is not a shard (no `split.count`, as
    /// `llama-gguf-split --merge` refuses it), an output that is one of the shards.
    #[error("cannot merge: {reason}")]
    #[non_exhaustive]
    CannotMerge {
        /// Why.
        reason: String,
    },
}
impl FormatError {
    /// The absolute byte offset of what was refused: the item being read (`0` for the magic, `4`
    /// for the version; for overlapping tensors, where the second starts; for data past the end,
    /// where it starts unless that overflows). `None` for the three about a tensor as a whole: a
    /// size overflow, a row not whole blocks, a misaligned data offset (which is relative).
    pub fn offset(&self) -> Option<u64> {
        use FormatError as F;
        match self {
            F::BadMagic { .. } => Some(0),
            F::UnsupportedVersion { .. } => Some(4),
            F::Truncated { offset, .. }
            | F::TooLong { offset, .. }
            | F::EmptyKey { offset }
            | F::DuplicateKey { offset, .. }
            | F::UnknownValueType { offset, .. }
            | F::TooDeep { offset, .. }
            | F::InvalidUtf8 { offset, .. }
            | F::BadAlignment { offset, .. }
            | F::TensorNameTooLong { offset, .. }
            | F::DuplicateTensor { offset, .. }
            | F::TooManyDims { offset, .. }
            | F::BadDim { offset, .. }
            | F::RemovedTensorType { offset, .. }
            | F::UnknownTensorType { offset, .. } => Some(*offset),
            F::TensorsOverlap { second_start, .. } => Some(*second_start),
            F::TensorOutOfBounds { start, .. } => Some(*start).filter(|&s| s != u64::MAX),
            F::SizeOverflow { .. } | F::NotBlockMultiple { .. } | F::MisalignedTensor { .. } => None,
        }
    }

    /// The key of the value refused (`general.alignment` for a bad alignment); `None` for the
    /// header and tensor infos.
    pub fn key(&self) -> Option<&str> {
        use FormatError as F;
        match self {
            F::Truncated { item, owner, .. } | F::TooLong { item, owner, .. } | F::InvalidUtf8 { item, owner, .. } => {
                owner.as_deref().filter(|_| !item.owned_by_tensor())
            }
            F::DuplicateKey { key, .. } | F::UnknownValueType { key, .. } | F::TooDeep { key, .. } => Some(key),
            F::BadAlignment { .. } => Some(GENERAL_ALIGNMENT),
            F::BadMagic { .. }
            | F::UnsupportedVersion { .. }
            | F::EmptyKey { .. }
            | F::TensorNameTooLong { .. }
            | F::DuplicateTensor { .. }
            | F::TooManyDims { .. }
            | F::BadDim { .. }
            | F::RemovedTensorType { .. }
            | F::UnknownTensorType { .. }
            | F::SizeOverflow { .. }
            | F::NotBlockMultiple { .. }
            | F::MisalignedTensor { .. }
            | F::TensorsOverlap { .. }
            | F::TensorOutOfBounds { .. } => None,
        }
    }

    /// The tensor whose info or data was refused (for overlapping tensors, the one that starts
    /// inside the other), as stored; `None` for the header and the key/value block.
    pub fn tensor(&self) -> Option<&str> {
        use FormatError as F;
        match self {
            F::Truncated { item, owner, .. } | F::TooLong { item, owner, .. } | F::InvalidUtf8 { item, owner, .. } => {
                owner.as_deref().filter(|_| item.owned_by_tensor())
            }
            F::TensorNameTooLong { name, .. }
            | F::DuplicateTensor { name, .. }
            | F::TooManyDims { name, .. }
            | F::BadDim { name, .. }
            | F::RemovedTensorType { name, .. }
            | F::UnknownTensorType { name, .. }
            | F::SizeOverflow { name, .. }
            | F::NotBlockMultiple { name, .. }
            | F::MisalignedTensor { name, .. }
            | F::TensorsOverlap { second: name, .. }
            | F::TensorOutOfBounds { name, .. } => Some(name),
            F::BadMagic { .. }
            | F::UnsupportedVersion { .. }
            | F::EmptyKey { .. }
            | F::DuplicateKey { .. }
            | F::UnknownValueType { .. }
            | F::TooDeep { .. }
            | F::BadAlignment { .. } => None,
        }
    }
}

impl WriteError {
    /// Where in the output the refused pair ([`BadAlignment`](Self::BadAlignment)) or array
    /// ([`TooDeep`](Self::TooDeep)) would have started. (The writer adds the output offset of a
    /// refused key to the [`Error`](crate::Error) as context.)
    pub fn offset(&self) -> Option<u64> {
        match self {
            WriteError::BadAlignment { offset, .. } | WriteError::TooDeep { offset, .. } => Some(*offset),
            WriteError::InvalidKey { .. }
            | WriteError::InvalidTensor { .. }
            | WriteError::SizeMismatch { .. }
            | WriteError::Misuse { .. } => None,
        }
    }

    /// The key refused (`general.alignment` for a bad alignment).
    pub fn key(&self) -> Option<&str> {
        match self {
            WriteError::InvalidKey { key, .. } | WriteError::TooDeep { key, .. } => Some(key),
            WriteError::BadAlignment { .. } => Some(GENERAL_ALIGNMENT),
            WriteError::InvalidTensor { .. } | WriteError::SizeMismatch { .. } | WriteError::Misuse { .. } => None,
        }
    }

    /// The tensor refused, as given (empty for one given no name).
    pub fn tensor(&self) -> Option<&str> {
        match self {
            WriteError::InvalidTensor { name, .. } | WriteError::SizeMismatch { name, .. } => Some(name),
            WriteError::InvalidKey { .. }
            | WriteError::BadAlignment { .. }
            | WriteError::TooDeep { .. }
            | WriteError::Misuse { .. } => None,
        }
    }
}

impl ShardError {
    /// The split key of a [`Mismatch`](Self::Mismatch).
    pub fn key(&self) -> Option<&str> {
        match self {
            ShardError::Mismatch { key, .. } => Some(key),
            ShardError::Missing { .. }
            | ShardError::BadName { .. }
            | ShardError::TensorCount { .. }
            | ShardError::TensorInTwoShards { .. }
            | ShardError::ByteOrder { .. }
            | ShardError::CannotSplit { .. }
            | ShardError::CannotMerge { .. } => None,
        }
    }

    /// The tensor found in two shards.
    pub fn tensor(&self) -> Option<&str> {
        match self {
            ShardError::TensorInTwoShards { name, .. } => Some(name),
            ShardError::Missing { .. }
            | ShardError::Mismatch { .. }
            | ShardError::BadName { .. }
            | ShardError::TensorCount { .. }
            | ShardError::ByteOrder { .. }
            | ShardError::CannotSplit { .. }
            | ShardError::CannotMerge { .. } => None,
        }
    }

    /// The shard named (for a tensor in two shards, the second); `None` for a split or merge
    /// that cannot be made.
    pub fn shard(&self) -> Option<&Path> {
        match self {
            ShardError::Missing { path, .. }
            | ShardError::Mismatch { path, .. }
            | ShardError::BadName { path, .. }
            | ShardError::TensorCount { path, .. }
            | ShardError::TensorInTwoShards { second: path, .. }
            | ShardError::ByteOrder { path, .. } => Some(path),
            ShardError::CannotSplit { .. } | ShardError::CannotMerge { .. } => None,
        }
    }
}

/// `bytes` as [`FormatError::BadMagic`] prints them: in hex as the expected magic is printed
/// (`67 62 7c 72`), after the text when all are printable ASCII (`"gb|r" (67 62 7c 72)`).
fn magic_bytes(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing (the file is empty)".to_owned();
    }
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let hex = hex.join(" ");
    if bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?} ({hex})", String::from_utf8_lossy(bytes))
    } else {
        hex
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> String {
        x.to_owned()
    }

    /// An error and the offset, key and tensor it must report.
    type Case<E> = (E, Option<u64>, Option<&'static str>, Option<&'static str>);

    /// Every variant with an offset, key or tensor field reports it (and the others report none).
    #[test]
    fn format_errors_report_what_they_name() {
        use FormatError as F;
        let (k, t) = (Some("k"), Some("t"));
        let cases: Vec<Case<FormatError>> = vec![
            (F::BadMagic { found: vec![] }, Some(0), None, None),
            (F::UnsupportedVersion { version: 9 }, Some(4), None, None),
            (
                F::Truncated { item: Item::String, owner: Some(s("k")), offset: 1, needed: 2, available: 0 },
                Some(1),
                k,
                None,
            ),
            (
                F::Truncated { item: Item::Dims, owner: Some(s("t")), offset: 1, needed: 2, available: 0 },
                Some(1),
                None,
                t,
            ),
            (
                F::TooLong { item: Item::Array, owner: Some(s("k")), offset: 2, count: 9, remaining: 0 },
                Some(2),
                k,
                None,
            ),
            (
                F::TooLong { item: Item::TensorName, owner: Some(s("t")), offset: 2, count: 9, remaining: 0 },
                Some(2),
                None,
                t,
            ),
            (F::EmptyKey { offset: 3 }, Some(3), None, None),
            (F::DuplicateKey { key: s("k"), offset: 4 }, Some(4), k, None),
            (F::UnknownValueType { key: s("k"), id: 99, in_array: false, offset: 5 }, Some(5), k, None),
            (F::TooDeep { key: s("k"), limit: 1, offset: 6 }, Some(6), k, None),
            (F::InvalidUtf8 { item: Item::String, owner: Some(s("k")), offset: 8 }, Some(8), k, None),
            (F::InvalidUtf8 { item: Item::TensorName, owner: Some(s("t")), offset: 8 }, Some(8), None, t),
            (F::BadAlignment { problem: AlignmentProblem::Zero, offset: 9 }, Some(9), Some(GENERAL_ALIGNMENT), None),
            (F::TensorNameTooLong { name: s("t"), len: 99, max: 64, offset: 10 }, Some(10), None, t),
            (F::DuplicateTensor { name: s("t"), offset: 11 }, Some(11), None, t),
            (F::TooManyDims { name: s("t"), n_dims: 5, offset: 12 }, Some(12), None, t),
            (F::BadDim { name: s("t"), index: 0, value: u64::MAX, offset: 13 }, Some(13), None, t),
            (F::RemovedTensorType { name: s("t"), id: 4, offset: 14 }, Some(14), None, t),
            (F::UnknownTensorType { name: s("t"), id: 99, offset: 15 }, Some(15), None, t),
            (F::SizeOverflow { name: s("t"), ne: vec![] }, None, None, t),
            (F::NotBlockMultiple { name: s("t"), dtype: GgmlType::Q8_0, ne0: 3, block_size: 32 }, None, None, t),
            (F::MisalignedTensor { name: s("t"), relative_offset: 3, alignment: 32 }, None, None, t),
            (F::TensorsOverlap { first: s("a"), second: s("t"), second_start: 16, first_end: 20 }, Some(16), None, t),
            (F::TensorOutOfBounds { name: s("t"), start: 17, end: 20, file_len: 18 }, Some(17), None, t),
            (F::TensorOutOfBounds { name: s("t"), start: u64::MAX, end: u64::MAX, file_len: 18 }, None, None, t),
        ];
        for (e, offset, key, tensor) in &cases {
            assert_eq!((e.offset(), e.key(), e.tensor()), (*offset, *key, *tensor), "{e:?}");
        }
    }

    #[test]
    fn write_errors_report_what_they_name() {
        use WriteError as W;
        let cases: Vec<Case<WriteError>> = vec![
            (W::InvalidKey { key: s("k"), reason: "r" }, None, Some("k"), None),
            (W::InvalidTensor { name: s("t"), reason: s("r") }, None, None, Some("t")),
            (W::SizeMismatch { name: s("t"), expected: 1, found: 2 }, None, None, Some("t")),
            (W::BadAlignment { problem: AlignmentProblem::Zero, offset: 3 }, Some(3), Some(GENERAL_ALIGNMENT), None),
            (W::TooDeep { key: s("k"), limit: 1, offset: 4 }, Some(4), Some("k"), None),
            (W::Misuse { reason: s("r") }, None, None, None),
        ];
        for (e, offset, key, tensor) in &cases {
            assert_eq!((e.offset(), e.key(), e.tensor()), (*offset, *key, *tensor), "{e:?}");
        }
    }

    #[test]
    fn shard_errors_report_what_they_name() {
        use ShardError as S;
        let p = || PathBuf::from("p");
        let cases: Vec<(ShardError, Option<&str>, Option<&str>, bool)> = vec![
            (S::Missing { path: p(), index: 1, count: 2 }, None, None, true),
            (S::Mismatch { path: p(), key: "split.no", expected: 0, found: None }, Some("split.no"), None, true),
            (S::BadName { path: p(), index: 1, count: 2 }, None, None, true),
            (S::TensorCount { path: p(), declared: 1, found: 2 }, None, None, true),
            (S::TensorInTwoShards { name: s("t"), first: PathBuf::from("q"), second: p() }, None, Some("t"), true),
            (S::ByteOrder { path: p(), endian: "big" }, None, None, true),
            (S::CannotSplit { reason: s("r") }, None, None, false),
            (S::CannotMerge { reason: s("r") }, None, None, false),
        ];
        for (e, key, tensor, shard) in &cases {
            let named = shard.then(|| Path::new("p"));
            assert_eq!((e.key(), e.tensor(), e.shard()), (*key, *tensor, named), "{e:?}");
        }
    }
}
