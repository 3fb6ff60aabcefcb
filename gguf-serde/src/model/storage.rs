//! Tensor storages: how a bound tensor is held (borrowed, owned, dequantized, or a type of your own), and the one place where they switch to the codecs.

use super::*;
use crate::codec::CodecError;
use crate::container::{Shape, TensorInfo};
use crate::error::{Error, Result, WriteError};
use crate::format::GgmlType;
use crate::format::{Endian, MAX_DIMS};
use std::borrow::Cow;

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
    /// [`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize) for a type the [codecs](crate::codec) cannot decode.
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
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) for more than 4 dims, a last
    /// dimension that is not a multiple of the block size, or an overflowing size;
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) for the wrong number of bytes.
    pub fn new(dtype: GgmlType, shape: &[u64], bytes: Vec<u8>) -> Result<Tensor> {
        let bad = |reason: String| Error::invalid_tensor("", reason);
        let shape = Shape::from_canonical(shape)
            .ok_or_else(|| bad(format!("{} dimensions, at most {MAX_DIMS}", shape.len())))?;
        let nbytes = dtype.nbytes(&shape.ne()).ok_or_else(|| {
            bad(format!("shape {shape:?} is not whole {dtype} blocks along its last dimension, or overflows"))
        })?;
        if nbytes != bytes.len() as u64 {
            return Err(
                WriteError::SizeMismatch { name: String::new(), expected: nbytes, found: bytes.len() as u64 }.into()
            );
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
    /// [`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize) /
    /// [`CodecError::UnsupportedQuantize`](crate::codec::CodecError::UnsupportedQuantize) for types
    /// the [codecs](crate::codec) do not handle;
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) if the last dimension is not
    /// a multiple of `dtype`'s block size.
    pub fn quantize(&self, dtype: GgmlType) -> Result<Tensor> {
        let data = self.to_f32()?;
        if let Err(e) = Tensor::new(dtype, &self.shape, Vec::new()) {
            if matches!(e.as_write(), Some(WriteError::InvalidTensor { .. })) {
                return Err(e);
            }
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
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) for more bytes than declared,
    /// [`ErrorKind::Io`](crate::ErrorKind::Io)).
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
        return Err(Error::invalid_tensor(name, format!("stored as {have}, not {dtype}")));
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
        let shape =
            Shape::from_canonical(&shape).ok_or_else(|| Error::invalid_tensor(spec.name, "more than 4 dims"))?;
        Ok((dtype, shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        from_f32(dtype, endian, self).map(Cow::Owned)
    }
}

/// Converts stored tensor bytes of `dtype` in byte order `endian` to `f32`, through the
/// [codecs](crate::codec) (every type they decode).
///
/// # Errors
/// The codec's errors ([`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize), [`CodecError::NotWholeBlocks`](crate::codec::CodecError::NotWholeBlocks)).
pub(crate) fn to_f32(dtype: GgmlType, endian: Endian, bytes: &[u8]) -> Result<Vec<f32>> {
    let blocks = bytes.len() as u64 / dtype.type_size();
    let n = blocks.checked_mul(dtype.block_size()).and_then(|n| usize::try_from(n).ok()).ok_or(
        CodecError::NotWholeBlocks { dtype, what: "input bytes", len: bytes.len() as u64, block: dtype.type_size() },
    )?;
    let mut out = vec![0f32; n];
    crate::codec::dequantize_par(dtype, endian, bytes, &mut out)?;
    Ok(out)
}

/// Converts `f32` elements to stored bytes of `dtype` in byte order `endian`, through the
/// [codecs](crate::codec).
///
/// # Errors
/// The codec's errors ([`CodecError::UnsupportedQuantize`](crate::codec::CodecError::UnsupportedQuantize), [`CodecError::NotWholeBlocks`](crate::codec::CodecError::NotWholeBlocks)).
pub(crate) fn from_f32(dtype: GgmlType, endian: Endian, data: &[f32]) -> Result<Vec<u8>> {
    let nbytes =
        dtype.row_bytes(data.len() as u64).and_then(|n| usize::try_from(n).ok()).ok_or(CodecError::NotWholeBlocks {
            dtype,
            what: "input elements",
            len: data.len() as u64,
            block: dtype.block_size(),
        })?;
    let mut out = vec![0u8; nbytes];
    crate::codec::quantize_par(dtype, endian, data, &mut out)?;
    Ok(out)
}
