//! The two orders of a tensor's dimensions, as two types.
//!
//! A GGUF tensor info stores its dimensions fastest-varying first: ggml's `ne`, where `ne[0]` is
//! the row length (the number of elements that are contiguous in memory, and the axis quantized
//! blocks run along). The canonical shape — the order NumPy, PyTorch, safetensors and gguf-py's
//! `GGUFReader.tensors[i].shape[::-1]` use — is outermost first: the stored dims reversed.
//! A Llama `token_embd.weight` of 49,152 tokens by 576 features is stored as `ne = [576, 49152]`
//! and has the canonical shape `[49152, 576]`.
//!
//! [`Shape`] is the canonical order and [`Ne`] the stored one. Both hold at most [`MAX_DIMS`]
//! dims inline (no allocation), but they are distinct types: neither compares equal to, nor
//! converts implicitly into, the other, and the only way from one to the other is the reversal,
//! [`Shape::ne`] and [`Ne::shape`]. A [`Shape`] dereferences to `[u64]`, since the canonical order
//! is the one APIs taking `&[u64]` expect (such as [`GgufWriter::add_tensor`]); an [`Ne`] does not,
//! so that `&info.ne()` cannot be passed where a shape is expected: its dims are
//! [`Ne::dims`], for the APIs that take stored dims by name (such as
//! [`GgufWriter::add_tensor_ne`] and [`GgmlType::nbytes`]).
//!
//! [`GgufWriter::add_tensor`]: crate::GgufWriter::add_tensor
//! [`GgufWriter::add_tensor_ne`]: crate::GgufWriter::add_tensor_ne
//! [`GgmlType::nbytes`]: crate::GgmlType::nbytes
//!
//! Spec: ggml `docs/gguf.md`, "File Structure" (`gguf_tensor_info_t::dimensions`); ggml `ggml.h`
//! (`ne`, `GGML_MAX_DIMS`).

use std::fmt;
use std::ops::Deref;

use super::MAX_DIMS;

/// Dims held inline, in whichever order the wrapping type says.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Dims {
    dims: [u64; MAX_DIMS],
    len: u8,
}

impl Dims {
    fn new(dims: &[u64]) -> Option<Dims> {
        let mut out = [0u64; MAX_DIMS];
        out.get_mut(..dims.len())?.copy_from_slice(dims);
        Some(Dims { dims: out, len: u8::try_from(dims.len()).ok()? })
    }

    fn as_slice(&self) -> &[u64] {
        self.dims.get(..usize::from(self.len)).unwrap_or_default()
    }

    fn reversed(self) -> Dims {
        let mut out = self;
        if let Some(d) = out.dims.get_mut(..usize::from(self.len)) {
            d.reverse();
        }
        out
    }

    fn n_elements(&self) -> Option<u64> {
        self.as_slice().iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }
}

/// A canonical tensor shape, outermost dimension first: the stored [`Ne`] reversed. For a
/// matrix, `[rows, row_len]`. At most [`MAX_DIMS`] dims, held inline; dereferences to `[u64]`.
///
/// ```
/// use gguf_serde::Shape;
/// let shape = Shape::from_canonical(&[49152, 576]).unwrap();
/// assert_eq!(shape.ne().dims(), &[576, 49152]); // what the file stores
/// assert_eq!(shape.ne().shape(), shape);
/// assert_eq!(shape.n_elements(), Some(28_311_552));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Shape(Dims);

/// A tensor's stored dims, ggml's `ne`: fastest-varying first, so `ne[0]` is the row length (the
/// contiguous axis, along which quantized blocks run). The canonical [`Shape`] reversed. At most
/// [`MAX_DIMS`] dims, held inline. Unlike [`Shape`] it does not dereference to `[u64]`: its dims
/// are [`Ne::dims`], so that stored dims are never passed where a canonical shape is expected.
///
/// ```
/// use gguf_serde::Ne;
/// let ne = Ne::new(&[576, 49152]).unwrap();
/// assert_eq!(ne.row_len(), 576);
/// assert_eq!(ne.n_rows(), Some(49152));
/// assert_eq!(ne.dims(), &[576, 49152]);
/// assert_eq!(&*ne.shape(), &[49152, 576]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Ne(Dims);

impl Shape {
    /// A shape from canonical dims (outermost first); `None` for more than [`MAX_DIMS`] dims.
    pub fn from_canonical(dims: &[u64]) -> Option<Shape> {
        Dims::new(dims).map(Shape)
    }

    /// The canonical shape of stored dims `ne` (fastest first), reversing them; `None` for more
    /// than [`MAX_DIMS`] dims. The same as `Ne::new(ne)?.shape()`.
    pub fn from_ne(ne: &[u64]) -> Option<Shape> {
        Ne::new(ne).map(|ne| ne.shape())
    }

    /// The stored dims (`ne`, fastest first): this shape reversed.
    pub fn ne(&self) -> Ne {
        Ne(self.0.reversed())
    }

    /// The dims, outermost first (also available through `Deref`).
    pub fn dims(&self) -> &[u64] {
        self.0.as_slice()
    }

    /// Number of elements: the product of the dims (1 for no dims); `None` if it overflows `u64`.
    pub fn n_elements(&self) -> Option<u64> {
        self.0.n_elements()
    }
}

impl Ne {
    /// Stored dims from a slice, fastest first; `None` for more than [`MAX_DIMS`] dims.
    pub fn new(ne: &[u64]) -> Option<Ne> {
        Dims::new(ne).map(Ne)
    }

    /// The canonical shape (outermost first): these dims reversed.
    pub fn shape(&self) -> Shape {
        Shape(self.0.reversed())
    }

    /// The dims, fastest first.
    pub fn dims(&self) -> &[u64] {
        self.0.as_slice()
    }

    /// The row length `ne[0]`, in elements: the contiguous axis. 1 for no dims (ggml's scalar).
    pub fn row_len(&self) -> u64 {
        self.dims().first().copied().unwrap_or(1)
    }

    /// The number of rows, `ne[1] × ne[2] × ne[3]` (1 for fewer than two dims); `None` if it
    /// overflows `u64`.
    pub fn n_rows(&self) -> Option<u64> {
        self.dims().iter().skip(1).try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// Number of elements: the product of the dims (1 for no dims); `None` if it overflows `u64`.
    pub fn n_elements(&self) -> Option<u64> {
        self.0.n_elements()
    }
}

impl Deref for Shape {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.0.as_slice()
    }
}

impl AsRef<[u64]> for Shape {
    fn as_ref(&self) -> &[u64] {
        self.0.as_slice()
    }
}

/// Prints the dims as a list, outermost first: `[49152, 576]`.
impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.dims(), f)
    }
}

/// Prints `ne` and the stored dims, fastest first: `ne[576, 49152]`, so it cannot be mistaken for
/// a [`Shape`].
impl fmt::Debug for Ne {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ne")?;
        fmt::Debug::fmt(self.dims(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_reversals() {
        let s = Shape::from_canonical(&[2, 3, 4]).unwrap();
        assert_eq!(s.ne().dims(), &[4, 3, 2]);
        assert_eq!(s.ne().shape(), s);
        assert_eq!(s.ne().row_len(), 4);
        assert_eq!(s.ne().n_rows(), Some(6));
        assert_eq!(format!("{s:?} {:?}", s.ne()), "[2, 3, 4] ne[4, 3, 2]");
        assert!(Shape::from_canonical(&[1; 5]).is_none());
        assert!(Ne::new(&[1; 5]).is_none());
        let scalar = Ne::new(&[]).unwrap();
        assert_eq!((scalar.row_len(), scalar.n_rows(), scalar.n_elements()), (1, Some(1), Some(1)));
        assert_eq!(Ne::new(&[u64::MAX, 2]).unwrap().n_elements(), None);
    }

    /// A 2 × 3 × 5 × 7 tensor (canonical) is ggml's `ne` = [7, 5, 3, 2]: 210 elements in 30
    /// rows of 7, whichever order it is built from.
    #[test]
    fn four_dims_both_ways() {
        let s = Shape::from_ne(&[7, 5, 3, 2]).unwrap();
        assert_eq!(s.dims(), &[2, 3, 5, 7]);
        assert_eq!(&*s, &[2, 3, 5, 7]);
        assert_eq!(s.as_ref(), &[2, 3, 5, 7]);
        assert_eq!(s, Shape::from_canonical(&[2, 3, 5, 7]).unwrap());
        assert_eq!(s.n_elements(), Some(210));
        let ne = s.ne();
        assert_eq!(ne.dims(), &[7, 5, 3, 2]);
        assert_eq!((ne.row_len(), ne.n_rows(), ne.n_elements()), (7, Some(30), Some(210)));
        assert_eq!(Shape::from_canonical(&[]).unwrap().n_elements(), Some(1));
        assert_eq!(Shape::from_canonical(&[4, 0]).unwrap().n_elements(), Some(0));
        assert_eq!(Shape::from_canonical(&[u64::MAX, 2]).unwrap().n_elements(), None);
        assert_eq!(Ne::new(&[1, u64::MAX, 2]).unwrap().n_rows(), None);
        assert!(Shape::from_ne(&[1; 5]).is_none());
        assert_ne!(Shape::from_canonical(&[2, 3]).unwrap(), Shape::from_canonical(&[2, 3, 1]).unwrap());
    }
}
