//! Typed models: a whole GGUF file — metadata and tensors — as one Rust struct.
//!
//! `#[derive(GgufModel)]` (re-exported from the `gguf-derive` crate) binds each field of a struct
//! to a tensor, a numbered list of sub-models or the metadata, and generates the code that reads
//! the struct from a [`ModelSource`] (a [`Gguf`] file or a [`ShardedGguf`] model) and writes it
//! back with a [`GgufWriter`]:
//!
//! ```
//! use gguf_serde::{GgufModel, GgmlType, GgufWriter, Gguf, Tensor, TensorView};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Meta {
//!     #[serde(rename = "general.architecture")]
//!     arch: String,
//!     #[serde(rename = "{arch}.block_count")]
//!     block_count: u32,
//!     #[serde(rename = "{arch}.embedding_length")]
//!     embd: u32,
//! }
//!
//! #[derive(GgufModel)]
//! struct Block<T> {
//!     #[gguf(name = "attn_norm.weight", dtype = "F32")]
//!     attn_norm: T,
//! }
//!
//! #[derive(GgufModel)]
//! struct Tiny<T> {
//!     #[gguf(metadata)]
//!     meta: Meta,
//!     #[gguf(name = "token_embd.weight", shape = "[4, embd]")]
//!     token_embd: T,
//!     #[gguf(name = "blk.{}", count = "block_count")]
//!     blocks: Vec<Block<T>>,
//!     #[gguf(name = "output.weight")]
//!     output: Option<T>, // tied embeddings: absent is fine
//! }
//!
//! // Build a model in memory and write it...
//! let model = Tiny {
//!     meta: Meta { arch: "tiny".into(), block_count: 2, embd: 8 },
//!     token_embd: Tensor::from_f32(&[4, 8], &[0.5; 32])?,
//!     blocks: vec![
//!         Block { attn_norm: Tensor::from_f32(&[8], &[1.0; 8])? },
//!         Block { attn_norm: Tensor::from_f32(&[8], &[1.0; 8])? },
//!     ],
//!     output: None,
//! };
//! let bytes = model.to_vec()?;
//!
//! // ...and read it back, borrowing the tensor data from the bytes.
//! let file = Gguf::from_slice(&bytes)?;
//! let back = Tiny::<TensorView>::read(&file)?;
//! assert_eq!(back.meta.block_count, 2);
//! assert_eq!(&*back.token_embd.shape, &[4, 8]);
//! assert_eq!(back.blocks[1].attn_norm.name, "blk.1.attn_norm.weight");
//! assert_eq!(back.blocks[1].attn_norm.to_f32()?, vec![1.0; 8]);
//! assert!(back.output.is_none());
//!
//! // Or as f32 vectors, converted on read.
//! let typed = Tiny::<Vec<f32>>::read(&file)?;
//! assert_eq!(typed.token_embd.len(), 32);
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! # Attributes
//!
//! On the struct:
//!
//! | attribute | meaning |
//! |---|---|
//! | `#[gguf(unbound = "error")]` | the default: reading fails with [`Error::UnboundTensors`] if the file has tensors that no field binds (so that a read-then-write round trip cannot silently drop tensors) |
//! | `#[gguf(unbound = "ignore")]` | tensors that no field binds are left alone; [`LoadReport::unbound`] lists them |
//!
//! On a field (a field with no attribute is a tensor or sub-model named after the field):
//!
//! | attribute | field type | meaning |
//! |---|---|---|
//! | `#[gguf(metadata)]` | any `Serialize + Deserialize` type | the key/value metadata, read with the [serde mapping](crate#the-serde-mapping) and the read options (e.g. the `{arch}` prefix). At most one per struct. Written only for the top-level struct: a sub-model's metadata field reads the same keys (e.g. the hyper-parameters its shape constraints need) and is not written again |
//! | `#[gguf(name = "token_embd.weight")]` | a tensor storage (`T`, [`TensorView`], [`Tensor`], `Vec<f32>`, your own) | the tensor of that name (after the prefix of the enclosing sub-model) |
//! | `#[gguf(name = "vision")]` | a sub-model (a struct that derives `GgufModel`) | its fields' names get the prefix `vision.` |
//! | `#[gguf(flatten)]` | a sub-model | its fields' names get no prefix of their own (a group of top-level tensors in a struct of its own) |
//! | `#[gguf(name = "blk.{}")]` | `Vec<Sub>` of sub-models or tensors | element `i` is named with `{}` replaced by `i`: `blk.0.attn_q.weight`, `blk.1.…` |
//! | `#[gguf(name = "blk.{}", count = "block_count")]` | `Vec<…>` | the number of elements is a metadata value (an expression as for `shape`); without `count` (or when the value is an absent `Option`), it is the number of elements present in the file, and a hole in the numbering is [`Error::NumberingHole`] |
//! | `Option<…>` field type | | an optional tensor or sub-model: `None` when absent (tied embeddings). Any other missing tensor is [`Error::MissingTensor`] |
//! | `#[gguf(dtype = "F32")]`, `#[gguf(dtype = "Q4_K \| Q6_K")]` | tensors (also in `Option` and `Vec`) | the ggml types the tensor may have (one, or a set separated by `\|`); without it, any type. A typed storage (`Vec<f32>`) is written as the first type listed (F32 without a `dtype`) |
//! | `#[gguf(shape = "[vocab_size, embedding_length]")]` | tensors | the canonical shape (outermost first); each dimension is a number, `_` (any), or an expression over the fields of the struct's `#[gguf(metadata)]` field with `+ - * /` and parentheses: `[head_count * key_length, embd]`. A metadata value may be any integer, an `Option` of one (`None` checks nothing), or a `Vec`/slice/string array (its length: `[tokens, embd]`) |
//!
//! Mistakes are compile errors pointing at the attribute or field: an unknown attribute, a
//! duplicate name, a field type that is neither a tensor storage nor a sub-model, a `Vec` of
//! sub-models without a `{}` template, a template with `{}` on a field that is not a `Vec`, a
//! `dtype` that is not a ggml type, a `shape` that names a missing metadata field.
//!
//! # Reading
//! [`GgufModel::read`] takes a [`Gguf`] (a slice, a memory mapping or owned bytes) or a
//! [`ShardedGguf`]; [`GgufModel::read_with`] takes [`ReadOptions`] and also returns a
//! [`LoadReport`]. The metadata field is deserialized first (shape and count constraints use
//! it), then the fields in order. Errors name the tensor: [`Error::MissingTensor`],
//! [`Error::TensorDtype`], [`Error::TensorShape`], [`Error::NumberingHole`],
//! [`Error::UnboundTensors`], [`Error::ModelConstraint`] (also for a `count` larger than the number
//! of tensors), [`Error::InTensor`] for a conversion that fails.
//!
//! # Writing
//! [`GgufModel::write`] adds to a [`GgufWriter`] the top-level metadata (its key/value pairs, in
//! field order), then declares every tensor in field order (a sub-model's tensors where the
//! sub-model is, `Vec` elements by number), then streams each tensor's data in the same order.
//! Nothing but one tensor at a time is held in memory (or one piece of it: a storage may give its
//! data in pieces through [`TensorStorage::write_stored`], converting as it goes), and a
//! [`TensorView`] is written straight from the file it borrows from (a memory mapping), so a
//! model larger than memory can be written from the views of another file. Constraints are
//! checked on write too. A file read and written back with the same field order and metadata is
//! byte-identical.
//!
//! # Tensor storage
//! A field's tensor type implements [`TensorStorage`]: [`TensorView`] (borrowed from the file,
//! zero-copy), [`Tensor`] (owned bytes), `Vec<f32>` (converted on read), or your own type, e.g.
//! a framework's tensor (see [`TensorStorage`]).
//!
//! [`ShardedGguf`]: crate::ShardedGguf

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::container::{Endian, Gguf, GgufWriter, Kv, Shape, Source, TensorInfo, Value, MAX_DIMS};
use crate::dtype::GgmlType;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::shard::{ShardedGguf, TensorSource};

// ---------------------------------------------------------------------------------------------
// Sources

/// What a typed model is read from: tensors by name ([`TensorSource`]), the key/value metadata
/// and the byte order. Implemented by [`Gguf`] and [`ShardedGguf`].
pub trait ModelSource: TensorSource {
    /// The key/value metadata of the model, in file order (for a sharded model, the first
    /// shard's without the split keys).
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_>;

    /// The byte order of the tensor data.
    fn endian(&self) -> Endian;
}

impl<S: Source> ModelSource for Gguf<S> {
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_> {
        Box::new(self.metadata())
    }

    fn endian(&self) -> Endian {
        Gguf::endian(self)
    }
}

impl ModelSource for ShardedGguf {
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_> {
        Box::new(self.metadata())
    }

    fn endian(&self) -> Endian {
        self.shard(0).map_or(Endian::Little, |f| f.endian())
    }
}

// ---------------------------------------------------------------------------------------------
// Tensor storages

/// A tensor borrowed from a file: its name, type, canonical shape and stored bytes, without a
/// copy. Read a model as `Model<TensorView<'_>>` to bind every tensor zero-copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensorView<'a> {
    /// The full tensor name, e.g. `blk.0.attn_q.weight`.
    pub name: &'a str,
    /// The ggml type.
    pub dtype: GgmlType,
    /// The canonical shape, outermost first (the stored `ne` reversed).
    pub shape: Shape,
    /// The stored bytes (`dtype.nbytes(ne)` of them), in the file's byte order.
    pub bytes: &'a [u8],
    /// The file's byte order.
    pub endian: Endian,
}

impl<'a> TensorView<'a> {
    /// A view of the tensor `info` whose data is `bytes`.
    pub fn new(info: &TensorInfo<'a>, bytes: &'a [u8], endian: Endian) -> Self {
        TensorView { name: info.name, dtype: info.dtype, shape: info.shape, bytes, endian }
    }

    /// The number of elements: the product of the shape.
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The elements as `f32`, in row-major order of the canonical shape (the stored order).
    ///
    /// # Errors
    /// [`Error::UnsupportedDequantize`] for a type the [codecs](crate::codec) cannot decode.
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        to_f32(self.dtype, self.endian, self.bytes)
    }

    /// An owned copy.
    pub fn to_tensor(&self) -> Tensor {
        Tensor { dtype: self.dtype, shape: self.shape, bytes: self.bytes.to_vec(), endian: self.endian }
    }
}

/// An owned tensor: type, canonical shape and stored bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The ggml type.
    pub dtype: GgmlType,
    /// The canonical shape, outermost first.
    pub shape: Shape,
    /// The stored bytes, `dtype.nbytes(ne)` of them, in byte order `endian`.
    pub bytes: Vec<u8>,
    /// The byte order of `bytes`.
    pub endian: Endian,
}

impl Tensor {
    /// A little-endian tensor of `dtype` with canonical `shape` (outermost first) holding
    /// `bytes`, which must be the type's size for that shape.
    ///
    /// # Errors
    /// [`Error::InvalidTensor`] for more than 4 dims, a last dimension that is not a multiple of
    /// the block size, or an overflowing size; [`Error::TensorSizeMismatch`] for the wrong number
    /// of bytes.
    pub fn new(dtype: GgmlType, shape: &[u64], bytes: Vec<u8>) -> Result<Tensor> {
        let bad = |reason: String| Error::InvalidTensor { name: String::new(), reason };
        let shape = Shape::from_canonical(shape)
            .ok_or_else(|| bad(format!("{} dimensions, at most {MAX_DIMS}", shape.len())))?;
        let nbytes = dtype.nbytes(&shape.ne()).ok_or_else(|| {
            bad(format!("shape {shape:?} is not whole {dtype} blocks along its last dimension, or overflows"))
        })?;
        if nbytes != bytes.len() as u64 {
            return Err(Error::TensorSizeMismatch { name: String::new(), expected: nbytes, found: bytes.len() as u64 });
        }
        Ok(Tensor { dtype, shape, bytes, endian: Endian::Little })
    }

    /// An F32 tensor of canonical `shape` from its elements in row-major order.
    ///
    /// # Errors
    /// As [`Tensor::new`] (the element count must be the shape's product).
    pub fn from_f32(shape: &[u64], data: &[f32]) -> Result<Tensor> {
        Tensor::new(GgmlType::F32, shape, data.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// The number of elements: the product of the shape.
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The elements as `f32` (see [`TensorView::to_f32`]).
    ///
    /// # Errors
    /// As [`TensorView::to_f32`].
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        to_f32(self.dtype, self.endian, &self.bytes)
    }

    /// This tensor converted to `dtype` (dequantized to `f32`, then quantized with ggml's
    /// reference quantizer; F32, F16 and BF16 are plain conversions), little-endian.
    ///
    /// # Errors
    /// [`Error::UnsupportedDequantize`] / [`Error::UnsupportedQuantize`] for types the
    /// [codecs](crate::codec) do not handle; [`Error::InvalidTensor`] if the last dimension is not
    /// a multiple of `dtype`'s block size.
    pub fn quantize(&self, dtype: GgmlType) -> Result<Tensor> {
        let data = self.to_f32()?;
        let check = Tensor::new(dtype, &self.shape, Vec::new());
        if let Err(e @ Error::InvalidTensor { .. }) = check {
            return Err(e);
        }
        Tensor::new(dtype, &self.shape, from_f32(dtype, Endian::Little, &data)?)
    }

    /// A view of this tensor, named `name`.
    pub fn view<'a>(&'a self, name: &'a str) -> TensorView<'a> {
        TensorView { name, dtype: self.dtype, shape: self.shape, bytes: &self.bytes, endian: self.endian }
    }
}

/// How a field's tensor is stored in Rust: the trait the derive binds tensor fields through.
///
/// Implemented for [`TensorView`] (borrowed), [`Tensor`] (owned) and `Vec<f32>` (dequantized on
/// read; written as F32, or quantized to the first type of the field's `dtype`), and
/// implementable for
/// your own types. Reading checks the field's constraints before [`from_view`](Self::from_view);
/// writing asks [`layout`](Self::layout) how the tensor is stored (checked against the
/// constraints too) and then [`stored_bytes`](Self::stored_bytes) for its data.
///
/// A framework's tensor, stored as F32:
///
/// ```
/// use std::borrow::Cow;
/// use gguf_serde::model::{FieldSpec, TensorStorage, TensorView};
/// use gguf_serde::{Endian, GgmlType, GgufModel, Result, Shape};
///
/// /// A toy framework's tensor: f32 elements and a shape.
/// struct Array { dims: Vec<usize>, data: Vec<f32> }
///
/// impl<'a> TensorStorage<'a> for Array {
///     fn from_view(view: TensorView<'a>) -> Result<Self> {
///         Ok(Array { dims: view.shape.iter().map(|&d| d as usize).collect(), data: view.to_f32()? })
///     }
///     fn layout(&self, _spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
///         let dims: Vec<u64> = self.dims.iter().map(|&d| d as u64).collect();
///         Ok((GgmlType::F32, Shape::from_canonical(&dims).expect("at most 4 dims")))
///     }
///     fn stored_bytes(&self, _dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
///         Ok(Cow::Owned(self.data.iter().flat_map(|x| match endian {
///             Endian::Little => x.to_le_bytes(),
///             Endian::Big => x.to_be_bytes(),
///         }).collect()))
///     }
/// }
///
/// #[derive(GgufModel)]
/// struct Net<T> {
///     #[gguf(name = "w")]
///     w: T,
/// }
/// let net = Net { w: Array { dims: vec![2, 2], data: vec![1.0, 2.0, 3.0, 4.0] } };
/// let bytes = net.to_vec()?;
/// let back = Net::<Array>::read(&gguf_serde::Gguf::from_slice(&bytes)?)?;
/// assert_eq!((back.w.dims, back.w.data), (vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]));
/// # Ok::<(), gguf_serde::Error>(())
/// ```
pub trait TensorStorage<'a>: Sized {
    /// Builds the storage from a view of the stored tensor (whose type and shape have passed the
    /// field's constraints).
    ///
    /// # Errors
    /// Whatever the conversion can fail with (e.g. a type it cannot convert).
    fn from_view(view: TensorView<'a>) -> Result<Self>;

    /// The type and canonical shape this tensor is written with; `spec` is the field's name and
    /// constraints (a typed storage takes its type and shape from them).
    ///
    /// # Errors
    /// When the tensor cannot be stored as the field asks.
    fn layout(&self, spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)>;

    /// The stored bytes for type `dtype` (as returned by [`layout`](Self::layout)) in byte order
    /// `endian` (the writer's). Borrowed when the data is already stored so.
    ///
    /// # Errors
    /// When the data cannot be given in that type or byte order.
    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>>;

    /// Writes the stored bytes for type `dtype` in byte order `endian` to `out`, in as many
    /// pieces as it likes: the pieces, concatenated, are the bytes
    /// [`stored_bytes`](Self::stored_bytes) returns. The writer checks their total against the
    /// declared size.
    ///
    /// The default calls [`stored_bytes`](Self::stored_bytes) and writes the result in one piece.
    /// Override it to stream a tensor that is converted on the fly (read from another format,
    /// quantized chunk by chunk), so that memory stays one chunk whatever the tensor's size — see
    /// the `convert_safetensors` example.
    ///
    /// # Errors
    /// As [`stored_bytes`](Self::stored_bytes), and the errors of `out` (the writer's:
    /// [`Error::TensorSizeMismatch`] for more bytes than declared, [`Error::Io`]).
    fn write_stored(&self, dtype: GgmlType, endian: Endian, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        out(&self.stored_bytes(dtype, endian)?)
    }
}

impl<'a> TensorStorage<'a> for TensorView<'a> {
    fn from_view(view: TensorView<'a>) -> Result<Self> {
        Ok(view)
    }

    fn layout(&self, _spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        Ok((self.dtype, self.shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        same_bytes(self.name, self.dtype, self.endian, self.bytes, dtype, endian)
    }
}

impl<'a> TensorStorage<'a> for Tensor {
    fn from_view(view: TensorView<'a>) -> Result<Self> {
        Ok(view.to_tensor())
    }

    fn layout(&self, _spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        Ok((self.dtype, self.shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        same_bytes("", self.dtype, self.endian, &self.bytes, dtype, endian)
    }
}

fn same_bytes<'b>(
    name: &str,
    have: GgmlType,
    have_endian: Endian,
    bytes: &'b [u8],
    dtype: GgmlType,
    endian: Endian,
) -> Result<Cow<'b, [u8]>> {
    if have != dtype {
        return Err(Error::InvalidTensor { name: name.to_owned(), reason: format!("stored as {have}, not {dtype}") });
    }
    if have_endian == endian {
        return Ok(Cow::Borrowed(bytes));
    }
    // Byte-swap each multi-byte field of each block (the layout the codecs define).
    let mut owned = bytes.to_vec();
    crate::codec::swap_blocks(dtype, &mut owned);
    Ok(Cow::Owned(owned))
}

/// Typed storage: the elements as `f32`, converted on read through the [codecs](crate::codec)
/// (row-major in the canonical shape).
/// Written as the first type of the field's `dtype` constraint, else F32; the shape written is
/// the field's `shape` constraint when it is fully known and matches the length, else one
/// dimension of the vector's length.
impl<'a> TensorStorage<'a> for Vec<f32> {
    fn from_view(view: TensorView<'a>) -> Result<Self> {
        view.to_f32()
    }

    fn layout(&self, spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        let dtype = spec.dtypes.first().copied().unwrap_or(GgmlType::F32);
        let len = self.len() as u64;
        let known: Option<Vec<u64>> = spec.shape.and_then(|s| s.iter().map(|d| d.known()).collect());
        let shape = match known {
            Some(dims) if dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)) == Some(len) => dims,
            _ => vec![len],
        };
        let shape = Shape::from_canonical(&shape)
            .ok_or_else(|| Error::InvalidTensor { name: spec.name.to_owned(), reason: "more than 4 dims".into() })?;
        Ok((dtype, shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        from_f32(dtype, endian, self).map(Cow::Owned)
    }
}

// ---------------------------------------------------------------------------------------------
// Conversion (one place to switch to the codecs)

/// Converts stored tensor bytes of `dtype` in byte order `endian` to `f32`, through the
/// [codecs](crate::codec) (every type they decode).
///
/// # Errors
/// The codec's errors ([`Error::UnsupportedDequantize`], [`Error::NotWholeBlocks`]).
pub(crate) fn to_f32(dtype: GgmlType, endian: Endian, bytes: &[u8]) -> Result<Vec<f32>> {
    let blocks = bytes.len() as u64 / dtype.type_size();
    let n =
        blocks.checked_mul(dtype.block_size()).and_then(|n| usize::try_from(n).ok()).ok_or(Error::NotWholeBlocks {
            dtype,
            what: "input bytes",
            len: bytes.len() as u64,
            block: dtype.type_size(),
        })?;
    let mut out = vec![0f32; n];
    crate::codec::dequantize_par(dtype, endian, bytes, &mut out)?;
    Ok(out)
}

/// Converts `f32` elements to stored bytes of `dtype` in byte order `endian`, through the
/// [codecs](crate::codec).
///
/// # Errors
/// The codec's errors ([`Error::UnsupportedQuantize`], [`Error::NotWholeBlocks`]).
pub(crate) fn from_f32(dtype: GgmlType, endian: Endian, data: &[f32]) -> Result<Vec<u8>> {
    let nbytes =
        dtype.row_bytes(data.len() as u64).and_then(|n| usize::try_from(n).ok()).ok_or(Error::NotWholeBlocks {
            dtype,
            what: "input elements",
            len: data.len() as u64,
            block: dtype.block_size(),
        })?;
    let mut out = vec![0u8; nbytes];
    crate::codec::quantize_par(dtype, endian, data, &mut out)?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Field specs and dimensions

/// A dimension of a shape constraint, or a count, as evaluated from the metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Not constrained: `_`, or an absent (`None`) metadata value.
    Any,
    /// This many.
    Known(u64),
    /// The expression could not be evaluated (overflow, a negative value, division by zero).
    Invalid(String),
}

impl Dim {
    /// The value, if known.
    pub fn known(&self) -> Option<u64> {
        match self {
            Dim::Known(v) => Some(*v),
            _ => None,
        }
    }
}

/// The name and constraints of one field, as the derive passes them to [`ModelField`] and
/// [`TensorStorage::layout`].
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec<'s> {
    /// The full tensor name (or sub-model prefix).
    pub name: &'s str,
    /// The Rust field (`Struct.field`), for error messages.
    pub field: &'s str,
    /// The ggml types the tensor may have; empty for any.
    pub dtypes: &'s [GgmlType],
    /// The canonical shape constraint, if any.
    pub shape: Option<&'s [Dim]>,
}

impl FieldSpec<'_> {
    fn check(&self, dtype: GgmlType, shape: &Shape) -> Result<()> {
        if !self.dtypes.is_empty() && !self.dtypes.contains(&dtype) {
            return Err(Error::TensorDtype {
                name: self.name.to_owned(),
                expected: self.dtypes.to_vec(),
                found: dtype,
            });
        }
        if let Some(want) = self.shape {
            if let Some(Dim::Invalid(reason)) = want.iter().find(|d| matches!(d, Dim::Invalid(_))) {
                return Err(Error::ModelConstraint { name: self.name.to_owned(), reason: reason.clone() });
            }
            let ok = want.len() == shape.len()
                && want.iter().zip(shape.iter()).all(|(w, &s)| w.known().is_none_or(|w| w == s));
            if !ok {
                return Err(Error::TensorShape {
                    name: self.name.to_owned(),
                    expected: want.iter().map(Dim::known).collect(),
                    found: shape.to_vec(),
                });
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Contexts

/// Whether a model refuses tensors that no field binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unbound {
    /// Reading fails with [`Error::UnboundTensors`] (the default of the derive).
    #[default]
    Error,
    /// They are ignored; [`LoadReport::unbound`] lists them.
    Ignore,
}

/// Options of [`GgufModel::read_with`].
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Options of the metadata deserialization (e.g. the `{arch}` architecture).
    pub serde: Options,
    /// Overrides the struct's `#[gguf(unbound = ...)]` policy.
    pub unbound: Option<Unbound>,
}

/// What reading a model found besides the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// The number of tensors bound to fields.
    pub bound: usize,
    /// The tensors of the file that no field binds, in file order.
    pub unbound: Vec<String>,
}

/// The state of one read: the source, the options and the tensors bound so far.
pub struct ReadCx<'a> {
    src: &'a (dyn ModelSource + 'a),
    opts: Options,
    bound: HashSet<&'a str>,
}

impl<'a> ReadCx<'a> {
    /// Deserializes the source's metadata into `M` (with the read options).
    ///
    /// # Errors
    /// [`Error::Serde`] when the metadata does not fit `M`.
    pub fn metadata<M: Deserialize<'a>>(&self) -> Result<M> {
        self.opts.from_kvs(self.src.kvs())
    }

    /// Whether any tensor's name starts with `prefix` followed by `.`.
    pub fn has_prefix(&self, prefix: &str) -> bool {
        self.src.tensor_infos().any(|t| t.name.strip_prefix(prefix).is_some_and(|r| r.starts_with('.')))
    }

    /// Whether the source has a tensor named `name`.
    pub fn has_tensor(&self, name: &str) -> bool {
        self.src.tensor_info(name).is_some()
    }

    fn read_tensor(&mut self, spec: &FieldSpec<'_>) -> Result<TensorView<'a>> {
        let src: &'a (dyn ModelSource + 'a) = self.src;
        let (info, bytes) = src.tensor_bytes(spec.name).map_err(|e| match e {
            Error::NotFound { .. } => Error::MissingTensor { name: spec.name.to_owned(), field: spec.field.to_owned() },
            e => e,
        })?;
        spec.check(info.dtype, &info.shape)?;
        self.bound.insert(info.name);
        Ok(TensorView::new(&info, bytes, src.endian()))
    }
}

/// Names the tensor in an error of a storage's conversion: an [`Error::InvalidTensor`] without a
/// name gets it, an error that names no tensor (a codec error) is wrapped in
/// [`Error::InTensor`].
fn in_tensor(name: &str, e: Error) -> Error {
    match e {
        Error::InvalidTensor { name: n, reason } if n.is_empty() => {
            Error::InvalidTensor { name: name.to_owned(), reason }
        }
        e @ (Error::InvalidTensor { .. } | Error::InTensor { .. }) => e,
        e => Error::InTensor { name: name.to_owned(), source: Box::new(e) },
    }
}

/// A function that writes one piece of a tensor's data.
type Piece<'p> = dyn FnMut(&[u8]) -> Result<()> + 'p;

/// The sink a model writes to: a [`GgufWriter`] over any output.
trait Sink {
    fn add_value(&mut self, key: &str, value: &Value) -> Result<()>;
    fn add_tensor(&mut self, name: &str, dtype: GgmlType, shape: &[u64]) -> Result<()>;
    /// Gives the next tensor's data in pieces: `f` is called with a function that writes one
    /// piece; the total is checked at the end.
    fn write_tensor_pieces(&mut self, f: &mut dyn FnMut(&mut Piece<'_>) -> Result<()>) -> Result<()>;
    fn endian(&self) -> Endian;
}

impl<W: Write> Sink for GgufWriter<W> {
    fn add_value(&mut self, key: &str, value: &Value) -> Result<()> {
        GgufWriter::add_value(self, key, value)
    }
    fn add_tensor(&mut self, name: &str, dtype: GgmlType, shape: &[u64]) -> Result<()> {
        GgufWriter::add_tensor(self, name, dtype, shape)
    }
    fn write_tensor_pieces(&mut self, f: &mut dyn FnMut(&mut Piece<'_>) -> Result<()>) -> Result<()> {
        let mut data = self.tensor_data_writer()?;
        f(&mut |piece| data.write(piece))?;
        data.finish()
    }
    fn endian(&self) -> Endian {
        GgufWriter::endian(self)
    }
}

/// The state of one write: the writer, the pass (declaring, then data) and the options.
pub struct WriteCx<'w> {
    sink: &'w mut dyn Sink,
    declaring: bool,
    opts: Options,
}

impl WriteCx<'_> {
    /// Adds the key/value pairs of the top-level metadata (in the declaring pass; nothing in the
    /// data pass).
    ///
    /// # Errors
    /// As [`GgufWriter::add_serialize_with`].
    pub fn add_metadata<M: Serialize + ?Sized>(&mut self, meta: &M) -> Result<()> {
        if self.declaring {
            for (k, v) in self.opts.to_pairs(meta)? {
                self.sink.add_value(&k, &v)?;
            }
        }
        Ok(())
    }

    fn tensor<'a, T: TensorStorage<'a>>(&mut self, t: &T, spec: &FieldSpec<'_>) -> Result<()> {
        let (dtype, shape) = t.layout(spec)?;
        spec.check(dtype, &shape)?;
        if self.declaring {
            self.sink.add_tensor(spec.name, dtype, &shape)
        } else {
            let endian = self.sink.endian();
            self.sink.write_tensor_pieces(&mut |out| {
                // The writer's errors name the tensor already; the storage's get its name.
                let mut writer_failed = false;
                let mut piece = |bytes: &[u8]| out(bytes).inspect_err(|_| writer_failed = true);
                t.write_stored(dtype, endian, &mut piece).map_err(|e| {
                    if writer_failed {
                        e
                    } else {
                        in_tensor(spec.name, e)
                    }
                })
            })
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The traits the derive implements

/// A field of a typed model: a tensor storage ([`TensorStorage`], through a blanket impl) or a
/// sub-model (implemented by `#[derive(GgufModel)]`). Not meant to be implemented by hand.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is neither a tensor storage nor a GGUF sub-model",
    label = "not a tensor or sub-model",
    note = "a field of a `#[derive(GgufModel)]` struct is a `TensorStorage` (TensorView, Tensor, Vec<f32>, your own), \
            a struct that derives `GgufModel`, an `Option` or `Vec` of those, or `#[gguf(metadata)]`"
)]
pub trait ModelField<'a>: Sized {
    /// Reads the field named `spec.name` (a tensor name, or a sub-model's prefix).
    ///
    /// # Errors
    /// The read errors of the [module docs](self).
    fn read_field(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Self>;

    /// Whether the source has this field under `name` (for `Option` fields and numbering).
    fn is_present(cx: &ReadCx<'a>, name: &str) -> bool;

    /// Declares (first pass) or writes (second pass) the field.
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    fn write_field(&self, cx: &mut WriteCx<'_>, spec: &FieldSpec<'_>) -> Result<()>;
}

impl<'a, T: TensorStorage<'a>> ModelField<'a> for T {
    fn read_field(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Self> {
        let view = cx.read_tensor(spec)?;
        T::from_view(view).map_err(|e| in_tensor(spec.name, e))
    }

    fn is_present(cx: &ReadCx<'a>, name: &str) -> bool {
        cx.has_tensor(name)
    }

    fn write_field(&self, cx: &mut WriteCx<'_>, spec: &FieldSpec<'_>) -> Result<()> {
        cx.tensor(self, spec)
    }
}

/// A whole GGUF model as a struct: implemented by `#[derive(GgufModel)]` (see the [module
/// docs](self) for the attributes). `'a` is the lifetime of the source a [`TensorView`] or
/// borrowed metadata borrows from.
pub trait GgufModel<'a>: Sized {
    /// The struct's policy for tensors that no field binds.
    const UNBOUND: Unbound;

    /// Reads the fields, with every name prefixed by `prefix` (empty at the top). Generated.
    ///
    /// # Errors
    /// As [`GgufModel::read`].
    #[doc(hidden)]
    fn read_fields(cx: &mut ReadCx<'a>, prefix: &str) -> Result<Self>;

    /// Declares or writes the fields; `root` says whether this is the top-level struct (whose
    /// metadata is written). Generated.
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    #[doc(hidden)]
    fn write_fields(&self, cx: &mut WriteCx<'_>, prefix: &str, root: bool) -> Result<()>;

    /// Reads the model from a file or sharded model, with the default options and the struct's
    /// policy for unbound tensors.
    ///
    /// # Errors
    /// [`Error::MissingTensor`], [`Error::TensorDtype`], [`Error::TensorShape`],
    /// [`Error::NumberingHole`], [`Error::ModelConstraint`], [`Error::UnboundTensors`] (unless the
    /// struct ignores them), [`Error::Serde`] for metadata that does not fit, errors of the
    /// tensor storage's conversion, [`Error::DataNotLoaded`] for a metadata-only file.
    fn read<S: ModelSource>(src: &'a S) -> Result<Self> {
        Self::read_with(src, &ReadOptions::default()).map(|(m, _)| m)
    }

    /// Reads the model with options; also returns which tensors were bound and which not.
    ///
    /// # Errors
    /// As [`GgufModel::read`].
    fn read_with<S: ModelSource>(src: &'a S, opts: &ReadOptions) -> Result<(Self, LoadReport)> {
        let mut cx = ReadCx { src, opts: opts.serde.clone(), bound: HashSet::new() };
        let model = Self::read_fields(&mut cx, "")?;
        let unbound: Vec<String> =
            src.tensor_infos().filter(|t| !cx.bound.contains(t.name)).map(|t| t.name.to_owned()).collect();
        if !unbound.is_empty() && opts.unbound.unwrap_or(Self::UNBOUND) == Unbound::Error {
            return Err(Error::UnboundTensors { names: unbound });
        }
        Ok((model, LoadReport { bound: cx.bound.len(), unbound }))
    }

    /// Writes the model to `w`: the metadata, the tensor infos, then the data of every tensor in
    /// field order (see [Writing](self#writing)). Keys added to `w` before stay; `w` must have no
    /// tensors declared. Finish the writer afterwards ([`GgufWriter::finish`] /
    /// [`GgufWriter::commit`]).
    ///
    /// # Errors
    /// The writer's errors ([`Error::InvalidKey`] for a duplicate key, [`Error::InvalidTensor`],
    /// [`Error::Io`]), [`Error::Serde`] from the metadata, [`Error::TensorDtype`] and
    /// [`Error::TensorShape`] for a tensor that breaks its field's constraints,
    /// [`Error::CountMismatch`] for a list whose length is not its metadata count.
    fn write<W: Write>(&self, w: &mut GgufWriter<W>) -> Result<()> {
        self.write_with(w, &Options::new())
    }

    /// [`GgufModel::write`] with serde options (e.g. the `{arch}` architecture).
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    fn write_with<W: Write>(&self, w: &mut GgufWriter<W>, opts: &Options) -> Result<()> {
        let mut cx = WriteCx { sink: w, declaring: true, opts: opts.clone() };
        self.write_fields(&mut cx, "", true)?;
        cx.declaring = false;
        self.write_fields(&mut cx, "", true)
    }

    /// The model as a complete GGUF file in memory (version 3, little-endian).
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    fn to_vec(&self) -> Result<Vec<u8>> {
        let mut w = GgufWriter::new(Vec::new());
        self.write(&mut w)?;
        w.finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Support for the generated code

/// Runtime support for `#[derive(GgufModel)]`. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use super::{Dim, FieldSpec, GgufModel, ModelField, ReadCx, TensorStorage, Unbound, WriteCx};
    pub use crate::dtype::GgmlType;
    pub use crate::error::{Error, Result};
    pub use serde::{Deserialize, Serialize};
    pub use std::option::Option::{self, None, Some};
    pub use std::result::Result::{Err, Ok};
    pub use std::string::String;
    pub use std::vec::Vec;

    use std::collections::BTreeSet;

    /// `prefix.name`, or `name` at the top.
    pub fn join(prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_owned()
        } else if name.is_empty() {
            prefix.to_owned()
        } else {
            format!("{prefix}.{name}")
        }
    }

    /// Checks at compile time that a field with `dtype`/`shape` constraints is a tensor.
    pub fn assert_tensor<'a, T: TensorStorage<'a>>() {}

    /// A value of the metadata used as a dimension.
    pub trait AsDim {
        /// The dimension it gives.
        fn as_dim(&self) -> Dim;
    }

    macro_rules! as_dim_int {
        ($($t:ty),*) => {$(
            impl AsDim for $t {
                #[allow(unused_comparisons)]
                fn as_dim(&self) -> Dim {
                    match u64::try_from(*self) {
                        Ok(v) => Dim::Known(v),
                        Err(_) => Dim::Invalid(format!("metadata value {} is not a dimension", self)),
                    }
                }
            }
        )*};
    }
    as_dim_int!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, u128, i128);

    impl<T: AsDim> AsDim for Option<T> {
        fn as_dim(&self) -> Dim {
            self.as_ref().map_or(Dim::Any, AsDim::as_dim)
        }
    }
    impl<T> AsDim for [T] {
        fn as_dim(&self) -> Dim {
            Dim::Known(self.len() as u64)
        }
    }
    impl<T> AsDim for Vec<T> {
        fn as_dim(&self) -> Dim {
            Dim::Known(self.len() as u64)
        }
    }
    impl<T: AsDim + ?Sized> AsDim for &T {
        fn as_dim(&self) -> Dim {
            (**self).as_dim()
        }
    }

    /// `d.as_dim()`.
    pub fn dim<D: AsDim + ?Sized>(d: &D) -> Dim {
        d.as_dim()
    }

    /// A literal dimension.
    pub fn lit(v: u64) -> Dim {
        Dim::Known(v)
    }

    /// Applies an arithmetic operator (`+ - * /`) to two dimensions, checked.
    pub fn op(a: Dim, op: char, b: Dim) -> Dim {
        match (a, b) {
            (Dim::Invalid(r), _) | (_, Dim::Invalid(r)) => Dim::Invalid(r),
            (Dim::Known(a), Dim::Known(b)) => {
                let r = match op {
                    '+' => a.checked_add(b),
                    '-' => a.checked_sub(b),
                    '*' => a.checked_mul(b),
                    _ => a.checked_div(b),
                };
                r.map_or_else(|| Dim::Invalid(format!("{a} {op} {b} overflows or divides by zero")), Dim::Known)
            }
            _ => Dim::Any,
        }
    }

    /// Reads an optional field: `None` when absent.
    pub fn read_optional<'a, X: ModelField<'a>>(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Option<X>> {
        if X::is_present(cx, spec.name) {
            X::read_field(cx, spec).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Writes an optional field (nothing for `None`).
    pub fn write_optional<'a, X: ModelField<'a>>(
        x: &Option<X>,
        cx: &mut WriteCx<'_>,
        spec: &FieldSpec<'_>,
    ) -> Result<()> {
        match x {
            Some(x) => x.write_field(cx, spec),
            None => Ok(()),
        }
    }

    fn split_template(template: &str) -> (&str, &str) {
        template.split_once("{}").unwrap_or((template, ""))
    }

    /// The element name of number `i`.
    pub fn numbered(prefix: &str, template: &str, i: u64) -> String {
        let (before, after) = split_template(template);
        super::__private::join(prefix, &format!("{before}{i}{after}"))
    }

    /// Reads a numbered list (`blk.{}`): `count` elements, or, for an unknown count, as many as
    /// the tensors present number (with an error for a hole).
    pub fn read_numbered<'a, X: ModelField<'a>>(
        cx: &mut ReadCx<'a>,
        prefix: &str,
        template: &str,
        count: Dim,
        spec: &FieldSpec<'_>,
    ) -> Result<Vec<X>> {
        let full = join(prefix, template);
        let count = match count {
            // Each element binds at least one tensor in any real model: a larger count is a
            // hostile or broken value, refused before reading (or allocating) anything.
            Dim::Known(n) if n > cx.src.tensor_count() as u64 => {
                return Err(Error::ModelConstraint {
                    name: full,
                    reason: format!("count {n} is more than the {} tensors of the model", cx.src.tensor_count()),
                })
            }
            Dim::Known(n) => n,
            Dim::Invalid(reason) => return Err(Error::ModelConstraint { name: full, reason }),
            Dim::Any => {
                let (before, after) = split_template(&full);
                let mut present = BTreeSet::new();
                for t in cx.src.tensor_infos() {
                    let Some(rest) = t.name.strip_prefix(before) else { continue };
                    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                    let (num, tail) = rest.split_at(digits);
                    if num.is_empty() || (num.len() > 1 && num.starts_with('0')) {
                        continue;
                    }
                    let Some(tail) = tail.strip_prefix(after) else { continue };
                    if !(tail.is_empty() || tail.starts_with('.')) {
                        continue;
                    }
                    if let Ok(i) = num.parse::<u64>() {
                        if present.contains(&i) {
                            continue;
                        }
                        let name = numbered("", &full, i);
                        if X::is_present(cx, &name) {
                            present.insert(i);
                        }
                    }
                }
                let max = match present.last() {
                    Some(&m) => m,
                    None => return Ok(Vec::new()),
                };
                if let Some(missing) = (0..=max).zip(present.iter()).find(|(i, p)| i != *p).map(|(i, _)| i) {
                    return Err(Error::NumberingHole { template: full, missing, max });
                }
                max + 1
            }
        };
        let mut out = Vec::new();
        for i in 0..count {
            let name = numbered("", &full, i);
            let field = format!("{}[{i}]", spec.field);
            out.push(X::read_field(cx, &FieldSpec { name: &name, field: &field, ..*spec })?);
        }
        Ok(out)
    }

    /// Writes a numbered list, checking its length against the metadata count.
    pub fn write_numbered<'a, X: ModelField<'a>>(
        xs: &[X],
        cx: &mut WriteCx<'_>,
        prefix: &str,
        template: &str,
        count: Dim,
        spec: &FieldSpec<'_>,
    ) -> Result<()> {
        let full = join(prefix, template);
        match count {
            Dim::Known(n) if n != xs.len() as u64 => {
                return Err(Error::CountMismatch { template: full, expected: n, found: xs.len() as u64 })
            }
            Dim::Invalid(reason) => return Err(Error::ModelConstraint { name: full, reason }),
            _ => {}
        }
        for (i, x) in xs.iter().enumerate() {
            let name = numbered("", &full, i as u64);
            x.write_field(cx, &FieldSpec { name: &name, ..*spec })?;
        }
        Ok(())
    }
}
