//! Sharded (split) models: read `NAME-00001-of-00003.gguf`, `NAME-00002-of-00003.gguf`, … as one
//! model. Writing and merging splits is [`crate::ops::split`].
//!
//! # The layout (as llama.cpp's `llama-gguf-split` writes it, and its model loader reads it)
//! - File names: `PREFIX-NNNNN-of-MMMMM.gguf`, `NNNNN` the 1-based shard number and `MMMMM` the
//!   shard count, both zero-padded to five digits (`%s-%05d-of-%05d.gguf`).
//! - Every shard is a complete GGUF file with three keys: `split.no` (UINT16, the 0-based shard
//!   number), `split.count` (UINT16, the number of shards) and `split.tensors.count` (INT32, the
//!   number of tensors in all shards together). `llama-gguf-split` (with ggml's current
//!   `gguf_set_val_*`, which removes a key and appends it again) writes them in the order
//!   `split.no`, `split.tensors.count`, `split.count`; so does [`split_file`](crate::ops::split::split_file).
//!   `llama-quantize --keep-split` writes them as `split.no`, `split.count`,
//!   `split.tensors.count`; so does [`requantize_sharded`](crate::ops::requant::requantize_sharded).
//! - The first shard also carries all the model's metadata, before the three split keys (a
//!   `split.*` key the model already had is replaced). Later shards carry the three split keys
//!   only, and so the default alignment of 32.
//! - Each tensor is in exactly one shard; the shards hold the tensors in the model's order.
//! - The loader opens the first shard, reads `split.count` (a count of 0 or 1, or no key, means a
//!   single file), checks that every other shard's `split.no` is its position, refuses a tensor
//!   name that occurs twice, and checks that `split.tensors.count` of the first shard equals the
//!   number of tensors found.
//!
//! [`ShardedGguf`] checks all of that and more (every shard's `split.count`, every
//! `split.tensors.count` present, the file names), with a typed error for each problem.

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::container::{Gguf, Source, TensorInfo};
use crate::error::{Error, Result};
// What `ShardedGguf` uses (feature `mmap`).
#[cfg(feature = "mmap")]
use {
    crate::container::{Kv, ValueRef},
    crate::error::ShardError,
    crate::format::keys::{is_split_key, SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT},
    std::collections::HashMap,
};

/// The path of shard `index` (0-based) of `count`: `PREFIX-{index+1:05}-of-{count:05}.gguf`.
///
/// ```
/// use gguf_serde::container::shard_path;
/// assert_eq!(shard_path("out/model", 0, 3), std::path::PathBuf::from("out/model-00001-of-00003.gguf"));
/// ```
pub fn shard_path(prefix: impl AsRef<Path>, index: u16, count: u16) -> PathBuf {
    let mut s: OsString = prefix.as_ref().as_os_str().to_owned();
    s.push(format!("-{:05}-of-{:05}.gguf", u32::from(index) + 1, count));
    PathBuf::from(s)
}

/// Splits a shard path into its prefix, 0-based shard number and shard count; `None` if the path
/// does not end in `-NNNNN-of-MMMMM.gguf` with `1 <= NNNNN <= MMMMM <= 65535` (as llama.cpp's
/// `llama_split_prefix` tells: a path ending in `/` is not a shard's).
///
/// ```
/// use gguf_serde::container::{parse_shard_path, shard_path};
/// let (prefix, index, count) = parse_shard_path("m/llama-00002-of-00004.gguf").unwrap();
/// assert_eq!((prefix.to_str().unwrap(), index, count), ("m/llama", 1, 4));
/// assert!(parse_shard_path("llama.gguf").is_none());
/// // A URL keeps its spelling, so that its other shards' URLs are made from it.
/// let (prefix, _, _) = parse_shard_path("hf://owner/repo@v1/q8//m-00001-of-00003.gguf").unwrap();
/// assert_eq!(shard_path(&prefix, 2, 3).to_str().unwrap(), "hf://owner/repo@v1/q8//m-00003-of-00003.gguf");
/// ```
pub fn parse_shard_path(path: impl AsRef<Path>) -> Option<(PathBuf, u16, u16)> {
    let path = path.as_ref();
    // By bytes, so that a stem that is not UTF-8 (`r\xff-00001-of-00002.gguf`, as `split` and
    // llama-gguf-split name the shards of such a prefix) is a shard name too.
    let name = path.file_name()?;
    let bytes = name.as_encoded_bytes();
    // "-NNNNN-of-MMMMM.gguf" is 20 bytes.
    let cut = bytes.len().checked_sub(20)?;
    let tail = bytes.get(cut..)?;
    let digits = |r: Range<usize>| -> Option<u32> {
        let d = tail.get(r)?;
        if d.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(d).ok()?.parse().ok()
        } else {
            None
        }
    };
    if tail.first() != Some(&b'-') || tail.get(6..10) != Some(b"-of-") || tail.get(15..) != Some(b".gguf") {
        return None;
    }
    let (no, count) = (digits(1..6)?, digits(10..15)?);
    if no == 0 || no > count || count > u32::from(u16::MAX) {
        return None;
    }
    // The path itself must end so (llama.cpp's `llama_split_prefix` compares the end of the path
    // as given): `m-00001-of-00002.gguf/`, whose file name `Path` reads without the slash, names
    // a folder, not a shard.
    if !path.as_os_str().as_encoded_bytes().ends_with(tail) {
        return None;
    }
    // The path as given without its last 20 bytes (the tail, ASCII), so that a URL keeps its
    // exact spelling (`https://host/a//b-00001-of-00002.gguf`: `Path`'s parent would fold the
    // `//`); a path that is not UTF-8 is cut by its file name.
    let prefix = match path.to_str() {
        Some(s) => PathBuf::from(s.get(..s.len().checked_sub(20)?)?),
        None => path.with_file_name(os_prefix(name, cut)?),
    };
    // 1 <= no <= count <= u16::MAX (checked above).
    Some((prefix, no.saturating_sub(1) as u16, count as u16))
}

/// The first `cut` bytes of `name`, where `cut` is at an ASCII byte (the `-` of a shard name's
/// end): any bytes on Unix, UTF-8 elsewhere.
fn os_prefix(name: &std::ffi::OsStr, cut: usize) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(std::ffi::OsStr::from_bytes(name.as_bytes().get(..cut)?).to_owned())
    }
    #[cfg(not(unix))]
    {
        Some(OsString::from(name.to_str()?.get(..cut)?))
    }
}

/// Where a model's tensors are: a view that the typed model layer binds to, whatever the files.
///
/// Implemented by [`Gguf`] (one file) and [`ShardedGguf`] (one model in several files). Data
/// offsets in the [`TensorInfo`]s are absolute offsets in the file that holds the tensor.
pub trait TensorSource {
    /// The number of tensors.
    fn tensor_count(&self) -> usize;

    /// The tensor infos, in model order.
    fn tensor_infos(&self) -> Box<dyn Iterator<Item = TensorInfo<'_>> + '_>;

    /// The info of the tensor named `name`.
    fn tensor_info(&self, name: &str) -> Option<TensorInfo<'_>>;

    /// The info and stored bytes (in the file's byte order) of the tensor named `name`.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) if there is no such tensor;
    /// [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded) if the source holds metadata
    /// only.
    fn tensor_bytes(&self, name: &str) -> Result<(TensorInfo<'_>, &[u8])>;
}

impl<S: Source> TensorSource for Gguf<S> {
    fn tensor_count(&self) -> usize {
        Gguf::tensor_count(self)
    }

    fn tensor_infos(&self) -> Box<dyn Iterator<Item = TensorInfo<'_>> + '_> {
        Box::new(self.tensors())
    }

    fn tensor_info(&self, name: &str) -> Option<TensorInfo<'_>> {
        self.tensor(name)
    }

    fn tensor_bytes(&self, name: &str) -> Result<(TensorInfo<'_>, &[u8])> {
        let info = self.tensor(name).ok_or_else(|| Error::not_found("tensor", name))?;
        Ok((info, self.tensor_data(&info)?))
    }
}

/// A tensor of a sharded model: its info and the shard that holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ShardTensor<'a> {
    /// 0-based number of the shard that holds the tensor.
    pub shard: usize,
    /// The tensor info; `data_offset` is absolute in that shard.
    pub info: TensorInfo<'a>,
}

/// One model split over several GGUF files (or a single file), opened as one: the first shard's
/// metadata, every tensor of every shard in order, and tensor data borrowed from memory mappings.
///
/// `S` is how each shard holds its bytes: memory-mapped files ([`ShardedGguf::open`], the
/// default) or, for a model on an HTTP server, the metadata of each shard alone
/// (`ShardedGguf::from_url`, cargo feature `remote`: tensor infos, no tensor data). Both are
/// checked alike.
///
/// ```no_run
/// use gguf_serde::container::{ShardedGguf, TensorSource};
/// // Any shard's path will do; the others are found by name.
/// let model = ShardedGguf::open("llama-00001-of-00003.gguf")?;
/// println!("{:?}", model.get("general.architecture"));
/// let (info, bytes) = model.tensor_bytes("token_embd.weight")?;
/// println!("{:?} {} bytes", info.shape, bytes.len());
/// # Ok::<(), gguf_serde::Error>(())
/// ```
#[cfg(feature = "mmap")]
#[derive(Debug)]
pub struct ShardedGguf<S = memmap2::Mmap> {
    /// Each shard with its path (for a remote model, its URL).
    shards: Vec<(PathBuf, Gguf<S>)>,
    /// (shard, index in shard) of every tensor, in model order.
    order: Vec<(u32, u32)>,
    /// Tensor positions by name (bytes: names need not be UTF-8).
    by_name: HashMap<Vec<u8>, u32>,
}

/// The value of integer key `key` in `f`, widened to i64 (`None` if absent or not an integer).
#[cfg(feature = "mmap")]
fn int_key<S: Source>(f: &Gguf<S>, key: &str) -> Option<i64> {
    let v = f.get(key)?;
    v.as_i64().or_else(|| v.as_u64().and_then(|u| i64::try_from(u).ok()))
}

#[cfg(feature = "mmap")]
fn in_shard(path: &Path) -> impl FnOnce(Error) -> Error + '_ {
    move |e| e.in_shard(path)
}

#[cfg(feature = "mmap")]
fn open_shard(path: &Path, index: u16, count: u16) -> Result<Gguf<memmap2::Mmap>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ShardError::Missing {
                path: path.to_path_buf(),
                index: u32::from(index) + 1,
                count: u32::from(count),
            }
            .into())
        }
        _ => {}
    }
    Gguf::open(path).map_err(in_shard(path))
}

#[cfg(feature = "mmap")]
impl ShardedGguf {
    /// Opens a split model from the path of any of its shards, or a single (unsplit) GGUF file.
    ///
    /// A file without `split.count`, or with a count of 0 or 1, is a model by itself. Otherwise
    /// its name must follow `PREFIX-NNNNN-of-MMMMM.gguf` (matching its `split.no` and
    /// `split.count`), and every shard of the split is opened and memory-mapped.
    ///
    /// Integer split keys are read whatever their integer type (llama.cpp writes UINT16 and
    /// INT32), so long as the value fits.
    ///
    /// # Errors
    /// [`ShardError::Missing`] for a shard file that does not exist; [`ShardError::Mismatch`] for a
    /// shard whose `split.no` is not its position or whose `split.count` differs (a shard of
    /// another split), or a first shard without `split.tensors.count`; [`ShardError::TensorCount`]
    /// when a shard's `split.tensors.count` is not the number of tensors found;
    /// [`ShardError::TensorInTwoShards`]; [`ShardError::BadName`] for a shard whose file name does
    /// not match its keys; the error of a shard that cannot be read or is invalid, with its own
    /// kind and [`Error::shard`] naming the shard; [`ShardError::ByteOrder`] for a shard whose byte
    /// order differs from the first shard's.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        // The file given is named as a shard only when its name says it is one (its keys cannot
        // be read yet); `Gguf::open`'s errors name its path already.
        let given = Gguf::open(path).map_err(|e| match parse_shard_path(path) {
            Some((_, _, count)) if count > 1 => e.in_shard(path),
            _ => e,
        })?;
        Self::assemble(path, given, |rest, count| rest.iter().map(|(i, p)| open_shard(p, *i, count)).collect())
    }
}

#[cfg(feature = "mmap")]
impl<S: Source> ShardedGguf<S> {
    /// The model that the shard `given` (read from `path`) belongs to, as [`ShardedGguf::open`]
    /// describes: its split keys and name say which shards there are, `open_rest` reads the
    /// others (`(0-based number, path)` in order, and the shard count; it returns them in that
    /// order), and [`from_shards`](Self::from_shards) checks them all.
    fn assemble(
        path: &Path,
        given: Gguf<S>,
        open_rest: impl FnOnce(&[(u16, PathBuf)], u16) -> Result<Vec<Gguf<S>>>,
    ) -> Result<Self> {
        let count = int_key(&given, SPLIT_COUNT);
        let count = match count {
            None | Some(0) | Some(1) => return Self::from_shards(vec![(path.to_path_buf(), given)], 1),
            Some(c) => u16::try_from(c).map_err(|_| ShardError::Mismatch {
                path: path.to_path_buf(),
                key: SPLIT_COUNT,
                expected: u64::from(u16::MAX),
                found: Some(c),
            })?,
        };
        let no = int_key(&given, SPLIT_NO);
        let Some(no) = no.and_then(|n| u16::try_from(n).ok()).filter(|&n| n < count) else {
            return Err(ShardError::Mismatch {
                path: path.to_path_buf(),
                key: SPLIT_NO,
                expected: u64::from(count).saturating_sub(1),
                found: no,
            }
            .into());
        };
        let bad_name = || {
            Error::from(ShardError::BadName {
                path: path.to_path_buf(),
                index: u32::from(no) + 1,
                count: u32::from(count),
            })
        };
        let (prefix, name_no, name_count) = parse_shard_path(path).ok_or_else(bad_name)?;
        if (name_no, name_count) != (no, count) {
            return Err(bad_name());
        }
        let rest: Vec<(u16, PathBuf)> =
            (0..count).filter(|&i| i != no).map(|i| (i, shard_path(&prefix, i, count))).collect();
        let mut others = open_rest(&rest, count)?.into_iter();
        let mut given = Some(given);
        let mut shards = Vec::with_capacity(usize::from(count));
        for i in 0..count {
            let p = shard_path(&prefix, i, count);
            let f = match (i == no).then(|| given.take()).flatten().or_else(|| others.next()) {
                Some(f) => f,
                // `open_rest` returned fewer shards than asked: the first one it left out is missing.
                None => {
                    return Err(ShardError::Missing { path: p, index: u32::from(i) + 1, count: u32::from(count) }.into())
                }
            };
            shards.push((p, f));
        }
        Self::from_shards(shards, count)
    }

    /// Checks the split keys of each shard (when `count > 1`) and indexes the tensors.
    fn from_shards(shards: Vec<(PathBuf, Gguf<S>)>, count: u16) -> Result<Self> {
        let mut order = Vec::new();
        let mut by_name: HashMap<Vec<u8>, u32> = HashMap::new();
        let endian = shards.first().map(|(_, f)| f.endian());
        for (s, (path, f)) in shards.iter().enumerate() {
            if Some(f.endian()) != endian {
                return Err(ShardError::ByteOrder { path: path.clone(), endian: f.endian().name() }.into());
            }
            if count > 1 {
                for (key, want) in [(SPLIT_NO, s as u64), (SPLIT_COUNT, u64::from(count))] {
                    let found = int_key(f, key);
                    if found.and_then(|v| u64::try_from(v).ok()) != Some(want) {
                        return Err(ShardError::Mismatch { path: path.clone(), key, expected: want, found }.into());
                    }
                }
            }
            for (i, t) in f.tensors().enumerate() {
                let pos = order.len() as u32;
                if let Some(&prev) = by_name.get(t.name.as_bytes()) {
                    let first = order
                        .get(prev as usize)
                        .and_then(|&(ps, _): &(u32, u32)| shards.get(ps as usize))
                        .map(|(p, _)| p.clone())
                        .unwrap_or_default();
                    return Err(ShardError::TensorInTwoShards {
                        name: t.name.to_string(),
                        first,
                        second: path.clone(),
                    }
                    .into());
                }
                by_name.insert(t.name.as_bytes().to_vec(), pos);
                order.push((s as u32, i as u32));
            }
        }
        let found = order.len() as u64;
        for (s, (path, f)) in shards.iter().enumerate() {
            match int_key(f, SPLIT_TENSORS_COUNT) {
                Some(declared) if u64::try_from(declared).ok() != Some(found) => {
                    return Err(ShardError::TensorCount { path: path.clone(), declared, found }.into())
                }
                None if s == 0 && count > 1 => {
                    return Err(ShardError::Mismatch {
                        path: path.clone(),
                        key: SPLIT_TENSORS_COUNT,
                        expected: found,
                        found: None,
                    }
                    .into())
                }
                _ => {}
            }
        }
        Ok(ShardedGguf { shards, order, by_name })
    }

    /// The number of shards (1 for an unsplit file).
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// The paths of the shards, in order (for a model read with `ShardedGguf::from_url`, their
    /// URLs as given, `hf://` ones unresolved).
    pub fn shard_paths(&self) -> impl ExactSizeIterator<Item = &Path> + '_ {
        self.shards.iter().map(|(p, _)| p.as_path())
    }

    /// Shard `index` (0-based) as a file of its own, split keys included.
    pub fn shard(&self, index: usize) -> Option<&Gguf<S>> {
        self.shards.get(index).map(|(_, f)| f)
    }

    pub(crate) fn first(&self) -> Option<&Gguf<S>> {
        self.shard(0)
    }

    /// The model's metadata: the first shard's key/value pairs in file order, without the split
    /// keys (`split.no`, `split.count`, `split.tensors.count`), so that it is the metadata of the
    /// model as a single file. [`ShardedGguf::shard`]`(0)` shows them.
    pub fn metadata(&self) -> impl Iterator<Item = Kv<'_>> + '_ {
        self.first().into_iter().flat_map(|f| f.metadata()).filter(|kv| !kv.key.to_str().is_ok_and(is_split_key))
    }

    /// The value of `key` in [`metadata`](Self::metadata) (never a split key); `key` as for
    /// [`Gguf::get`] (a `&str`, or the bytes of a key that is not UTF-8; compared as bytes).
    pub fn get(&self, key: impl AsRef<[u8]>) -> Option<ValueRef<'_>> {
        let key = key.as_ref();
        if std::str::from_utf8(key).is_ok_and(is_split_key) {
            return None;
        }
        self.first()?.get(key)
    }

    /// The format version of the first shard.
    pub fn version(&self) -> u32 {
        self.first().map_or(3, |f| f.version())
    }

    /// The number of tensors in all shards.
    pub fn tensor_count(&self) -> usize {
        self.order.len()
    }

    fn at(&self, pos: usize) -> Option<ShardTensor<'_>> {
        let &(s, i) = self.order.get(pos)?;
        let info = self.shards.get(s as usize)?.1.tensor_at(i as usize)?;
        Some(ShardTensor { shard: s as usize, info })
    }

    /// Every tensor with its shard, in model order (shard by shard, each in file order).
    pub fn tensors(&self) -> impl Iterator<Item = ShardTensor<'_>> + '_ {
        // `at` cannot fail for positions of `order`; filter_map keeps indexing out of it.
        (0..self.order.len()).filter_map(move |p| self.at(p))
    }

    /// The tensor named `name` with its shard; `name` as for [`Gguf::tensor`] (compared as bytes).
    pub fn tensor(&self, name: impl AsRef<[u8]>) -> Option<ShardTensor<'_>> {
        self.at(*self.by_name.get(name.as_ref())? as usize)
    }

    /// The stored bytes of a tensor (in its shard's byte order), borrowed from the mapping.
    ///
    /// # Errors
    /// [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded) for a `ShardTensor` that is
    /// not from this model, or for any tensor of a model read with `ShardedGguf::from_url`
    /// (metadata only).
    pub fn tensor_data(&self, t: &ShardTensor<'_>) -> Result<&[u8]> {
        let f = self.shard(t.shard).ok_or_else(|| Error::data_not_loaded(t.info.name))?;
        f.tensor_data(&t.info)
    }
}

#[cfg(feature = "mmap")]
impl<S: Source> TensorSource for ShardedGguf<S> {
    fn tensor_count(&self) -> usize {
        self.order.len()
    }

    fn tensor_infos(&self) -> Box<dyn Iterator<Item = TensorInfo<'_>> + '_> {
        Box::new((0..self.order.len()).filter_map(move |p| self.at(p).map(|t| t.info)))
    }

    fn tensor_info(&self, name: &str) -> Option<TensorInfo<'_>> {
        self.tensor(name).map(|t| t.info)
    }

    fn tensor_bytes(&self, name: &str) -> Result<(TensorInfo<'_>, &[u8])> {
        let t = self.tensor(name).ok_or_else(|| Error::not_found("tensor", name))?;
        Ok((t.info, self.tensor_data(&t)?))
    }
}

/// How many shards of a remote model [`ShardedGguf::from_url`] reads at once.
#[cfg(all(feature = "mmap", feature = "remote"))]
pub const PARALLEL_SHARD_FETCHES: usize = 8;

#[cfg(all(feature = "mmap", feature = "remote"))]
impl ShardedGguf<super::MetadataOnly> {
    /// Reads the metadata and tensor infos of a remote model, split or not, as
    /// [`ShardedGguf::open`] reads a local one: `url` (`http://`, `https://` or
    /// `hf://OWNER/REPO[@REVISION]/PATH`) names any of its shards, `…/NAME-00002-of-00004.gguf`,
    /// or an unsplit file. That file is read first ([`Gguf::from_url`]); if its `split.count` is
    /// above 1 its name must follow the shard pattern, and the other shards' URLs are the same
    /// URL with the other numbers (`NAME-0000i-of-00004.gguf`, as huggingface.js's
    /// `ggufAllShards` derives them). Those are read in parallel, [`PARALLEL_SHARD_FETCHES`] at
    /// a time, and every shard is checked as `open` checks them. No tensor data is fetched:
    /// [`tensor_data`](Self::tensor_data) gives [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded).
    /// [`shard_paths`](Self::shard_paths) gives the shards' URLs. Cargo features `remote` and
    /// `mmap`.
    ///
    /// ```no_run
    /// use gguf_serde::ShardedGguf;
    /// use gguf_serde::container::remote::RemoteOptions;
    ///
    /// let url = "hf://OWNER/REPO/model-Q8_0-00001-of-00003.gguf";
    /// let (model, stats) = ShardedGguf::from_url(url, &RemoteOptions::default())?;
    /// let fetched: u64 = stats.iter().map(|s| s.bytes_fetched).sum();
    /// println!("{} tensors in {} shards, {fetched} bytes fetched", model.tensor_count(), model.shard_count());
    /// # Ok::<(), gguf_serde::Error>(())
    /// ```
    ///
    /// Returns the model and what reading each shard cost, in shard order.
    ///
    /// # Errors
    /// For the URL given, what [`Gguf::from_url`] returns. For the other shards, what
    /// [`ShardedGguf::open`] returns, each naming the shard's URL: [`ShardError::Missing`] for a
    /// shard the server answers with `404 Not Found` or `410 Gone`; for any other failure of the
    /// server, [`Error::Io`](crate::Error) wrapping a [`RemoteError`](super::remote::RemoteError)
    /// (see `RemoteError::find`), with [`Error::shard`] naming the shard; an invalid shard's
    /// error with [`Error::shard`] naming it; [`ShardError::Mismatch`] for a shard of another
    /// split; [`ShardError::BadName`] for a URL whose file name does not say which shard its
    /// split keys say it is.
    pub fn from_url(
        url: &str,
        options: &super::remote::RemoteOptions,
    ) -> Result<(Self, Vec<super::remote::RemoteStats>)> {
        use std::sync::Mutex;
        let fetch = |u: &str, index: u16, count: u16| {
            Gguf::from_url(u, options).map_err(|e| {
                let gone = matches!(
                    super::remote::RemoteError::find(&e),
                    Some(super::remote::RemoteError::Status { status: 404 | 410, .. })
                );
                if gone {
                    Error::from(ShardError::Missing {
                        path: PathBuf::from(u),
                        index: u32::from(index) + 1,
                        count: u32::from(count),
                    })
                } else {
                    e.in_shard(Path::new(u))
                }
            })
        };
        let (given_no, given_count) = parse_shard_path(url).map_or((0, 1), |(_, no, c)| (no, c));
        // The URL given is read as `Gguf::from_url` reads it: its errors name it already.
        let (given, given_stats) = Gguf::from_url(url, options)?;
        let stats = Mutex::new(vec![None; usize::from(given_count.max(1))]);
        let put = |i: u16, s: super::remote::RemoteStats| {
            if let Some(slot) = stats.lock().ok().as_mut().and_then(|v| v.get_mut(usize::from(i))) {
                *slot = Some(s);
            }
        };
        put(given_no, given_stats.clone());
        let model = Self::assemble(Path::new(url), given, |rest, count| {
            let results: Vec<Mutex<Option<Result<Gguf<super::MetadataOnly>>>>> =
                rest.iter().map(|_| Mutex::new(None)).collect();
            let next = std::sync::atomic::AtomicUsize::new(0);
            let work = || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let (Some((no, path)), Some(slot)) = (rest.get(i), results.get(i)) else { break };
                let r = fetch(&path.to_string_lossy(), *no, count).map(|(f, s)| {
                    put(*no, s);
                    f
                });
                if let Ok(mut g) = slot.lock() {
                    *g = Some(r);
                }
            };
            std::thread::scope(|scope| {
                for _ in 0..rest.len().min(PARALLEL_SHARD_FETCHES) {
                    // A thread that cannot be started leaves its share to the others, or to the
                    // calling thread below.
                    let _ = std::thread::Builder::new().spawn_scoped(scope, work);
                }
            });
            work();
            // In shard order, so that the error reported is the first shard's that failed.
            results
                .into_iter()
                .map(|m| m.into_inner().ok().flatten())
                .zip(rest)
                .map(|(r, (i, p))| {
                    r.unwrap_or_else(|| {
                        Err(ShardError::Missing { path: p.clone(), index: u32::from(*i) + 1, count: u32::from(count) }
                            .into())
                    })
                })
                .collect()
        })?;
        let stats = stats.into_inner().unwrap_or_default();
        // Shards of a model whose keys say it is not split are not read: one file, one entry.
        let stats: Vec<_> =
            if model.shard_count() == 1 { vec![given_stats] } else { stats.into_iter().flatten().collect() };
        Ok((model, stats))
    }
}
