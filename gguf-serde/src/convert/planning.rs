//! Planning a conversion: every tensor mapped, checked and typed, every key made in the
//! reference's order ([`plan`], [`plan_with`]); nothing is written.

use std::path::Path;

use std::collections::HashMap;

use super::arch::{self, Architecture, Batch, Join, Mapped, Transform};
use super::general::{self, GeneralKeys, NameParts, ParamCounts};
use super::SourceTensor;
use super::{default_file_name, output_type, Checkpoint, ConvertError, ConvertOptions, HfConfig, Kvs, OutType, Result};
use crate::{GgmlType, Value};

/// Where a planned tensor's values come from.
#[derive(Clone, Debug)]
pub enum TensorData<'a> {
    /// A checkpoint tensor (through the [`PlannedTensor::transforms`]).
    Source(SourceTensor<'a>),
    /// Values made by the architecture (F32).
    Generated(Vec<f32>),
    /// Checkpoint tensors joined into one ([`Mapped::Part`]): each part through its own
    /// transforms, written in place one after the other.
    Joined {
        /// How the parts are joined.
        join: Join,
        /// The parts, by index.
        parts: Vec<JoinedPart<'a>>,
    },
    /// MXFP4 blocks and scales written as ggml `MXFP4` without dequantizing
    /// ([`arch::Mxfp4Tensor`]).
    Mxfp4 {
        /// The blocks, `[n_expert, rows, n_block, 16]` U8.
        blocks: SourceTensor<'a>,
        /// The scales, `[n_expert, rows, n_block]` U8.
        scales: SourceTensor<'a>,
        /// The rows kept: `(start, step)`.
        rows: (u64, u64),
    },
}

/// A part of a joined tensor ([`TensorData::Joined`]).
#[derive(Clone, Debug)]
pub struct JoinedPart<'a> {
    /// The checkpoint tensor.
    pub source: SourceTensor<'a>,
    /// Its transforms, in order, before joining.
    pub transforms: Vec<Transform>,
    /// Its canonical shape after the transforms.
    pub shape: Vec<u64>,
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
    /// Bytes of source data read for this tensor: the source rows its output is made of (all of
    /// a source's rows unless a slice leaves some out; a split source counts in each output).
    pub fn source_bytes(&self) -> u64 {
        // the source's bytes per value times the values of the output (a transposition keeps
        // the values but not the rows)
        let read = |src: &SourceTensor<'_>, out_shape: &[u64]| {
            let values: u64 = src.shape.iter().product();
            let out: u64 = out_shape.iter().product();
            (src.data.len() as u64).checked_div(values).unwrap_or(0).saturating_mul(out)
        };
        match &self.data {
            TensorData::Source(s) => read(s, &self.shape),
            TensorData::Generated(v) => v.len() as u64 * 4,
            TensorData::Joined { parts, .. } => parts.iter().map(|p| read(&p.source, &p.shape)).sum(),
            TensorData::Mxfp4 { blocks, scales, .. } => {
                let kept = super::rows::row_count(&self.shape);
                let all = super::rows::row_count(&blocks.shape[..blocks.shape.len().saturating_sub(1)]).max(1);
                (blocks.data.len() as u64 + scales.data.len() as u64) / all * kept
            }
        }
    }
}

/// The FP8 sources (`F8_E4M3`/`F8_E5M2`, [`SourceTensor::fp8`]) of `tensors` that have no scale
/// ([`SourceTensor::scale`]): their Hugging Face names and formats, in order, each once (a source
/// split into several outputs is named once).
pub fn unscaled_fp8<'p>(tensors: &'p [PlannedTensor<'_>]) -> Vec<(&'p str, super::quant::Fp8)> {
    let mut out: Vec<(&'p str, super::quant::Fp8)> = Vec::new();
    let mut push = |s: &'p SourceTensor<'_>| {
        if let (Some(f), None) = (s.fp8, &s.scale) {
            if !out.iter().any(|(n, _)| *n == s.name) {
                out.push((s.name.as_str(), f));
            }
        }
    };
    for t in tensors {
        match &t.data {
            TensorData::Source(s) => push(s),
            TensorData::Joined { parts, .. } => parts.iter().for_each(|p| push(&p.source)),
            TensorData::Generated(_) | TensorData::Mxfp4 { .. } => {}
        }
    }
    out
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

    /// The FP8 weights (`F8_E4M3`/`F8_E5M2`) with no scale (`{name}_scale_inv`) beside them:
    /// widened to F32 as they are (scale 1), as the reference's `.to(torch.float32)` widens
    /// them. Their Hugging Face names and formats, in file order, each once.
    pub fn unscaled_fp8(&self) -> Vec<(&str, super::quant::Fp8)> {
        unscaled_fp8(&self.tensors)
    }

    /// Bytes of source data the conversion reads (the progress total).
    pub fn source_bytes(&self) -> u64 {
        self.tensors.iter().map(PlannedTensor::source_bytes).sum()
    }
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
    let names: Vec<&str> = sources.iter().map(|t| t.name.as_str()).collect();
    let mut consumed = std::collections::HashSet::new();
    for m in arch.mxfp4_tensors(&cx, &names)? {
        let t = mxfp4_tensor(&sources, &m)?;
        consumed.insert(m.blocks);
        consumed.insert(m.scales);
        tensors.push(t);
    }
    // the reference's `_is_mxfp4`
    let mxfp4 = config
        .get("quantization_config")
        .and_then(|q| q.get("quant_method"))
        .is_some_and(|m| m.as_str() == Some("mxfp4"));
    if mxfp4 && consumed.is_empty() {
        // the reference's `dequant_model` leaves MXFP4 to gpt-oss and refuses it elsewhere
        return Err(ConvertError::UnsupportedQuantization {
            method: "mxfp4".into(),
            reason: "the reference converts MXFP4 weights only for gpt-oss (`*_blocks`/`*_scales` experts); \
                     this architecture repacks none here"
                .into(),
        });
    }
    let sources: Vec<SourceTensor<'a>> = sources.into_iter().filter(|t| !consumed.contains(&t.name)).collect();
    for arch::ExtraTensor { name, shape, values } in arch.extra_tensors(&cx)? {
        if shape.iter().product::<u64>() != values.len() as u64 {
            return Err(ConvertError::BadShape {
                name,
                reason: format!("{} for shape {shape:?}", crate::format::count(values.len(), "value")),
            });
        }
        let dtype = output_type(&name, &shape, outtype, arch.force_type("", &name, shape.len()));
        tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Generated(values), transforms: Vec::new() });
    }
    let mut pending: HashMap<String, Pending<'a>> = HashMap::new();
    // complete joined tensors held for their batch: key -> (size, [(rank, tensor)])
    let mut batches: HashMap<String, (u32, Vec<(u32, PlannedTensor<'a>)>)> = HashMap::new();
    // `ModelBase.tensor_force_quant`: with `--fp8-as-q8`, Q8_0 for what a scaled weight makes
    // (the reference knows it by the Hugging Face name of the source that completed the tensor)
    let scaled: std::collections::HashSet<String> =
        sources.iter().filter(|t| t.scale.is_some()).map(|t| t.name.clone()).collect();
    let typed = |name: &str, hf: &str, shape: &[u64]| {
        let fp8_q8 = (opts.fp8_as_q8 && scaled.contains(hf) && shape.len() >= 2)
            .then_some(arch::ForceType::Type(GgmlType::Q8_0));
        output_type(name, shape, outtype, arch.force_type(hf, name, shape.len()).or(fp8_q8))
    };
    for src in sources {
        let mapped = arch.map_tensor(&src.name, &src.shape, &cx)?;
        if src.dtype == GgmlType::I8 && !matches!(mapped, Mapped::Skip | Mapped::Unknown) {
            return Err(ConvertError::Unsupported {
                name: src.name,
                reason: "U8 bytes are converted only as MXFP4 blocks and scales (quant_method \"mxfp4\")".into(),
            });
        }
        match mapped {
            Mapped::Skip => {}
            Mapped::Unknown => {
                return Err(ConvertError::UnknownTensor { name: src.name, arch: arch.name().to_owned() })
            }
            Mapped::To { name, transforms } => {
                let (shape, _) = super::rows::plan_view(&src.name, &src.shape, &transforms)?;
                let dtype = typed(&name, &src.name, &shape);
                tensors.push(PlannedTensor { name, shape, dtype, data: TensorData::Source(src), transforms });
            }
            Mapped::Split(targets) => {
                for arch::Target { name, transforms } in targets {
                    let (shape, _) = super::rows::plan_view(&src.name, &src.shape, &transforms)?;
                    let dtype = typed(&name, &src.name, &shape);
                    tensors.push(PlannedTensor {
                        name,
                        shape,
                        dtype,
                        data: TensorData::Source(src.clone()),
                        transforms,
                    });
                }
            }
            Mapped::Part { name, index, count, join, transforms, batch } => {
                let Some(t) = join_part(&mut pending, src, name, index, count, join, transforms)? else { continue };
                let dtype = typed(&t.name, &t.hf_last, &t.shape);
                let planned = PlannedTensor {
                    name: t.name,
                    shape: t.shape,
                    dtype,
                    data: TensorData::Joined { join: t.join, parts: t.parts },
                    transforms: Vec::new(),
                };
                match batch {
                    None => tensors.push(planned),
                    Some(Batch { key, rank, size }) => {
                        let held = batches.entry(key.clone()).or_insert_with(|| (size, Vec::new()));
                        if held.0 != size || rank >= size || held.1.iter().any(|(r, _)| *r == rank) {
                            return Err(ConvertError::Layout(format!(
                                "{}: rank {rank} of {size} in batch {key} is given twice or does not fit the batch",
                                planned.name
                            )));
                        }
                        held.1.push((rank, planned));
                        if held.1.len() == size as usize {
                            let mut done = batches.remove(&key).map(|(_, v)| v).unwrap_or_default();
                            done.sort_by_key(|(r, _)| *r);
                            tensors.extend(done.into_iter().map(|(_, t)| t));
                        }
                    }
                }
            }
        }
    }
    if !pending.is_empty() {
        let mut names: Vec<&String> = pending.keys().collect();
        names.sort();
        let p = &pending[names[0]];
        let missing: Vec<String> =
            p.parts.iter().enumerate().filter(|(_, x)| x.is_none()).map(|(i, _)| i.to_string()).collect();
        return Err(ConvertError::Layout(format!(
            "{} is joined from {} parts, but part{} {} {} missing from the checkpoint (after {}){}",
            names[0],
            p.parts.len(),
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            p.hf_last,
            if names.len() > 1 {
                format!("; {} other joined tensors are incomplete", names.len() - 1)
            } else {
                String::new()
            }
        )));
    }
    if let Some((key, (size, held))) = batches.iter().min_by(|a, b| a.0.cmp(b.0)) {
        let names: Vec<&str> = held.iter().map(|(_, t)| t.name.as_str()).collect();
        return Err(ConvertError::Layout(format!(
            "batch {key} has {} of its {size} joined tensors ({}); the others never got all their parts",
            held.len(),
            names.join(", ")
        )));
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
    // the reference's `prepare_metadata`: MXFP4 experts make a float output `MOSTLY_MXFP4_MOE`
    let file_type = if mxfp4 && outtype != OutType::Q8_0 { MOSTLY_MXFP4_MOE } else { outtype.file_type() };
    arch.parameters(&cx, file_type, &mut kvs)?;
    kvs.set("general.quantization_version", Value::U32(2));
    if opts.vocab {
        arch.vocab(&cx, &mut kvs)?;
    }
    Ok(Plan { arch: arch.name(), outtype, kvs, tensors, params, name_parts, checkpoint: ckpt })
}

/// llama.cpp's `LLAMA_FTYPE_MOSTLY_MXFP4_MOE`.
const MOSTLY_MXFP4_MOE: u32 = 38;

/// The planned tensor of `m`, its blocks and scales found among `sources` and checked.
fn mxfp4_tensor<'a>(sources: &[SourceTensor<'a>], m: &arch::Mxfp4Tensor) -> Result<PlannedTensor<'a>> {
    let find = |n: &str| {
        sources
            .iter()
            .find(|t| t.name == n)
            .cloned()
            .ok_or_else(|| ConvertError::Layout(format!("{}: MXFP4 tensor {n} is not in the checkpoint", m.name)))
    };
    let (blocks, scales) = (find(&m.blocks)?, find(&m.scales)?);
    let bad = |reason: String| ConvertError::BadShape { name: m.blocks.clone(), reason };
    if blocks.dtype != GgmlType::I8 || scales.dtype != GgmlType::I8 {
        return Err(bad(format!("MXFP4 blocks and scales are U8, not {} and {}", blocks.dtype, scales.dtype)));
    }
    let (e, r, nb) = match (blocks.shape.as_slice(), scales.shape.as_slice()) {
        (&[e, r, nb, 16], s) if s == [e, r, nb] => (e, r, nb),
        (b, s) => {
            return Err(bad(format!(
                "blocks of shape {b:?} and scales of shape {s:?}, expected [n_expert, rows, n_block, 16] and [n_expert, rows, n_block]"
            )))
        }
    };
    let (start, step) = m.rows;
    if step == 0 || start >= r.max(1) {
        return Err(bad(format!("rows {start}::{step} of {r}")));
    }
    let shape = vec![e, (r - start).div_ceil(step), nb * 32];
    Ok(PlannedTensor {
        name: m.name.clone(),
        shape,
        dtype: GgmlType::MXFP4,
        data: TensorData::Mxfp4 { blocks, scales, rows: m.rows },
        transforms: Vec::new(),
    })
}

/// A part gathered: the source, its transforms and its shape after them.
type GatheredPart<'a> = (SourceTensor<'a>, Vec<Transform>, Vec<u64>);

/// A joined tensor whose parts are being gathered.
struct Pending<'a> {
    join: Join,
    parts: Vec<Option<GatheredPart<'a>>>,
    seen: usize,
    /// The Hugging Face name of the part seen last.
    hf_last: String,
}

/// A joined tensor, complete.
struct Joined<'a> {
    name: String,
    shape: Vec<u64>,
    join: Join,
    parts: Vec<JoinedPart<'a>>,
    hf_last: String,
}

/// Adds `src` as part `index` of `count` of `name`; the joined tensor once every part is there.
fn join_part<'a>(
    pending: &mut HashMap<String, Pending<'a>>,
    src: SourceTensor<'a>,
    name: String,
    index: u64,
    count: u64,
    join: Join,
    transforms: Vec<Transform>,
) -> Result<Option<Joined<'a>>> {
    let layout = |m: String| Err(ConvertError::Layout(m));
    if count == 0 || index >= count {
        return layout(format!(
            "{}: part index {index} is out of range for {name}, which is joined from {count} parts (0..{count})",
            src.name
        ));
    }
    let n = usize::try_from(count).map_err(|_| ConvertError::Layout(format!("{name}: {count} parts")))?;
    let (shape, _) = super::rows::plan_view(&src.name, &src.shape, &transforms)?;
    let entry = pending.entry(name.clone()).or_insert_with(|| Pending {
        join,
        parts: std::iter::repeat_with(|| None).take(n.min(1 << 20)).collect(),
        seen: 0,
        hf_last: String::new(),
    });
    if entry.parts.len() != n || entry.join != join {
        return layout(format!("{}: the parts of {name} disagree on their count or how they join", src.name));
    }
    let slot = &mut entry.parts[index as usize];
    if let Some((other, _, _)) = slot {
        return layout(format!("{} and {} are both part {index} of {name}", other.name, src.name));
    }
    entry.hf_last = src.name.clone();
    *slot = Some((src, transforms, shape));
    entry.seen += 1;
    if entry.seen < n {
        return Ok(None);
    }
    let Some(done) = pending.remove(&name) else { return Ok(None) };
    let parts: Vec<JoinedPart<'a>> = done
        .parts
        .into_iter()
        .flatten()
        .map(|(source, transforms, shape)| JoinedPart { source, transforms, shape })
        .collect();
    let shapes: Vec<&[u64]> = parts.iter().map(|p| p.shape.as_slice()).collect();
    let shape = super::rows::joined_shape(&name, join, &shapes)?;
    if let Some(p) = parts.iter().find(|p| p.source.dtype != parts[0].source.dtype) {
        return layout(format!(
            "{name}: its parts {} ({}) and {} ({}) differ in type",
            parts[0].source.name, parts[0].source.dtype, p.source.name, p.source.dtype
        ));
    }
    Ok(Some(Joined { name, shape, join, parts, hf_last: done.hf_last }))
}

#[cfg(test)]
mod fp8_tests {
    use super::*;
    use crate::convert::quant::{Fp8, Scale};

    /// The reference (`dequant_simple` in `conversion/base.py`) scales a weight `X` by the
    /// `X_scale_inv` beside it and widens any other FP8 tensor unscaled: only the latter are named.
    #[test]
    fn fp8_sources_without_a_scale_are_named_once() {
        let bytes = [0u8; 16];
        let src = |name: &str, fp8: Option<Fp8>, scaled: bool| SourceTensor {
            name: name.into(),
            dtype: GgmlType::F32,
            fp8,
            scale: scaled.then(|| Scale {
                name: format!("{name}_scale_inv"),
                dtype: GgmlType::F32,
                shape: vec![1],
                data: &bytes[..4],
                block: None,
            }),
            shape: vec![4, 4],
            data: &bytes,
        };
        let planned = |name: &str, data| PlannedTensor {
            name: name.into(),
            shape: vec![4, 4],
            dtype: GgmlType::F16,
            data,
            transforms: Vec::new(),
        };
        let tensors = vec![
            planned("a", TensorData::Source(src("q.weight", Some(Fp8::E4M3), true))),
            planned("b", TensorData::Source(src("k.weight", Some(Fp8::E4M3), false))),
            planned("c", TensorData::Source(src("norm.weight", None, false))),
            planned("d", TensorData::Source(src("k.weight", Some(Fp8::E4M3), false))),
            planned("e", TensorData::Source(src("v.weight", Some(Fp8::E5M2), false))),
        ];
        assert_eq!(unscaled_fp8(&tensors), [("k.weight", Fp8::E4M3), ("v.weight", Fp8::E5M2)]);
    }
}
