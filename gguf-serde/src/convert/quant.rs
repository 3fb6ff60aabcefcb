//! Pre-quantized checkpoints: `config.json`'s `quantization_config`, as the reference's
//! `ModelBase.dequant_model` (`conversion/base.py`) reads it before any tensor is converted.
//!
//! - **`quant_method = "fp8"`** (DeepSeek-V3, Qwen3-FP8, …): each weight `X` stored as
//!   `F8_E4M3` (or `F8_E5M2`, or any float type) with a scale tensor `X_scale_inv` beside it is
//!   dequantized as the reference's `dequant_simple` does: the scale widened to F32, repeated
//!   over blocks of `weight_block_size = [rows, columns]` of the weight's last two dimensions
//!   (the edge blocks of a dimension that is not a multiple of the block cover what is left),
//!   the weight widened to F32 (exactly: every FP8 value is an F32), and the two multiplied in
//!   F32, one rounding. Without `weight_block_size` the scale is one value, or one per row. The
//!   result is an F32 tensor, converted on from there as any F32 source (its output type, its
//!   transforms). The scale tensors are consumed (neither written nor reported as unknown), and
//!   the unused `.activation_scale`, `_activation_scale` and `.qscale_act` tensors are dropped;
//!   Mistral's `.qscale_weight` is the scale of the `.weight` beside it. Dequantization streams
//!   with the rows it scales: a chunk needs the scale rows of its own rows only.
//! - An `F8_E4M3`/`F8_E5M2` tensor without a scale (or in a checkpoint without
//!   `quantization_config`) is widened to F32, as the reference's `.to(torch.float32)`.
//! - The reference's `--fp8-as-q8` ([`ConvertOptions::fp8_as_q8`](super::ConvertOptions::fp8_as_q8)):
//!   the tensors made from a scaled weight are forced to Q8_0 (F16 where a row is not whole
//!   blocks, F32 when 1-D), as its `ModelBase.tensor_force_quant`, which sees the Hugging Face
//!   name of the source that completed the tensor (the last expert of a stack, `kv_b_proj` for
//!   both of its halves).
//! - **`quant_method = "mxfp4"`** (gpt-oss as published): the `U8` blocks and scales are left
//!   as raw bytes for the architecture that repacks them
//!   ([`Architecture::mxfp4_tensors`](super::Architecture::mxfp4_tensors)); when the
//!   architecture repacks none (any but gpt-oss), the plan refuses the checkpoint
//!   ([`ConvertError::UnsupportedQuantization`], as the reference's "Quant method is not yet
//!   supported"), and a `U8` tensor is refused as values ([`ConvertError::Unsupported`]).
//! - Every other method is refused ([`ConvertError::UnsupportedQuantization`], naming it):
//!   `bitnet`, `gptq`, `compressed-tensors` (and NVFP4, `hf_quant_config.json`'s `modelopt`),
//!   which the reference dequantizes in ways not reproduced here; `awq` and any other, which the
//!   reference refuses too.

use std::sync::OnceLock;

use serde_json::Value as Json;

use super::checkpoint::{HfConfig, SourceTensor};
use super::ConvertError;
use crate::GgmlType;

type Result<T, E = ConvertError> = std::result::Result<T, E>;

/// An 8-bit float format of a safetensors tensor (`F8_E4M3`, `F8_E5M2`), as torch's
/// `float8_e4m3fn` and `float8_e5m2` define them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp8 {
    /// `F8_E4M3` (`float8_e4m3fn`): 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; no
    /// infinities, `S.1111.111` is NaN; largest finite value 448.
    E4M3,
    /// `F8_E5M2` (`float8_e5m2`): 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, with
    /// infinities and NaNs as IEEE 754; largest finite value 57344.
    E5M2,
}

impl Fp8 {
    /// The value of the byte `b`, exactly (every FP8 value is an F32).
    pub fn decode(self, b: u8) -> f32 {
        self.table()[usize::from(b)]
    }

    /// The value of every byte, computed once.
    fn table(self) -> &'static [f32; 256] {
        static E4M3: OnceLock<[f32; 256]> = OnceLock::new();
        static E5M2: OnceLock<[f32; 256]> = OnceLock::new();
        let (cell, exp_bits, man_bits, ieee) = match self {
            Fp8::E4M3 => (&E4M3, 4u32, 3u32, false),
            Fp8::E5M2 => (&E5M2, 5, 2, true),
        };
        cell.get_or_init(|| {
            let mut t = [0f32; 256];
            let bias = (1i32 << (exp_bits - 1)) - 1;
            for (b, v) in t.iter_mut().enumerate() {
                let b = b as u32;
                let sign = if b & 0x80 != 0 { -1.0f32 } else { 1.0 };
                let e = ((b >> man_bits) & ((1 << exp_bits) - 1)) as i32;
                let m = (b & ((1 << man_bits) - 1)) as f32;
                let scale = (1u32 << man_bits) as f32;
                let top = (1i32 << exp_bits) - 1;
                *v = if ieee && e == top {
                    if m == 0.0 {
                        sign * f32::INFINITY
                    } else {
                        f32::NAN
                    }
                } else if !ieee && e == top && m == scale - 1.0 {
                    f32::NAN
                } else if e == 0 {
                    sign * (m / scale) * 2f32.powi(1 - bias)
                } else {
                    sign * (1.0 + m / scale) * 2f32.powi(e - bias)
                };
            }
            t
        })
    }
}

/// The scale of a dequantized weight (`X_scale_inv` beside `X`): what multiplies each value.
#[derive(Clone, Debug)]
pub struct Scale<'a> {
    /// The scale tensor's Hugging Face name (`…q_a_proj.weight_scale_inv`).
    pub name: String,
    /// Its type (F32, BF16 or F16; widened to F32).
    pub dtype: GgmlType,
    /// Its canonical shape.
    pub shape: Vec<u64>,
    /// Its little-endian bytes in the memory mapping.
    pub data: &'a [u8],
    /// `weight_block_size`, `[rows, columns]` of the weight per scale value, or `None` (one
    /// value, or one per row).
    pub block: Option<[u64; 2]>,
}

/// Where the scale of a weight's value is, once checked against the weight's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// One value for the whole weight.
    Scalar,
    /// One value per row (of the last dimension).
    PerRow,
    /// Blocks of `br × bc` over the last two dimensions, whose `r` rows are scaled by a
    /// `[.., sr, sc]` grid.
    Blocks { r: u64, br: u64, bc: u64, sr: u64, sc: u64 },
}

impl Scale<'_> {
    /// How the scale covers a weight of canonical `shape`, as the reference's broadcast does.
    ///
    /// # Errors
    /// [`ConvertError::Unsupported`] naming the weight when the scale does not cover it (the
    /// reference's broadcast would fail) or covers it in a way not reproduced here.
    fn layout(&self, weight: &str, shape: &[u64]) -> Result<Layout> {
        let bad = |why: String| ConvertError::Unsupported {
            name: weight.to_owned(),
            reason: format!("its scale {} of shape {:?}: {why}", self.name, self.shape),
        };
        let numel: u64 = self.shape.iter().product();
        let n = shape.len();
        match self.block {
            None if numel == 1 => Ok(Layout::Scalar),
            None => {
                let rows = &shape[..n.saturating_sub(1)];
                let s = self.shape.strip_suffix(&[1]).unwrap_or(&self.shape);
                if n >= 2 && s == rows {
                    Ok(Layout::PerRow)
                } else {
                    Err(bad(format!("neither one value nor one per row of a weight of shape {shape:?}")))
                }
            }
            Some([br, bc]) => {
                if n < 2 || self.shape.len() != n || br == 0 || bc == 0 {
                    return Err(bad(format!("not a grid of [{br}, {bc}] blocks over a weight of shape {shape:?}")));
                }
                let (r, c) = (shape[n - 2], shape[n - 1]);
                let (sr, sc) = (self.shape[n - 2], self.shape[n - 1]);
                if self.shape[..n - 2] != shape[..n - 2] || sr.saturating_mul(br) < r || sc.saturating_mul(bc) < c {
                    return Err(bad(format!(
                        "too few [{br}, {bc}] blocks for a weight of shape {shape:?} (needs [{}, {}])",
                        r.div_ceil(br),
                        c.div_ceil(bc)
                    )));
                }
                Ok(Layout::Blocks { r, br, bc, sr, sc })
            }
        }
    }
}

/// The scaling of one weight's rows, checked: what [`write_plan`](super::write_plan) applies to
/// each chunk of source rows after widening them.
#[derive(Debug)]
pub(crate) struct Scaler<'a> {
    scale: &'a Scale<'a>,
    layout: Layout,
    /// The scale row decoded last: (index, values).
    cached: Option<(u64, Vec<f32>)>,
}

impl<'a> Scaler<'a> {
    /// The scaling of the weight `weight` of canonical `shape` by `scale`.
    ///
    /// # Errors
    /// As [`Scale`]'s checks: [`ConvertError::Unsupported`] naming the weight.
    pub(crate) fn new(weight: &str, shape: &[u64], scale: &'a Scale<'a>) -> Result<Scaler<'a>> {
        Ok(Scaler { scale, layout: scale.layout(weight, shape)?, cached: None })
    }

    /// Scale values `first .. first + len` of the scale tensor, widened to F32.
    fn values(&self, first: u64, len: u64) -> Result<Vec<f32>> {
        let size = self.scale.dtype.type_size();
        let (start, end) = (first * size, (first + len) * size);
        let bytes = self.scale.data.get(start as usize..end as usize).ok_or_else(|| ConvertError::Unsupported {
            name: self.scale.name.clone(),
            reason: format!(
                "{} of data for its shape {:?}",
                crate::format::count(self.scale.data.len(), "byte"),
                self.scale.shape
            ),
        })?;
        let mut out = vec![0f32; len as usize];
        crate::codec::dequantize(self.scale.dtype, bytes, &mut out)?;
        Ok(out)
    }

    /// Multiplies `values`, the source rows `first..` (numbered over the weight's rows of its
    /// last dimension, `width` values each, widened to F32), by their scale, in F32.
    ///
    /// # Errors
    /// [`ConvertError::Unsupported`] for scale data shorter than its shape.
    pub(crate) fn apply(&mut self, first: u64, width: usize, values: &mut [f32]) -> Result<()> {
        match self.layout {
            Layout::Scalar => {
                let s = self.values(0, 1)?[0];
                values.iter_mut().for_each(|v| *v *= s);
            }
            Layout::PerRow => {
                let n = (values.len() / width.max(1)) as u64;
                let s = self.values(first, n)?;
                for (row, s) in values.chunks_mut(width.max(1)).zip(s) {
                    row.iter_mut().for_each(|v| *v *= s);
                }
            }
            Layout::Blocks { r, br, bc, sr, sc } => {
                for (i, row) in values.chunks_mut(width.max(1)).enumerate() {
                    let s = first + i as u64;
                    let at = (s / r * sr + s % r / br) * sc;
                    if self.cached.as_ref().is_none_or(|(k, _)| *k != at) {
                        self.cached = Some((at, self.values(at, sc)?));
                    }
                    let scales = &self.cached.as_ref().map(|(_, v)| v.as_slice()).unwrap_or_default();
                    for (chunk, s) in row.chunks_mut(bc as usize).zip(scales.iter()) {
                        chunk.iter_mut().for_each(|v| *v *= *s);
                    }
                }
            }
        }
        Ok(())
    }
}

/// `quantization_config.quant_method` of `config.json` (as the reference reads it from its
/// hparams), or, without one, the producer of `hf_quant_config.json` (ModelOpt's file) when the
/// folder has it, lower-cased as the reference lower-cases it.
fn method(dir: &std::path::Path, config: &HfConfig) -> Option<String> {
    let given = config.get("quantization_config").and_then(|q| q.get("quant_method")).and_then(Json::as_str);
    if let Some(m) = given {
        return Some(m.to_owned());
    }
    let file = super::checkpoint::read_json(&dir.join("hf_quant_config.json")).ok()?;
    let producer = file.get("producer").and_then(|p| p.get("name")).and_then(Json::as_str).unwrap_or("");
    let method = file.get("quantization").and_then(|q| q.get("quant_method")).and_then(Json::as_str);
    Some(method.map_or_else(|| producer.to_lowercase(), str::to_owned))
}

/// What the reference does with each method this converter refuses.
fn refusal(method: &str) -> &'static str {
    match method {
        "bitnet" => "the reference unpacks its 2-bit weights and divides by their scales; not reproduced here",
        "gptq" => {
            "the reference unpacks its integer weights with their zero points and group scales; not reproduced here"
        }
        "compressed-tensors" => {
            "the reference dequantizes its packed, FP8 or NVFP4 forms (or repacks NVFP4); not reproduced here"
        }
        "modelopt" => "the reference dequantizes its FP8 weights or repacks its NVFP4 ones; not reproduced here",
        _ => "the reference refuses it too (\"Quant method is not yet supported\")",
    }
}

/// The checkpoint's tensors `raw` (in its order) as the reference's `dequant_model` leaves them
/// (see the [module docs](self)): with `quant_method = "fp8"`, each scale attached to its weight
/// ([`SourceTensor::scale`]) and removed from the list, the unused activation scales removed; the
/// order of the rest kept; with `mxfp4`, the list as it is (see the [module docs](self)). Any
/// other method is refused.
///
/// # Errors
/// [`ConvertError::UnsupportedQuantization`] naming a method other than `fp8` and `mxfp4`;
/// [`ConvertError::Config`] for a mistyped `weight_block_size`; [`ConvertError::Layout`] for a
/// scale without its weight; [`ConvertError::Unsupported`] for a scale that does not cover its
/// weight.
pub(crate) fn dequantized<'a>(
    dir: &std::path::Path,
    config: &HfConfig,
    raw: Vec<SourceTensor<'a>>,
) -> Result<Vec<SourceTensor<'a>>> {
    let Some(method) = method(dir, config) else { return Ok(raw) };
    match method.as_str() {
        "fp8" => {}
        "mxfp4" => return Ok(raw),
        _ => return Err(ConvertError::UnsupportedQuantization { reason: refusal(&method).to_owned(), method }),
    }
    let block = match config.get("quantization_config").and_then(|q| q.get("weight_block_size")) {
        None | Some(Json::Null) => None,
        Some(Json::Array(a)) if a.len() == 2 && a.iter().all(|v| v.as_u64().is_some_and(|n| n > 0)) => {
            Some([a[0].as_u64().unwrap_or(1), a[1].as_u64().unwrap_or(1)])
        }
        Some(v) => {
            return Err(ConvertError::Config(format!(
                "quantization_config.weight_block_size: {v} is not two positive block sizes [rows, columns]"
            )))
        }
    };
    let index: std::collections::HashMap<String, usize> =
        raw.iter().enumerate().map(|(i, t)| (t.name.clone(), i)).collect();
    let mut scales: Vec<(usize, Scale<'a>)> = Vec::new();
    let mut dropped = vec![false; raw.len()];
    for (i, t) in raw.iter().enumerate() {
        let weight = if let Some(w) = t.name.strip_suffix("_scale_inv") {
            w.to_owned()
        } else if let Some(w) = t.name.strip_suffix("qscale_weight") {
            format!("{w}weight")
        } else {
            if [".activation_scale", "_activation_scale", ".qscale_act"].iter().any(|s| t.name.ends_with(s)) {
                dropped[i] = true;
            }
            continue;
        };
        let Some(&w) = index.get(&weight) else {
            return Err(ConvertError::Layout(format!(
                "{} is the scale of {weight}, which is not in the checkpoint",
                t.name
            )));
        };
        if t.fp8.is_some() {
            return Err(ConvertError::Unsupported { name: t.name.clone(), reason: "an FP8 scale".into() });
        }
        let scale = Scale { name: t.name.clone(), dtype: t.dtype, shape: t.shape.clone(), data: t.data, block };
        Scaler::new(&raw[w].name, &raw[w].shape, &scale)?;
        dropped[i] = true;
        scales.push((w, scale));
    }
    let mut out = raw;
    for (w, scale) in scales {
        out[w].scale = Some(scale);
    }
    Ok(out.into_iter().zip(dropped).filter(|(_, d)| !d).map(|(t, _)| t).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_values_are_torch_s() {
        // float8_e4m3fn: the bytes of 1, 448 (largest), 2^-9 (smallest subnormal), -2, NaN
        let e4 = Fp8::E4M3;
        assert_eq!(e4.decode(0x38), 1.0);
        assert_eq!(e4.decode(0x7e), 448.0);
        assert_eq!(e4.decode(0x01), 2f32.powi(-9));
        assert_eq!(e4.decode(0x08), 2f32.powi(-6));
        assert_eq!(e4.decode(0xc0), -2.0);
        assert!(e4.decode(0x7f).is_nan() && e4.decode(0xff).is_nan());
        assert!(e4.decode(0x78).is_finite());
        // float8_e5m2: 1, 57344 (largest), 2^-16 (smallest subnormal), inf, NaN
        let e5 = Fp8::E5M2;
        assert_eq!(e5.decode(0x3c), 1.0);
        assert_eq!(e5.decode(0x7b), 57344.0);
        assert_eq!(e5.decode(0x01), 2f32.powi(-16));
        assert_eq!(e5.decode(0x7c), f32::INFINITY);
        assert_eq!(e5.decode(0xfc), f32::NEG_INFINITY);
        assert!(e5.decode(0x7d).is_nan());
    }

    #[test]
    fn block_scales_cover_partial_edge_blocks() {
        // a [5, 3] weight in [2, 2] blocks: a [3, 2] grid of scales 1..6
        let s: Vec<u8> = (1..=6).flat_map(|v| (v as f32).to_le_bytes()).collect();
        let scale = Scale {
            name: "w_scale_inv".into(),
            dtype: GgmlType::F32,
            shape: vec![3, 2],
            data: &s,
            block: Some([2, 2]),
        };
        let mut sc = Scaler::new("w", &[5, 3], &scale).unwrap();
        let mut v = vec![1f32; 15];
        sc.apply(0, 3, &mut v).unwrap();
        // torch: scale.repeat_interleave(2, 0).repeat_interleave(2, 1)[:5, :3]
        assert_eq!(v, [1., 1., 2., 1., 1., 2., 3., 3., 4., 3., 3., 4., 5., 5., 6.]);
        let mut row4 = vec![1f32; 3];
        sc.apply(4, 3, &mut row4).unwrap();
        assert_eq!(row4, [5., 5., 6.]);
        assert!(Scaler::new("w", &[7, 3], &scale).is_err());
        assert!(Scaler::new("w", &[5], &scale).is_err());
    }
}
