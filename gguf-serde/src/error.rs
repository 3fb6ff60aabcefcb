//! The one error type of the crate.
//!
//! Every variant says what went wrong and where: the byte offset in the file (counted from the
//! start of the file), and the metadata key or tensor name involved when there is one.

use std::fmt;

use crate::format::GgmlType;

/// A `Result` whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What a length or count that did not fit belonged to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// A tensor's dimensions.
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
pub enum AlignmentProblem {
    /// Stored with a type other than UINT32 (the type name is given).
    WrongType(&'static str),
    /// Zero.
    Zero,
    /// Not a power of two (the value is given).
    NotPowerOfTwo(u32),
}

impl fmt::Display for AlignmentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignmentProblem::WrongType(t) => write!(f, "has type {t}, expected u32"),
            AlignmentProblem::Zero => f.write_str("is 0"),
            AlignmentProblem::NotPowerOfTwo(v) => write!(f, "is {v}, not a power of two"),
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

/// The name a [`Error::Truncated`] or [`Error::TooLong`] carries: a key, or for the fields of a
/// tensor info, the tensor's name.
fn owner_suffix(item: &Item, key: &Option<String>) -> String {
    match (item, key) {
        (Item::Dims | Item::TensorName, Some(k)) => format!(" (tensor {k:?})"),
        _ => key_suffix(key),
    }
}

/// Everything that can go wrong reading, validating or writing a GGUF file.
///
/// Offsets are absolute byte offsets from the start of the file. Keys and tensor names are given
/// when the failing item has one (a value inside the KV block names its key).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error of the underlying reader, writer or file.
    #[error("I/O error{}: {source}", match .context { Some(c) => format!(" {c}"), None => String::new() })]
    Io {
        /// What was being done (e.g. `opening "model.gguf"`).
        context: Option<String>,
        /// The error.
        #[source]
        source: std::io::Error,
    },

    /// The file does not start with `GGUF`.
    #[error("not a GGUF file: magic at offset 0 is {found:02x?}, expected \"GGUF\" (47 47 55 46)")]
    BadMagic {
        /// The first four bytes (fewer if the file is shorter).
        found: Vec<u8>,
    },

    /// Version 0, 1 or above 3. Version 1 (u32 counts and lengths, 2023) is not supported; ggml
    /// refuses it too.
    #[error("unsupported GGUF version {version} at offset 4{}", if *.version == 1 { ": version 1 is not supported (only 2 and 3)" } else { " (supported: 2 and 3)" })]
    UnsupportedVersion {
        /// The version as read (after byte-swapping a big-endian file).
        version: u32,
    },

    /// The file ends before an item it declares.
    #[error("file truncated: {item}{} at offset {offset} needs {needed} bytes, only {available} remain", owner_suffix(.item, .key))]
    Truncated {
        /// What was being read.
        item: Item,
        /// The key whose value was being read, if any.
        key: Option<String>,
        /// Where the item starts.
        offset: u64,
        /// Bytes the item needs.
        needed: u64,
        /// Bytes left in the file from `offset`.
        available: u64,
    },

    /// A count or length larger than the bytes left in the file could possibly hold. Checked
    /// before anything is allocated for it.
    #[error("{item}{} at offset {offset} claims {count} {}, more than the {remaining} bytes left can hold", owner_suffix(.item, .key), .item.unit())]
    TooLong {
        /// What the count belongs to.
        item: Item,
        /// The key, for strings and arrays in the KV block.
        key: Option<String>,
        /// Where the count is stored.
        offset: u64,
        /// The count or length as stored.
        count: u64,
        /// Bytes left after the count.
        remaining: u64,
    },

    /// A key of length 0.
    #[error("empty key at offset {offset}")]
    EmptyKey {
        /// Where the key's length is stored.
        offset: u64,
    },

    /// A key that occurs twice.
    #[error("duplicate key {key:?} at offset {offset}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// Where the second occurrence starts.
        offset: u64,
    },

    /// A value type id that is not one of GGUF's 13 (0–12).
    #[error("unknown {} type {id} for key {key:?} at offset {offset}", if *.in_array { "array element" } else { "value" })]
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
    InvalidUtf8 {
        /// A key, string or tensor name.
        item: Item,
        /// The key of the value, if it is a value.
        key: Option<String>,
        /// Where the bytes start.
        offset: u64,
    },

    /// `general.alignment` of the wrong type, zero, or not a power of two.
    #[error("general.alignment at offset {offset} {problem}")]
    BadAlignment {
        /// What is wrong.
        problem: AlignmentProblem,
        /// Where the key/value pair starts.
        offset: u64,
    },

    /// A tensor name longer than the spec's 64 bytes (on write: 64 bytes or more, since ggml
    /// keeps at most 63).
    #[error("tensor name {name:?} at offset {offset} is {len} bytes, more than the {max} allowed")]
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
    DuplicateTensor {
        /// The name.
        name: String,
        /// Where the second tensor info starts.
        offset: u64,
    },

    /// More than four dimensions (ggml's `GGML_MAX_DIMS`).
    #[error("tensor {name:?} at offset {offset} has {n_dims} dimensions, at most 4 are allowed")]
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
    SizeOverflow {
        /// The tensor.
        name: String,
        /// The stored dims, fastest first.
        ne: Vec<u64>,
    },

    /// `ne[0]` (the last canonical dimension) is not a multiple of the type's block size.
    #[error("tensor {name:?}: row length ne[0] = {ne0} is not a multiple of the {dtype} block size {block_size}")]
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
    #[error("tensor {name:?}: data offset {offset} (relative to the data section) is not a multiple of the alignment {alignment}")]
    MisalignedTensor {
        /// The tensor.
        name: String,
        /// The stored offset, relative to the start of the data section.
        offset: u64,
        /// The alignment.
        alignment: u32,
    },

    /// Two tensors whose data overlap.
    #[error("tensors {first:?} and {second:?} overlap: bytes {second_start}..{first_end} (absolute) belong to both")]
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
    TensorOutOfBounds {
        /// The tensor.
        name: String,
        /// Absolute start.
        start: u64,
        /// Absolute end.
        end: u64,
        /// The file's length.
        file_len: u64,
    },

    /// Tensor data requested from a source that holds only the metadata (opened with
    /// `from_reader`).
    #[error("tensor {name:?}: data not loaded (the file was opened from a reader, metadata only)")]
    DataNotLoaded {
        /// The tensor.
        name: String,
    },

    /// No tensor or key of that name.
    #[error("no {what} named {name:?}")]
    NotFound {
        /// `"tensor"` or `"key"`.
        what: &'static str,
        /// The name looked for.
        name: String,
    },

    /// A key the writer refuses: empty, longer than 65,535 bytes, or not ASCII.
    #[error("invalid key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// Why.
        reason: &'static str,
    },

    /// A tensor declared to the writer with a shape or type it cannot store.
    #[error("invalid tensor {name:?}: {reason}")]
    InvalidTensor {
        /// The tensor.
        name: String,
        /// Why.
        reason: String,
    },

    /// Tensor data whose length differs from the declared size.
    #[error("tensor {name:?}: got {found} bytes of data, expected {expected} (from its dtype and shape)")]
    TensorSizeMismatch {
        /// The tensor.
        name: String,
        /// The declared size.
        expected: u64,
        /// The bytes supplied.
        found: u64,
    },

    /// The writer was used out of order (e.g. data for more tensors than declared).
    #[error("writer misuse: {0}")]
    WriterState(String),

    /// A shard of a split model (`NAME-00001-of-00003.gguf`, ...) that does not exist.
    #[error("shard {index} of {count} is missing: {}", .path.display())]
    MissingShard {
        /// The path looked for.
        path: std::path::PathBuf,
        /// Its 1-based number, as in the file name.
        index: u32,
        /// The number of shards.
        count: u32,
    },

    /// A shard whose `split.no` or `split.count` is missing, not an integer, or not the value its
    /// place in the split requires (a shard of another split, renamed or mixed in).
    #[error("shard {}: {key} is {}, expected {expected}", .path.display(), match .found { Some(v) => v.to_string(), None => "missing or not an integer".into() })]
    ShardMismatch {
        /// The shard.
        path: std::path::PathBuf,
        /// `split.no` or `split.count`.
        key: &'static str,
        /// The value required.
        expected: u64,
        /// The value stored, if it is an integer.
        found: Option<i64>,
    },

    /// A shard file name that does not follow `PREFIX-NNNNN-of-MMMMM.gguf` although the file
    /// says it is one shard of several.
    #[error("{}: not a shard file name (expected PREFIX-{index:05}-of-{count:05}.gguf)", .path.display())]
    BadShardName {
        /// The path.
        path: std::path::PathBuf,
        /// Its 1-based shard number from `split.no`.
        index: u32,
        /// Its `split.count`.
        count: u32,
    },

    /// `split.tensors.count` of a shard differs from the number of tensors in all shards.
    #[error("shard {}: split.tensors.count is {declared}, but the shards hold {found} tensors", .path.display())]
    SplitTensorCount {
        /// The shard that declares it.
        path: std::path::PathBuf,
        /// The declared count.
        declared: i64,
        /// The tensors found in all shards.
        found: u64,
    },

    /// A tensor name that occurs in two shards.
    #[error("tensor {name:?} is in two shards: {} and {}", .first.display(), .second.display())]
    TensorInTwoShards {
        /// The tensor.
        name: String,
        /// The shard where it occurs first.
        first: std::path::PathBuf,
        /// The other shard.
        second: std::path::PathBuf,
    },

    /// A shard whose byte order differs from the first shard's.
    #[error("shard {}: {endian}-endian, unlike the first shard", .path.display())]
    ShardByteOrder {
        /// The shard.
        path: std::path::PathBuf,
        /// Its byte order, `"little"` or `"big"`.
        endian: &'static str,
    },

    /// An error in one shard of a split model (invalid file, I/O error).
    #[error("shard {}: {source}", .path.display())]
    InShard {
        /// The shard.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: Box<Error>,
    },

    /// A split that cannot be made (a limit of 0, more than 65,535 shards).
    #[error("cannot split: {reason}")]
    Split {
        /// Why.
        reason: String,
    },

    /// A quantization that cannot be made as asked ([`crate::ops::quantize`]): one that needs an
    /// importance matrix, a bad `--tensor-type` or `--override-kv`, rows no type fits.
    #[error("cannot quantize: {reason}")]
    Quantize {
        /// Why.
        reason: String,
    },

    /// A metadata edit that cannot be applied: a missing key to remove or rename, a new name
    /// that exists, a value that does not parse as the requested type.
    #[error("cannot edit {key:?}: {reason}")]
    Edit {
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },

    /// A tensor that a field of a typed model requires is not in the file.
    #[error("tensor {name:?} is missing (required by the model field `{field}`)")]
    MissingTensor {
        /// The tensor's full name.
        name: String,
        /// The Rust field that binds it (`Struct.field`).
        field: String,
    },

    /// A tensor whose type is not one that its model field accepts.
    #[error("tensor {name:?} has type {found}, expected {}", display_dtypes(.expected))]
    TensorDtype {
        /// The tensor.
        name: String,
        /// The types the field accepts.
        expected: Vec<GgmlType>,
        /// The type stored.
        found: GgmlType,
    },

    /// A tensor whose canonical shape (outermost first) differs from its field's constraint.
    #[error("tensor {name:?} has shape {found:?}, expected {}", display_dims(.expected))]
    TensorShape {
        /// The tensor.
        name: String,
        /// The constraint, canonical; `None` for a dimension not constrained (`_`, or a metadata
        /// value that is absent).
        expected: Vec<Option<u64>>,
        /// The canonical shape stored.
        found: Vec<u64>,
    },

    /// A shape or count constraint of a typed model that cannot be evaluated (an arithmetic
    /// overflow, a negative or non-integer metadata value).
    #[error("constraint of {name:?}: {reason}")]
    ModelConstraint {
        /// The tensor or name template.
        name: String,
        /// What went wrong.
        reason: String,
    },

    /// A numbered list of sub-models or tensors (`blk.{}`) whose numbers have a hole: number
    /// `missing` is absent although a higher one is present.
    #[error("{template:?}: number {missing} is missing, but numbers up to {max} are present")]
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
    CountMismatch {
        /// The name template.
        template: String,
        /// The count from the metadata.
        expected: u64,
        /// The entries present.
        found: u64,
    },

    /// An error converting one tensor of a typed model (e.g. a type the codecs cannot decode).
    #[error("tensor {name:?}: {source}")]
    InTensor {
        /// The tensor.
        name: String,
        /// The error.
        #[source]
        source: Box<Error>,
    },

    /// Tensors of the file that no field of the model binds (when the model refuses them).
    #[error("{} tensors are bound by no field of the model: {}", .names.len(), display_names(.names))]
    UnboundTensors {
        /// Their names, in file order.
        names: Vec<String>,
    },

    /// An error of the [codecs](crate::codec): input that is not whole blocks, an output buffer
    /// of the wrong size, a type without a quantizer or decoder.
    #[error(transparent)]
    Codec(#[from] crate::codec::CodecError),

    /// An error from the serde layer, with the key it happened at and, when reading, the offset.
    #[error("{msg}{}{}", match .key { Some(k) => format!(" at key {k:?}"), None => String::new() }, match .offset { Some(o) => format!(" (offset {o})"), None => String::new() })]
    Serde {
        /// The message.
        msg: String,
        /// The full dotted key, if known.
        key: Option<String>,
        /// The byte offset of the value, if known.
        offset: Option<u64>,
    },
}

impl Error {
    #[cold]
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: Some(context.into()), source }
    }
}

impl From<std::io::Error> for Error {
    #[cold]
    fn from(source: std::io::Error) -> Error {
        Error::Io { context: None, source }
    }
}
