//! Writing a planned conversion: [`convert`], [`write_plan`], and the chunked streaming of each
//! tensor's values through the codecs.

use std::path::{Path, PathBuf};

use super::naming::check_name_length;
use super::{
    plan, plan_with, Architecture, Checkpoint, ConvertOptions, OutType, Plan, PlannedTensor, Result, TensorData,
    Transform,
};
use crate::ops::split::{split_file, SplitBy, SplitOptions};
use crate::{codec, Endian, GgmlType, GgufWriter};

/// What [`convert`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertReport {
    /// GGUF name, type and canonical shape of each tensor, in file order.
    pub tensors: Vec<(String, GgmlType, Vec<u64>)>,
    /// Bytes of source tensor data read.
    pub source_bytes: u64,
    /// The files written (one, or the shards).
    pub files: Vec<PathBuf>,
    /// The output type, resolved.
    pub outtype: OutType,
}

/// Converts the checkpoint in `dir` to a GGUF file at `out` (written atomically; with
/// [`ConvertOptions::split_max_size`], shards `out` without `.gguf` + `-0000i-of-0000n.gguf`).
///
/// # Errors
/// As [`Checkpoint::open`] and [`plan`] (nothing is written then); [`ConvertError::Gguf`](super::ConvertError::Gguf) from
/// writing. On error no file is left at `out`.
pub fn convert(dir: impl AsRef<Path>, out: impl AsRef<Path>, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let ckpt = Checkpoint::open(dir)?;
    let plan = plan(&ckpt, opts)?;
    write_plan(&plan, out.as_ref(), opts)
}

/// Converts with a user's architecture (see [`arch`](super::arch)).
///
/// # Errors
/// As [`convert`].
pub fn convert_with(
    dir: impl AsRef<Path>,
    out: impl AsRef<Path>,
    arch: &dyn Architecture,
    opts: &ConvertOptions<'_>,
) -> Result<ConvertReport> {
    let ckpt = Checkpoint::open(dir)?;
    let plan = plan_with(&ckpt, arch, opts)?;
    write_plan(&plan, out.as_ref(), opts)
}

/// Writes a planned conversion to `out` (see [`convert`]).
///
/// # Errors
/// [`ConvertError::FileNameTooLong`](super::ConvertError::FileNameTooLong) before anything is written when a file name to create (`out`,
/// or with [`ConvertOptions::split_max_size`] the shards) is longer than
/// [`FILE_NAME_MAX`](super::FILE_NAME_MAX) bytes; [`ConvertError::Gguf`](super::ConvertError::Gguf) (I/O, and data that does not match its
/// declared size). On error no file is left at `out`.
pub fn write_plan(plan: &Plan<'_>, out: &Path, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let file_name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_name_length(&file_name)?;
    if opts.split_max_size.is_some() {
        // the shards (`-00001-of-00002.gguf`)
        let stem = out.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        check_name_length(&format!("{stem}-00001-of-00001.gguf"))?;
    }
    let files = match opts.split_max_size {
        None => {
            write_one(plan, out, opts)?;
            vec![out.to_path_buf()]
        }
        Some(max) => {
            let prefix = out.with_extension("");
            // The unsplit file, under a fresh `.gguf-tmp-*` name beside the shards: removed when
            // this scope ends (also on error) and by `remove_temporaries` on an interrupt.
            let dir = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let unsplit = crate::container::atomic::ScratchFile::new_in(dir)?;
            write_one(plan, unsplit.path(), opts)?;
            split_file(unsplit.path(), &prefix, &SplitOptions::new(SplitBy::MaxBytes(max)))?
        }
    };
    Ok(ConvertReport {
        tensors: plan.tensors.iter().map(|t| (t.name.clone(), t.dtype, t.shape.clone())).collect(),
        source_bytes: plan.source_bytes(),
        files,
        outtype: plan.outtype,
    })
}

fn write_one(plan: &Plan<'_>, out: &Path, opts: &ConvertOptions<'_>) -> Result<()> {
    let mut w = GgufWriter::create(out)?;
    for (k, v) in &plan.kvs.0 {
        w.add_value(k, v)?;
    }
    for t in &plan.tensors {
        w.add_tensor(&t.name, t.dtype, &t.shape)?;
    }
    for t in &plan.tensors {
        let mut dw = w.tensor_data_writer()?;
        let release = |done: &[u8]| plan.checkpoint.release(done);
        stream_tensor(t, opts, &mut |piece| dw.write(piece), &release)?;
        dw.finish()?;
    }
    w.commit()?;
    Ok(())
}

/// The source row of output row `row` under [`Transform::Permute`] with `rows` rows and `heads`
/// heads: within a head of `w = rows / heads` rows, output row `2j + s` is source row
/// `s * w / 2 + j`.
pub fn permuted_row(row: u64, rows: u64, heads: u64) -> u64 {
    let w = (rows / heads.max(1)).max(1);
    let (h, i) = (row / w, row % w);
    h * w + (i % 2) * (w / 2) + i / 2
}

fn invalid(name: &str, reason: String) -> crate::Error {
    crate::Error::invalid_tensor(name.to_owned(), reason)
}

/// Streams the stored bytes of `t` (little-endian) to `out`, a chunk of rows at a time, giving
/// `release` the source bytes of each chunk once they are converted (all of them at the end
/// when rows are read out of order).
fn stream_tensor(
    t: &PlannedTensor<'_>,
    opts: &ConvertOptions<'_>,
    out: &mut dyn FnMut(&[u8]) -> crate::Result<()>,
    release: &dyn Fn(&[u8]),
) -> crate::Result<()> {
    let release = |b: &[u8]| {
        if matches!(t.data, TensorData::Source(_)) {
            release(b);
        }
    };
    let report = |n: u64| {
        if let Some(p) = opts.progress {
            p(n);
        }
    };
    let (src_dtype, bytes): (GgmlType, &[u8]) = match &t.data {
        TensorData::Source(s) => (s.dtype, s.data),
        TensorData::Generated(v) => (GgmlType::F32, bytemuck::cast_slice(v.as_slice())),
    };
    let src_shape: &[u64] = match &t.data {
        TensorData::Source(s) => &s.shape,
        TensorData::Generated(_) => &t.shape,
    };
    // The reference keeps F32 and F16 data as they are when the output type is theirs.
    if t.transforms.is_empty() && src_dtype == t.dtype && matches!(src_dtype, GgmlType::F32 | GgmlType::F16) {
        let piece = usize::try_from(opts.chunk_elems.saturating_mul(4)).unwrap_or(usize::MAX).max(1);
        for p in bytes.chunks(piece) {
            out(p)?;
            release(p);
            report(p.len() as u64);
        }
        return Ok(());
    }
    // Rows: the first dimension; a row is everything after it (1-D: rows of one value).
    let src_rows = src_shape.first().copied().unwrap_or(1);
    let total: u64 = src_shape.iter().product();
    let row = if src_shape.len() <= 1 { 1 } else { total.checked_div(src_rows).unwrap_or(0) };
    let in_row = src_dtype.row_bytes(row).ok_or_else(|| invalid(&t.name, "row size overflows".into()))?;
    if src_rows.checked_mul(in_row) != Some(bytes.len() as u64) {
        return Err(invalid(&t.name, format!("{} bytes of data for {src_rows} rows of {row}", bytes.len())));
    }
    let out_rows = t.shape.first().copied().unwrap_or(1);
    // The row length in ggml's sense (the last dimension) for the output type.
    let last = if t.shape.len() <= 1 { 1 } else { t.shape.last().copied().unwrap_or(1) };
    let out_elems_per_row = row;
    if out_elems_per_row % last.max(1) != 0 {
        return Err(invalid(&t.name, "rows do not split into whole last dimensions".into()));
    }
    let out_row_bytes = t
        .dtype
        .row_bytes(last)
        .map(|b| b * (out_elems_per_row / last.max(1)))
        .ok_or_else(|| invalid(&t.name, format!("a row of {last} is not whole {} blocks", t.dtype)))?;
    let permute = t.transforms.iter().find_map(|x| match x {
        Transform::Permute { heads } => Some(*heads),
        _ => None,
    });
    let changes_values = t.transforms.iter().any(|x| matches!(x, Transform::Add(_)));
    let row_u = row as usize;
    let in_row_u = in_row as usize;
    let rows_per_chunk = (opts.chunk_elems / row.max(1)).max(1);
    let mut scratch: Vec<f32> = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut r = 0u64;
    while r < out_rows {
        let n = rows_per_chunk.min(out_rows - r);
        scratch.resize(n as usize * row_u, 0.0);
        match permute {
            None => {
                let start = r as usize * in_row_u;
                let b = bytes.get(start..start + n as usize * in_row_u).unwrap_or_default();
                codec::dequantize_par(src_dtype, Endian::Little, b, &mut scratch)?;
                release(b);
            }
            Some(heads) => {
                for (i, dst) in scratch.chunks_mut(row_u.max(1)).enumerate() {
                    let from = permuted_row(r + i as u64, src_rows, heads) as usize * in_row_u;
                    let b = bytes.get(from..from + in_row_u).unwrap_or_default();
                    codec::dequantize_endian(src_dtype, Endian::Little, b, dst)?;
                }
            }
        }
        for x in &t.transforms {
            if let Transform::Add(c) = *x {
                scratch.iter_mut().for_each(|v| *v += c);
            }
        }
        if changes_values && src_dtype == GgmlType::F16 {
            // torch's F16 arithmetic: the sum rounded back to F16.
            scratch.iter_mut().for_each(|v| *v = half::f16::from_f32(*v).to_f32());
        }
        buf.resize(n as usize * out_row_bytes as usize, 0);
        codec::quantize_par(t.dtype, Endian::Little, &scratch, &mut buf)?;
        out(&buf)?;
        report(n * in_row);
        r += n;
    }
    if permute.is_some() {
        release(bytes);
    }
    Ok(())
}
