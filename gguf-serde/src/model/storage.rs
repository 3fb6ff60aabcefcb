//! Tensor storages: how a bound tensor is held (borrowed, owned, dequantized, or a type of your own), and the one place where they switch to the codecs.

use super::*;
use crate::codec::CodecError;
use crate::container::{Shape, TensorInfo};
use crate::error::{Error, ModelError, Result, WriteError};
use crate::format::{Endian, MAX_DIMS};
use crate::format::{GgmlType, GgufStr};
use std::borrow::Cow;

/// A tensor borrowed from a file: its name, type, canonical shape and stored bytes, without a
/// copy. Read a model as `Model<TensorView<'_>>` to bind every tensor zero-copy.
///
/// Two views are equal when their name, type, shape, bytes and byte order are; the
/// [`position`](Self::position) (where the tensor came from) is not compared.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'a> {
    /// The full tensor name as stored, e.g. `blk.0.attn_q.weight` (a [`GgufStr`]: a field's
    /// tensor, found by its name, always has a UTF-8 one; [`TensorView::new`] takes any).
    pub name: GgufStr<'a>,
    /// The ggml type.
    pub dtype: GgmlType,
    /// The canonical shape, outermost first (the stored `ne` reversed).
    pub shape: Shape,
    /// The stored bytes (`dtype.nbytes(ne)` of them), in the file's byte order.
    pub bytes: &'a [u8],
    /// The file's byte order.
    pub endian: Endian,
    /// The tensor's place in its source's tensor order (0 for the first tensor info), when the
    /// view was bound by a model read ([`TensorStorage::position`]); `None` otherwise.
    pub position: Option<usize>,
}

impl PartialEq for TensorView<'_> {
    fn eq(&self, o: &Self) -> bool {
        (self.name, self.dtype, self.shape, self.bytes, self.endian) == (o.name, o.dtype, o.shape, o.bytes, o.endian)
    }
}

impl PartialEq for Tensor {
    fn eq(&self, o: &Self) -> bool {
        (&self.name, self.dtype, self.shape, &self.bytes, self.endian)
            == (&o.name, o.dtype, o.shape, &o.bytes, o.endian)
    }
}

/// The byte order of the machine this runs on.
fn host_endian() -> Endian {
    if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// The error of a typed view that cannot be made.
fn no_view(name: impl std::fmt::Display, reason: String) -> Error {
    ModelError::Constraint { name: name.to_string(), reason }.into()
}

impl<'a> TensorView<'a> {
    /// A view of the tensor `info` whose data is `bytes` (with no [`position`](Self::position)).
    pub fn new(info: &TensorInfo<'a>, bytes: &'a [u8], endian: Endian) -> Self {
        TensorView { name: info.name, dtype: info.dtype, shape: info.shape, bytes, endian, position: None }
    }

    /// The number of elements: the product of the shape (saturating at `u64::MAX`, which no
    /// valid tensor reaches).
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }

    /// The elements as `f32`, in row-major order of the canonical shape (the stored order).
    ///
    /// # Errors
    /// [`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize) for a type the [codecs](crate::codec) cannot decode.
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        to_f32(self.dtype, self.endian, self.bytes).map_err(|e| e.in_tensor(self.name))
    }

    /// The stored elements as `&[E]` without a copy, for a tensor of type `dtype` whose elements
    /// are `E` (row-major in the canonical shape).
    fn typed<E: bytemuck::Pod>(&self, dtype: GgmlType) -> Result<&'a [E]> {
        if self.dtype != dtype {
            return Err(ModelError::WrongDtype {
                name: self.name.to_string(),
                expected: vec![dtype],
                found: self.dtype,
            }
            .into());
        }
        if self.endian != host_endian() {
            return Err(no_view(
                self.name,
                format!(
                    "a typed view needs the host's byte order; the data is {:?}-endian (convert it with to_f32)",
                    self.endian
                ),
            ));
        }
        bytemuck::try_cast_slice(self.bytes).map_err(|e| {
            no_view(
                self.name,
                format!(
                    "the data at address {:p} is not aligned for {} ({e}); read from a memory mapping or an aligned buffer, or convert with to_f32",
                    self.bytes.as_ptr(),
                    std::any::type_name::<E>()
                ),
            )
        })
    }

    /// The elements of an F32 tensor as `&[f32]`, borrowed from the file (row-major in the
    /// canonical shape). The data of a memory-mapped or file-aligned buffer is aligned (GGUF
    /// aligns tensor data to `general.alignment`, 32 by default).
    ///
    /// # Errors
    /// [`ModelError::WrongDtype`](crate::ModelError::WrongDtype) for another type;
    /// [`ModelError::Constraint`](crate::ModelError::Constraint) for data in the other byte order
    /// than the host's, or not aligned to 4 bytes in memory.
    pub fn as_f32(&self) -> Result<&'a [f32]> {
        self.typed(GgmlType::F32)
    }

    /// The elements of an F16 tensor as `&[half::f16]`, borrowed from the file.
    ///
    /// # Errors
    /// As [`as_f32`](Self::as_f32) (alignment 2).
    pub fn as_f16(&self) -> Result<&'a [half::f16]> {
        self.typed(GgmlType::F16)
    }

    /// The elements of a BF16 tensor as `&[half::bf16]`, borrowed from the file.
    ///
    /// # Errors
    /// As [`as_f32`](Self::as_f32) (alignment 2).
    pub fn as_bf16(&self) -> Result<&'a [half::bf16]> {
        self.typed(GgmlType::BF16)
    }

    /// An owned copy (with the same name and position).
    pub fn to_tensor(&self) -> Tensor {
        Tensor {
            name: self.name.to_string(),
            dtype: self.dtype,
            shape: self.shape,
            bytes: self.bytes.to_vec(),
            endian: self.endian,
            position: self.position,
        }
    }
}

/// An owned tensor: name, type, canonical shape and stored bytes.
///
/// Two tensors are equal when their name, type, shape, bytes and byte order are; the
/// [`position`](Self::position) (where the tensor came from) is not compared.
#[derive(Clone, Debug)]
pub struct Tensor {
    /// The tensor's name, used in its errors and by [`view`](Self::view). A model field writes
    /// the tensor under the field's name, whatever this says.
    pub name: String,
    /// The ggml type.
    pub dtype: GgmlType,
    /// The canonical shape, outermost first.
    pub shape: Shape,
    /// The stored bytes, `dtype.nbytes(ne)` of them, in byte order `endian`.
    pub bytes: Vec<u8>,
    /// The byte order of `bytes`.
    pub endian: Endian,
    /// The place in the source's tensor order of the tensor this was read from (see
    /// [`TensorView::position`]); `None` for a tensor built in memory.
    pub position: Option<usize>,
}

impl Tensor {
    /// A little-endian tensor named `name` of `dtype` with canonical `shape` (outermost first)
    /// holding `bytes`, which must be the type's size for that shape.
    ///
    /// # Errors
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) for more than 4 dims, a last
    /// dimension that is not a multiple of the block size, or an overflowing size;
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) for the wrong number of bytes.
    /// Both name the tensor.
    pub fn new(name: impl Into<String>, dtype: GgmlType, shape: &[u64], bytes: Vec<u8>) -> Result<Tensor> {
        let name = name.into();
        let bad = |reason: String| Error::invalid_tensor(name.as_str(), reason);
        let shape = Shape::from_canonical(shape)
            .ok_or_else(|| bad(format!("{} dimensions, at most {MAX_DIMS}", shape.len())))?;
        let nbytes = dtype.nbytes(shape.ne().dims()).ok_or_else(|| {
            bad(format!("shape {shape:?} is not whole {dtype} blocks along its last dimension, or overflows"))
        })?;
        if nbytes != bytes.len() as u64 {
            return Err(WriteError::SizeMismatch { name, expected: nbytes, found: bytes.len() as u64 }.into());
        }
        Ok(Tensor { name, dtype, shape, bytes, endian: Endian::Little, position: None })
    }

    /// An F32 tensor named `name` of canonical `shape` from its elements in row-major order.
    ///
    /// # Errors
    /// As [`Tensor::new`] (the element count must be the shape's product).
    pub fn from_f32(name: impl Into<String>, shape: &[u64], data: &[f32]) -> Result<Tensor> {
        Tensor::new(name, GgmlType::F32, shape, data.iter().flat_map(|x| x.to_le_bytes()).collect())
    }

    /// The number of elements: the product of the shape (saturating).
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }

    /// The elements as `f32` (see [`TensorView::to_f32`]).
    ///
    /// # Errors
    /// As [`TensorView::to_f32`].
    pub fn to_f32(&self) -> Result<Vec<f32>> {
        to_f32(self.dtype, self.endian, &self.bytes).map_err(|e| e.in_tensor(&self.name))
    }

    /// This tensor converted to `dtype` (dequantized to `f32`, then quantized with ggml's
    /// reference quantizer; F32, F16 and BF16 are plain conversions), little-endian, with the
    /// same name and position (a model whose tensors are requantized keeps its file order).
    ///
    /// # Errors
    /// [`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize) /
    /// [`CodecError::UnsupportedQuantize`](crate::codec::CodecError::UnsupportedQuantize) for types
    /// the [codecs](crate::codec) do not handle;
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) if the last dimension is not
    /// a multiple of `dtype`'s block size. All name the tensor.
    pub fn quantize(&self, dtype: GgmlType) -> Result<Tensor> {
        let data = self.to_f32()?;
        if let Err(e) = Tensor::new(self.name.as_str(), dtype, &self.shape, Vec::new()) {
            if matches!(e.as_write(), Some(WriteError::InvalidTensor { .. })) {
                return Err(e);
            }
        }
        let bytes = from_f32(dtype, Endian::Little, &data).map_err(|e| e.in_tensor(&self.name))?;
        let mut out = Tensor::new(self.name.as_str(), dtype, &self.shape, bytes)?;
        out.position = self.position;
        Ok(out)
    }

    /// A view of this tensor (under its name, with its position).
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            name: (&self.name).into(),
            dtype: self.dtype,
            shape: self.shape,
            bytes: &self.bytes,
            endian: self.endian,
            position: self.position,
        }
    }
}

/// A typed storage that keeps its shape: the elements as `f32` (dequantized on read, row-major
/// in the canonical shape) with the canonical shape they were read with.
///
/// Unlike `Vec<f32>`, it can be written without a `shape` attribute: it is written with its own
/// shape, as the first type of the field's `dtype` constraint, else F32. Equality compares the
/// name, shape and data, not the position.
#[derive(Clone, Debug)]
pub struct F32Tensor {
    /// The tensor's name, for its errors (a model field writes it under the field's name).
    pub name: String,
    /// The canonical shape, outermost first.
    pub shape: Shape,
    /// The elements, row-major: the shape's product of them.
    pub data: Vec<f32>,
    /// The place in the source's tensor order of the tensor this was read from; `None` for one
    /// built in memory.
    pub position: Option<usize>,
}

impl PartialEq for F32Tensor {
    fn eq(&self, o: &Self) -> bool {
        (&self.name, self.shape, &self.data) == (&o.name, o.shape, &o.data)
    }
}

impl F32Tensor {
    /// A tensor named `name` of canonical `shape` holding `data` (row-major).
    ///
    /// # Errors
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor), naming the tensor, for more
    /// than 4 dims or a `data` length other than the shape's product.
    pub fn new(name: impl Into<String>, shape: &[u64], data: Vec<f32>) -> Result<F32Tensor> {
        let name = name.into();
        let dims = Shape::from_canonical(shape).ok_or_else(|| {
            Error::invalid_tensor(name.as_str(), format!("{} dimensions, at most {MAX_DIMS}", shape.len()))
        })?;
        let n = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if n != Some(data.len() as u64) {
            return Err(Error::invalid_tensor(
                name.as_str(),
                format!("shape {shape:?} does not hold the {} given", crate::format::count(data.len(), "element")),
            ));
        }
        Ok(F32Tensor { name, shape: dims, data, position: None })
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
    /// The default refuses: a storage that implements only [`from_view`](Self::from_view) is
    /// read-only (a model with such a field reads, and writing it fails naming the tensor).
    ///
    /// # Errors
    /// When the tensor cannot be stored as the field asks;
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) by default.
    fn layout(&self, spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        Err(Error::invalid_tensor(
            spec.name,
            format!(
                "{} is a read-only tensor storage (it has no TensorStorage::layout)",
                std::any::type_name::<Self>()
            ),
        ))
    }

    /// The stored bytes for type `dtype` (as returned by [`layout`](Self::layout)) in byte order
    /// `endian` (the writer's). Borrowed when the data is already stored so.
    ///
    /// The default refuses (a read-only storage; see [`layout`](Self::layout)).
    ///
    /// # Errors
    /// When the data cannot be given in that type or byte order;
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) by default.
    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        let _ = (dtype, endian);
        Err(Error::invalid_tensor(
            "",
            format!(
                "{} is a read-only tensor storage (it has no TensorStorage::stored_bytes)",
                std::any::type_name::<Self>()
            ),
        ))
    }

    /// Writes the stored bytes for type `dtype` in byte order `endian` to `out`, in as many
    /// pieces as it likes: the pieces, concatenated, are the bytes
    /// [`stored_bytes`](Self::stored_bytes) returns. The writer checks their total against the
    /// declared size.
    ///
    /// The default calls [`stored_bytes`](Self::stored_bytes) and writes the result in one piece.
    /// Override it to stream a tensor that is converted on the fly (read from another format,
    /// quantized chunk by chunk), so that memory stays one chunk whatever the tensor's size (the
    /// `convert` module streams the same way, through
    /// [`GgufWriter::tensor_data_writer`](crate::GgufWriter::tensor_data_writer)).
    ///
    /// # Errors
    /// As [`stored_bytes`](Self::stored_bytes), and the errors of `out` (the writer's:
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) for more bytes than declared,
    /// [`ErrorKind::Io`](crate::ErrorKind::Io)).
    fn write_stored(&self, dtype: GgmlType, endian: Endian, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        out(&self.stored_bytes(dtype, endian)?)
    }

    /// The tensor's place in the tensor order of the source it was read from (0 for the first
    /// tensor info), if it knows it. A model whose tensors all know theirs is written in that
    /// order by default ([`TensorOrder::Auto`]), so that a file read and written back is
    /// byte-identical. The default is `None`.
    fn position(&self) -> Option<usize> {
        None
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

    fn position(&self) -> Option<usize> {
        self.position
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
        same_bytes(&self.name, self.dtype, self.endian, &self.bytes, dtype, endian)
    }

    fn position(&self) -> Option<usize> {
        self.position
    }
}

fn same_bytes<'b>(
    name: impl std::fmt::Display,
    have: GgmlType,
    have_endian: Endian,
    bytes: &'b [u8],
    dtype: GgmlType,
    endian: Endian,
) -> Result<Cow<'b, [u8]>> {
    if have != dtype {
        return Err(Error::invalid_tensor(name.to_string(), format!("stored as {have}, not {dtype}")));
    }
    if have_endian == endian {
        return Ok(Cow::Borrowed(bytes));
    }
    // Byte-swap each multi-byte field of each block (the layout the codecs define).
    let mut owned = bytes.to_vec();
    crate::codec::swap_blocks(dtype, &mut owned);
    Ok(Cow::Owned(owned))
}

/// The type a typed storage is written as: the first of the field's `dtype` constraint, else F32.
fn typed_dtype(spec: &FieldSpec<'_>) -> GgmlType {
    spec.dtypes.first().copied().unwrap_or(GgmlType::F32)
}

/// Typed storage: the elements as `f32`, converted on read through the [codecs](crate::codec)
/// (row-major in the canonical shape). A `Vec` keeps no shape: it is written with the field's
/// `shape` constraint, which must give every dimension or all but one (inferred from the
/// length, e.g. `shape = "[_, embd]"`); writing one whose shape the field does not give is
/// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor), never a flattening. Use
/// [`F32Tensor`] to keep the shape read. Written as the first type of the field's `dtype`
/// constraint, else F32.
impl<'a> TensorStorage<'a> for Vec<f32> {
    fn from_view(view: TensorView<'a>) -> Result<Self> {
        view.to_f32()
    }

    fn layout(&self, spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        let len = self.len() as u64;
        let bad = |reason: String| Error::invalid_tensor(spec.name, reason);
        let Some(want) = spec.shape else {
            return Err(bad(format!(
                "a Vec<f32> of {} holds no shape, and the field has no `shape` attribute \
                 (give one, or use F32Tensor, which keeps the shape it was read with)",
                crate::format::count(len, "element")
            )));
        };
        let known: u64 = want.iter().filter_map(Dim::known).try_fold(1u64, |a, d| a.checked_mul(d)).unwrap_or(0);
        let unknown = want.iter().filter(|d| d.known().is_none()).count();
        let inferred = match unknown {
            0 => None,
            1 if len.checked_rem(known) == Some(0) => len.checked_div(known),
            _ => {
                return Err(bad(format!(
                    "the shape of a Vec<f32> of {} cannot be told from the field's shape {:?} \
                     (at most one dimension may be unknown, and it must divide evenly)",
                    crate::format::count(len, "element"),
                    want.iter().map(Dim::known).collect::<Vec<_>>()
                )))
            }
        };
        let dims: Vec<u64> = want.iter().map(|d| d.known().or(inferred).unwrap_or(0)).collect();
        let shape = Shape::from_canonical(&dims).ok_or_else(|| bad("more than 4 dims".to_owned()))?;
        Ok((typed_dtype(spec), shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        from_f32(dtype, endian, self).map(Cow::Owned)
    }
}

/// Dequantized on read, keeping the shape and position read; written with its own shape as the
/// first type of the field's `dtype` constraint, else F32.
impl<'a> TensorStorage<'a> for F32Tensor {
    fn from_view(view: TensorView<'a>) -> Result<Self> {
        Ok(F32Tensor { name: view.name.to_string(), shape: view.shape, data: view.to_f32()?, position: view.position })
    }

    fn layout(&self, spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        let n = self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if n != Some(self.data.len() as u64) {
            return Err(Error::invalid_tensor(
                spec.name,
                format!(
                    "shape {:?} does not hold the {} of the data",
                    self.shape,
                    crate::format::count(self.data.len(), "element")
                ),
            ));
        }
        Ok((typed_dtype(spec), self.shape))
    }

    fn stored_bytes(&self, dtype: GgmlType, endian: Endian) -> Result<Cow<'_, [u8]>> {
        from_f32(dtype, endian, &self.data).map(Cow::Owned)
    }

    fn position(&self) -> Option<usize> {
        self.position
    }
}

/// Converts stored tensor bytes of `dtype` in byte order `endian` to `f32`, through the
/// [codecs](crate::codec) (every type they decode).
///
/// # Errors
/// The codec's errors ([`CodecError::UnsupportedDequantize`](crate::codec::CodecError::UnsupportedDequantize), [`CodecError::NotWholeBlocks`](crate::codec::CodecError::NotWholeBlocks)).
pub(crate) fn to_f32(dtype: GgmlType, endian: Endian, bytes: &[u8]) -> Result<Vec<f32>> {
    // Every ggml type's block is at least one byte: the division cannot be by zero.
    let blocks = (bytes.len() as u64).checked_div(dtype.type_size()).unwrap_or(0);
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
