//! `TensorStorage::write_stored`: a storage that gives its data in pieces is written through the
//! derive exactly as one that gives it whole; a storage that gives the wrong number of bytes, or
//! fails midway, is an error naming the tensor.

use std::borrow::Cow;
use std::cell::Cell;

use gguf_serde::model::{FieldSpec, TensorStorage, TensorView};
use gguf_serde::{Endian, Error, ErrorKind, GgmlType, Gguf, GgufModel, GgufWriter, Result, Shape, Tensor, WriteError};

/// F32 values `0, 1, 2, ...` of `n` elements, given `piece` elements at a time (and giving
/// `short` fewer bytes at the end, or failing after `fail_after` pieces).
struct Counting {
    n: u64,
    piece: usize,
    short: usize,
    fail_after: Option<usize>,
    pieces: Cell<usize>,
}

impl Counting {
    fn new(n: u64, piece: usize) -> Self {
        Counting { n, piece, short: 0, fail_after: None, pieces: Cell::new(0) }
    }
    fn bytes(&self) -> Vec<u8> {
        (0..self.n).flat_map(|i| (i as f32).to_le_bytes()).collect()
    }
}

impl<'a> TensorStorage<'a> for Counting {
    fn from_view(_view: TensorView<'a>) -> Result<Self> {
        unreachable!("only written")
    }
    fn layout(&self, _spec: &FieldSpec<'_>) -> Result<(GgmlType, Shape)> {
        Ok((GgmlType::F32, Shape::from_canonical(&[self.n]).unwrap()))
    }
    fn stored_bytes(&self, _dtype: GgmlType, _endian: Endian) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Owned(self.bytes()))
    }
    fn write_stored(&self, _dtype: GgmlType, _endian: Endian, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut all = self.bytes();
        all.truncate(all.len() - self.short);
        for (i, p) in all.chunks(self.piece * 4).enumerate() {
            if self.fail_after == Some(i) {
                return Err(Error::invalid_tensor("", "source went away"));
            }
            out(p)?;
            self.pieces.set(self.pieces.get() + 1);
        }
        Ok(())
    }
}

#[derive(GgufModel)]
struct Two<T> {
    #[gguf(name = "a")]
    a: T,
    #[gguf(name = "b")]
    b: T,
}

#[test]
fn pieces_make_the_same_file_as_whole_tensors() {
    let streamed = Two { a: Counting::new(100, 7), b: Counting::new(33, 1) };
    let bytes = streamed.to_vec().unwrap();
    assert_eq!((streamed.a.pieces.get(), streamed.b.pieces.get()), (15, 33));
    let whole = Two {
        a: Tensor::from_f32("a", &[100], &(0..100).map(|i| i as f32).collect::<Vec<_>>()).unwrap(),
        b: Tensor::from_f32("b", &[33], &(0..33).map(|i| i as f32).collect::<Vec<_>>()).unwrap(),
    };
    assert_eq!(bytes, whole.to_vec().unwrap());
    let back = Two::<Vec<f32>>::read(&Gguf::from_slice(&bytes).unwrap()).unwrap();
    assert_eq!(back.b[32], 32.0);
}

#[test]
fn too_few_bytes_is_a_size_mismatch_naming_the_tensor() {
    let m = Two { a: Counting::new(8, 3), b: Counting { short: 4, ..Counting::new(8, 3) } };
    let mut w = GgufWriter::new(Vec::new());
    let err = m.write(&mut w).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Write(WriteError::SizeMismatch { name, expected: 32, found: 28, .. }) if name == "b"),
        "{err:?}"
    );
}

#[test]
fn a_storage_failing_midway_is_named_and_the_writer_refuses_to_finish() {
    let m = Two { a: Counting { fail_after: Some(1), ..Counting::new(8, 3) }, b: Counting::new(8, 3) };
    let mut w = GgufWriter::new(Vec::new());
    let err = m.write(&mut w).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Write(WriteError::InvalidTensor { name, .. }) if name == "a"), "{err:?}");
    assert!(matches!(w.finish().map_err(Error::into_kind), Err(ErrorKind::Write(WriteError::Misuse { .. }))));
}
