//! Converting a whole model's tensors to other ggml types, keeping the metadata:
//! [`requantize`] (`gguf quantize`) chooses each tensor's type as llama.cpp's `llama-quantize`
//! does ([`plan_file_type`]) and writes its layout; the streaming writer here also serves
//! [`dequantize`](super::dequantize::dequantize) (`gguf dequantize`), which converts every tensor
//! to one type in place.
//!
//! Each converted tensor is dequantized to `f32` and quantized to its target with [`crate::codec`]
//! (ggml's reference algorithms), a chunk of rows at a time over rayon's thread pool, and streamed
//! to the output: memory stays a few MiB whatever the model's size (the source's pages are given
//! back after each chunk, [`Source::release`], so a mapped model does not stay resident either). The output is written to a
//! temporary file and renamed into place ([`GgufWriter::create`]): after a failure nothing is left.

use std::path::{Path, PathBuf};

use super::imatrix::Imatrix;
use super::kv_override::KvOverrideValue;
use super::quantize::{plan_shards, source_file_type_of, QuantizeParams, TensorPlan, GGML_QNT_VERSION};
use super::tensor_order::{c_name, llama_order, llama_tensor_order, ordered_tensors};
use crate::codec::{self, CodecError};
// Named in the docs.
#[cfg(doc)]
use super::quantize::{plan_file_type, source_file_type};
use crate::container::atomic::{check_target, persist_all, SealedFile};
use crate::container::shard_path;
use crate::container::{
    ArrayRef, AtomicFile, Gguf, GgufWriter, IfExists, Source, TensorInfo, Value, ValueRef, WriteOptions,
};
use crate::error::{Error, QuantizeError, Result, WriteError};
use crate::format::keys::{SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT};
use crate::format::{Endian, GgmlType, GgufStr, Ne, ValueType};

/// Elements converted per chunk (per rayon batch): 4 Mi elements, 16 MiB of `f32`.
const CHUNK_ELEMS: u64 = 1 << 22;

/// A progress callback: (bytes of source tensor data done, total).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// What [`requantize`] or [`dequantize`](super::dequantize::dequantize) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequantizeReport {
    /// Names of the tensors converted.
    pub converted: Vec<String>,
    /// Names of the tensors copied as they were.
    pub kept: Vec<String>,
    /// Bytes of tensor data in the input.
    pub bytes_in: u64,
    /// Bytes of tensor data in the output.
    pub bytes_out: u64,
    /// The files written, in order: the output, or with [`QuantizeParams::keep_split`] the
    /// shards.
    pub paths: Vec<PathBuf>,
}

/// A key/value pair of the output: borrowed from the source or new.
pub(super) enum OutKv<'a> {
    /// A value of the source.
    Src(ValueRef<'a>),
    /// A value written here.
    New(Value),
    /// A string written here as these bytes (UTF-8 or not: llama-quantize copies the bytes of
    /// a `str:` override and of the importance matrix's file and dataset names).
    Bytes(Vec<u8>),
    /// A string array written here: `len` strings, stored in `bytes` as GGUF stores them (each a
    /// `u64` length in `endian`, then its bytes).
    Strings { len: u64, bytes: Vec<u8>, endian: Endian },
}

/// One tensor of the output: its source info, type, stored dims and importance weights.
pub(super) struct OutTensor<'a> {
    /// The input shard holding the tensor (0 for a single file).
    pub(super) shard: usize,
    /// The name written: `info.name`, or for `gguf quantize` the name up to its first NUL byte
    /// ([`c_name`]), as llama-quantize writes it.
    pub(super) name: GgufStr<'a>,
    pub(super) info: TensorInfo<'a>,
    pub(super) target: GgmlType,
    pub(super) ne: Ne,
    /// `ne[0] × ne[2]` weights (one slice per expert) if converted with an importance matrix.
    pub(super) weights: Option<&'a [f32]>,
}

/// Writes `src` to `out` as `llama-quantize` would for `params`: each tensor of the type
/// [`plan_file_type`] chooses, in llama-quantize's layout:
/// - the key/value pairs of `src` in their order, each key and string (also in a string array)
///   up to its first NUL byte, as ggml's `gguf_set_kv` copies them (C strings); a key equal to an
///   earlier one once cut replaces it and goes to the end; without `general.quantization_version`,
///   `general.file_type` and the `split.*` keys; then `general.quantization_version` = 2 and
///   `general.file_type` = the file type's number (`COPY`: the source's,
///   [`source_file_type`]), both UINT32; then each `--override-kv` (replacing an earlier value of
///   its key, at the end), then the importance matrix's `quantize.imatrix.*` keys the same way
///   ([`Imatrix::kv_overrides`]);
/// - the tensors in llama-quantize's order (by layer, then name), each declared with
///   `ggml_n_dims` dims, its data padded to the alignment; each named up to its first NUL byte,
///   as llama.cpp names it (see [`plan_file_type`]);
/// - GGUF version 3, the byte order of `src`, the alignment of `general.alignment` (32 without
///   it; llama-quantize pads to 32 even when the key says otherwise, a file ggml cannot read).
///
/// Tensors already of their target type are copied byte for byte (so a requantize from a
/// quantized file is allowed, as llama-quantize's `--allow-requantize`).
///
/// With [`QuantizeParams::keep_split`], `out` is a prefix and the one shard
/// `OUT-00001-of-00001.gguf` is written, without split keys and with the tensors in file order,
/// as llama-quantize `--keep-split` writes an unsplit input ([`requantize_sharded`] has the
/// details).
///
/// With an importance matrix ([`QuantizeParams::active_imatrix`]), each converted tensor with an
/// entry ([`Imatrix::weights_for`]) is quantized with its weights
/// ([`codec::quantize_with_importance`]; row `r` of expert `r / ne[1]` takes that expert's
/// slice), as llama-quantize passes them to ggml's `quantize_*`; types whose ggml quantizer takes
/// no weights (F16, Q8_0, TQ1_0, MXFP4, …) are quantized as without.
///
/// # Errors
/// Before anything is written: [`check_plan`]'s errors (a tensor that needs an importance
/// matrix without one, an entry of the wrong size, a type without a quantizer here) and
/// [`plan_file_type`]'s errors; [`QuantizeError::Refused`] for a key that starts with a NUL
/// byte, naming it and its offset in `src` (llama-quantize copies it as the empty key, on which
/// ggml aborts);
/// [`CodecError::UnsupportedQuantize`] naming a target type without a quantizer here,
/// [`CodecError::ImportanceRequired`] for a tensor without importance weights whose target ggml
/// quantizes only with them (IQ2_XXS, IQ2_XS, IQ1_S; e.g. `token_embd.weight` given one of these
/// as its type, where llama-quantize aborts in ggml). Then the codecs' errors (among them
/// [`CodecError::QuantizeAbort`] for values ggml aborts on) and
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from writing (the file at `out` is then untouched, no temporary file is left).
pub fn requantize<S: Source + Sync>(
    src: &Gguf<S>,
    out: impl AsRef<Path>,
    params: &QuantizeParams,
    progress: Option<Progress<'_>>,
) -> Result<RequantizeReport> {
    requantize_shards(&[src], out.as_ref(), params, progress)
}

/// [`requantize`] for a split model (opened by [`ShardedGguf::open`](crate::container::ShardedGguf::open)),
/// as llama-quantize quantizes one from its first shard: the metadata of shard 0 (without its
/// split keys) and the tensors of every shard.
///
/// Without [`QuantizeParams::keep_split`], one file is written at `out`, as [`requantize`] writes
/// it from the merged model.
///
/// With it (`llama-quantize --keep-split`), `out` is a prefix and one shard is written per input
/// shard, `OUT-00001-of-0000N.gguf`, … ([`keep_split_paths`]), as llama.cpp's
/// `llama_model_quantize_impl` (`src/llama-quant.cpp`) writes them:
/// - the tensors of input shard `i` go to output shard `i`, in file order (by data offset), and
///   the plan's counters advance in that order (shard by shard) instead of by layer;
/// - shard 1 has every key [`requantize`] writes (the source's, `general.quantization_version`,
///   `general.file_type`, `--override-kv`, `quantize.imatrix.*`); the other shards have no key but
///   the split keys;
/// - when there is more than one shard, every shard ends its keys with `split.no` (UINT16),
///   `split.count` (UINT16) and `split.tensors.count` (INT32, all the shards' tensors), in that
///   order (not `llama-gguf-split`'s); a single input file gives the one shard
///   `OUT-00001-of-00001.gguf`, without split keys;
/// - the shard count is one more than the last input shard with tensors; an input shard without
///   tensors before it is refused (llama-quantize asserts), except shard 1 (a split made with
///   `--no-tensor-first-split`), whose output shard then holds the metadata only.
///
/// Every shard is written to a temporary file; they are renamed into place together once all are
/// complete (as [`split_file`](super::split::split_file) does), so a failure before that leaves
/// no shard behind and no existing file replaced. Existing files of the same names are replaced,
/// or with [`IfExists::Fail`] ([`QuantizeParams::if_exists`]) kept: refused before anything is
/// written, and atomically at the rename of each shard for one that appears meanwhile (the
/// shards renamed before it are removed again).
///
/// # Errors
/// As [`requantize`]; [`QuantizeError::Refused`] for an input shard without tensors (see above)
/// or more than 65,535 output shards. With `--keep-split`, an error while an output shard is
/// written names that shard ([`Error::shard`](crate::Error::shard)).
#[cfg(feature = "mmap")]
pub fn requantize_sharded(
    model: &crate::container::ShardedGguf,
    out: impl AsRef<Path>,
    params: &QuantizeParams,
    progress: Option<Progress<'_>>,
) -> Result<RequantizeReport> {
    let shards: Vec<_> = (0..model.shard_count()).filter_map(|i| model.shard(i)).collect();
    requantize_shards(&shards, out.as_ref(), params, progress)
}

/// The files [`requantize_sharded`] (and [`requantize`]) write for `model` with
/// [`QuantizeParams::keep_split`] and the prefix `prefix`: `PREFIX-00001-of-0000N.gguf`, …, `N`
/// the number of output shards, each with the number of tensors it will hold (a tensor whose name
/// starts with a NUL byte is left out of the output, not counted; its shard is still written).
///
/// # Errors
/// [`QuantizeError::Refused`] for an input shard without tensors before the last one with tensors
/// (other than the first), or more than 65,535 shards.
#[cfg(feature = "mmap")]
pub fn keep_split_paths(
    model: &crate::container::ShardedGguf,
    prefix: impl AsRef<Path>,
) -> Result<Vec<(PathBuf, usize)>> {
    let counts: Vec<usize> = (0..model.shard_count()).map(|i| model.shard(i).map_or(0, |f| f.tensor_count())).collect();
    let n = keep_split_count(&counts)?;
    // What each output shard holds: its input shard's tensors but those whose name is empty once
    // cut at a NUL byte (left out, as llama-quantize leaves them out; the shards stay as many).
    let held =
        |i: u16| model.shard(usize::from(i)).map_or(0, |f| f.tensors().filter(|t| !c_name(t.name).is_empty()).count());
    Ok((0..n).map(|i| (shard_path(prefix.as_ref(), i, n), held(i))).collect())
}

/// The prefix llama-quantize's `--keep-split` takes from its output argument OUT: OUT without a
/// final `.gguf` (`out.gguf` → `out`, so the shards are `out-00001-of-00003.gguf`, …; `out` stays
/// `out`). llama-quantize (`tools/quantize/quantize.cpp`) cuts the last five characters whenever
/// `.gguf` occurs anywhere in OUT (`a.gguf.bin` → `a.gg`); here a name that does not end in
/// `.gguf` is kept whole. OUT is cut as bytes, as llama-quantize cuts its `std::string`: on
/// Unix, `o\xfe.gguf` (a byte that is not UTF-8) → `o\xfe`.
pub fn keep_split_prefix(out: impl AsRef<Path>) -> PathBuf {
    let out = out.as_ref();
    #[cfg(unix)]
    let cut = {
        use std::os::unix::ffi::OsStrExt;
        out.as_os_str().as_bytes().strip_suffix(b".gguf").map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
    };
    #[cfg(not(unix))]
    let cut = out.to_str().and_then(|s| s.strip_suffix(".gguf")).map(PathBuf::from);
    cut.unwrap_or_else(|| out.to_path_buf())
}

/// The number of output shards of `--keep-split` for input shards holding `counts` tensors:
/// llama-quantize's `n_split`, one more than the last shard with tensors (at least 1). An empty
/// shard before it, other than the first, is refused (llama-quantize asserts on it).
fn keep_split_count(counts: &[usize]) -> Result<u16> {
    let n = counts.iter().rposition(|&c| c > 0).map_or(1, |i| i + 1);
    if let Some(i) = counts.iter().take(n).skip(1).position(|&c| c == 0) {
        return Err(QuantizeError::refused(format!(
            "one output shard per input shard (keep_split): input shard {} of {} holds no tensors (llama-quantize aborts on it)",
            i + 2,
            counts.len()
        ))
        .into());
    }
    u16::try_from(n).map_err(|_| {
        QuantizeError::refused(format!("one output shard per input shard (keep_split): {n} shards, at most 65535"))
            .into()
    })
}

/// [`requantize`] over the tensors of `shards` (metadata from the first).
fn requantize_shards<S: Source + Sync>(
    shards: &[&Gguf<S>],
    out: &Path,
    params: &QuantizeParams,
    progress: Option<Progress<'_>>,
) -> Result<RequantizeReport> {
    let Some(&meta) = shards.first() else {
        return Err(QuantizeError::refused("no input shards").into());
    };
    // The tensors the plan has: those whose name is not empty once cut at a NUL byte.
    let mut ordered = ordered_tensors(shards, params.keep_split);
    ordered.retain(|(_, t)| !c_name(t.name).is_empty());
    let tensors = plan_shards(shards, params)?;
    let imatrix = params.active_imatrix();
    check_plan(&tensors, imatrix)?;
    let all: Vec<TensorInfo<'_>> = if params.only_copy {
        let mut v: Vec<TensorInfo<'_>> = ordered.iter().map(|(_, t)| *t).collect();
        v.sort_by(|a, b| llama_order(a.name, b.name));
        v
    } else {
        Vec::new()
    };
    let kvs = llama_quantize_kvs(meta, &all, params)?;
    let mut out_tensors: Vec<OutTensor<'_>> = Vec::with_capacity(tensors.len());
    for (p, (shard, info)) in tensors.into_iter().zip(ordered) {
        let weights = match imatrix {
            Some(m) if p.converts() => m.weights_for(&p.name, p.ne.dims())?,
            _ => None,
        };
        out_tensors.push(OutTensor { shard, name: c_name(info.name), info, target: p.target, ne: p.ne, weights });
    }
    let wopts = WriteOptions { version: 3, endian: meta.endian(), pad_empty_data: true };
    let data = |t: &OutTensor<'_>| match shards.get(t.shard) {
        Some(f) => f.tensor_data(&t.info),
        None => Err(Error::data_not_loaded(t.info.name)),
    };
    // Each source chunk's pages are given back once converted (peak RSS: a chunk, not the model).
    let give_back = |t: &OutTensor<'_>, part: &[u8]| {
        if let Some(f) = shards.get(t.shard) {
            release(f, part);
        }
    };
    let run = || -> Result<RequantizeReport> {
        if !params.keep_split {
            return write_converted(
                out,
                params.if_exists,
                wopts,
                kvs,
                out_tensors,
                TensorBytes { data: &data, give_back: &give_back },
                progress,
            );
        }
        let counts: Vec<usize> = shards.iter().map(|f| f.tensor_count()).collect();
        let n = keep_split_count(&counts)?;
        let n_tensors = i32::try_from(out_tensors.len())
            .map_err(|_| QuantizeError::refused("more tensors than split.tensors.count (i32) can hold"))?;
        let total: u64 = out_tensors.iter().map(|t| t.info.nbytes).sum();
        let mut state =
            Converting { report: RequantizeReport::default(), done: 0, total, bufs: (Vec::new(), Vec::new()) };
        let mut groups: Vec<Vec<OutTensor<'_>>> = (0..n).map(|_| Vec::new()).collect();
        for t in out_tensors {
            let i = t.shard;
            groups.get_mut(i).ok_or_else(|| Error::data_not_loaded(t.info.name))?.push(t);
        }
        for i in 0..n {
            let path = shard_path(out, i, n);
            check_target(&path, params.if_exists).map_err(|e| e.in_shard(&path))?;
        }
        let mut kvs = Some(kvs);
        let mut sealed: Vec<SealedFile> = Vec::with_capacity(groups.len());
        for (i, group) in groups.into_iter().enumerate() {
            let path = shard_path(out, i as u16, n);
            let mut shard_kvs = if i == 0 { kvs.take().unwrap_or_default() } else { Vec::new() };
            if n > 1 {
                // gguf_set_val_*: a key set again moves to the end.
                let split = [
                    (SPLIT_NO, Value::U16(i as u16)),
                    (SPLIT_COUNT, Value::U16(n)),
                    (SPLIT_TENSORS_COUNT, Value::I32(n_tensors)),
                ];
                for (key, v) in split {
                    shard_kvs.retain(|(k, _)| k.as_slice() != key.as_bytes());
                    shard_kvs.push((key.as_bytes().to_vec(), OutKv::New(v)));
                }
            }
            // Errors name the output shard being written.
            let write = |state: &mut Converting| -> Result<SealedFile> {
                let mut w = GgufWriter::with_options(AtomicFile::create(&path, params.if_exists)?, wopts)?;
                let bytes = TensorBytes { data: &data, give_back: &give_back };
                write_body(&mut w, shard_kvs, &group, &bytes, meta.endian(), progress, state)?;
                w.finish()?.seal()
            };
            sealed.push(write(&mut state).map_err(|e| e.in_shard(&path))?);
            state.report.paths.push(path);
        }
        persist_all(sealed, Error::in_shard)?;
        Ok(state.report)
    };
    #[cfg(feature = "parallel")]
    match params.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| {
                Error::from(QuantizeError::refused(format!("cannot start {}: {e}", crate::format::count(n, "thread"))))
            })?
            .install(run),
        None => run(),
    }
    // Without rayon every chunk runs on this thread, whatever `threads` says.
    #[cfg(not(feature = "parallel"))]
    run()
}

/// The refusals [`requantize`] makes before writing anything, for a [`plan_file_type`] and the importance
/// matrix in force ([`QuantizeParams::active_imatrix`]): the ones llama-quantize makes (a tensor
/// that needs an importance matrix, [`TensorPlan::requires_imatrix`], when none is given or it
/// has no entry for that tensor; an entry of the wrong size) and ours (a target type without a
/// quantizer here; a tensor left without importance weights whose target ggml quantizes only
/// with them, where llama-quantize aborts). A dry run calls it to say whether the real run would
/// go through.
///
/// # Errors
/// [`QuantizeError::ImatrixRequired`] naming the first tensor that needs an importance matrix
/// when there is none; [`CodecError::UnsupportedQuantize`] with the first
/// tensor of that target as the error's [`tensor`](Error::tensor); [`CodecError::ImportanceRequired`]
/// naming the first tensor without weights whose target is IQ2_XXS, IQ2_XS or IQ1_S;
/// [`QuantizeError::Imatrix`] with [`MissingEntry`](crate::ImatrixProblem::MissingEntry) or
/// [`SizeMismatch`](crate::ImatrixProblem::SizeMismatch).
pub fn check_plan(tensors: &[TensorPlan], imatrix: Option<&Imatrix>) -> Result<()> {
    if imatrix.is_none() {
        if let Some(t) = tensors.iter().find(|t| t.requires_imatrix) {
            let tensor = GgufStr::from(&t.name).to_string();
            return Err(Error::from(QuantizeError::ImatrixRequired { tensor, target: t.target }));
        }
    }
    let mut checked: Vec<GgmlType> = Vec::new();
    for t in tensors.iter().filter(|t| t.converts()) {
        if !checked.contains(&t.target) {
            if !codec::can_quantize(t.target) && !codec::can_quantize_with_importance(t.target) {
                return Err(Error::from(CodecError::UnsupportedQuantize(t.target)).in_tensor(GgufStr::from(&t.name)));
            }
            checked.push(t.target);
        }
    }
    for t in tensors.iter().filter(|t| t.converts()) {
        let weighted = match imatrix {
            Some(m) => m.weights_for(&t.name, t.ne.dims())?.is_some(),
            None => false,
        };
        if let (Some(_), false, true) = (imatrix, weighted, t.requires_imatrix) {
            return Err(Error::from(QuantizeError::Imatrix {
                problem: crate::ImatrixProblem::MissingEntry {
                    tensor: GgufStr::from(&t.name).to_string(),
                    target: t.target,
                },
            }));
        }
        // A tensor without weights (no entry, or one llama-quantize does not require them for,
        // such as token_embd) of a type ggml quantizes only with weights: ggml_quantize_chunk
        // asserts, llama-quantize aborts.
        if !weighted && !codec::can_quantize(t.target) {
            return Err(Error::from(codec::no_quantizer(t.target)).in_tensor(GgufStr::from(&t.name)));
        }
    }
    Ok(())
}

/// The refusals the writer would make of the output's header, checked without writing a file:
/// the key/value pairs [`requantize`] would write for `src` and `params` (those of `src`, the
/// file type, each `--override-kv` and the importance matrix's keys) and the tensor infos of
/// `tensors` (the [`plan_file_type`] for the same `params`), declared to a writer that discards its
/// output. A dry run calls it, beside [`check_plan`], to say whether the real run would go
/// through.
///
/// # Errors
/// [`QuantizeError::Refused`] for a key that starts with a NUL byte (as [`requantize`]); the
/// writer's errors for a pair or tensor info, e.g.
/// [`WriteError::BadAlignment`] for a `--override-kv
/// general.alignment=int:48` (not a power of two),
/// [`WriteError::InvalidKey`],
/// [`WriteError::InvalidTensor`].
pub fn check_header<S: Source>(src: &Gguf<S>, params: &QuantizeParams, tensors: &[TensorPlan]) -> Result<()> {
    let wopts = WriteOptions { version: 3, endian: src.endian(), pad_empty_data: true };
    let mut w = GgufWriter::with_options(std::io::sink(), wopts)?;
    let all = if params.only_copy { llama_tensor_order(src) } else { Vec::new() };
    for (key, v) in llama_quantize_kvs(src, &all, params)? {
        add_out_kv(&mut w, &key, v)?;
    }
    for t in tensors {
        w.add_tensor_ne(GgufStr::from(&t.name), t.target, t.ne.dims())?;
    }
    Ok(())
}

/// The output's key/value pairs in llama-quantize's order (see [`requantize`]), from the metadata
/// of `src`; `all`, every tensor of the model in llama-quantize's order, gives `COPY` its file type
/// (unused otherwise).
///
/// # Errors
/// [`QuantizeError::Refused`] for a key of `src` that starts with a NUL byte, naming it and its
/// offset in `src`: llama-quantize would copy it as the empty key, on which ggml aborts
/// (`GGML_ASSERT(!key.empty())` in `gguf.cpp`).
fn llama_quantize_kvs<'a, S: Source>(
    src: &'a Gguf<S>,
    all: &[TensorInfo<'_>],
    params: &QuantizeParams,
) -> Result<Vec<(Vec<u8>, OutKv<'a>)>> {
    const DROPPED: [&str; 5] =
        ["general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count"];
    // gguf_set_kv copies each pair with its key and strings as C strings (up to a NUL byte); a key
    // set again (two keys equal up to a NUL) replaces the earlier pair and moves to the end.
    let mut slots: Vec<Option<(Vec<u8>, OutKv<'a>)>> = Vec::with_capacity(src.kv_count());
    let mut at: std::collections::HashMap<&'a [u8], usize> = std::collections::HashMap::new();
    for kv in src.metadata() {
        let key = c_name(kv.key).as_bytes();
        if key.is_empty() {
            return Err(Error::from(QuantizeError::refused(format!(
                "the key {:?} at offset {} starts with a NUL byte, which ends a key in llama.cpp: llama-quantize \
                 would copy it as an empty key, on which ggml aborts (GGML_ASSERT(!key.empty()) in gguf.cpp)",
                kv.key, kv.offset
            ))));
        }
        if let Some(old) = at.insert(key, slots.len()) {
            slots[old] = None;
        }
        slots.push(Some((key.to_vec(), c_strings(kv.value, src.endian()))));
    }
    let mut kvs: Vec<(Vec<u8>, OutKv<'a>)> =
        slots.into_iter().flatten().filter(|(k, _)| !DROPPED.iter().any(|d| k.as_slice() == d.as_bytes())).collect();
    let file_type =
        if params.only_copy { source_file_type_of(src, all, &params.kv_overrides) } else { params.ftype.number() };
    kvs.push((b"general.quantization_version".to_vec(), OutKv::New(Value::U32(GGML_QNT_VERSION))));
    kvs.push((b"general.file_type".to_vec(), OutKv::New(Value::U32(file_type))));
    let imatrix_kvs = params.active_imatrix().map(Imatrix::kv_overrides).unwrap_or_default();
    for o in params.kv_overrides.iter().chain(&imatrix_kvs) {
        if o.key == crate::format::keys::GENERAL_ALIGNMENT.as_bytes() {
            // ggml's rule, checked before anything is written (the writer would refuse it too,
            // but naming an offset of the output, which means nothing to the user).
            let v = o.to_value();
            let value = if let Value::U32(a) = v { Some(a) } else { None };
            if let Some(problem) = crate::format::alignment_value_problem(v.value_type().name(), value) {
                return Err(Error::from(QuantizeError::refused(format!(
                    "--override-kv general.alignment: general.alignment {problem} (ggml takes a u32 power of two)"
                ))));
            }
        }
        kvs.retain(|(k, _)| *k != o.key);
        let v = match &o.value {
            KvOverrideValue::Str(b) => OutKv::Bytes(b.clone()),
            _ => OutKv::New(o.to_value()),
        };
        kvs.push((o.key.clone(), v));
    }
    Ok(kvs)
}

/// Declares one key/value pair of the output to `w`: a pair of the source keeps its key as stored
/// (UTF-8 or not); a new pair has a key of this crate's (text).
fn add_out_kv<W: std::io::Write>(w: &mut GgufWriter<W>, key: &[u8], v: OutKv<'_>) -> Result<()> {
    let key_bytes = GgufStr::from_bytes(key);
    match v {
        OutKv::Src(v) => w.add_kv_ref(key_bytes, v),
        OutKv::New(v) => w.add_value(&String::from_utf8_lossy(key), &v),
        OutKv::Bytes(b) => w.add_kv_ref(key_bytes, ValueRef::String(GgufStr::from_bytes(&b))),
        OutKv::Strings { len, bytes, endian } => {
            let array = ArrayRef { elem: ValueType::String, len, bytes: &bytes, endian, utf8: false };
            w.add_kv_ref(key_bytes, ValueRef::Array(array))
        }
    }
}

/// A value of the source as llama-quantize copies it (`gguf_set_kv`, `ggml/src/gguf.cpp`, passes
/// each string on as a C string): a string, or each string of a string array, up to its first
/// NUL byte. Other values are copied as they are.
fn c_strings(v: ValueRef<'_>, endian: Endian) -> OutKv<'_> {
    let has_nul = |s: &GgufStr<'_>| s.as_bytes().contains(&0);
    match v {
        ValueRef::String(s) => OutKv::Src(ValueRef::String(c_name(s))),
        ValueRef::Array(a) if a.strings().is_some_and(|mut all| all.any(|s| has_nul(&s))) => {
            let mut bytes = Vec::new();
            for s in a.strings().into_iter().flatten().map(c_name) {
                let n = s.as_bytes().len() as u64;
                bytes.extend(if endian == Endian::Big { n.to_be_bytes() } else { n.to_le_bytes() });
                bytes.extend_from_slice(s.as_bytes());
            }
            OutKv::Strings { len: a.len(), bytes, endian }
        }
        v => OutKv::Src(v),
    }
}

/// The running totals of a conversion over one or more files.
struct Converting {
    report: RequantizeReport,
    /// Bytes of source tensor data done, of `total`.
    done: u64,
    total: u64,
    bufs: (Vec<f32>, Vec<u8>),
}

/// Where the tensors' source bytes come from, and where their pages go back once converted.
pub(super) struct TensorBytes<'x, 'a> {
    /// A tensor's source bytes.
    pub(super) data: &'x dyn Fn(&OutTensor<'a>) -> Result<&'a [u8]>,
    /// Called with each part of a tensor's bytes once written ([`release`]).
    pub(super) give_back: &'x dyn Fn(&OutTensor<'a>, &[u8]),
}

/// Writes the key/value pairs and the tensors (converting those whose target differs) to a new
/// file at `out`, renamed into place when complete (a file there replaced or kept as
/// `if_exists` says); `data` gives each tensor's source bytes.
pub(super) fn write_converted<'a>(
    out: &Path,
    if_exists: IfExists,
    wopts: WriteOptions,
    kvs: Vec<(Vec<u8>, OutKv<'_>)>,
    tensors: Vec<OutTensor<'a>>,
    bytes: TensorBytes<'_, 'a>,
    progress: Option<Progress<'_>>,
) -> Result<RequantizeReport> {
    let total: u64 = tensors.iter().map(|t| t.info.nbytes).sum();
    let mut state = Converting { report: RequantizeReport::default(), done: 0, total, bufs: (Vec::new(), Vec::new()) };
    let mut w = GgufWriter::with_options(AtomicFile::create(out, if_exists)?, wopts)?;
    write_body(&mut w, kvs, &tensors, &bytes, wopts.endian, progress, &mut state)?;
    w.commit()?;
    state.report.paths.push(out.to_path_buf());
    Ok(state.report)
}

/// Declares the key/value pairs and the tensors to `w` and writes the tensors' data (converting
/// those whose target differs), adding to `state`.
fn write_body<'a, W: std::io::Write>(
    w: &mut GgufWriter<W>,
    kvs: Vec<(Vec<u8>, OutKv<'_>)>,
    tensors: &[OutTensor<'a>],
    src: &TensorBytes<'_, 'a>,
    endian: Endian,
    progress: Option<Progress<'_>>,
    state: &mut Converting,
) -> Result<()> {
    // Keys as bytes: a pair of the source keeps its key as stored (UTF-8 or not); a new pair
    // has a key of this crate's (text).
    for (key, v) in kvs {
        add_out_kv(w, &key, v)?;
    }
    for t in tensors {
        w.add_tensor_ne(t.name, t.target, t.ne.dims())?;
    }
    let Converting { report, done, total, bufs } = state;
    let total = *total;
    for t in tensors {
        let bytes = (src.data)(t)?;
        report.bytes_in += t.info.nbytes;
        if t.target == t.info.dtype {
            let mut writer = w.tensor_data_writer()?;
            for part in bytes.chunks(4 * CHUNK_ELEMS as usize) {
                writer.write(part)?;
                (src.give_back)(t, part);
            }
            writer.finish()?;
            report.kept.push(t.name.to_string());
            report.bytes_out += t.info.nbytes;
            *done += t.info.nbytes;
        } else {
            let mut writer = w.tensor_data_writer()?;
            let bytes_out = convert_tensor(&t.info, t.target, t.weights, endian, bytes, bufs, |chunk, part| {
                writer.write(chunk)?;
                (src.give_back)(t, part);
                *done += part.len() as u64;
                if let Some(p) = progress {
                    p(*done, total);
                }
                Ok(())
            })?;
            writer.finish()?;
            report.converted.push(t.name.to_string());
            report.bytes_out += bytes_out;
        }
        if let Some(p) = progress {
            p(*done, total);
        }
    }
    Ok(())
}

/// Gives the pages of `part`, a slice of `src`'s bytes, back ([`Source::release`]).
pub(super) fn release<S: Source>(src: &Gguf<S>, part: &[u8]) {
    let start = (part.as_ptr() as usize).wrapping_sub(src.bytes().as_ptr() as usize);
    if start <= src.bytes().len() {
        src.source().release(start..start.saturating_add(part.len()));
    }
}

/// Converts one tensor's `data` to `target` in chunks of whole rows, giving each converted chunk
/// and the source chunk it was made from to `emit`; returns the bytes of the converted tensor. With
/// `weights` (`ne[0] × ne[2]`), each chunk stays within one expert (`ne[1]` rows) and is
/// quantized with that expert's slice.
fn convert_tensor(
    t: &TensorInfo<'_>,
    target: GgmlType,
    weights: Option<&[f32]>,
    endian: Endian,
    data: &[u8],
    (scratch, outbuf): &mut (Vec<f32>, Vec<u8>),
    mut emit: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<u64> {
    let out_bytes = target.nbytes(t.ne().dims()).ok_or_else(|| WriteError::InvalidTensor {
        name: t.name.to_string(),
        reason: format!("size as {target} overflows"),
    })?;
    // Whole rows of both types per chunk: a multiple of both block sizes.
    let row = t.ne().row_len().max(1);
    let rows_per_chunk = (CHUNK_ELEMS / row).max(1);
    let n_rows = t.n_elements / row; // row >= 1
    let (in_row, out_row) = (t.dtype.row_bytes(row).unwrap_or(0), target.row_bytes(row).unwrap_or(0));
    // Rows per expert: ggml's ne[1] (a 2-D tensor is one expert).
    let rows_per_expert = t.ne().dims().get(1).copied().unwrap_or(1).max(1);
    let weighted = weights.filter(|_| codec::can_quantize_with_importance(target));
    let mut r = 0u64;
    while r < n_rows {
        let mut rows = rows_per_chunk.min(n_rows - r);
        if weighted.is_some() {
            rows = rows.min(rows_per_expert - r % rows_per_expert);
        }
        let (start, len) = ((r * in_row) as usize, (rows * in_row) as usize);
        let chunk = data.get(start..start + len).ok_or_else(|| Error::data_not_loaded(t.name))?;
        scratch.resize((rows * row) as usize, 0.0);
        outbuf.resize((rows * out_row) as usize, 0);
        codec::dequantize_par(t.dtype, endian, chunk, scratch)?;
        match weighted {
            Some(w) => {
                let e = (r / rows_per_expert) as usize;
                let n = row as usize;
                let slice = w.get(e * n..(e + 1) * n).ok_or_else(|| WriteError::InvalidTensor {
                    name: t.name.to_string(),
                    reason: format!("importance weights of {} for expert {e}", crate::format::count(w.len(), "value")),
                })?;
                codec::quantize_with_importance(target, scratch, outbuf, n, slice)?;
                if endian == Endian::Big {
                    codec::swap_blocks(target, outbuf);
                }
            }
            None => codec::quantize_par(target, endian, scratch, outbuf)?,
        }
        emit(outbuf, chunk)?;
        r += rows;
    }
    Ok(out_bytes)
}

#[cfg(test)]
mod tests {
    /// A tensor left without importance weights whose target ggml quantizes only with them (a
    /// token embedding given IQ2_XXS: llama-quantize does not require an imatrix for it, and
    /// ggml_quantize_chunk then asserts) is refused before writing, naming the tensor; IQ2_S and
    /// IQ3_S quantize without weights.
    #[test]
    fn a_tensor_without_weights_of_a_type_ggml_needs_them_for_is_refused() {
        use super::check_plan;
        use crate::codec::CodecError;
        use crate::ops::quantize::{Override, Rule, TensorPlan};
        use crate::{GgmlType, Ne};
        let plan = |target| {
            vec![TensorPlan {
                name: "token_embd.weight".into(),
                ne: Ne::new(&[256, 4]).unwrap(),
                source: GgmlType::F32,
                target,
                rule: Rule::Override(Override::TokenEmbeddingType),
                requires_imatrix: false,
            }]
        };
        for t in [GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ1_S] {
            let e = check_plan(&plan(t), None).unwrap_err();
            assert_eq!(e.as_codec(), Some(&CodecError::ImportanceRequired(t)), "{e:?}");
            assert_eq!(e.tensor(), Some("token_embd.weight"));
        }
        for t in [GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S, GgmlType::IQ1_M] {
            check_plan(&plan(t), None).unwrap();
        }
    }

    /// llama-quantize's `--keep-split` prefix drops a final `.gguf`; its shard count is one more
    /// than the last input shard with tensors; an empty shard before that but the first is refused.
    #[test]
    fn keep_split_prefix_and_count() {
        use super::{keep_split_count, keep_split_prefix};
        use std::path::PathBuf;
        assert_eq!(keep_split_prefix("d/out.gguf"), PathBuf::from("d/out"));
        assert_eq!(keep_split_prefix("out"), PathBuf::from("out"));
        assert_eq!(keep_split_prefix("a.gguf.bin"), PathBuf::from("a.gguf.bin"));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let os = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
            assert_eq!(keep_split_prefix(os(b"d/o\xfe.gguf")), os(b"d/o\xfe"));
        }
        assert_eq!(keep_split_count(&[3, 4, 5]).unwrap(), 3);
        assert_eq!(keep_split_count(&[0, 4, 5]).unwrap(), 3);
        assert_eq!(keep_split_count(&[7]).unwrap(), 1);
        assert_eq!(keep_split_count(&[0]).unwrap(), 1);
        assert_eq!(keep_split_count(&[2, 3, 0]).unwrap(), 2);
        let e = keep_split_count(&[2, 0, 3]).unwrap_err();
        assert!(e.to_string().contains("input shard 2 of 3 holds no tensors"), "{e}");
    }
}
