//! The read and write contexts the generated code runs in.

use super::*;
use crate::container::{GgufWriter, Value};
use crate::error::{ErrorKind, ModelError, Result};
use crate::format::Endian;
use crate::format::GgmlType;
use crate::metadata::MetadataOptions;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;

/// Whether a model refuses tensors that no field binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unbound {
    /// Reading fails with [`ModelError::UnboundTensors`](crate::ModelError::UnboundTensors) (the
    /// default of the derive).
    #[default]
    Error,
    /// They are ignored; [`LoadReport::unbound`] lists them.
    Ignore,
}

/// MetadataOptions of [`GgufModel::read_with`].
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// MetadataOptions of the metadata deserialization (e.g. the `{arch}` architecture).
    pub serde: MetadataOptions,
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
    pub(super) src: &'a (dyn ModelSource + 'a),
    pub(super) opts: MetadataOptions,
    pub(super) bound: HashSet<&'a str>,
}

impl<'a> ReadCx<'a> {
    /// Deserializes the source's metadata into `M` (with the read options).
    ///
    /// # Errors
    /// [`MetadataError`](crate::MetadataError) when the metadata does not fit `M`.
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

    pub(super) fn read_tensor(&mut self, spec: &FieldSpec<'_>) -> Result<TensorView<'a>> {
        let src: &'a (dyn ModelSource + 'a) = self.src;
        let (info, bytes) = src.tensor_bytes(spec.name).map_err(|e| match e.kind() {
            ErrorKind::NotFound { .. } => {
                ModelError::MissingTensor { name: spec.name.to_owned(), field: spec.field.to_owned() }.into()
            }
            _ => e,
        })?;
        spec.check(info.dtype, &info.shape)?;
        self.bound.insert(info.name);
        Ok(TensorView::new(&info, bytes, src.endian()))
    }
}

/// A function that writes one piece of a tensor's data.
type Piece<'p> = dyn FnMut(&[u8]) -> Result<()> + 'p;

/// The sink a model writes to: a [`GgufWriter`] over any output.
pub(super) trait Sink {
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
    pub(super) sink: &'w mut dyn Sink,
    pub(super) declaring: bool,
    pub(super) opts: MetadataOptions,
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

    pub(super) fn tensor<'a, T: TensorStorage<'a>>(&mut self, t: &T, spec: &FieldSpec<'_>) -> Result<()> {
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
                        e.in_tensor(spec.name)
                    }
                })
            })
        }
    }
}
