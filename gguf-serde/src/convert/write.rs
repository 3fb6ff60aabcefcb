//! Writing a planned conversion: [`convert`], [`write_plan`], and the chunked streaming of each
//! tensor's values through the codecs.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::naming::check_name_length;
use super::quant::{Fp8, Scaler};
use super::rows::{self, ElemView, RowMap, View};
use super::{
    plan, plan_with, Architecture, Checkpoint, ConvertOptions, OutType, Plan, PlannedTensor, Result, SourceTensor,
    TensorData, Transform,
};
use crate::container::atomic::{check_target, persist_all, SealedFile};
use crate::container::{shard_path, IfExists};
use crate::format::count;
use crate::format::keys::{is_split_key, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use crate::ops::split::{plan_split_sizes, SplitBy, SplitOptions};
use crate::{codec, AtomicFile, Endian, GgmlType, GgufWriter, ShardError};

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
/// With [`ConvertOptions::split_max_size`], the shards are written straight from the conversion,
/// cut and named as [`split_file`](crate::ops::split::split_file) cuts and names a file of the
/// whole model at that limit (`llama-gguf-split --split-max-size`'s layout): the first shard has
/// the keys, every shard the split keys. Each shard is a temporary file (on Linux an unnamed one,
/// where the file system has `O_TMPFILE`) until all are complete; they are then renamed into
/// place together, so a failure (or a process killed by SIGKILL, where the files have no name)
/// leaves none of them. A file at an output path is replaced or kept as
/// [`ConvertOptions::if_exists`] says (kept: refused before anything is written, and at the
/// renaming for one that appeared meanwhile, the shards renamed before it then removed again).
///
/// # Errors
/// [`ConvertError::FileNameTooLong`](super::ConvertError::FileNameTooLong) before anything is written when a file name to create (`out`,
/// or with [`ConvertOptions::split_max_size`] the shards) is longer than
/// [`FILE_NAME_MAX`](super::FILE_NAME_MAX) bytes; [`ConvertError::Gguf`](super::ConvertError::Gguf) (a split limit of 0
/// or into more than 65,535 shards, [`ShardError::CannotSplit`](crate::ShardError::CannotSplit);
/// a file at an output path kept by [`IfExists::Fail`]; I/O, and data that does not match its
/// declared size; an error writing a shard names it, [`Error::shard`](crate::Error::shard)). On
/// error no file is left at `out` (or at a shard's path).
pub fn write_plan(plan: &Plan<'_>, out: &Path, opts: &ConvertOptions<'_>) -> Result<ConvertReport> {
    let file_name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_name_length(&file_name)?;
    if opts.split_max_size.is_some() {
        // the shards (`-00001-of-00002.gguf`)
        let stem = out.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        check_name_length(&format!("{stem}-00001-of-00001.gguf"))?;
    }
    let files = match opts.split_max_size {
        None => vec![OutFile { path: out.to_path_buf(), tensors: 0..plan.tensors.len(), split: None }],
        Some(max) => shards(plan, out, max)?,
    };
    for f in &files {
        check_target(&f.path, opts.if_exists).map_err(|e| if f.split.is_some() { e.in_shard(&f.path) } else { e })?;
    }
    write_files(plan, &files, opts)?;
    Ok(ConvertReport {
        tensors: plan.tensors.iter().map(|t| (t.name.clone(), t.dtype, t.shape.clone())).collect(),
        source_bytes: plan.source_bytes(),
        files: files.into_iter().map(|f| f.path).collect(),
        outtype: plan.outtype,
    })
}

/// A file a conversion writes: its path, its tensors (indices into the plan's), and when it is
/// a shard, its split keys.
struct OutFile {
    path: PathBuf,
    tensors: Range<usize>,
    split: Option<SplitKeys>,
}

/// The split keys of a shard: `split.no`, `split.count`, `split.tensors.count`.
#[derive(Clone, Copy)]
struct SplitKeys {
    no: u16,
    count: u16,
    tensors: i32,
}

/// The shards of `plan` at `max` bytes of tensor data a shard, as [`plan_split`] cuts a file of
/// the whole plan: each tensor counted by its size in the output (ggml's `ggml_nbytes`, from the
/// stored `ne`), named after `out` without its extension ([`shard_path`]).
///
/// [`plan_split`]: crate::ops::split::plan_split
fn shards(plan: &Plan<'_>, out: &Path, max: u64) -> Result<Vec<OutFile>> {
    let sizes = plan.tensors.iter().map(|t| {
        let mut ne: Vec<u64> = t.shape.iter().rev().copied().collect();
        if ne.is_empty() {
            ne.push(1);
        }
        // an overflow is refused when the tensor is declared
        t.dtype.nbytes(&ne).unwrap_or(u64::MAX)
    });
    let ranges = plan_split_sizes(sizes, &SplitOptions::new(SplitBy::MaxBytes(max)))?;
    let cannot = |reason: &str| crate::Error::from(ShardError::CannotSplit { reason: reason.into() });
    let count = u16::try_from(ranges.len()).map_err(|_| cannot("too many shards"))?;
    let tensors = i32::try_from(plan.tensors.len())
        .map_err(|_| cannot("more tensors than split.tensors.count (i32) can hold"))?;
    let prefix = out.with_extension("");
    Ok((0..count)
        .zip(ranges)
        .map(|(no, range)| OutFile {
            path: shard_path(&prefix, no, count),
            tensors: range,
            split: Some(SplitKeys { no, count, tensors }),
        })
        .collect())
}

/// A new file's writer for `f`, with its keys and tensors declared: the plan's keys (`kvs`) in
/// the one file or the first shard, then a shard's split keys (in
/// [`split_file`](crate::ops::split::split_file)'s order: `split.no`, `split.tensors.count`,
/// `split.count`), then its tensors (`tensors`: the plan's, as name, type and canonical shape).
fn declare(
    f: &OutFile,
    kvs: &[(String, crate::Value)],
    tensors: &[(&str, GgmlType, &[u64])],
    if_exists: IfExists,
) -> crate::Result<GgufWriter<AtomicFile>> {
    let mut w = GgufWriter::new(AtomicFile::create(&f.path, if_exists)?);
    match f.split {
        None => kvs.iter().try_for_each(|(k, v)| w.add_value(k, v))?,
        Some(s) => {
            if s.no == 0 {
                kvs.iter().filter(|(k, _)| !is_split_key(k)).try_for_each(|(k, v)| w.add_value(k, v))?;
            }
            w.add_kv(SPLIT_NO, s.no)?;
            w.add_kv(SPLIT_TENSORS_COUNT, s.tensors)?;
            w.add_kv(SPLIT_COUNT, s.count)?;
        }
    }
    for &(name, dtype, shape) in tensors.get(f.tensors.clone()).unwrap_or_default() {
        w.add_tensor(name, dtype, shape)?;
    }
    Ok(w)
}

/// Chunks of output bytes in flight between the converting thread and the writing thread of
/// [`write_files`]: the converted chunk waiting to be written while the next is converted.
const PIPELINE_DEPTH: usize = 2;

/// A chunk of a tensor's output bytes from [`stream_tensor`].
enum Chunk<'a> {
    /// Bytes to copy (checkpoint bytes written as they are).
    Borrowed(&'a [u8]),
    /// A buffer of converted bytes, all of it the chunk, taken without a copy: the caller gets
    /// another buffer in its place, to reuse (of any length and content).
    Owned(&'a mut Vec<u8>),
}

/// What the converting thread of [`write_files`] hands the writing thread.
enum Piece {
    /// The next bytes of the current tensor's data.
    Bytes(Vec<u8>),
    /// The current tensor is complete.
    End,
}

/// Writes `plan` to `files` (new files, the plan's tensors in order) in three stages that
/// overlap instead of taking turns: this thread converts each tensor a chunk at a time
/// ([`stream_tensor`]); a writing thread hands the previous chunk to the file being written,
/// [`crate::AtomicFile`], which copies it into its aligned buffers; and the file's I/O thread
/// writes each full buffer to the disk with a direct write meanwhile (where direct I/O is
/// refused, the writing thread's `write` system calls copy into the page cache instead). At most
/// [`PIPELINE_DEPTH`] chunks are in flight between the first two, their buffers reused, and at
/// most three 4 MiB buffers between the last two. The writing thread creates each file when it
/// reaches it and seals it when complete; once all are, they are renamed into place together
/// ([`persist_all`]). Whichever side fails first stops the other (an error of the disk reaches
/// the writing thread at its next write); the files are then dropped uncommitted (nothing at
/// their targets).
fn write_files(plan: &Plan<'_>, files: &[OutFile], opts: &ConvertOptions<'_>) -> Result<()> {
    let kvs = plan.kvs.0.as_slice();
    let tensors: Vec<(&str, GgmlType, &[u64])> =
        plan.tensors.iter().map(|t| (t.name.as_str(), t.dtype, t.shape.as_slice())).collect();
    let tensors = tensors.as_slice();
    let if_exists = opts.if_exists;
    // Errors name the shard being written.
    let split = files.iter().any(|f| f.split.is_some());
    let in_file = |e: crate::Error, f: &Path| if split { e.in_shard(f) } else { e };
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Piece>(PIPELINE_DEPTH);
    let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let writer = s.spawn(move || -> crate::Result<Option<Vec<SealedFile>>> {
            let mut sealed = Vec::with_capacity(files.len());
            for f in files {
                let write = || -> crate::Result<Option<SealedFile>> {
                    let mut w = declare(f, kvs, tensors, if_exists)?;
                    for _ in f.tensors.clone() {
                        let mut dw = w.tensor_data_writer()?;
                        loop {
                            match full_rx.recv() {
                                Ok(Piece::Bytes(b)) => {
                                    dw.write(&b)?;
                                    // the converting thread may be gone (it failed): the buffer is dropped
                                    let _ = free_tx.send(b);
                                }
                                Ok(Piece::End) => break,
                                // the converting thread failed and says why
                                Err(_) => return Ok(None),
                            }
                        }
                        dw.finish()?;
                    }
                    w.finish()?.seal().map(Some)
                };
                match write().map_err(|e| in_file(e, &f.path))? {
                    Some(file) => sealed.push(file),
                    None => return Ok(None),
                }
            }
            Ok(Some(sealed))
        });
        let converted = (|| -> Result<()> {
            let release = |done: &[u8]| plan.checkpoint.release(done);
            for t in &plan.tensors {
                let mut send = |piece: Chunk<'_>| -> crate::Result<()> {
                    let mut b = free_rx.try_recv().unwrap_or_default();
                    match piece {
                        Chunk::Borrowed(bytes) => {
                            b.clear();
                            b.extend_from_slice(bytes);
                        }
                        // no copy: the converted buffer goes, a written one comes back in its place
                        Chunk::Owned(buf) => std::mem::swap(&mut b, buf),
                    }
                    // a closed channel: the writing thread failed, and its error is the one returned
                    full_tx.send(Piece::Bytes(b)).map_err(|_| writer_gone())
                };
                stream_tensor(t, opts, &mut send, &release)?;
                full_tx.send(Piece::End).map_err(|_| writer_gone())?;
            }
            Ok(())
        })();
        drop(full_tx);
        let written = writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match (converted, written) {
            (Ok(()), Ok(Some(sealed))) => {
                persist_all(sealed, in_file)?;
                Ok(())
            }
            // the writing thread's own error comes first: the converting side then only saw it stop
            (_, Err(e)) => Err(e.into()),
            (Err(e), Ok(_)) => Err(e),
            (Ok(()), Ok(None)) => Err(writer_gone().into()),
        }
    })
}

/// The error the converting thread sees when the writing thread has stopped; replaced by the
/// writing thread's own error before it reaches the caller.
fn writer_gone() -> crate::Error {
    crate::Error::io("writing the converted tensors", std::io::Error::other("the writing thread stopped"))
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

/// A source of rows: a tensor's stored bytes through its transforms.
struct RowSource<'s> {
    dtype: GgmlType,
    /// The 8-bit float format of `bytes`, when they are FP8 (then `dtype` is F32).
    fp8: Option<Fp8>,
    /// The scaling of a pre-quantized weight's values.
    scaler: Option<Scaler<'s>>,
    bytes: &'s [u8],
    /// Values of one source row.
    in_w: usize,
    /// Bytes of one source row.
    in_row: usize,
    /// Output rows to source rows.
    map: RowMap,
    /// Output rows gathered from a strided view, instead of [`RowSource::map`].
    elems: Option<ElemView>,
    /// The value transforms, in order.
    values: Vec<&'s Transform>,
    /// Whether `bytes` are mapped checkpoint pages to release.
    mapped: bool,
}

impl<'s> RowSource<'s> {
    /// The rows of `src` through `transforms`, and the width of an output row.
    fn new(src: &'s SourceTensor<'s>, transforms: &'s [Transform], mapped: bool) -> Result<(RowSource<'s>, u64)> {
        let (name, shape, bytes) = (src.name.as_str(), src.shape.as_slice(), src.data);
        let (_, width) = rows::row_view(shape);
        let src_rows = rows::row_count(shape);
        let in_row = match src.fp8 {
            Some(_) => Some(width),
            None => src.dtype.row_bytes(width),
        };
        let in_row = in_row.ok_or_else(|| invalid(name, "row size overflows".into()))?;
        if src_rows.checked_mul(in_row) != Some(bytes.len() as u64) {
            let (data, rows) = (count(bytes.len(), "byte"), count(src_rows, "row"));
            return Err(invalid(name, format!("{data} of data for {rows} of {width}")).into());
        }
        let (out_shape, view) = rows::plan_view(name, shape, transforms)?;
        let (map, elems, out_width) = match view {
            View::Rows(map) => {
                let w = if map.transpose().is_some() { rows::row_view(&out_shape).1 } else { width };
                (map, None, w)
            }
            View::Elems(v) => {
                if src.fp8.is_some()
                    || src.scale.is_some()
                    || !matches!(src.dtype, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16)
                {
                    return Err(invalid(
                        name,
                        format!("values of {} cannot be gathered (F32, F16, BF16, not pre-quantized)", src.dtype),
                    )
                    .into());
                }
                (RowMap::default(), Some(v), rows::row_view(&out_shape).1)
            }
        };
        let values = transforms.iter().filter(|t| matches!(t, Transform::Add(_) | Transform::Rows(_))).collect();
        let in_row = usize::try_from(in_row).map_err(|_| invalid(name, "row size overflows".into()))?;
        let in_w = usize::try_from(width).map_err(|_| invalid(name, "row size overflows".into()))?;
        let scaler = src.scale.as_ref().map(|s| Scaler::new(name, shape, s)).transpose()?;
        let source =
            RowSource { dtype: src.dtype, fp8: src.fp8, scaler, bytes, in_w, in_row, map, elems, values, mapped };
        Ok((source, out_width))
    }

    /// Whether the values go through the reference's F16 arithmetic (an F16 source, not scaled:
    /// a scaled weight is F32 from its dequantization on).
    fn works_in_f16(&self) -> bool {
        self.dtype == GgmlType::F16 && self.fp8.is_none() && self.scaler.is_none()
    }

    /// Runs of consecutive source rows `(first, count)` that make the chosen rows `r..r + n`
    /// (the output rows, or with a transposition the rows before it).
    fn runs(&self, r: u64, n: u64, runs: &mut Vec<(u64, u64)>) {
        runs.clear();
        for o in r..r + n {
            let s = self.map.source_row(o);
            match runs.last_mut() {
                Some((first, count)) if *first + *count == s => *count += 1,
                _ => runs.push((s, 1)),
            }
        }
    }

    fn run_bytes(&self, (first, count): (u64, u64)) -> &'s [u8] {
        let start = first as usize * self.in_row;
        self.bytes.get(start..start + count as usize * self.in_row).unwrap_or_default()
    }

    /// Whether the source pages of a chunk are done with once it is converted.
    fn is_monotonic(&self) -> bool {
        self.elems.is_none() && self.map.is_monotonic()
    }

    /// Gathers output rows `r..r + n` of `w` values each of the element view `v` into `out`. When
    /// the values of a row lie further apart in the source than the rows' first values (a
    /// transposed matrix), the rows are filled a column at a time, so that the source is read
    /// about in order rather than a value per cache line.
    fn gather(&self, v: &ElemView, r: u64, n: u64, w: usize, out: &mut [f32]) {
        let size = match self.dtype {
            GgmlType::F32 => 4,
            _ => 2,
        };
        let value = |at: u64| {
            let at = at as usize * size;
            let b = &self.bytes[at..at + size];
            match self.dtype {
                GgmlType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                GgmlType::F16 => half::f16::from_le_bytes([b[0], b[1]]).to_f32(),
                _ => half::bf16::from_le_bytes([b[0], b[1]]).to_f32(),
            }
        };
        let starts: Vec<(u64, u64)> = (0..n).map(|i| v.row_start(r + i)).collect();
        let stride = starts.first().map_or(1, |s| s.1);
        let row_gap = match starts.as_slice() {
            [a, b, ..] => b.0.abs_diff(a.0),
            _ => u64::MAX,
        };
        if stride > row_gap {
            for j in 0..w {
                for (i, &(start, stride)) in starts.iter().enumerate() {
                    out[i * w + j] = value(start + j as u64 * stride);
                }
            }
        } else {
            for (row, &(start, stride)) in out.chunks_exact_mut(w).zip(&starts) {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = value(start + j as u64 * stride);
                }
            }
        }
    }

    /// The values of the source rows of `run`, widened to F32 and scaled, into `out`.
    fn decode(&mut self, run: (u64, u64), out: &mut [f32]) -> Result<()> {
        let bytes = self.run_bytes(run);
        match self.fp8 {
            Some(f) => bytes.iter().zip(out.iter_mut()).for_each(|(b, o)| *o = f.decode(*b)),
            None => codec::dequantize_par(self.dtype, Endian::Little, bytes, out)?,
        }
        if let Some(s) = &mut self.scaler {
            s.apply(run.0, self.in_w, out)?;
        }
        Ok(())
    }
}

/// Streams the stored bytes of `t` (little-endian) to `out`, a chunk of rows at a time, giving
/// `release` the source bytes of each chunk once they are converted (all of a source's bytes at
/// the end of the tensor when its rows are read out of order). A joined tensor is written part
/// by part into its place.
fn stream_tensor(
    t: &PlannedTensor<'_>,
    opts: &ConvertOptions<'_>,
    out: &mut dyn FnMut(Chunk<'_>) -> crate::Result<()>,
    release: &dyn Fn(&[u8]),
) -> Result<()> {
    let report = |n: u64| {
        if let Some(p) = opts.progress {
            p(n);
        }
    };
    if let TensorData::Mxfp4 { blocks, scales, rows } = &t.data {
        return stream_mxfp4(t, blocks, scales, *rows, opts, out, release);
    }
    let generated;
    let mut sources = Vec::new();
    // (source, first output row of that source, rows)
    let segments: Vec<(usize, u64, u64)> = match &t.data {
        TensorData::Source(s) => {
            sources.push(RowSource::new(s, &t.transforms, true)?);
            vec![(0, 0, rows::row_count(&t.shape))]
        }
        TensorData::Generated(v) => {
            let data: &[u8] = bytemuck::cast_slice(v.as_slice());
            generated = SourceTensor {
                name: t.name.clone(),
                dtype: GgmlType::F32,
                fp8: None,
                scale: None,
                shape: t.shape.clone(),
                data,
            };
            sources.push(RowSource::new(&generated, &t.transforms, false)?);
            vec![(0, 0, rows::row_count(&t.shape))]
        }
        TensorData::Mxfp4 { .. } => Vec::new(),
        TensorData::Joined { join, parts } => {
            for p in parts {
                sources.push(RowSource::new(&p.source, &p.transforms, true)?);
            }
            let shapes: Vec<&[u64]> = parts.iter().map(|p| p.shape.as_slice()).collect();
            rows::joined_runs(*join, &shapes)
        }
    };
    let (_, width) = rows::row_view(&t.shape);
    if let Some((_, w)) = sources.iter().find(|(_, w)| *w != width) {
        return Err(invalid(&t.name, format!("rows of {} for an output of rows of {width}", count(*w, "value"))).into());
    }
    let out_row = t
        .dtype
        .row_bytes(width)
        .and_then(|b| usize::try_from(b).ok())
        .ok_or_else(|| invalid(&t.name, format!("a row of {width} is not whole {} blocks", t.dtype)))?;
    let w = usize::try_from(width).map_err(|_| invalid(&t.name, "row size overflows".into()))?;
    let rows_per_chunk = (opts.chunk_elems / width.max(1)).max(1);
    let (mut scratch, mut pre, mut buf, mut runs) =
        (Vec::<f32>::new(), Vec::<f32>::new(), Vec::<u8>::new(), Vec::new());
    for &(si, first, n) in &segments {
        let src = &mut sources[si].0;
        // The reference keeps F32 and F16 data as they are when the output type is theirs.
        let copy = src.values.is_empty()
            && src.elems.is_none()
            && src.fp8.is_none()
            && src.scaler.is_none()
            && src.map.transpose().is_none()
            && src.dtype == t.dtype
            && matches!(src.dtype, GgmlType::F32 | GgmlType::F16);
        // A transposition converts whole matrices: `unit` output rows from `pre_unit` rows.
        let (unit, pre_unit) = match src.map.transpose() {
            Some((a, b)) => (b.max(1), a),
            None => (1, 1),
        };
        if first % unit != 0 || n % unit != 0 {
            return Err(
                invalid(&t.name, format!("rows {first}..{} are not whole transposed matrices", first + n)).into()
            );
        }
        let step = rows_per_chunk.div_ceil(unit) * unit;
        // source bytes below this are released (element views: as the output moves past them)
        let mut released = 0usize;
        let mut r = first;
        while r < first + n {
            let k = step.min(first + n - r);
            let (pr, pk) = (r / unit * pre_unit, k / unit * pre_unit);
            if src.elems.is_none() {
                src.runs(pr, pk, &mut runs);
            } else {
                runs.clear();
            }
            if copy {
                for &run in &runs {
                    out(Chunk::Borrowed(src.run_bytes(run)))?;
                }
            } else {
                scratch.resize(k as usize * w, 0.0);
                if let Some(v) = &src.elems {
                    src.gather(v, r, k, w, &mut scratch);
                } else {
                    let transposed = src.map.transpose();
                    let target = if transposed.is_some() { &mut pre } else { &mut scratch };
                    target.resize(pk as usize * src.in_w, 0.0);
                    let mut at = 0usize;
                    for &run in &runs {
                        let len = run.1 as usize * src.in_w;
                        src.decode(run, &mut target[at..at + len])?;
                        at += len;
                    }
                    if let Some((a, b)) = transposed {
                        let (a, b) = (a as usize, b as usize);
                        for (m_out, m_in) in scratch.chunks_mut(a * b).zip(pre.chunks(a * b)) {
                            for (i, row) in m_in.chunks(b).enumerate() {
                                for (j, v) in row.iter().enumerate() {
                                    m_out[j * a + i] = *v;
                                }
                            }
                        }
                    }
                }
                for x in &src.values {
                    match x {
                        Transform::Add(c) => scratch.iter_mut().for_each(|v| *v += *c),
                        Transform::Rows(f) => f.0.apply(r, w, &mut scratch)?,
                        _ => {}
                    }
                }
                if !src.values.is_empty() && src.works_in_f16() {
                    // torch's F16 arithmetic: the result rounded back to F16.
                    scratch.iter_mut().for_each(|v| *v = half::f16::from_f32(*v).to_f32());
                }
                buf.resize(k as usize * out_row, 0);
                codec::quantize_par(t.dtype, Endian::Little, &scratch, &mut buf)?;
                out(Chunk::Owned(&mut buf))?;
            }
            if src.mapped && src.is_monotonic() {
                runs.iter().for_each(|&run| release(src.run_bytes(run)));
            }
            if let (true, Some(v)) = (src.mapped, &src.elems) {
                let size = if src.dtype == GgmlType::F32 { 4 } else { 2 };
                let done = (v.done_below(r + k) as usize).saturating_mul(size).min(src.bytes.len());
                if done > released {
                    release(&src.bytes[released..done]);
                    released = done;
                }
            }
            // source rows read: a chunk's output rows (element views), or the rows before a transposition
            report(if src.elems.is_some() { k } else { pk } * src.in_row as u64);
            r += k;
        }
    }
    for (src, _) in &sources {
        if src.mapped && !src.is_monotonic() {
            release(src.bytes);
        }
    }
    Ok(())
}

/// A block of 32 MXFP4 codes as the checkpoint stores them (16 bytes, element `2i` in byte `i`'s
/// low nibble, `2i + 1` in its high nibble) as ggml's `block_mxfp4` stores them (element `j` in
/// byte `j`'s low nibble, `j + 16` in its high nibble), after the E8M0 `scale`.
fn repack_mxfp4_block(scale: u8, q: &[u8], out: &mut [u8]) {
    out[0] = scale;
    let code = |m: usize| (q[m / 2] >> (4 * (m % 2))) & 0x0F;
    for j in 0..16 {
        out[1 + j] = code(j) | (code(j + 16) << 4);
    }
}

/// Streams an MXFP4 tensor ([`TensorData::Mxfp4`]): the kept rows of each expert, each block
/// repacked ([`repack_mxfp4_block`]), a chunk of rows at a time, releasing the source rows of
/// each chunk.
fn stream_mxfp4(
    t: &PlannedTensor<'_>,
    blocks: &super::SourceTensor<'_>,
    scales: &super::SourceTensor<'_>,
    (start, step): (u64, u64),
    opts: &ConvertOptions<'_>,
    out: &mut dyn FnMut(Chunk<'_>) -> crate::Result<()>,
    release: &dyn Fn(&[u8]),
) -> Result<()> {
    let [e, r, nb, _] = blocks.shape[..] else {
        return Err(invalid(&t.name, format!("MXFP4 blocks of shape {:?}", blocks.shape)).into());
    };
    let (e, r, nb) = (e as usize, r as usize, nb as usize);
    if blocks.data.len() != e * r * nb * 16 || scales.data.len() != e * r * nb {
        return Err(invalid(&t.name, "MXFP4 blocks or scales of the wrong size".into()).into());
    }
    let kept = t.shape.get(1).copied().unwrap_or(0) as usize;
    let rows_per_chunk = ((opts.chunk_elems / (nb as u64 * 32).max(1)).max(1)) as usize;
    let mut buf = Vec::<u8>::new();
    for ei in 0..e {
        let mut k = 0;
        while k < kept {
            let n = rows_per_chunk.min(kept - k);
            buf.resize(n * nb * 17, 0);
            for (i, row) in buf.chunks_exact_mut(nb * 17).enumerate() {
                let src_row = ei * r + start as usize + (k + i) * step as usize;
                for (b, o) in row.chunks_exact_mut(17).enumerate() {
                    let at = src_row * nb + b;
                    repack_mxfp4_block(scales.data[at], &blocks.data[at * 16..at * 16 + 16], o);
                }
            }
            out(Chunk::Owned(&mut buf))?;
            let first = ei * r + start as usize + k * step as usize;
            let last = ei * r + start as usize + (k + n - 1) * step as usize + 1;
            release(&blocks.data[first * nb * 16..last * nb * 16]);
            release(&scales.data[first * nb..last * nb]);
            if let Some(p) = opts.progress {
                p((n * nb * 17) as u64);
            }
            k += n;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block repacked reads back, through ggml's MXFP4 dequantization (our codec, itself tested
    /// against ggml), as transformers dequantizes the stored block (`convert_moe_packed_tensors`:
    /// `FP4_VALUES[low nibble]` the even element, the high nibble the odd one, times
    /// `2^(scale - 127)`).
    #[test]
    fn a_repacked_mxfp4_block_means_what_transformers_reads() {
        const FP4_VALUES: [f32; 16] =
            [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];
        for (scale, seed) in [(127u8, 1u32), (120, 7), (131, 99)] {
            let q: Vec<u8> =
                (0..16u32).map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8).collect();
            let mut want = [0f32; 32];
            for (i, b) in q.iter().enumerate() {
                let s = 2f32.powi(i32::from(scale) - 127);
                want[2 * i] = FP4_VALUES[usize::from(b & 0x0F)] * s;
                want[2 * i + 1] = FP4_VALUES[usize::from(b >> 4)] * s;
            }
            let mut block = [0u8; 17];
            repack_mxfp4_block(scale, &q, &mut block);
            let mut got = [0f32; 32];
            codec::dequantize(GgmlType::MXFP4, &block, &mut got).unwrap();
            assert_eq!(got, want, "scale {scale}");
        }
    }
}
