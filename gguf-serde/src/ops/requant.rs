//! Converting a whole model's tensors to another ggml type: re-quantizing (`gguf quantize`) and
//! dequantizing (`gguf dequantize`), keeping the metadata.
//!
//! Each converted tensor is dequantized to `f32` and quantized to the target with [`crate::codec`]
//! (ggml's reference algorithms), a chunk of rows at a time over rayon's thread pool, and streamed
//! to the output: memory stays a few MiB whatever the model's size. The output is written to a
//! temporary file and renamed into place ([`GgufWriter::create`]).
//!
//! Which tensors are converted ([`RequantizeOptions::converts`]), as llama.cpp's `llama-quantize`
//! does by default:
//! - tensors with at least two dimensions (one-dimensional tensors, norms and biases, keep their
//!   type) — unless the target is a float type (`F32`, `F16`, `BF16`), when every tensor whose
//!   type is not already a float type converts;
//! - whose row length (the last canonical dimension, `ne[0]`) is a multiple of the target's block
//!   size;
//! - whose name matches none of the user's exclusion patterns (`*` matches any run of
//!   characters: `*norm*`, `token_embd.weight`).
//!
//! `general.file_type` is set to llama.cpp's file type for the target (`llama_ftype`: Q8_0 → 7,
//! Q4_K → 15 "Q4_K_M", …), or left as it is for targets without one.

use std::path::Path;

use crate::codec::{self, CodecError};
use crate::container::{Gguf, GgufWriter, Source, TensorInfo, WriteOptions};
use crate::error::{Error, Result, WriteError};
use crate::format::GgmlType;

/// Elements converted per chunk (per rayon batch): 4 Mi elements, 16 MiB of `f32`.
const CHUNK_ELEMS: u64 = 1 << 22;

/// Options of [`requantize`].
pub struct RequantizeOptions<'a> {
    /// The target type of converted tensors.
    pub target: GgmlType,
    /// Name patterns of tensors to leave as they are (`*` is a wildcard).
    pub exclude: Vec<String>,
    /// Called after each chunk with (bytes of source tensor data done, total).
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

impl RequantizeOptions<'_> {
    /// Options converting to `target`, excluding nothing, without progress reports.
    pub fn new(target: GgmlType) -> Self {
        RequantizeOptions { target, exclude: Vec::new(), progress: None }
    }

    /// Whether `info` is converted (see the [module docs](self)).
    pub fn converts(&self, info: &TensorInfo<'_>) -> bool {
        let float_target = matches!(self.target, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16);
        let float_source = matches!(info.dtype, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16);
        info.dtype != self.target
            && (if float_target { !float_source || info.shape.len() >= 2 } else { info.shape.len() >= 2 })
            && info.ne().first().is_some_and(|&ne0| ne0 % self.target.block_size() == 0)
            && !self.exclude.iter().any(|p| glob(p, info.name))
    }
}

/// What [`requantize`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequantizeReport {
    /// Names of the tensors converted.
    pub converted: Vec<String>,
    /// Names of the tensors copied as they were.
    pub kept: Vec<String>,
    /// Bytes of tensor data in the input and in the output.
    pub bytes_in: u64,
    /// Bytes of tensor data in the output.
    pub bytes_out: u64,
}

/// llama.cpp's `general.file_type` (`enum llama_ftype`) for a file mostly of type `t`.
pub fn llama_file_type(t: GgmlType) -> Option<u32> {
    Some(match t {
        GgmlType::F32 => 0,
        GgmlType::F16 => 1,
        GgmlType::Q4_0 => 2,
        GgmlType::Q4_1 => 3,
        GgmlType::Q8_0 => 7,
        GgmlType::Q5_0 => 8,
        GgmlType::Q5_1 => 9,
        GgmlType::Q2_K => 10,
        GgmlType::Q3_K => 12,
        GgmlType::Q4_K => 15,
        GgmlType::Q5_K => 17,
        GgmlType::Q6_K => 18,
        GgmlType::IQ4_NL => 25,
        GgmlType::IQ4_XS => 30,
        GgmlType::BF16 => 32,
        GgmlType::TQ1_0 => 36,
        GgmlType::TQ2_0 => 37,
        _ => return None,
    })
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = rest.get(i + p.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Writes `src` to `out` with its tensors converted to `opts.target` as the [module docs](self)
/// say, keeping every key (with `general.file_type` updated), the version, byte order and
/// alignment.
///
/// # Errors
/// [`CodecError::UnsupportedQuantize`] if the target cannot be quantized to; the codecs' errors;
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from writing (the file at `out` is then untouched).
pub fn requantize<S: Source>(
    src: &Gguf<S>,
    out: impl AsRef<Path>,
    opts: &RequantizeOptions<'_>,
) -> Result<RequantizeReport> {
    if !codec::can_quantize(opts.target) {
        return Err(CodecError::UnsupportedQuantize(opts.target).into());
    }
    let wopts = WriteOptions::like(src);
    let mut w = GgufWriter::create_with_options(out, wopts)?;
    let file_type = llama_file_type(opts.target);
    let mut has_file_type = false;
    for kv in src.metadata() {
        match (kv.key, file_type) {
            ("general.file_type", Some(ft)) => {
                has_file_type = true;
                w.add_kv("general.file_type", ft)?;
            }
            _ => w.add_kv_ref(kv.key, kv.value)?,
        }
    }
    if let (false, Some(ft)) = (has_file_type, file_type) {
        w.add_kv("general.file_type", ft)?;
    }
    let mut report = RequantizeReport::default();
    let mut plan = Vec::with_capacity(src.tensor_count());
    for t in src.tensors() {
        let convert = opts.converts(&t);
        let dtype = if convert { opts.target } else { t.dtype };
        w.add_tensor(t.name, dtype, &t.shape)?;
        plan.push((t, convert));
    }
    let total: u64 = plan.iter().map(|(t, _)| t.nbytes).sum();
    let mut done = 0u64;
    let mut scratch: Vec<f32> = Vec::new();
    let mut outbuf: Vec<u8> = Vec::new();
    for (t, convert) in plan {
        let data = src.tensor_data(&t)?;
        report.bytes_in += t.nbytes;
        if !convert {
            w.write_tensor_data(data)?;
            report.kept.push(t.name.to_owned());
            report.bytes_out += t.nbytes;
            done += t.nbytes;
        } else {
            let out_bytes = opts.target.nbytes(&t.ne()).ok_or_else(|| WriteError::InvalidTensor {
                name: t.name.to_owned(),
                reason: format!("size as {} overflows", opts.target),
            })?;
            let mut writer = w.tensor_data_writer()?;
            // Whole rows of both types per chunk: a multiple of both block sizes.
            let row = t.ne().first().copied().unwrap_or(1).max(1);
            let rows_per_chunk = (CHUNK_ELEMS / row).max(1);
            let n_rows = t.n_elements / row; // row >= 1
            let (in_row, out_row) = (t.dtype.row_bytes(row).unwrap_or(0), opts.target.row_bytes(row).unwrap_or(0));
            let mut r = 0u64;
            while r < n_rows {
                let rows = rows_per_chunk.min(n_rows - r);
                let (start, len) = ((r * in_row) as usize, (rows * in_row) as usize);
                let chunk = data.get(start..start + len).ok_or_else(|| Error::data_not_loaded(t.name))?;
                let elems = (rows * row) as usize;
                scratch.resize(elems, 0.0);
                outbuf.resize((rows * out_row) as usize, 0);
                codec::dequantize_par(t.dtype, src.endian(), chunk, &mut scratch)?;
                codec::quantize_par(opts.target, src.endian(), &scratch, &mut outbuf)?;
                writer.write(&outbuf)?;
                done += len as u64;
                if let Some(p) = opts.progress {
                    p(done, total);
                }
                r += rows;
            }
            writer.finish()?;
            report.converted.push(t.name.to_owned());
            report.bytes_out += out_bytes;
        }
        if let Some(p) = opts.progress {
            p(done, total);
        }
    }
    w.commit()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn glob_patterns() {
        assert!(glob("*norm*", "blk.0.attn_norm.weight"));
        assert!(glob("token_embd.weight", "token_embd.weight"));
        assert!(!glob("token_embd.weight", "token_embd.weight2"));
        assert!(glob("blk.*.ffn_*", "blk.12.ffn_up.weight"));
        assert!(!glob("blk.*.ffn_", "blk.12.ffn_up.weight"));
        assert!(glob("*", "anything"));
        assert!(glob("*.weight", "output.weight"));
        assert!(!glob("*.bias", "output.weight"));
    }
}
