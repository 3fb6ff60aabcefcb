//! The traits the derive implements.

use super::*;
use crate::container::GgufWriter;
use crate::error::{ModelError, Result};
use std::collections::HashSet;
use std::io::Write;

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
    /// The read errors of the [module docs](crate::model).
    fn read_field(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Self>;

    /// Whether the source has this field under `name` (for `Option` fields and numbering).
    fn is_present(cx: &ReadCx<'a>, name: &str) -> bool;

    /// Checks the field and adds its tensors to the write (which writes them once the whole
    /// model is checked).
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    fn write_field<'s>(&'s self, cx: &mut WriteCx<'s>, spec: &FieldSpec<'_>) -> Result<()>;
}

impl<'a, T: TensorStorage<'a>> ModelField<'a> for T {
    fn read_field(cx: &mut ReadCx<'a>, spec: &FieldSpec<'_>) -> Result<Self> {
        let view = cx.read_tensor(spec)?;
        T::from_view(view).map_err(|e| e.in_tensor(spec.name))
    }

    fn is_present(cx: &ReadCx<'a>, name: &str) -> bool {
        cx.has_tensor(name)
    }

    fn write_field<'s>(&'s self, cx: &mut WriteCx<'s>, spec: &FieldSpec<'_>) -> Result<()> {
        cx.tensor(self, spec)
    }
}

/// A whole GGUF model as a struct: implemented by `#[derive(GgufModel)]` (see the [module
/// docs](crate::model) for the attributes). `'a` is the lifetime of the source a [`TensorView`] or
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

    /// Checks the fields and adds their metadata and tensors to the write; `root` says whether
    /// this is the top-level struct (whose metadata is written). Generated.
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    #[doc(hidden)]
    fn write_fields<'s>(&'s self, cx: &mut WriteCx<'s>, prefix: &str, root: bool) -> Result<()>;

    /// Reads the model from a file or sharded model, with the default options and the struct's
    /// policy for unbound tensors.
    ///
    /// # Errors
    /// [`ModelError::MissingTensor`](crate::ModelError::MissingTensor),
    /// [`ModelError::WrongDtype`](crate::ModelError::WrongDtype),
    /// [`ModelError::WrongShape`](crate::ModelError::WrongShape),
    /// [`ModelError::NumberingHole`](crate::ModelError::NumberingHole),
    /// [`ModelError::Constraint`](crate::ModelError::Constraint),
    /// [`ModelError::UnboundTensors`](crate::ModelError::UnboundTensors) (unless the struct ignores
    /// them), [`MetadataError`](crate::MetadataError) for metadata that does not fit, errors of the
    /// tensor storage's conversion, [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded)
    /// for a metadata-only file.
    fn read<S: ModelSource>(src: &'a S) -> Result<Self> {
        Self::read_with(src, &ReadOptions::default()).map(|(m, _)| m)
    }

    /// Reads the model with options; also returns which tensors were bound and which not.
    ///
    /// # Errors
    /// As [`GgufModel::read`].
    fn read_with<S: ModelSource>(src: &'a S, opts: &ReadOptions) -> Result<(Self, LoadReport)> {
        let positions = src.tensor_infos().enumerate().map(|(i, t)| (t.name.as_bytes(), i)).collect();
        let mut cx = ReadCx { src, opts: opts.serde.clone(), bound: HashSet::new(), positions };
        let model = Self::read_fields(&mut cx, "")?;
        let unbound: Vec<String> =
            src.tensor_infos().filter(|t| !cx.bound.contains(t.name.as_bytes())).map(|t| t.name.to_string()).collect();
        if !unbound.is_empty() && opts.unbound.unwrap_or(Self::UNBOUND) == Unbound::Error {
            return Err(ModelError::UnboundTensors { names: unbound }.into());
        }
        Ok((model, LoadReport { bound: cx.bound.len(), unbound }))
    }

    /// Writes the model to `w`: the metadata, the tensor infos, then the data of every tensor, in
    /// the order of the file the tensors were read from, else in field order (see
    /// [Writing](crate::model#writing)). The whole model is checked before anything is added to
    /// `w`. Keys added to `w` before stay; `w` must have no tensors declared. Finish the writer
    /// afterwards ([`GgufWriter::finish`] / [`GgufWriter::commit`]).
    ///
    /// # Errors
    /// The writer's errors ([`WriteError::InvalidKey`](crate::WriteError::InvalidKey) for a
    /// duplicate key, [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor),
    /// [`ErrorKind::Io`](crate::ErrorKind::Io)), [`MetadataError`](crate::MetadataError) from the
    /// metadata, [`ModelError::WrongDtype`](crate::ModelError::WrongDtype) and
    /// [`ModelError::WrongShape`](crate::ModelError::WrongShape) for a tensor that breaks its
    /// field's constraints (evaluated against the metadata written),
    /// [`ModelError::CountMismatch`](crate::ModelError::CountMismatch) for a list whose length is
    /// not its metadata count, [`MetadataError::Message`](crate::MetadataError::Message) (with
    /// [`Error::key`](crate::Error::key)) for a sub-model whose own copy of the metadata differs
    /// from the metadata written, and
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) for a storage that cannot
    /// give its layout (a `Vec<f32>` without a known shape, a read-only storage).
    fn write<W: Write>(&self, w: &mut GgufWriter<W>) -> Result<()> {
        self.write_with(w, &WriteModelOptions::default())
    }

    /// [`GgufModel::write`] with options: serde options (e.g. the `{arch}` architecture) and the
    /// [`TensorOrder`].
    ///
    /// # Errors
    /// As [`GgufModel::write`].
    fn write_with<W: Write>(&self, w: &mut GgufWriter<W>, opts: &WriteModelOptions) -> Result<()> {
        let mut cx = WriteCx::new(opts.serde.clone());
        self.write_fields(&mut cx, "", true)?;
        cx.finish(w, opts.order)
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
