//! The read and write contexts the generated code runs in.

use super::*;
use crate::container::{Gguf, GgufWriter, Shape, Value};
use crate::error::{Error, ErrorKind, MetadataError, ModelError, Result};
use crate::format::Endian;
use crate::format::GgmlType;
use crate::metadata::MetadataOptions;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// Whether a model refuses tensors that no field binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct ReadOptions {
    /// MetadataOptions of the metadata deserialization (e.g. the `{arch}` architecture).
    pub serde: MetadataOptions,
    /// Overrides the struct's `#[gguf(unbound = ...)]` policy.
    pub unbound: Option<Unbound>,
}

impl ReadOptions {
    /// The default options: metadata options' defaults, the struct's own `unbound` policy.
    pub fn new() -> Self {
        ReadOptions::default()
    }

    /// These options with the metadata deserialization options `serde`.
    pub fn with_serde(mut self, serde: MetadataOptions) -> Self {
        self.serde = serde;
        self
    }

    /// These options with the unbound-tensor policy `unbound`, overriding the struct's.
    pub fn with_unbound(mut self, unbound: Unbound) -> Self {
        self.unbound = Some(unbound);
        self
    }
}

/// What reading a model found besides the model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    pub(super) bound: HashSet<&'a [u8]>,
    /// Each tensor's place in the source's tensor order.
    pub(super) positions: HashMap<&'a [u8], usize>,
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
        self.src
            .tensor_infos()
            .any(|t| t.name.as_bytes().strip_prefix(prefix.as_bytes()).is_some_and(|r| r.starts_with(b".")))
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
        self.bound.insert(info.name.as_bytes());
        let mut view = TensorView::new(&info, bytes, src.endian());
        view.position = self.positions.get(info.name.as_bytes()).copied();
        Ok(view)
    }
}

/// Writes a tensor's stored bytes for a type and byte order, in pieces (a storage's
/// [`TensorStorage::write_stored`], borrowed from the model).
type WriteData<'s> = dyn Fn(GgmlType, Endian, &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> + 's;

/// A tensor the model declares: its name, layout and place, and how to write its data.
pub(super) struct Pending<'s> {
    pub(super) name: String,
    pub(super) dtype: GgmlType,
    pub(super) shape: Shape,
    pub(super) position: Option<usize>,
    pub(super) data: Box<WriteData<'s>>,
}

/// The order in which [`GgufModel::write_with`] writes the tensors of a model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorOrder {
    /// The default: the order of the file the tensors were read from when every tensor knows its
    /// place in it ([`TensorStorage::position`]: a [`TensorView`], [`Tensor`] or [`F32Tensor`]
    /// read from a file), else [`Field`](Self::Field). A model read and written back without
    /// changes is then byte-identical whatever its field order (llama.cpp's converters store
    /// `blk.0, blk.1, blk.10, …` in some files, in numeric order in others).
    #[default]
    Auto,
    /// Field order: a sub-model's tensors where the sub-model is, `Vec` elements by number.
    Field,
    /// By [`TensorStorage::position`]; tensors without one follow, in field order.
    Source,
}

/// Options of [`GgufModel::write_with`].
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct WriteModelOptions {
    /// Options of the metadata serialization (e.g. the `{arch}` architecture).
    pub serde: MetadataOptions,
    /// The order of the tensors.
    pub order: TensorOrder,
}

impl WriteModelOptions {
    /// The default options: metadata options' defaults, [`TensorOrder::Auto`].
    pub fn new() -> Self {
        WriteModelOptions::default()
    }

    /// These options with the metadata serialization options `serde`.
    pub fn with_serde(mut self, serde: MetadataOptions) -> Self {
        self.serde = serde;
        self
    }

    /// These options with the tensor order `order`.
    pub fn with_order(mut self, order: TensorOrder) -> Self {
        self.order = order;
        self
    }
}

/// The state of one write: the metadata written and the tensors declared so far, checked; the
/// file is written from them once the whole model has been checked.
pub struct WriteCx<'s> {
    pub(super) opts: MetadataOptions,
    /// The top-level metadata, as it is written (key, value), in order.
    pub(super) pairs: Option<Vec<(String, Value)>>,
    /// The top-level metadata as a small GGUF file, for the sub-models that deserialize it
    /// (`#[gguf(metadata = "Type")]`); made when first needed.
    pub(super) written: Option<Gguf<Vec<u8>>>,
    pub(super) tensors: Vec<Pending<'s>>,
}

impl<'s> WriteCx<'s> {
    pub(super) fn new(opts: MetadataOptions) -> Self {
        WriteCx { opts, pairs: None, written: None, tensors: Vec::new() }
    }

    /// Adds the key/value pairs of the top-level metadata.
    ///
    /// # Errors
    /// As [`MetadataOptions::to_pairs`].
    pub fn add_metadata<M: Serialize + ?Sized>(&mut self, meta: &M) -> Result<()> {
        let pairs = self.opts.to_pairs(meta)?;
        match &mut self.pairs {
            Some(have) => have.extend(pairs),
            None => self.pairs = Some(pairs),
        }
        self.written = None;
        Ok(())
    }

    /// The metadata options with `{arch}` resolved from the written `general.architecture` when
    /// the options do not set it (a sub-model's metadata type usually has no such field).
    fn sub_opts(&self) -> MetadataOptions {
        if self.opts.arch.is_some() {
            return self.opts.clone();
        }
        let arch = self.pairs.iter().flatten().find_map(|(k, v)| match v {
            Value::String(a) if k == crate::format::keys::GENERAL_ARCHITECTURE => Some(a.clone()),
            _ => None,
        });
        match arch {
            Some(a) => self.opts.clone().arch(a),
            None => self.opts.clone(),
        }
    }

    /// Checks a sub-model's own copy of metadata (`field`, at `prefix`) against the metadata the
    /// model writes: every key it serializes to must be written with the same value, so that the
    /// constraints checked against the copy hold for the file.
    ///
    /// # Errors
    /// [`MetadataError::Message`](crate::MetadataError::Message) with [`Error::key`] the first
    /// key that is not written or differs (no offset: the file is not written yet); the
    /// serializer's errors for a copy that cannot be serialized.
    pub fn check_sub_metadata<M: Serialize + ?Sized>(&self, meta: &M, prefix: &str, field: &str) -> Result<()> {
        let mine = self.sub_opts().to_pairs(meta)?;
        let written = self.pairs.as_deref().unwrap_or_default();
        for (key, value) in mine {
            let message = match written.iter().find(|(k, _)| *k == key) {
                Some((_, w)) if *w == value => continue,
                Some((_, w)) => format!(
                    "sub-model {prefix:?} has {} in its metadata field `{field}`, but the metadata written has {}",
                    show(&value),
                    show(w)
                ),
                None => format!(
                    "sub-model {prefix:?} has {} in its metadata field `{field}`, but the model writes no such key",
                    show(&value)
                ),
            };
            return Err(Error::metadata(MetadataError::Message { message }, Some(key), None));
        }
        Ok(())
    }

    /// Deserializes `M` from the top-level metadata the model writes (for a sub-model with
    /// `#[gguf(metadata = "Type")]`, at `prefix`). Errors cite the key; the file offset is not
    /// known yet and is left out.
    ///
    /// # Errors
    /// [`MetadataError`](crate::MetadataError) when the written metadata does not fit `M`.
    pub fn written_metadata<M: DeserializeOwned>(&mut self, prefix: &str) -> Result<M> {
        if self.written.is_none() {
            let mut w = GgufWriter::new(Vec::new());
            for (k, v) in self.pairs.iter().flatten() {
                w.add_value(k, v)?;
            }
            self.written = Some(Gguf::from_vec(w.finish()?)?);
        }
        let opts = self.sub_opts();
        let file = self.written.as_ref().ok_or_else(|| Error::not_found("key", prefix))?;
        opts.from_gguf::<M, _>(file).map_err(|mut e| {
            if let Some((_, offset)) = e.metadata_at() {
                *offset = None;
            }
            e
        })
    }

    pub(super) fn tensor<'a, T: TensorStorage<'a>>(&mut self, t: &'s T, spec: &FieldSpec<'_>) -> Result<()> {
        let (dtype, shape) = t.layout(spec).map_err(|e| e.in_tensor(spec.name))?;
        spec.check(dtype, &shape)?;
        self.tensors.push(Pending {
            name: spec.name.to_owned(),
            dtype,
            shape,
            position: t.position(),
            data: Box::new(move |dtype, endian, out| t.write_stored(dtype, endian, out)),
        });
        Ok(())
    }

    /// Writes what was collected to `w`: the metadata, then the tensor infos, then the data, the
    /// tensors in `order`.
    pub(super) fn finish<W: Write>(mut self, w: &mut GgufWriter<W>, order: TensorOrder) -> Result<()> {
        for (k, v) in self.pairs.iter().flatten() {
            w.add_value(k, v)?;
        }
        let by_position = match order {
            TensorOrder::Field => false,
            TensorOrder::Source => true,
            TensorOrder::Auto => self.tensors.iter().all(|t| t.position.is_some()),
        };
        if by_position {
            // Stable: equal places (none) keep field order, after the placed ones.
            self.tensors.sort_by_key(|t| (t.position.is_none(), t.position));
        }
        for t in &self.tensors {
            w.add_tensor(&t.name, t.dtype, &t.shape)?;
        }
        let endian = w.endian();
        for t in &self.tensors {
            let mut data = w.tensor_data_writer()?;
            // The writer's errors name the tensor already; the storage's get its name.
            let mut writer_failed = false;
            let mut piece = |bytes: &[u8]| data.write(bytes).inspect_err(|_| writer_failed = true);
            (t.data)(t.dtype, endian, &mut piece).map_err(|e| if writer_failed { e } else { e.in_tensor(&t.name) })?;
            data.finish()?;
        }
        Ok(())
    }
}

/// A value for an error message: its content, shortened.
fn show(v: &Value) -> String {
    let s = format!("{v:?}");
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or_default()),
        None => s,
    }
}
