//! [`Error`], what the crate's functions return: a box around an [`ErrorKind`] (which layer
//! refused what, as that layer's own enum, defined in the layer's folder: `container/error.rs`,
//! `metadata/error.rs`, …) and the context the layers add on the way up (the shard, the tensor,
//! the metadata key and offset of a serde error, what an I/O call was doing). The design, and how
//! to match, is documented on [`Error`]. The converter's `ConvertError` and a remote server's
//! `RemoteError` are not kinds of it: the crate docs ("The layers") say why.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codec::CodecError;
pub(crate) use crate::container::{FormatError, Item, ShardError, WriteError};
pub(crate) use crate::format::AlignmentProblem;
use crate::format::Quoted;
pub(crate) use crate::metadata::MetadataError;
pub(crate) use crate::model::ModelError;
pub(crate) use crate::ops::{EditError, ImatrixProblem, QuantizeError};

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
///   [`ErrorKind::NotFound`] and [`ErrorKind::DataNotLoaded`], which belong to no layer: requests
///   a source (a [`Gguf`](crate::Gguf), a [`ShardedGguf`](crate::ShardedGguf), a model source)
///   cannot serve — a name it does not have, data of a file opened for its metadata only;
/// - context, added by the layer that knows it while the error travels up, so that the kind stays
///   the real one: the **shard** of a split model the error happened in (an invalid shard is a
///   [`FormatError`] with [`shard`](Error::shard) set, not a wrapper), the **tensor** whose
///   conversion failed (a [`CodecError`] of a model field names its tensor through
///   [`tensor`](Error::tensor)), the **key** and **offset** of a [`MetadataError`], and what an
///   I/O call was doing (`opening model.gguf`).
///
/// The accessors [`offset`](Error::offset), [`key`](Error::key), [`tensor`](Error::tensor) and
/// [`shard`](Error::shard) look in the context, then ask the kind (one exhaustive match over
/// [`ErrorKind`], which asks a layer enum's own `offset()`/`key()`/`tensor()` where it has them),
/// so they answer the same whichever of the two holds the
/// fact. Offsets are absolute byte offsets from the start of the file.
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
    /// Bytes: in serde's buffer of a flattened struct, a STRING that is not UTF-8.
    Bytes(Vec<u8>),
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
            ErrorKind::NotFound { what, name } => write!(f, "no {what} named {}", Quoted(name)),
            ErrorKind::DataNotLoaded { name } => {
                write!(f, "tensor {}: data not loaded (the file was opened from a reader, metadata only)", Quoted(name))
            }
        }
    }
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

    /// The absolute byte offset in the file of what was refused: the value of a
    /// [`MetadataError`] when reading, else what the kind names (`offset()` of each layer's
    /// enum: the item the reader refused, the item of an importance matrix file). For the
    /// writer, the offset in the output where a refused key's pair, a refused value (after its
    /// key and type, as the reader's offsets are) or a refused array would have started.
    pub fn offset(&self) -> Option<u64> {
        self.0.cx.offset.or_else(|| self.named().0)
    }

    /// The metadata key involved: the full dotted key of a [`MetadataError`], else what the kind
    /// names (`key()` of each layer's enum; the name of a key not found).
    pub fn key(&self) -> Option<&str> {
        self.0.cx.key.as_deref().or_else(|| self.named().1)
    }

    /// The name of the tensor involved: the tensor whose conversion failed (context), else what
    /// the kind names (`tensor()` of each layer's enum; a tensor not found or not loaded). An
    /// empty name (a tensor given none) is `None`.
    pub fn tensor(&self) -> Option<&str> {
        self.0.cx.tensor.as_deref().or_else(|| self.named().2.filter(|n| !n.is_empty()))
    }

    /// The offset, key and tensor the kind names, each asked of its layer's enum.
    fn named(&self) -> (Option<u64>, Option<&str>, Option<&str>) {
        macro_rules! ask {
            ($e:ident) => {
                ($e.offset(), $e.key(), $e.tensor())
            };
        }
        match &self.0.kind {
            ErrorKind::Format(e) => ask!(e),
            ErrorKind::Write(e) => ask!(e),
            // The key and offset of a metadata error are context.
            ErrorKind::Metadata(_) => (None, None, None),
            ErrorKind::Model(e) => (None, None, e.tensor()),
            ErrorKind::Codec(e) => ask!(e),
            ErrorKind::Shard(e) => (None, e.key(), e.tensor()),
            ErrorKind::Edit(e) => ask!(e),
            ErrorKind::Quantize(e) => ask!(e),
            ErrorKind::Io(_) => (None, None, None),
            ErrorKind::NotFound { what, name } => {
                (None, (*what == "key").then_some(name.as_str()), (*what == "tensor").then_some(name.as_str()))
            }
            ErrorKind::DataNotLoaded { name } => (None, None, Some(name.as_str())),
        }
    }

    /// The shard of a split model involved: the shard an error happened in (context), or the one
    /// a [`ShardError`] names ([`ShardError::shard`]).
    pub fn shard(&self) -> Option<&Path> {
        match (&self.0.cx.shard, &self.0.kind) {
            (Some(s), _) => Some(s),
            (None, ErrorKind::Shard(e)) => e.shard(),
            (None, _) => None,
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

    /// Names the element a format error of a key's value is about: the owner `key` of a
    /// [`FormatError::Truncated`], [`FormatError::TooLong`] or [`FormatError::InvalidUtf8`]
    /// becomes `path(key)` (`tokenizer.ggml.tokens[212345]`, the form the serde layer uses for
    /// array elements). Other errors are returned as they are.
    pub(crate) fn name_element(mut self, path: impl FnOnce(&str) -> String) -> Error {
        use crate::FormatError as F;
        if let ErrorKind::Format(
            F::Truncated { owner: Some(o), .. }
            | F::TooLong { owner: Some(o), .. }
            | F::InvalidUtf8 { owner: Some(o), .. },
        ) = &mut self.0.kind
        {
            *o = path(o);
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
                Some(a) if a.contains(&crate::format::shown_path(&path).to_string()) => a,
                Some(a) => format!("{a} to {}", crate::format::shown_path(&path)),
                None => format!("writing {}", crate::format::shown_path(&path)),
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
    pub(crate) fn in_tensor(mut self, name: impl fmt::Display) -> Error {
        let name = name.to_string();
        if let ErrorKind::Write(WriteError::InvalidTensor { name: n, .. } | WriteError::SizeMismatch { name: n, .. }) =
            &mut self.0.kind
        {
            if n.is_empty() {
                n.clone_from(&name);
            }
        }
        if self.tensor().is_none() {
            self.0.cx.tensor = Some(name);
        }
        self
    }

    /// [`ErrorKind::NotFound`].
    #[cold]
    pub(crate) fn not_found(what: &'static str, name: impl fmt::Display) -> Error {
        ErrorKind::NotFound { what, name: name.to_string() }.into()
    }

    /// [`ErrorKind::DataNotLoaded`].
    #[cold]
    pub(crate) fn data_not_loaded(name: impl fmt::Display) -> Error {
        ErrorKind::DataNotLoaded { name: name.to_string() }.into()
    }
}

macro_rules! as_layer {
    ($($(#[$doc:meta])* $name:ident => $v:ident($t:ty),)*) => {
        impl Error {$(
            $(#[$doc])*
            pub fn $name(&self) -> Option<&$t> {
                match &self.0.kind {
                    ErrorKind::$v(e) => Some(e),
                    _ => None,
                }
            }
        )*}
    };
}

as_layer! {
    /// The [`FormatError`], if the reader refused the file.
    as_format => Format(FormatError),
    /// The [`WriteError`], if the writer refused.
    as_write => Write(WriteError),
    /// The [`MetadataError`], if serde failed.
    as_metadata => Metadata(MetadataError),
    /// The [`ModelError`], if a typed model did not fit.
    as_model => Model(ModelError),
    /// The [`CodecError`], if a codec failed.
    as_codec => Codec(CodecError),
    /// The [`ShardError`], if the shards of a split model do not fit together.
    as_shard => Shard(ShardError),
    /// The [`QuantizeError`], if a quantization cannot be made as asked.
    as_quantize => Quantize(QuantizeError),
    /// The [`EditError`], if an edit cannot be applied.
    as_edit => Edit(EditError),
    /// The [`std::io::Error`], if an I/O call failed.
    as_io => Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Inner { kind, cx } = &*self.0;
        if let Some(s) = &cx.shard {
            write!(f, "shard {}: ", crate::format::shown_path(&s))?;
        }
        if let Some(t) = &cx.tensor {
            write!(f, "tensor {}: ", Quoted(t))?;
        }
        match (kind, &cx.action) {
            (ErrorKind::Io(e), Some(action)) => write!(f, "I/O error {action}: {e}")?,
            (kind, _) => kind.fmt(f)?,
        }
        if let Some(k) = &cx.key {
            write!(f, " at key {}", Quoted(k))?;
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
