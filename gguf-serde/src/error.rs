//! The one error type of the crate: [`Error`], a box around an [`ErrorKind`] (what went wrong,
//! split by layer) and the context the layers add on the way up (the shard, the tensor, the
//! metadata key and offset of a serde error, what an I/O call was doing). The design, and how to
//! match, is documented on [`Error`].

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codec::CodecError;
use crate::format::GgmlType;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong reading, validating, converting or writing GGUF data.
///
/// An `Error` is one pointer (a box), so `Result<T, Error>` costs little on the happy path. It
/// holds:
///
/// - its [`kind`](Error::kind): an [`ErrorKind`], one variant per layer of the crate, each with
///   its own enum: [`FormatError`] (what the reader refuses in a file), [`WriteError`] (what the
///   writer refuses), [`MetadataError`] (serde), [`ModelError`] (`#[derive(GgufModel)]`),
///   [`CodecError`], [`ShardError`] (split models, splitting and merging), [`EditError`] (metadata
///   edits), [`QuantizeError`] (a quantization llama-quantize would refuse) and `Io`; plus
///   [`ErrorKind::NotFound`] and [`ErrorKind::DataNotLoaded`], which belong to no layer: they are requests that a source (a [`Gguf`](crate::Gguf), a
///   [`ShardedGguf`](crate::ShardedGguf), a model source) cannot serve — a name it does not have,
///   data of a file opened for its metadata only — rather than something wrong with a file;
/// - context, added by the layer that knows it while the error travels up, so that the kind stays
///   the real one: the **shard** of a split model the error happened in (an invalid shard is a
///   [`FormatError`] with [`shard`](Error::shard) set, not a wrapper), the **tensor** whose
///   conversion failed (a [`CodecError`] of a model field names its tensor through
///   [`tensor`](Error::tensor)), the **key** and **offset** of a [`MetadataError`], and what an
///   I/O call was doing (`opening model.gguf`).
///
/// The accessors [`offset`](Error::offset), [`key`](Error::key), [`tensor`](Error::tensor) and
/// [`shard`](Error::shard) look in both the context and the kind's fields, so they answer the
/// same whichever of the two holds the fact. Offsets are absolute byte offsets from the start of
/// the file.
///
/// `Display` gives the whole message, context included: `shard PATH: `, then `tensor "NAME": `,
/// then the kind's message, then ` at key "KEY" (offset N)` for a metadata error. Every cause is
/// part of that message (an I/O error prints the operating system's message), so
/// [`source`](std::error::Error::source) is always `None`: print an `Error` once, as it is. The
/// [`std::io::Error`] of an I/O failure is in [`ErrorKind::Io`].
///
/// [`ErrorKind`] and the layer enums are `#[non_exhaustive]`, and so is every variant of a layer
/// enum (and `NotFound`, `DataNotLoaded`): match with a `_` arm and `..` in each variant's
/// braces, a unit variant included (`MetadataError::MissingKey { .. }`). The layer variants of
/// `ErrorKind` (`ErrorKind::Format(e)`, …, `ErrorKind::Io(e)`) match as they are.
///
/// ```
/// use gguf_serde::{Error, ErrorKind, FormatError, Gguf, Item};
///
/// // A header cut short: the 8-byte tensor count at offset 8 has 2 bytes.
/// let e = Gguf::from_slice(b"GGUF\x03\0\0\0\0\0").unwrap_err();
/// match e.kind() {
///     ErrorKind::Format(FormatError::Truncated { item: Item::Header, offset, needed, .. }) => {
///         assert_eq!((*offset, *needed), (8, 8));
///     }
///     ErrorKind::Io(io) => panic!("I/O: {io}"),
///     _ => panic!("unexpected: {e}"),
/// }
/// assert_eq!(e.offset(), Some(8));
/// assert!(matches!(e.as_format(), Some(FormatError::Truncated { .. })));
/// assert_eq!(e.to_string(), "file truncated: header at offset 8 needs 8 bytes, only 2 remain");
/// # Ok::<(), Error>(())
/// ```
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    cx: Context,
}

/// What the layers add to an error on its way up; each is `None` until one does.
#[derive(Debug, Default)]
struct Context {
    /// The shard of a split model the error happened in.
    shard: Option<PathBuf>,
    /// The tensor whose conversion or data the error is about, for a kind that names none.
    tensor: Option<String>,
    /// The full dotted key of a metadata error.
    key: Option<String>,
    /// The absolute byte offset of the value of a metadata error.
    offset: Option<u64>,
    /// What an I/O call was doing (`opening "model.gguf"`).
    action: Option<String>,
    /// The value serde's `invalid_type` / `invalid_value` reported as found, for a metadata
    /// error raised where no key is known (a struct with a flattened field checks the keys
    /// serde buffered): the deserializer finds the key holding that value.
    found: Option<Found>,
    /// For a serializer error about an element of an array not yet written (`m[1][2]`): bytes
    /// from the start of the pair's value (its element type) to that element, added up by each
    /// enclosing array as the error leaves it.
    within: Option<u64>,
}

/// A value serde reported as unexpected (`serde::de::Unexpected`), kept to find its key.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Found {
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq,
}

/// What went wrong, by layer; from [`Error::kind`]. See [`Error`] for the context beside it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The reader refused the file: it breaks the GGUF format or a limit that protects the reader.
    Format(FormatError),
    /// The writer refused what it was given, or was used out of order.
    Write(WriteError),
    /// Metadata that does not fit the Rust type (serde), or a Rust value GGUF cannot store.
    Metadata(MetadataError),
    /// A file that does not fit a `#[derive(GgufModel)]` struct, or a struct that cannot be written.
    Model(ModelError),
    /// A quantize or dequantize call that cannot convert its input.
    Codec(CodecError),
    /// A split model whose shards do not fit together, or a split or merge that cannot be made.
    Shard(ShardError),
    /// A metadata edit that cannot be applied.
    Edit(EditError),
    /// A quantization that cannot be made as asked ([`crate::ops::quantize`]).
    Quantize(QuantizeError),
    /// An I/O error of the underlying reader, writer or file; what was being done is part of the
    /// message.
    Io(std::io::Error),
    /// No tensor or key of that name in the source asked.
    #[non_exhaustive]
    NotFound {
        /// `"tensor"`, `"key"`, or `"tensor of this file"` for a tensor info of another file.
        what: &'static str,
        /// The name looked for.
        name: String,
    },
    /// Tensor data asked of a source that holds only the metadata (a file opened with
    /// [`Gguf::from_reader`](crate::Gguf::from_reader)).
    #[non_exhaustive]
    DataNotLoaded {
        /// The tensor.
        name: String,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Format(e) => e.fmt(f),
            ErrorKind::Write(e) => e.fmt(f),
            ErrorKind::Metadata(e) => e.fmt(f),
            ErrorKind::Model(e) => e.fmt(f),
            ErrorKind::Codec(e) => e.fmt(f),
            ErrorKind::Shard(e) => e.fmt(f),
            ErrorKind::Edit(e) => e.fmt(f),
            ErrorKind::Quantize(e) => e.fmt(f),
            ErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            ErrorKind::NotFound { what, name } => write!(f, "no {what} named {name:?}"),
            ErrorKind::DataNotLoaded { name } => {
                write!(f, "tensor {name:?}: data not loaded (the file was opened from a reader, metadata only)")
            }
        }
    }
}

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
    fn unit(&self) -> &'static str {
        match self {
            Item::Key | Item::String | Item::TensorName => "bytes",
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

/// Why `general.alignment` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AlignmentProblem {
    /// Stored with a type other than UINT32 (the type name is given).
    WrongType(&'static str),
    /// Zero.
    Zero,
    /// Not a power of two (the value is given).
    NotPowerOfTwo(u32),
    /// A power of two above [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT) (the value is given),
    /// which ggml accepts but which would make a small file cost gigabytes of padding to rewrite.
    TooLarge(u32),
}

impl fmt::Display for AlignmentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignmentProblem::WrongType(t) => write!(f, "has type {t}, expected u32"),
            AlignmentProblem::Zero => f.write_str("is 0"),
            AlignmentProblem::NotPowerOfTwo(v) => write!(f, "is {v}, not a power of two"),
            AlignmentProblem::TooLarge(v) => {
                write!(f, "is {v}, more than the largest accepted ({})", crate::format::MAX_ALIGNMENT)
            }
        }
    }
}

fn display_dtypes(d: &[GgmlType]) -> String {
    match d {
        [] => "any type".into(),
        [one] => one.to_string(),
        many => format!("one of {}", many.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")),
    }
}

fn display_dims(d: &[Option<u64>]) -> String {
    let dims: Vec<String> = d.iter().map(|x| x.map_or_else(|| "_".to_owned(), |v| v.to_string())).collect();
    format!("[{}]", dims.join(", "))
}

fn display_names(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut s = names.iter().take(SHOWN).map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

fn key_suffix(key: &Option<String>) -> String {
    match key {
        Some(k) => format!(" (key {k:?})"),
        None => String::new(),
    }
}

/// ` (key "K")` or, for the fields of a tensor info, ` (tensor "T")`.
fn owner_suffix(item: &Item, owner: &Option<String>) -> String {
    match owner {
        Some(t) if item.owned_by_tensor() => format!(" (tensor {t:?})"),
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
    #[error("not a GGUF file: magic at offset 0 is {found:02x?}, expected \"GGUF\" (47 47 55 46)")]
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
    #[error("file truncated: {item}{} at offset {offset} needs {needed} bytes, only {available} remain", owner_suffix(.item, .owner))]
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
    #[error("{item}{} at offset {offset} claims {count} {}, more than the {remaining} bytes left can hold", owner_suffix(.item, .owner), .item.unit())]
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
    #[error("duplicate key {key:?} at offset {offset}")]
    #[non_exhaustive]
    DuplicateKey {
        /// The key.
        key: String,
        /// Where the second occurrence starts.
        offset: u64,
    },

    /// A value type id that is not one of GGUF's 13 (0–12).
    #[error("unknown {} type {id} for key {key:?} at offset {offset}", if *.in_array { "array element" } else { "value" })]
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
    #[error("arrays nested deeper than {limit} levels for key {key:?} at offset {offset}")]
    #[non_exhaustive]
    TooDeep {
        /// The key.
        key: String,
        /// The limit.
        limit: usize,
        /// Where the array that went past the limit starts.
        offset: u64,
    },

    /// A BOOL stored as a byte other than 0 or 1.
    #[error("invalid bool byte {byte:#04x} for key {key:?} at offset {offset} (expected 0 or 1)")]
    #[non_exhaustive]
    InvalidBool {
        /// The key.
        key: String,
        /// The byte.
        byte: u8,
        /// Where the byte is.
        offset: u64,
    },

    /// A key, string value or tensor name that is not valid UTF-8 (all three must be; see the
    /// container docs).
    #[error("{item} at offset {offset} is not valid UTF-8{}", key_suffix(.key))]
    #[non_exhaustive]
    InvalidUtf8 {
        /// A key, string or tensor name.
        item: Item,
        /// The key of the value, if it is a value.
        key: Option<String>,
        /// Where the bytes start.
        offset: u64,
    },

    /// `general.alignment` of the wrong type, zero, not a power of two, or above
    /// [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT).
    #[error("general.alignment at offset {offset} {problem}")]
    #[non_exhaustive]
    BadAlignment {
        /// What is wrong.
        problem: AlignmentProblem,
        /// Where the key/value pair starts.
        offset: u64,
    },

    /// A tensor name longer than the spec's 64 bytes.
    #[error("tensor name {name:?} at offset {offset} is {len} bytes, more than the {max} allowed")]
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
    #[error("duplicate tensor name {name:?} at offset {offset}")]
    #[non_exhaustive]
    DuplicateTensor {
        /// The name.
        name: String,
        /// Where the second tensor info starts.
        offset: u64,
    },

    /// More than four dimensions (ggml's `GGML_MAX_DIMS`).
    #[error("tensor {name:?} at offset {offset} has {n_dims} dimensions, at most 4 are allowed")]
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
    #[error("tensor {name:?}: stored dimension ne[{index}] = {value} at offset {offset} is negative as int64")]
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
    #[error("tensor {name:?} at offset {offset} has type id {id}, which ggml removed")]
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
    #[error("tensor {name:?} at offset {offset} has unknown type id {id}")]
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
    #[error("tensor {name:?}: element count or byte size of stored dims {ne:?} overflows int64")]
    #[non_exhaustive]
    SizeOverflow {
        /// The tensor.
        name: String,
        /// The stored dims, fastest first.
        ne: Vec<u64>,
    },

    /// `ne[0]` (the last canonical dimension) is not a multiple of the type's block size.
    #[error("tensor {name:?}: row length ne[0] = {ne0} is not a multiple of the {dtype} block size {block_size}")]
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
    #[error("tensor {name:?}: data offset {relative_offset} (relative to the data section) is not a multiple of the alignment {alignment}")]
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
    #[error("tensors {first:?} and {second:?} overlap: bytes {second_start}..{first_end} (absolute) belong to both")]
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
        "tensor {name:?}: data at bytes {start}..{end} (absolute) lies past the end of the file ({file_len} bytes)"
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
        format!("{name:?}")
    }
}

/// What the [writer](crate::GgufWriter) refuses: keys and tensors it cannot store, tensor data
/// of the wrong size, calls out of order. (The same checks make [`Tensor`](crate::Tensor)s.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// A key the writer refuses: empty, longer than 65,535 bytes, not ASCII, or added twice.
    #[error("invalid key {key:?}: {reason}")]
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
        "tensor {}: got {found} bytes of data, expected {expected} (from its dtype and shape)",
        tensor_label(name)
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

    /// A `general.alignment` the writer refuses: of a type other than UINT32, zero, not a power
    /// of two, or above [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT) (the reader's
    /// [`FormatError::BadAlignment`] for a file that holds one).
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
    #[error("arrays nested deeper than {limit} levels for key {key:?} (the array would start at byte {offset} of the output)")]
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

/// An error of the [serde mapping](crate#the-serde-mapping). The full key it happened at is
/// [`Error::key`], and when reading, the offset of the value is [`Error::offset`]; both are part
/// of the message (` at key "K" (offset N)`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// What serde, a `Serialize` or `Deserialize` impl, or the mapping reports in words: a type
    /// mismatch (`invalid type: expected u32, found string`), a value that does not fit its type,
    /// an unknown enum variant, a value GGUF cannot store, a key that appears twice.
    #[error("{message}")]
    #[non_exhaustive]
    Message {
        /// The message.
        message: String,
    },

    /// A struct field with no key of its name nor under it: the key is [`Error::key`].
    #[error("missing (no key of this name, nor under it)")]
    #[non_exhaustive]
    MissingKey,

    /// serde's missing field, where the deserializer could not name the key (a map read by a
    /// custom `Deserialize` impl).
    #[error("missing field `{field}`")]
    #[non_exhaustive]
    MissingField {
        /// The field.
        field: &'static str,
    },

    /// A key with an [`ARCH`](crate::ARCH) segment while the architecture is unknown.
    #[error(
        "key has an {{arch}} segment but the architecture is unknown: there is no general.architecture \
         string and none was given with MetadataOptions::arch"
    )]
    #[non_exhaustive]
    UnknownArch,
}

/// A file that does not fit a `#[derive(GgufModel)]` struct, or a struct that cannot be written.
/// Tensor names are full names (`blk.0.attn_q.weight`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A tensor that a field requires is not in the file.
    #[error("tensor {name:?} is missing (required by the model field `{field}`)")]
    #[non_exhaustive]
    MissingTensor {
        /// The tensor's full name.
        name: String,
        /// The Rust field that binds it (`Struct.field`).
        field: String,
    },

    /// A tensor whose type is not one that its field accepts.
    #[error("tensor {name:?} has type {found}, expected {}", display_dtypes(.expected))]
    #[non_exhaustive]
    WrongDtype {
        /// The tensor.
        name: String,
        /// The types the field accepts.
        expected: Vec<GgmlType>,
        /// The type stored.
        found: GgmlType,
    },

    /// A tensor whose canonical shape (outermost first) differs from its field's constraint.
    #[error("tensor {name:?} has shape {found:?}, expected {}", display_dims(.expected))]
    #[non_exhaustive]
    WrongShape {
        /// The tensor.
        name: String,
        /// The constraint, canonical; `None` for a dimension not constrained (`_`, or a metadata
        /// value that is absent).
        expected: Vec<Option<u64>>,
        /// The canonical shape stored.
        found: Vec<u64>,
    },

    /// A shape or count constraint that cannot be evaluated (an arithmetic overflow, a negative
    /// or non-integer metadata value, a count larger than the model's tensors).
    #[error("constraint of {name:?}: {reason}")]
    #[non_exhaustive]
    Constraint {
        /// The tensor or name template.
        name: String,
        /// What went wrong.
        reason: String,
    },

    /// A numbered list of sub-models or tensors (`blk.{}`) whose numbers have a hole: number
    /// `missing` is absent although a higher one is present.
    #[error("{template:?}: number {missing} is missing, but numbers up to {max} are present")]
    #[non_exhaustive]
    NumberingHole {
        /// The name template.
        template: String,
        /// The first absent number.
        missing: u64,
        /// The highest number present.
        max: u64,
    },

    /// A numbered list whose length differs from its count in the metadata (on write).
    #[error("{template:?}: {found} entries, but the count from the metadata is {expected}")]
    #[non_exhaustive]
    CountMismatch {
        /// The name template.
        template: String,
        /// The count from the metadata.
        expected: u64,
        /// The entries present.
        found: u64,
    },

    /// Tensors of the file that no field binds (when the model refuses them).
    #[error("{} tensors are bound by no field of the model: {}", .names.len(), display_names(.names))]
    #[non_exhaustive]
    UnboundTensors {
        /// Their names, in file order.
        names: Vec<String>,
    },
}

/// Shards of a split model (`NAME-00001-of-00003.gguf`, …) that do not fit together, or a
/// split or merge that cannot be made. (An error *inside* one shard keeps its own kind, with
/// [`Error::shard`] naming the shard.)
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardError {
    /// A shard that does not exist.
    #[error("shard {index} of {count} is missing: {}", .path.display())]
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
    #[error("shard {}: {key} is {}, expected {expected}", .path.display(), match .found { Some(v) => v.to_string(), None => "missing or not an integer".into() })]
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
    #[error("{}: not a shard file name (expected PREFIX-{index:05}-of-{count:05}.gguf)", .path.display())]
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
    #[error("shard {}: split.tensors.count is {declared}, but the shards hold {found} tensors", .path.display())]
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
    #[error("tensor {name:?} is in two shards: {} and {}", .first.display(), .second.display())]
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
    #[error("shard {}: {endian}-endian, unlike the first shard", .path.display())]
    #[non_exhaustive]
    ByteOrder {
        /// The shard.
        path: PathBuf,
        /// Its byte order, `"little"` or `"big"`.
        endian: &'static str,
    },

    /// A split or merge that cannot be made: a limit of 0, more than 65,535 shards, more tensors
    /// than `split.tensors.count` holds, an output that is one of the shards.
    #[error("cannot split: {reason}")]
    #[non_exhaustive]
    CannotSplit {
        /// Why.
        reason: String,
    },
}

/// A quantization that cannot be made as asked ([`crate::ops::quantize`]): one that needs an
/// importance matrix, a bad `--tensor-type` or `--override-kv`, rows no type fits.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QuantizeError {
    /// Why, in llama-quantize's terms.
    #[error("cannot quantize: {reason}")]
    #[non_exhaustive]
    Refused {
        /// Why.
        reason: String,
    },

    /// A tensor whose target type llama-quantize quantizes only with an importance matrix
    /// (its `tensor_requires_imatrix`: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, and Q2_K in
    /// the Q2_K_S mix), and none was given or none is left after `--include-weights` /
    /// `--exclude-weights`: llama-quantize's refusal, with its message content.
    #[error("this quantization requires an importance matrix (offending tensor: {tensor}, target type: {target})")]
    #[non_exhaustive]
    ImatrixRequired {
        /// The first such tensor, in the file's order.
        tensor: String,
        /// Its target type.
        target: GgmlType,
    },

    /// An importance matrix file ([`crate::ops::imatrix`]) that llama-quantize would refuse,
    /// crash on or misread, or one that does not fit a tensor it is used for.
    #[error("importance matrix: {problem}")]
    #[non_exhaustive]
    Imatrix {
        /// What is wrong.
        problem: ImatrixProblem,
    },
}

/// What is wrong with an importance matrix ([`QuantizeError::Imatrix`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ImatrixProblem {
    /// A legacy `.dat` file ends inside an item: `needed` bytes at `offset`, fewer remain.
    #[error("file truncated: {item} at offset {offset} needs {needed} bytes")]
    #[non_exhaustive]
    Truncated {
        /// What was being read (`"entry count"`, `"name of entry 3"`, ...).
        item: String,
        /// Absolute byte offset of the item.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
    },
    /// Neither format: the file does not start with `GGUF`, and as a legacy `.dat` its first
    /// four bytes give more entries than the file has bytes, and the first name's length does not
    /// fit either (a text file, for instance; a truncated `.dat` is [`Truncated`](Self::Truncated)).
    #[error(
        "in neither format: no `GGUF` magic, and as a legacy .dat its entry count {count} does not fit in its {len} bytes"
    )]
    #[non_exhaustive]
    NotImatrix {
        /// The entry count its first four bytes give (little-endian i32).
        count: i64,
        /// The file's length in bytes.
        len: u64,
    },
    /// No entries: a `.dat` entry count of 0, or a GGUF file with no tensors.
    #[error("no entries")]
    #[non_exhaustive]
    NoEntries,
    /// A length field of a `.dat` file that is negative (the entry count, a name) or below 1 (a
    /// value count).
    #[error("{item} has the invalid length {len}")]
    #[non_exhaustive]
    BadLength {
        /// The field (`"entry count"`, `"name of entry 3"`, `"values of entry 3"`).
        item: String,
        /// The stored length.
        len: i64,
    },
    /// An entry name that is not UTF-8 (no tensor can have it).
    #[error("the name of entry {index} is not UTF-8")]
    #[non_exhaustive]
    NameNotUtf8 {
        /// The entry, counting from 1.
        index: u64,
    },
    /// A GGUF importance matrix without `imatrix.datasets`, `imatrix.chunk_count` and
    /// `imatrix.chunk_size` (llama-quantize: "missing imatrix metadata").
    #[error("missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)")]
    #[non_exhaustive]
    MissingMetadata,
    /// A metadata key of the wrong type (`imatrix.chunk_count` and `imatrix.chunk_size` are
    /// UINT32).
    #[error("{key} has type {found}, expected {expected}")]
    #[non_exhaustive]
    KeyType {
        /// The key.
        key: String,
        /// Its type.
        found: String,
        /// The type llama.cpp reads.
        expected: &'static str,
    },
    /// `NAME.in_sum2` without `NAME.counts` or the other way round.
    #[error("mismatched sums and counts for {entry}")]
    #[non_exhaustive]
    Unpaired {
        /// The entry (tensor) name.
        entry: String,
    },
    /// An `in_sum2` or `counts` tensor that is not F32.
    #[error("{tensor} is {dtype}, expected F32")]
    #[non_exhaustive]
    NotF32 {
        /// The imatrix tensor.
        tensor: String,
        /// Its type.
        dtype: GgmlType,
    },
    /// A `counts` tensor whose length does not divide the `in_sum2` length into whole slices
    /// (no counts, or more counts than sums).
    #[error("{entry}: {counts} counts for {sums} sums (the sums must be whole slices, one per count)")]
    #[non_exhaustive]
    CountsLength {
        /// The entry.
        entry: String,
        /// Elements of `in_sum2`.
        sums: u64,
        /// Elements of `counts`.
        counts: u64,
    },
    /// A count that is NaN, infinite, negative or too large for an `i64`.
    #[error("{entry}: invalid count {value} at index {index}")]
    #[non_exhaustive]
    BadCount {
        /// The entry.
        entry: String,
        /// Index in the counts.
        index: u64,
        /// The stored count.
        value: f64,
    },
    /// An entry whose counts are all zero: no activations were collected for it (llama-imatrix
    /// does not write such an entry to a `.dat` file; llama-quantize would use weights of 1).
    #[error("{entry}: every count is zero (no data)")]
    #[non_exhaustive]
    ZeroCounts {
        /// The entry.
        entry: String,
    },
    /// A NaN or infinite sum, or a weight that is not finite after dividing by its count
    /// (llama-quantize: "imatrix contains non-finite value").
    #[error("{entry}: non-finite value {value} at index {index}")]
    #[non_exhaustive]
    NonFinite {
        /// The entry.
        entry: String,
        /// Index in the entry's values.
        index: u64,
        /// The value.
        value: f32,
    },
    /// An entry whose length is not the tensor's `ne[0] × ne[2]` (llama-quantize: "imatrix size
    /// N is different from tensor size M"; for the token embeddings it only warns and quantizes
    /// without the matrix, and so does this crate).
    #[error("imatrix size {found} is different from tensor size {expected} for {tensor}")]
    #[non_exhaustive]
    SizeMismatch {
        /// The tensor.
        tensor: String,
        /// Values in the entry.
        found: u64,
        /// `ne[0] × ne[2]`.
        expected: u64,
    },
    /// No entry for a tensor whose type needs one (llama-quantize: "Missing importance matrix
    /// for tensor NAME in a very low-bit quantization").
    #[error("missing importance matrix for tensor {tensor} in a very low-bit quantization ({target})")]
    #[non_exhaustive]
    MissingEntry {
        /// The tensor.
        tensor: String,
        /// Its target type.
        target: GgmlType,
    },
}

impl QuantizeError {
    /// A refusal with this reason.
    pub(crate) fn refused(reason: impl Into<String>) -> QuantizeError {
        QuantizeError::Refused { reason: reason.into() }
    }
}

/// A [metadata edit](crate::ops::edit) that cannot be applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The key to remove or rename is not in the file.
    #[error("cannot edit {key:?}: no such key to {action}")]
    #[non_exhaustive]
    NoSuchKey {
        /// The key.
        key: String,
        /// `"remove"` or `"rename"`.
        action: &'static str,
    },

    /// A rename to a key that exists.
    #[error("cannot edit {key:?}: cannot rename to {to:?}: that key exists")]
    #[non_exhaustive]
    KeyExists {
        /// The key renamed.
        key: String,
        /// The new name, which exists.
        to: String,
    },

    /// A text that does not parse as the value type asked (or the type of the existing value).
    #[error("cannot edit {key:?}: {text:?} is not a valid {ty}")]
    #[non_exhaustive]
    BadValue {
        /// The key.
        key: String,
        /// The text given.
        text: String,
        /// The type's name (`u32`, `bool`, …).
        ty: &'static str,
    },

    /// A text with no type that is an integer too large for any integer type (rather than a
    /// silently rounded float).
    #[error("cannot edit {key:?}: {text} is an integer outside u64 and i64; give --type f32, f64 or string")]
    #[non_exhaustive]
    IntegerTooLarge {
        /// The key.
        key: String,
        /// The text given.
        text: String,
    },

    /// A text that does not parse as the type the registry of standard keys gives the key
    /// ([`format::keys`](crate::format::keys): the type llama.cpp reads it as).
    #[error(
        "cannot edit {key:?}: {text:?} is not a valid {expected}, the type of the standard key {template} \
         (llama.cpp refuses another type); give --type to write another type anyway"
    )]
    #[non_exhaustive]
    BadStandardValue {
        /// The key.
        key: String,
        /// The text given.
        text: String,
        /// The registry's template of the key (`{arch}.rope.freq_base`).
        template: &'static str,
        /// The type the registry gives it.
        expected: crate::format::keys::KeyType,
    },

    /// A key the edit would create (a new key set, the new name of a rename) that has an empty
    /// segment between dots (`a..b`, `a.`, `.x`,
    /// [`has_empty_segment`](crate::format::keys::has_empty_segment)). Existing keys of that form
    /// can still be set, removed and renamed away.
    #[error("cannot edit {key:?}: a segment between dots is empty (a new key may not be `a..b`, `a.` or `.x`)")]
    #[non_exhaustive]
    EmptySegment {
        /// The new key.
        key: String,
    },

    /// An array value to be set from text.
    #[error("cannot edit {key:?}: arrays cannot be set from text; give a scalar --type to replace it")]
    #[non_exhaustive]
    ArrayFromText {
        /// The key.
        key: String,
    },
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The kind, by value (the context is dropped).
    pub fn into_kind(self) -> ErrorKind {
        self.0.kind
    }

    /// The absolute byte offset in the file of what was refused: the item of a [`FormatError`]
    /// (`None` for the few about a tensor as a whole: a size overflow, a row not whole blocks, a
    /// misaligned data offset, which is relative), the value of a [`MetadataError`] when reading.
    /// For the writer's [`WriteError::BadAlignment`] and [`WriteError::TooDeep`], the offset in
    /// the output where the refused pair or array would have started; for a key the
    /// [writer](crate::GgufWriter) refuses ([`WriteError::InvalidKey`]), the output offset of its
    /// pair; for a value the serializer ([`to_writer`](crate::to_writer),
    /// [`GgufWriter::add_serialize`](crate::GgufWriter::add_serialize)) cannot store, the output
    /// offset where the value would have been written (after its key and type, as the reader's
    /// offsets are).
    pub fn offset(&self) -> Option<u64> {
        use FormatError as F;
        if let Some(o) = self.0.cx.offset {
            return Some(o);
        }
        let f = match &self.0.kind {
            ErrorKind::Format(f) => f,
            ErrorKind::Write(WriteError::BadAlignment { offset, .. } | WriteError::TooDeep { offset, .. }) => {
                return Some(*offset)
            }
            _ => return None,
        };
        match f {
            F::BadMagic { .. } => Some(0),
            F::UnsupportedVersion { .. } => Some(4),
            F::Truncated { offset, .. }
            | F::TooLong { offset, .. }
            | F::EmptyKey { offset }
            | F::DuplicateKey { offset, .. }
            | F::UnknownValueType { offset, .. }
            | F::TooDeep { offset, .. }
            | F::InvalidBool { offset, .. }
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

    /// The metadata key involved: the full dotted key of a [`MetadataError`], the key of a value
    /// the reader refused, the key the writer refused, the key of an edit, the split key of a
    /// [`ShardError::Mismatch`].
    pub fn key(&self) -> Option<&str> {
        use FormatError as F;
        if let Some(k) = &self.0.cx.key {
            return Some(k);
        }
        match &self.0.kind {
            ErrorKind::Format(f) => match f {
                F::Truncated { item, owner, .. } | F::TooLong { item, owner, .. } if !item.owned_by_tensor() => {
                    owner.as_deref()
                }
                F::InvalidUtf8 { key, .. } => key.as_deref(),
                F::DuplicateKey { key, .. }
                | F::UnknownValueType { key, .. }
                | F::TooDeep { key, .. }
                | F::InvalidBool { key, .. } => Some(key),
                F::BadAlignment { .. } => Some(crate::format::keys::GENERAL_ALIGNMENT),
                _ => None,
            },
            ErrorKind::Write(WriteError::InvalidKey { key, .. } | WriteError::TooDeep { key, .. }) => Some(key),
            ErrorKind::Write(WriteError::BadAlignment { .. }) => Some(crate::format::keys::GENERAL_ALIGNMENT),
            ErrorKind::Shard(ShardError::Mismatch { key, .. }) => Some(key),
            ErrorKind::Edit(e) => Some(match e {
                EditError::NoSuchKey { key, .. }
                | EditError::KeyExists { key, .. }
                | EditError::BadValue { key, .. }
                | EditError::BadStandardValue { key, .. }
                | EditError::IntegerTooLarge { key, .. }
                | EditError::ArrayFromText { key }
                | EditError::EmptySegment { key } => key,
            }),
            ErrorKind::NotFound { what: "key", name } => Some(name),
            _ => None,
        }
    }

    /// The name of the tensor involved: the tensor whose conversion failed (context), or the one
    /// the kind names (the tensor info the reader refused, the tensor the writer or a model
    /// refused; for overlapping tensors, the one that starts inside the other).
    pub fn tensor(&self) -> Option<&str> {
        use FormatError as F;
        if let Some(t) = &self.0.cx.tensor {
            return Some(t);
        }
        let name: Option<&str> = match &self.0.kind {
            ErrorKind::Format(f) => match f {
                F::Truncated { item, owner, .. } | F::TooLong { item, owner, .. } if item.owned_by_tensor() => {
                    owner.as_deref()
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
                _ => None,
            },
            ErrorKind::Write(WriteError::InvalidTensor { name, .. } | WriteError::SizeMismatch { name, .. }) => {
                Some(name)
            }
            ErrorKind::Model(
                ModelError::MissingTensor { name, .. }
                | ModelError::WrongDtype { name, .. }
                | ModelError::WrongShape { name, .. }
                | ModelError::Constraint { name, .. },
            ) => Some(name),
            ErrorKind::Shard(ShardError::TensorInTwoShards { name, .. }) => Some(name),
            ErrorKind::DataNotLoaded { name } | ErrorKind::NotFound { what: "tensor", name } => Some(name),
            _ => None,
        };
        name.filter(|n| !n.is_empty())
    }

    /// The shard of a split model involved: the shard an error happened in (context), or the one
    /// a [`ShardError`] names (for a tensor in two shards, the second).
    pub fn shard(&self) -> Option<&Path> {
        if let Some(s) = &self.0.cx.shard {
            return Some(s);
        }
        match &self.0.kind {
            ErrorKind::Shard(
                ShardError::Missing { path, .. }
                | ShardError::Mismatch { path, .. }
                | ShardError::BadName { path, .. }
                | ShardError::TensorCount { path, .. }
                | ShardError::TensorInTwoShards { second: path, .. }
                | ShardError::ByteOrder { path, .. },
            ) => Some(path),
            _ => None,
        }
    }

    /// The [`FormatError`], if the reader refused the file.
    pub fn as_format(&self) -> Option<&FormatError> {
        match &self.0.kind {
            ErrorKind::Format(e) => Some(e),
            _ => None,
        }
    }

    /// The [`WriteError`], if the writer refused.
    pub fn as_write(&self) -> Option<&WriteError> {
        match &self.0.kind {
            ErrorKind::Write(e) => Some(e),
            _ => None,
        }
    }

    /// The [`MetadataError`], if serde failed.
    pub fn as_metadata(&self) -> Option<&MetadataError> {
        match &self.0.kind {
            ErrorKind::Metadata(e) => Some(e),
            _ => None,
        }
    }

    /// The [`ModelError`], if a typed model did not fit.
    pub fn as_model(&self) -> Option<&ModelError> {
        match &self.0.kind {
            ErrorKind::Model(e) => Some(e),
            _ => None,
        }
    }

    /// The [`CodecError`], if a codec failed.
    pub fn as_codec(&self) -> Option<&CodecError> {
        match &self.0.kind {
            ErrorKind::Codec(e) => Some(e),
            _ => None,
        }
    }

    /// The [`ShardError`], if the shards of a split model do not fit together.
    pub fn as_shard(&self) -> Option<&ShardError> {
        match &self.0.kind {
            ErrorKind::Shard(e) => Some(e),
            _ => None,
        }
    }

    /// The [`QuantizeError`], if a quantization cannot be made as asked.
    pub fn as_quantize(&self) -> Option<&QuantizeError> {
        match &self.0.kind {
            ErrorKind::Quantize(e) => Some(e),
            _ => None,
        }
    }

    /// The [`EditError`], if an edit cannot be applied.
    pub fn as_edit(&self) -> Option<&EditError> {
        match &self.0.kind {
            ErrorKind::Edit(e) => Some(e),
            _ => None,
        }
    }

    /// The [`std::io::Error`], if an I/O call failed.
    pub fn as_io(&self) -> Option<&std::io::Error> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }

    /// A [`WriteError::InvalidTensor`]: for a [`TensorStorage`](crate::TensorStorage)
    /// implementation refusing a tensor it cannot hold. An empty `name` is filled in with the
    /// field's tensor name when the model reads or writes it.
    #[cold]
    pub fn invalid_tensor(name: impl Into<String>, reason: impl Into<String>) -> Error {
        WriteError::InvalidTensor { name: name.into(), reason: reason.into() }.into()
    }

    /// An I/O error, with what was being done (`opening "model.gguf"`).
    #[cold]
    pub(crate) fn io(action: impl Into<String>, source: std::io::Error) -> Error {
        let mut e = Error::from(source);
        e.0.cx.action = Some(action.into());
        e
    }

    /// A metadata error at `key` and `offset`.
    #[cold]
    pub(crate) fn metadata(kind: MetadataError, key: Option<String>, offset: Option<u64>) -> Error {
        let mut e = Error::from(kind);
        (e.0.cx.key, e.0.cx.offset) = (key, offset);
        e
    }

    /// Gives an error of the writer or serializer the output offset `offset`, unless it has one.
    pub(crate) fn at_output_offset(mut self, offset: u64) -> Error {
        if self.offset().is_none() {
            self.0.cx.offset = Some(offset);
        }
        self
    }

    /// Adds `bytes` to the distance from the start of the pair's value to the element the error
    /// is about ([`Context::within`]).
    pub(crate) fn add_within(mut self, bytes: u64) -> Error {
        let w = self.0.cx.within.unwrap_or(0);
        self.0.cx.within = Some(w.saturating_add(bytes));
        self
    }

    /// The distance from the start of the pair's value to the element the error is about.
    pub(crate) fn within(&self) -> Option<u64> {
        self.0.cx.within
    }

    /// Records the value serde reported as unexpected ([`Found`]).
    pub(crate) fn set_found(&mut self, found: Found) {
        self.0.cx.found = Some(found);
    }

    /// The value serde reported as unexpected, if recorded.
    pub(crate) fn found(&self) -> Option<&Found> {
        self.0.cx.found.as_ref()
    }

    /// The key and offset of a metadata error, to fill in (`None` for other kinds).
    pub(crate) fn metadata_at(&mut self) -> Option<(&mut Option<String>, &mut Option<u64>)> {
        let Inner { kind: ErrorKind::Metadata(_), cx } = &mut *self.0 else { return None };
        Some((&mut cx.key, &mut cx.offset))
    }

    /// Names the output file `path` in an I/O error of writing it: `copying tensor data` becomes
    /// `copying tensor data to PATH`; an error that says nothing yet gets `writing PATH`.
    #[cfg(feature = "mmap")]
    pub(crate) fn writing_to(mut self, path: &Path) -> Error {
        if matches!(self.kind(), ErrorKind::Io(_)) {
            let action = match self.0.cx.action.take() {
                Some(a) if a.contains(&path.display().to_string()) => a,
                Some(a) => format!("{a} to {}", path.display()),
                None => format!("writing {}", path.display()),
            };
            self.0.cx.action = Some(action);
        }
        self
    }

    /// Names the remote file in an I/O error: `reading metadata` becomes `reading metadata of
    /// URL`; an error that says nothing yet gets `reading URL`.
    #[cfg(feature = "remote")]
    pub(crate) fn of_url(mut self, url: &str) -> Error {
        if matches!(self.kind(), ErrorKind::Io(_)) {
            let action = match self.0.cx.action.take() {
                Some(a) => format!("{a} of {url}"),
                None => format!("reading {url}"),
            };
            self.0.cx.action = Some(action);
        }
        self
    }

    /// An error that happened in the shard at `path` (kept if one is named already).
    pub(crate) fn in_shard(mut self, path: &Path) -> Error {
        self.0.cx.shard.get_or_insert_with(|| path.to_path_buf());
        self
    }

    /// Names tensor `name` in an error of its conversion: an empty tensor name of the kind is
    /// filled in; an error that names no tensor (a codec error) gets it as context; one that
    /// names a tensor already is left as it is.
    pub(crate) fn in_tensor(mut self, name: &str) -> Error {
        if let ErrorKind::Write(WriteError::InvalidTensor { name: n, .. } | WriteError::SizeMismatch { name: n, .. }) =
            &mut self.0.kind
        {
            if n.is_empty() {
                name.clone_into(n);
            }
        }
        if self.tensor().is_none() {
            self.0.cx.tensor = Some(name.to_owned());
        }
        self
    }

    /// [`ErrorKind::NotFound`].
    #[cold]
    pub(crate) fn not_found(what: &'static str, name: &str) -> Error {
        ErrorKind::NotFound { what, name: name.to_owned() }.into()
    }

    /// [`ErrorKind::DataNotLoaded`].
    #[cold]
    pub(crate) fn data_not_loaded(name: &str) -> Error {
        ErrorKind::DataNotLoaded { name: name.to_owned() }.into()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { kind, cx } = &*self.0;
        if let Some(s) = &cx.shard {
            write!(f, "shard {}: ", s.display())?;
        }
        if let Some(t) = &cx.tensor {
            write!(f, "tensor {t:?}: ")?;
        }
        match (kind, &cx.action) {
            (ErrorKind::Io(e), Some(action)) => write!(f, "I/O error {action}: {e}")?,
            (kind, _) => kind.fmt(f)?,
        }
        if let Some(k) = &cx.key {
            write!(f, " at key {k:?}")?;
        }
        if let Some(o) = cx.offset {
            write!(f, " (offset {o})")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { kind, cx } = &*self.0;
        let mut d = f.debug_struct("Error");
        d.field("kind", kind);
        let Context { shard, tensor, key, offset, action, found: _, within: _ } = cx;
        if let Some(s) = shard {
            d.field("shard", s);
        }
        if let Some(t) = tensor {
            d.field("tensor", t);
        }
        if let Some(k) = key {
            d.field("key", k);
        }
        if let Some(o) = offset {
            d.field("offset", o);
        }
        if let Some(a) = action {
            d.field("action", a);
        }
        d.finish()
    }
}

/// Every cause is part of the message (see [`Error`]): `source` is `None`.
impl std::error::Error for Error {}

impl From<ErrorKind> for Error {
    #[cold]
    fn from(kind: ErrorKind) -> Error {
        Error(Box::new(Inner { kind, cx: Context::default() }))
    }
}

macro_rules! from_layer {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for Error {
            #[cold]
            fn from(e: $t) -> Error {
                ErrorKind::$v(e).into()
            }
        }
    )*};
}

from_layer! {
    FormatError => Format,
    WriteError => Write,
    MetadataError => Metadata,
    ModelError => Model,
    CodecError => Codec,
    ShardError => Shard,
    EditError => Edit,
    QuantizeError => Quantize,
    std::io::Error => Io,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer() {
        assert_eq!(std::mem::size_of::<Error>(), 8);
        assert_eq!(std::mem::size_of::<Result<()>>(), 8);
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Error>();
    }
}
