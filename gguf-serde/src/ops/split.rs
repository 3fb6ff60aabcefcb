//! Writing and merging splits in `llama-gguf-split`'s layout (see [`crate::container::sharded`]
//! for the layout and for reading a split model as one).

use std::ops::Range;

use crate::container::{Gguf, IfExists, Source};
use crate::error::{Error, Result, ShardError};
// What `split_file` and `merge_file` use (feature `mmap`).
#[cfg(feature = "mmap")]
use {
    crate::container::atomic::{check_target, create_temp, file_range, open_file, persist_all, SealedFile},
    crate::container::sharded::shard_path,
    crate::container::{ShardedGguf, TensorInfo, WriteOptions},
    crate::format::keys::{is_split_key, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT},
    crate::GgufWriter,
    std::path::{Path, PathBuf},
};

/// How [`split_file`] cuts a model into shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SplitBy {
    /// At most this many tensors per shard (`llama-gguf-split --split-max-tensors`; its default
    /// is 128).
    MaxTensors(usize),
    /// At most this many bytes of tensor data per shard, counted as `llama-gguf-split
    /// --split-max-size` counts them: each tensor's size padded to 32 bytes, the metadata not
    /// counted. A new shard starts when the next tensor would go past the limit; a tensor larger
    /// than the limit gets a shard of its own. So the same limit gives the same shards as
    /// `llama-gguf-split`, and a shard file can be a little larger than the limit.
    MaxBytes(u64),
}

/// Options of [`split_file`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SplitOptions {
    /// Where to cut.
    pub by: SplitBy,
    /// Put no tensors in the first shard: it holds the metadata only
    /// (`llama-gguf-split --no-tensor-first-split`).
    pub no_tensor_first_split: bool,
    /// What becomes of a file at a shard's path ([`IfExists::Replace`] by default).
    pub if_exists: IfExists,
}

impl SplitOptions {
    /// Options cutting by `by`, with tensors in the first shard, replacing existing shards.
    pub fn new(by: SplitBy) -> Self {
        SplitOptions { by, no_tensor_first_split: false, if_exists: IfExists::Replace }
    }

    /// These options with [`no_tensor_first_split`](Self::no_tensor_first_split) set to `empty`.
    pub fn with_no_tensor_first_split(mut self, empty: bool) -> Self {
        self.no_tensor_first_split = empty;
        self
    }

    /// These options with [`if_exists`](Self::if_exists) set to `if_exists`.
    pub fn with_if_exists(mut self, if_exists: IfExists) -> Self {
        self.if_exists = if_exists;
        self
    }
}

impl Default for SplitOptions {
    /// 128 tensors per shard, tensors in the first shard: `llama-gguf-split`'s defaults.
    fn default() -> Self {
        SplitOptions::new(SplitBy::MaxTensors(128))
    }
}

/// The tensors of each shard, as ranges of tensor indices (file order) of `model`, for
/// [`split_file`] with `opts`.
///
/// # Errors
/// [`ShardError::CannotSplit`] for a limit of 0 or a split into more than 65,535 shards.
pub fn plan_split<S: Source>(model: &Gguf<S>, opts: &SplitOptions) -> Result<Vec<Range<usize>>> {
    plan_split_sizes(model.tensors().map(|t| t.nbytes), opts)
}

/// [`plan_split`] of tensors of `sizes` bytes each, in file order (a model not written yet: a
/// conversion straight to shards).
pub(crate) fn plan_split_sizes(sizes: impl Iterator<Item = u64>, opts: &SplitOptions) -> Result<Vec<Range<usize>>> {
    let bad = |reason: String| Error::from(ShardError::CannotSplit { reason });
    let mut n = 0usize;
    let mut shards = Vec::new();
    if opts.no_tensor_first_split {
        shards.push(0..0);
    }
    let mut start = 0usize;
    let mut size = 0u64;
    for (i, nbytes) in sizes.enumerate() {
        n = i + 1;
        let cut = match opts.by {
            SplitBy::MaxTensors(0) | SplitBy::MaxBytes(0) => return Err(bad("the limit per shard is 0".into())),
            SplitBy::MaxTensors(max) => i > start && i - start >= max,
            SplitBy::MaxBytes(max) => {
                let padded = nbytes.div_ceil(32).saturating_mul(32);
                let cut = i > start && size.saturating_add(padded) > max;
                size = if cut { padded } else { size.saturating_add(padded) };
                cut
            }
        };
        if cut {
            shards.push(start..i);
            start = i;
        }
    }
    if n > start || shards.is_empty() {
        shards.push(start..n);
    }
    if shards.len() > usize::from(u16::MAX) {
        return Err(bad(format!("{} shards, at most 65535 (split.count is a u16)", shards.len())));
    }
    Ok(shards)
}

/// Splits the GGUF file at `input` into shards `PREFIX-00001-of-0000N.gguf`, … in
/// `llama-gguf-split`'s layout (see the [module docs](self)); returns their paths.
///
/// The shards keep the input's version and byte order. The first shard has the input's metadata
/// and alignment; later shards have the three split keys and the default alignment. Tensor data
/// is copied by the kernel, shard by shard (memory use does not depend on the model's size).
/// Every shard is written to a temporary file; they are renamed into place together once all are
/// complete, so a failure leaves no shard of this split behind (and no existing file replaced).
/// Shards of the same names that exist are replaced, or with [`IfExists::Fail`]
/// ([`SplitOptions::if_exists`]) refused: before anything is written, and atomically at the
/// rename of each shard for one that appears meanwhile (the shards already renamed are then
/// removed again, so that none of this split is left). Shards of an earlier split of the same
/// prefix into another count are left as they are: refusing them is the caller's policy
/// (`gguf split` refuses them without `--force`).
/// [`merge_file`] gives back the input byte for byte (when it had no split keys of its own).
///
/// # Errors
/// [`ShardError::CannotSplit`] (see [`plan_split`]; also when a shard's path is the input file
/// itself, which the rename would replace); [`ErrorKind::Io`](crate::ErrorKind::Io) (with an
/// [`std::io::ErrorKind::AlreadyExists`] source for a shard kept by [`IfExists::Fail`]); any
/// validation error of the input.
#[cfg(feature = "mmap")]
pub fn split_file(input: impl AsRef<Path>, prefix: impl AsRef<Path>, opts: &SplitOptions) -> Result<Vec<PathBuf>> {
    let input = input.as_ref();
    let model = Gguf::open(input)?;
    let src = open_file(input)?;
    let plan = plan_split(&model, opts)?;
    let count = u16::try_from(plan.len()).map_err(|_| ShardError::CannotSplit { reason: "too many shards".into() })?;
    let n_tensors = i32::try_from(model.tensor_count()).map_err(|_| ShardError::CannotSplit {
        reason: "more tensors than split.tensors.count (i32) can hold".into(),
    })?;
    // A shard renamed over the input would destroy it (`x-00001-of-00001.gguf` split to `x`).
    let input_path = std::fs::canonicalize(input).ok();
    for i in 0..count {
        let path = shard_path(prefix.as_ref(), i, count);
        if input_path.is_some() && std::fs::canonicalize(&path).ok() == input_path {
            return Err(ShardError::CannotSplit {
                reason: format!("shard {} would replace the input", crate::format::shown_path(&path)),
            }
            .into());
        }
    }
    for i in 0..count {
        let path = shard_path(prefix.as_ref(), i, count);
        check_target(&path, opts.if_exists).map_err(|e| e.in_shard(&path))?;
    }
    let wopts = WriteOptions::like(&model);
    let mut sealed: Vec<SealedFile> = Vec::with_capacity(plan.len());
    for (i, range) in plan.iter().enumerate() {
        let path = shard_path(prefix.as_ref(), i as u16, count);
        // Errors name the shard being written.
        let write = || -> Result<SealedFile> {
            let (out, pending) = create_temp(&path, None, opts.if_exists)?;
            let mut w = GgufWriter::with_options(out, wopts)?;
            if i == 0 {
                for kv in model.metadata().filter(|kv| !kv.key.to_str().is_ok_and(is_split_key)) {
                    w.add_kv_ref(kv.key, kv.value)?;
                }
            }
            w.add_kv(SPLIT_NO, i as u16)?;
            w.add_kv(SPLIT_TENSORS_COUNT, n_tensors)?;
            w.add_kv(SPLIT_COUNT, count)?;
            let tensors: Vec<TensorInfo<'_>> = range.clone().filter_map(|t| model.tensor_at(t)).collect();
            for t in &tensors {
                w.add_tensor(t.name, t.dtype, &t.shape)?;
            }
            for t in &tensors {
                w.copy_tensor_data(file_range(&src, t.data_offset, t.nbytes)?)?;
            }
            pending.seal(w.finish()?)
        };
        sealed.push(write().map_err(|e| e.in_shard(&path))?);
    }
    persist_all(sealed, Error::in_shard)
}

/// Merges a split model (given the path of any shard) into one GGUF file at `out`: the first
/// shard's metadata without the split keys, every tensor in order, with the first shard's
/// version, byte order and alignment. Written to a temporary file and renamed into place,
/// replacing a file at `out` or keeping it as `if_exists` says; tensor data is copied by the
/// kernel.
///
/// Unlike `llama-gguf-split --merge`, which keeps the split keys (with `split.count` set to 0),
/// the split keys are dropped, so a file split by [`split_file`] merges back byte for byte.
///
/// # Errors
/// As [`ShardedGguf::open`]; [`ShardError::CannotMerge`] when `shard` has no `split.count` or
/// one of 0 (not a shard, as `llama-gguf-split --merge` refuses it) or `out` is one of the
/// shards; [`ErrorKind::Io`](crate::ErrorKind::Io) (with an
/// [`std::io::ErrorKind::AlreadyExists`] source for a file at `out` kept by [`IfExists::Fail`]).
#[cfg(feature = "mmap")]
pub fn merge_file(shard: impl AsRef<Path>, out: impl AsRef<Path>, if_exists: IfExists) -> Result<()> {
    let model = ShardedGguf::open(shard.as_ref())?;
    let first = model.first().ok_or_else(|| ShardError::CannotMerge { reason: "no shards".into() })?;
    // As llama-gguf-split --merge: a file without split.count, or with a count of 0 (what
    // llama-gguf-split --merge writes), is not a shard.
    let problem = match first.get(SPLIT_COUNT).map(|v| v.as_u64()) {
        None => Some(format!("it has no {SPLIT_COUNT}")),
        Some(Some(0)) => Some(format!("its {SPLIT_COUNT} is 0")),
        Some(_) => None,
    };
    if let Some(why) = problem {
        let reason = format!("{} is not a shard of a split model ({why})", crate::format::shown_path(&shard));
        return Err(ShardError::CannotMerge { reason }.into());
    }
    // Renaming the merged file over one of its own shards would destroy the split.
    let out_path = std::fs::canonicalize(out.as_ref()).ok();
    if let Some(o) = &out_path {
        if model.shard_paths().any(|p| std::fs::canonicalize(p).ok().as_ref() == Some(o)) {
            return Err(ShardError::CannotMerge {
                reason: format!("the output {} is one of the shards", crate::format::shown_path(&o)),
            }
            .into());
        }
    }
    let files = model.shard_paths().map(open_file).collect::<Result<Vec<_>>>()?;
    let wopts = WriteOptions::like(first);
    let (o, pending) = create_temp(out.as_ref(), None, if_exists)?;
    // I/O errors of writing name the output.
    let write = || -> Result<()> {
        let mut w = GgufWriter::with_options(o, wopts)?;
        for kv in model.metadata() {
            w.add_kv_ref(kv.key, kv.value)?;
        }
        for t in model.tensors() {
            w.add_tensor(t.info.name, t.info.dtype, &t.info.shape)?;
        }
        for t in model.tensors() {
            let src = files.get(t.shard).ok_or_else(|| Error::data_not_loaded(t.info.name))?;
            w.copy_tensor_data(file_range(src, t.info.data_offset, t.info.nbytes)?)?;
        }
        pending.seal(w.finish()?)?.persist()
    };
    write().map_err(|e| e.writing_to(out.as_ref()))
}
