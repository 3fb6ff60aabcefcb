//! Planning a conversion: every tensor mapped, checked and typed, every key made in the
//! reference's order ([`plan`], [`plan_with`]); nothing is written.

use std::path::Path;

use super::arch::{self, Architecture, Mapped, Transform};
use super::general::{self, GeneralKeys, NameParts, ParamCounts};
use super::SourceTensor;
use super::{default_file_name, output_type, Checkpoint, ConvertError, ConvertOptions, HfConfig, Kvs, OutType, Result};
use crate::{GgmlType, Value};

/// Where a planned tensor's values come from.
#[derive(Clone, Debug)]
pub enum TensorData<'a> {
    /// A checkpoint tensor.
    Source(SourceTensor<'a>),
    /// Values made by the architecture (F32).
    Generated(Vec<f32>),
}

/// A tensor of the output, planned: nothing is converted until [`write_plan`](super::write_plan).
#[derive(Clone, Debug)]
pub struct PlannedTensor<'a> {
    /// The GGUF name.
    pub name: String,
    /// The canonical output shape (after the transforms).
    pub shape: Vec<u64>,
    /// The output type.
    pub dtype: GgmlType,
    /// The source.
    pub data: TensorData<'a>,
    /// The transforms, in order.
    pub transforms: Vec<Transform>,
}

impl PlannedTensor<'_> {
    /// Bytes of source data read for this tensor.
    pub fn source_bytes(&self) -> u64 {
        match &self.data {
            TensorData::Source(s) => s.data.len() as u64,
            TensorData::Generated(v) => v.len() as u64 * 4,
        }
    }
}

/// A conversion, planned and checked: every key in order and every tensor with its type.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    /// `general.architecture`.
    pub arch: &'static str,
    /// The output type, resolved (never [`OutType::Auto`]).
    pub outtype: OutType,
    /// Every key, in file order.
    pub kvs: Kvs,
    /// Every tensor, in file order.
    pub tensors: Vec<PlannedTensor<'a>>,
    /// The parameter counts of the tensors.
    pub params: ParamCounts,
    /// The parts of the reference's default output file name ([`Plan::default_file_name`]).
    pub name_parts: NameParts,
    /// The checkpoint the source tensors are borrowed from, whose mapped pages [`write_plan`](super::write_plan)
    /// releases ([`Checkpoint::release`]) as each chunk is converted.
    pub(super) checkpoint: &'a Checkpoint,
}

impl Plan<'_> {
    /// The reference's default output file name (without folder), e.g.
    /// `tiny-llama-hf-86K-F16.gguf`: [`default_file_name`] of [`Plan::name_parts`] and the
    /// resolved output type.
    ///
    /// # Errors
    /// As [`default_file_name`]: [`ConvertError::FileNameNotPlain`],
    /// [`ConvertError::FileNameTooLong`].
    pub fn default_file_name(&self) -> Result<String> {
        default_file_name(&self.name_parts, self.outtype)
    }

    /// Bytes of source data the conversion reads (the progress total).
    pub fn source_bytes(&self) -> u64 {
        self.tensors.iter().map(PlannedTensor::source_bytes).sum()
    }
}

fn out_shape(name: &str, shape: &[u64], transforms: &[Transform]) -> Result<Vec<u64>> {
    let mut s = shape.to_vec();
    let err = |reason: String| ConvertError::BadShape { name: name.to_owned(), reason };
    for t in transforms {
        match *t {
            Transform::Permute { heads } => {
                let rows = s.first().copied().unwrap_or(0);
                if heads == 0 || rows % (heads * 2) != 0 {
                    return Err(err(format!("{rows} rows are not {heads} heads of an even width")));
                }
            }
            Transform::Add(_) => {}
            Transform::KeepRows(n) => {
                if let Some(r) = s.first_mut() {
                    *r = (*r).min(n);
                } else {
                    return Err(err("a scalar has no rows to keep".into()));
                }
            }
        }
    }
    Ok(s)
}

/// The general keys (`Metadata.set_gguf_meta_model`), from `general.type`
/// ([`general::general_kv`], with `generation_config.json` when the folder has one): the keys to
/// write and the parts of the default file name they give ([`GeneralKeys`]). `name`
/// (`--model-name`) replaces `general.name` ([`GeneralKeys::set_name`]). `model_card` is the
/// card's front matter parsed from YAML ([`ConvertOptions::model_card`]); `metadata_override` the
/// `--metadata` file's JSON ([`ConvertOptions::metadata_override`]).
///
/// # Errors
/// [`ConvertError::Json`] for a `generation_config.json` that is not JSON;
/// [`ConvertError::General`].
pub fn general_keys(
    dir: &Path,
    config: &HfConfig,
    counts: &ParamCounts,
    name: Option<&str>,
    model_card: Option<&serde_json::Value>,
    metadata_override: Option<&serde_json::Value>,
) -> Result<GeneralKeys> {
    let gen_path = dir.join("generation_config.json");
    let generation = match std::fs::read(&gen_path) {
        Ok(bytes) => Some(
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .map_err(|source| ConvertError::Json { path: gen_path.clone(), source })?,
        ),
        Err(_) => None,
    };
    let config_json = serde_json::Value::Object(config.raw.clone());
    let mut keys = general::general_kv(dir, &config_json, counts, model_card, generation.as_ref(), metadata_override)?;
    if let Some(n) = name {
        keys.set_name(n);
    }
    Ok(keys)
}

/// Plans the conversion of `ckpt` with the architecture `config.json` names ([`arch::builtin`]).
///
/// # Errors
/// [`ConvertError::UnknownArchitecture`], and as [`plan_with`].
pub fn plan<'a>(ckpt: &'a Checkpoint, opts: &ConvertOptions<'_>) -> Result<Plan<'a>> {
    let class = ckpt.config.hf_architecture().unwrap_or("").to_owned();
    let arch = arch::builtin(&class).ok_or(ConvertError::UnknownArchitecture(class))?;
    plan_with(ckpt, arch, opts)
}

/// Plans the conversion of `ckpt` with `arch`: maps and checks every tensor, chooses the types,
/// and makes every key (see the [module docs](super)). Nothing is written.
///
/// # Errors
/// [`ConvertError::Config`] from the architecture; [`ConvertError::UnknownTensor`],
/// [`ConvertError::MissingTensor`], [`ConvertError::BadShape`] (a shape that does not fit a
/// transform), [`ConvertError::Layout`] (two tensors of one GGUF name); as
/// [`Checkpoint::tensors`]; [`ConvertError::Vocab`].
pub fn plan_with<'a>(ckpt: &'a Checkpoint, arch: &dyn Architecture, opts: &ConvertOptions<'_>) -> Result<Plan<'a>> {
    let config = &ckpt.config;
    let block_count = config.need_u32(&["n_layers", "num_hidden_layers", "n_layer", "num_layers"])?;
    let cx = arch::ArchContext { dir: &ckpt.dir, config, block_count };
    arch.check(&cx)?;
    let sources = ckpt.tensors()?;

    let outtype = match opts.outtype {
        OutType::Auto => sources
            .iter()
            .filter(|t| t.shape.len() >= 2)
            .find_map(|t| match t.dtype {
                GgmlType::BF16 => Some(OutType::BF16),
                GgmlType::F16 => Some(OutType::F16),
                _ => None,
            })
            .unwrap_or(OutType::F16),
        t => t,
    };

    let mut tensors: Vec<PlannedTensor<'a>> = Vec::new();
    for arch::ExtraTensor { name, shape, values } in arch.extra_tensors(&cx)? {
        if shape.iter().product::<u64>() != values.len() as u64 {
            return Err(ConvertError::BadShape {
                name,
                reason: format!("{} values for shape {shape:?}", values.len()),
            });
        }
        let dtype = output_type(&name, &shape, outtype);
        tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Generated(values), transforms: Vec::new() });
    }
    for src in sources {
        match arch.map_tensor(&src.name, &src.shape, &cx)? {
            Mapped::Skip => {}
            Mapped::Unknown => {
                return Err(ConvertError::UnknownTensor { name: src.name, arch: arch.name().to_owned() })
            }
            Mapped::To { name, transforms } => {
                let shape = out_shape(&src.name, &src.shape, &transforms)?;
                let dtype = output_type(&name, &shape, outtype);
                tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Source(src), transforms });
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for t in &tensors {
        if !seen.insert(t.name.as_str()) {
            return Err(ConvertError::Layout(format!("two tensors map to {}", t.name)));
        }
    }
    if let Some(missing) = arch.required_tensors(&cx).into_iter().find(|n| !seen.contains(n.as_str())) {
        let hf = arch.source_name(&missing);
        return Err(ConvertError::MissingTensor { name: missing, hf });
    }

    let params = ParamCounts::from_tensors(tensors.iter().map(|t| (t.name.as_str(), t.shape.as_slice())));
    let mut kvs = Kvs::default();
    kvs.set("general.architecture", Value::String(arch.name().into()));
    arch.early_keys(&cx, &mut kvs)?;
    kvs.set("general.type", Value::String("model".into()));
    let general = general_keys(&ckpt.dir, config, &params, opts.name, opts.model_card, opts.metadata_override)?;
    let name_parts = general.name_parts();
    kvs.extend(general.into_keys());
    arch.parameters(&cx, outtype.file_type(), &mut kvs)?;
    kvs.set("general.quantization_version", Value::U32(2));
    if opts.vocab {
        arch.vocab(&cx, &mut kvs)?;
    }
    Ok(Plan { arch: arch.name(), outtype, kvs, tensors, params, name_parts, checkpoint: ckpt })
}
