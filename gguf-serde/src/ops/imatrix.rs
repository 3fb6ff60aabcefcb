//! Importance matrices as `llama-quantize --imatrix` reads them: [`Imatrix`], read from the GGUF
//! format `llama-imatrix` writes by default or from its legacy `.dat` format, then given to
//! [`requantize`](super::requant::requantize) through [`QuantizeParams::imatrix`](super::quantize::QuantizeParams::imatrix).
//!
//! The facts follow llama.cpp commit `0c1e57098` ([`LLAMA_CPP_COMMIT`](super::quantize::LLAMA_CPP_COMMIT)):
//! `common/imatrix-loader.cpp` (`common_imatrix_load`), `tools/quantize/quantize.cpp`
//! (`load_imatrix`, `prepare_imatrix`, the `quantize.imatrix.*` keys) and `src/llama-quant.cpp`
//! (how each tensor's slice is found and used).
//!
//! **GGUF format** (a file starting with the magic `GGUF`): for each tensor `NAME` of the model,
//! two F32 tensors, `NAME.in_sum2` (stored `ne` `[n_per_row, n_expert]`: the sums of squared
//! activations per column, one row per expert) and `NAME.counts` (`ne` `[1, n_expert]`: how many
//! activations each expert's row summed); the keys `imatrix.datasets` (array of strings),
//! `imatrix.chunk_count` and `imatrix.chunk_size` (UINT32), all three required. Other tensors are
//! ignored. A count is rounded to the nearest integer (C's `lround`); the weights of expert `j`
//! are `in_sum2 / count` (f32), or all 1 where that expert's count is 0.
//!
//! **Legacy `.dat` format** (anything else), little-endian: `i32` entry count (≥ 1); per entry
//! `i32` name length, the name bytes (cut at the first NUL), `i32` call count `ncall`, `i32`
//! value count (≥ 1), that many `f32` (already averaged and multiplied by `ncall`); then,
//! optionally, `i32` chunk count, `i32` dataset-name length and the dataset name (bytes after it
//! are ignored, as llama.cpp does). The weights are `value / ncall`.
//!
//! Entry names are bytes, as llama.cpp keeps them (`std::string`): a name that is not UTF-8 is
//! kept as it is and matches the tensor of the same bytes, as in llama-quantize. Errors show such
//! a name escaped, as [`GgufStr`]'s `Display` does.
//!
//! Stricter than llama.cpp (which crashes, reads garbage or silently uses weights of 1 on these):
//! a truncated `.dat` (its optional trailer included), negative lengths, counts that are NaN,
//! infinite or negative, count tensors that do not split the sums
//! into whole slices, entries whose counts are all zero (a `.dat` `ncall` ≤ 0; llama-imatrix
//! writes neither), and non-finite weights anywhere in the file (llama-quantize refuses them only
//! in the entries it keeps) are each a [`QuantizeError::Imatrix`] with its [`ImatrixProblem`].
//! A GGUF file that fails to parse gives the reader's [`FormatError`](crate::FormatError)
//! (llama.cpp then tries it as a `.dat` file, which fails).

use std::collections::BTreeMap;
use std::path::Path;

use super::kv_override::{KvOverride, KvOverrideValue};
use crate::container::wire::{num, num_at, MAGIC};
use crate::container::{Gguf, Source, ValueRef};
use crate::error::{Error, ImatrixProblem, QuantizeError, Result};
use crate::format::{Endian, GgmlType, GgufStr};

/// The key llama-quantize writes the imatrix file name to (as given on its command line).
pub const KEY_FILE: &str = "quantize.imatrix.file";
/// The key llama-quantize writes the first dataset name to.
pub const KEY_DATASET: &str = "quantize.imatrix.dataset";
/// The key llama-quantize writes the number of entries used to.
pub const KEY_ENTRIES_COUNT: &str = "quantize.imatrix.entries_count";
/// The key llama-quantize writes the chunk count to.
pub const KEY_CHUNKS_COUNT: &str = "quantize.imatrix.chunks_count";

/// Which file format an [`Imatrix`] was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImatrixFormat {
    /// The GGUF format (`NAME.in_sum2`, `NAME.counts`, `imatrix.*` keys).
    Gguf,
    /// The legacy `.dat` format.
    Legacy,
}

/// An importance matrix as llama-quantize holds it after loading: per tensor name, the weights
/// its quantizers take (`quant_weights`), plus what the `quantize.imatrix.*` keys record.
#[derive(Clone, Debug, PartialEq)]
pub struct Imatrix {
    /// The file name written as `quantize.imatrix.file` (llama-quantize writes its argument as
    /// given, cut to 127 bytes): the bytes of the path given to [`Imatrix::open`] (UTF-8 or
    /// not).
    pub file: Vec<u8>,
    /// Tensor name (e.g. `blk.0.attn_q.weight`), as bytes (UTF-8 or not, as llama.cpp keeps
    /// it) → weights, `ne[0] × ne[2]` values: one per column for each expert (expert-major:
    /// expert `j`'s columns at `j × ne[0]..`). Each value is finite.
    pub entries: BTreeMap<Vec<u8>, Vec<f32>>,
    /// The dataset names (`imatrix.datasets`; a `.dat` file has at most one), as bytes (UTF-8
    /// or not, as llama-quantize copies them).
    pub datasets: Vec<Vec<u8>>,
    /// The number of chunks it was computed on (`imatrix.chunk_count`; 0 if unknown).
    pub chunk_count: i64,
    /// Tokens per chunk (`imatrix.chunk_size`; 0 for a `.dat` file).
    pub chunk_size: u32,
    /// The format it was read from.
    pub format: ImatrixFormat,
}

fn bad(problem: ImatrixProblem) -> Error {
    Error::from(QuantizeError::Imatrix { problem })
}

impl Imatrix {
    /// Reads the importance matrix at `path`: GGUF if the file starts with `GGUF`, else the
    /// legacy `.dat` format (see the [module docs](self)). [`Imatrix::file`] is `path` as given
    /// (lossily as UTF-8).
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if it cannot be read; the GGUF reader's errors;
    /// [`QuantizeError::Imatrix`] for everything the module docs list.
    pub fn open(path: impl AsRef<Path>) -> Result<Imatrix> {
        let path = path.as_ref();
        let file = path.as_os_str().as_encoded_bytes().to_vec();
        let bytes =
            std::fs::read(path).map_err(|e| Error::io(format!("reading {}", crate::format::shown_path(&path)), e))?;
        Imatrix::from_bytes(&bytes, file)
    }

    /// [`Imatrix::open`] for a file held in memory; `file` becomes [`Imatrix::file`].
    ///
    /// # Errors
    /// As [`Imatrix::open`], without I/O.
    pub fn from_bytes(bytes: &[u8], file: impl Into<Vec<u8>>) -> Result<Imatrix> {
        if bytes.starts_with(&MAGIC) {
            Imatrix::from_gguf(&Gguf::from_slice(bytes)?, file)
        } else {
            Imatrix::from_legacy(bytes, file)
        }
    }

    /// Reads the GGUF format from an opened file (see the [module docs](self)).
    ///
    /// # Errors
    /// [`QuantizeError::Imatrix`]: [`NoEntries`](ImatrixProblem::NoEntries) without tensors,
    /// [`MissingMetadata`](ImatrixProblem::MissingMetadata), [`KeyType`](ImatrixProblem::KeyType),
    /// [`Unpaired`](ImatrixProblem::Unpaired), [`NotF32`](ImatrixProblem::NotF32),
    /// [`CountsLength`](ImatrixProblem::CountsLength), [`BadCount`](ImatrixProblem::BadCount),
    /// [`ZeroCounts`](ImatrixProblem::ZeroCounts), [`NonFinite`](ImatrixProblem::NonFinite); the
    /// reader's [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded) for tensor data
    /// outside the file.
    pub fn from_gguf<S: Source>(g: &Gguf<S>, file: impl Into<Vec<u8>>) -> Result<Imatrix> {
        if g.tensors().len() == 0 {
            return Err(bad(ImatrixProblem::NoEntries));
        }
        let (datasets_v, count_v, size_v) =
            (g.get("imatrix.datasets"), g.get("imatrix.chunk_count"), g.get("imatrix.chunk_size"));
        let mut datasets = Vec::new();
        if let Some(strings) = datasets_v.as_ref().and_then(|v| v.as_array()).and_then(|a| a.strings()) {
            datasets.extend(strings.map(|s| s.as_bytes().to_vec()));
        }
        let (Some(count_v), Some(size_v), true) = (count_v, size_v, datasets_v.is_some()) else {
            return Err(bad(ImatrixProblem::MissingMetadata));
        };
        let u32_of = |key: &str, v: ValueRef<'_>| match v {
            ValueRef::U32(n) => Ok(n),
            other => Err(bad(ImatrixProblem::KeyType { key: key.into(), found: other.type_name(), expected: "u32" })),
        };
        let chunk_count = u32_of("imatrix.chunk_count", count_v)?;
        let chunk_size = u32_of("imatrix.chunk_size", size_v)?;

        // Entries are named by bytes, as llama.cpp's `std::string` keeps them.
        let mut pairs: BTreeMap<&[u8], (Option<_>, Option<_>)> = BTreeMap::new();
        for t in g.tensors() {
            let name = t.name.as_bytes();
            if let Some(name) = name.strip_suffix(b".in_sum2") {
                pairs.entry(name).or_default().0 = Some(t);
            } else if let Some(name) = name.strip_suffix(b".counts") {
                pairs.entry(name).or_default().1 = Some(t);
            }
        }
        let mut entries = BTreeMap::new();
        for (raw, pair) in pairs {
            // For errors: escaped as `GgufStr` shows it.
            let shown = GgufStr::from_bytes(raw).to_string();
            let name = shown.as_str();
            let (Some(sums), Some(counts)) = pair else {
                return Err(bad(ImatrixProblem::Unpaired { entry: name.into() }));
            };
            for t in [&sums, &counts] {
                if t.dtype != GgmlType::F32 {
                    return Err(bad(ImatrixProblem::NotF32 { tensor: t.name.to_string(), dtype: t.dtype }));
                }
            }
            let sums_v = f32s(g.tensor_data(&sums)?, g.endian());
            let counts_v = f32s(g.tensor_data(&counts)?, g.endian());
            let (nval, ncounts) = (sums_v.len(), counts_v.len());
            if ncounts == 0 || nval < ncounts || !nval.is_multiple_of(ncounts) {
                return Err(bad(ImatrixProblem::CountsLength {
                    entry: name.into(),
                    sums: nval as u64,
                    counts: ncounts as u64,
                }));
            }
            let mut ints = Vec::with_capacity(ncounts);
            for (i, &c) in counts_v.iter().enumerate() {
                // C's lround: half away from zero, as f32::round; refused where lround is undefined.
                let r = c.round();
                if !(0.0..9.2e18).contains(&r) {
                    return Err(bad(ImatrixProblem::BadCount { entry: name.into(), index: i as u64, value: c.into() }));
                }
                ints.push(r as i64);
            }
            if ints.iter().all(|&c| c == 0) {
                return Err(bad(ImatrixProblem::ZeroCounts { entry: name.into() }));
            }
            check_finite(name, &sums_v)?;
            let ne0 = nval / ncounts;
            let mut w = vec![1f32; nval];
            for ((slice, sums), &count) in w.chunks_mut(ne0).zip(sums_v.chunks(ne0)).zip(&ints) {
                let count = count as f32;
                if count > 0.0 {
                    for (o, &s) in slice.iter_mut().zip(sums) {
                        *o = s / count;
                    }
                }
            }
            check_finite(name, &w)?;
            entries.insert(raw.to_vec(), w);
        }
        Ok(Imatrix {
            file: file.into(),
            entries,
            datasets,
            chunk_count: i64::from(chunk_count),
            chunk_size,
            format: ImatrixFormat::Gguf,
        })
    }

    /// Reads the legacy `.dat` format (see the [module docs](self)). A name given twice keeps
    /// its last entry, as llama.cpp does.
    ///
    /// # Errors
    /// [`QuantizeError::Imatrix`]: [`Truncated`](ImatrixProblem::Truncated),
    /// [`NoEntries`](ImatrixProblem::NoEntries) (an entry count of 0),
    /// [`BadLength`](ImatrixProblem::BadLength) (a negative entry count or name length, a value
    /// count below 1), [`BadCount`](ImatrixProblem::BadCount) (a
    /// negative `ncall`), [`ZeroCounts`](ImatrixProblem::ZeroCounts) (`ncall` = 0),
    /// [`NonFinite`](ImatrixProblem::NonFinite).
    pub fn from_legacy(bytes: &[u8], file: impl Into<Vec<u8>>) -> Result<Imatrix> {
        let mut r = Reader { bytes, at: 0 };
        let n_entries = r.i32("entry count")?;
        if n_entries < 0 {
            return Err(bad(ImatrixProblem::BadLength { item: "entry count".into(), len: n_entries.into() }));
        }
        if n_entries == 0 {
            return Err(bad(ImatrixProblem::NoEntries));
        }
        // Not this format at all (a text file, say): more entries than the file has bytes, and a
        // first name longer than the file. A truncated .dat keeps a plausible name length.
        let first_name_len = num_at::<i32>(bytes, 4, Endian::Little);
        let len = bytes.len() as u64;
        if n_entries as u64 > len && first_name_len.is_none_or(|n| n < 0 || n as u64 > len) {
            return Err(bad(ImatrixProblem::NotImatrix { count: n_entries.into(), len }));
        }
        let mut entries = BTreeMap::new();
        for i in 1..=n_entries as u64 {
            let what = format!("name of entry {i}");
            let len = r.i32(&what)?;
            let len = usize::try_from(len)
                .map_err(|_| bad(ImatrixProblem::BadLength { item: what.clone(), len: len.into() }))?;
            let raw = r.take(len, &what)?;
            let raw = raw.split(|&b| b == 0).next().unwrap_or_default();
            let name = GgufStr::from_bytes(raw).to_string();
            let ncall = r.i32(&format!("call count of entry {i}"))?;
            let what = format!("values of entry {i}");
            let nval = r.i32(&what)?;
            if nval < 1 {
                return Err(bad(ImatrixProblem::BadLength { item: what, len: nval.into() }));
            }
            let sums = f32s(r.take(nval as usize * 4, &what)?, Endian::Little);
            if ncall < 0 {
                return Err(bad(ImatrixProblem::BadCount { entry: name, index: 0, value: ncall.into() }));
            }
            if ncall == 0 {
                return Err(bad(ImatrixProblem::ZeroCounts { entry: name }));
            }
            check_finite(&name, &sums)?;
            let d = ncall as f32;
            let w: Vec<f32> = sums.iter().map(|&s| s / d).collect();
            check_finite(&name, &w)?;
            entries.insert(raw.to_vec(), w);
        }
        let (mut chunk_count, mut datasets) = (0i64, Vec::new());
        if r.at < bytes.len() {
            chunk_count = r.i32("chunk count")?.into();
            if r.at < bytes.len() {
                let len = r.i32("dataset name length")?;
                if len > 0 {
                    let raw = r.take(len as usize, "dataset name")?;
                    let raw = raw.split(|&b| b == 0).next().unwrap_or_default();
                    datasets.push(raw.to_vec());
                }
            }
        }
        Ok(Imatrix { file: file.into(), entries, datasets, chunk_count, chunk_size: 0, format: ImatrixFormat::Legacy })
    }

    /// `--exclude-weights`: drops every entry whose name contains one of `patterns` (plain
    /// substrings, not globs, matched as bytes as llama-quantize's `std::string::find`).
    pub fn exclude(&mut self, patterns: &[impl AsRef<[u8]>]) {
        self.entries.retain(|name, _| !patterns.iter().any(|p| contains(name, p.as_ref())));
    }

    /// `--include-weights`: keeps only the entries whose name contains one of `patterns`
    /// (substrings, matched as bytes); with no patterns, keeps everything.
    pub fn include_only(&mut self, patterns: &[impl AsRef<[u8]>]) {
        if !patterns.is_empty() {
            self.entries.retain(|name, _| patterns.iter().any(|p| contains(name, p.as_ref())));
        }
    }

    /// The weights of tensor `name` (its bytes: a `&str`, or the bytes of a name that is not
    /// UTF-8) for a tensor of stored dims `ne`, as llama-quantize looks them up: `None` if there
    /// is no entry, or if the entry's length is not `ne[0] × ne[2]` for `token_embd.weight` /
    /// `per_layer_token_embd.weight` (llama-quantize warns and quantizes those without).
    ///
    /// # Errors
    /// [`ImatrixProblem::SizeMismatch`] for another tensor whose entry has the wrong length.
    pub fn weights_for(&self, name: impl AsRef<[u8]>, ne: &[u64]) -> Result<Option<&[f32]>> {
        let name = name.as_ref();
        let Some(w) = self.entries.get(name) else { return Ok(None) };
        let ne0 = ne.first().copied().unwrap_or(1);
        let ne2 = ne.get(2).copied().unwrap_or(1);
        let expected = ne0.saturating_mul(ne2);
        if w.len() as u64 == expected {
            return Ok(Some(w));
        }
        if matches!(name, b"token_embd.weight" | b"per_layer_token_embd.weight") {
            return Ok(None);
        }
        let tensor = GgufStr::from_bytes(name).to_string();
        Err(bad(ImatrixProblem::SizeMismatch { tensor, found: w.len() as u64, expected }))
    }

    /// The `--override-kv` entries llama-quantize appends for this matrix, after the user's, in
    /// its order: `quantize.imatrix.file` (str: [`Imatrix::file`]), `quantize.imatrix.dataset`
    /// (str: the first dataset, if any), `quantize.imatrix.entries_count` (int: the entries
    /// left after `--include-weights`/`--exclude-weights`), `quantize.imatrix.chunks_count`
    /// (int: [`Imatrix::chunk_count`], if above 0). Strings are their bytes, cut at a NUL byte
    /// and to 127 bytes (even inside a character), as llama-quantize's `strncpy` cuts them. Ints are written
    /// as UINT32 ([`KvOverride::to_value`]). Empty when no entry is left: llama-quantize then
    /// runs as without `--imatrix`.
    pub fn kv_overrides(&self) -> Vec<KvOverride> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let s = |key: &str, v: &[u8]| KvOverride { key: key.into(), value: KvOverrideValue::Str(cut(v, 127).to_vec()) };
        let mut v = vec![s(KEY_FILE, &self.file)];
        if let Some(d) = self.datasets.first() {
            v.push(s(KEY_DATASET, d));
        }
        v.push(KvOverride { key: KEY_ENTRIES_COUNT.into(), value: KvOverrideValue::Int(self.entries.len() as i64) });
        if self.chunk_count > 0 {
            v.push(KvOverride { key: KEY_CHUNKS_COUNT.into(), value: KvOverrideValue::Int(self.chunk_count) });
        }
        v
    }
}

/// Whether `needle` occurs in `haystack` (an empty needle does, as `std::string::find("")`).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// `s` cut as llama-quantize's `strncpy` into its 128-byte `val_str` cuts it: at the first NUL
/// byte, and to at most `n` bytes (even inside a UTF-8 character).
fn cut(s: &[u8], n: usize) -> &[u8] {
    let s = s.split(|&b| b == 0).next().unwrap_or_default();
    s.get(..s.len().min(n)).unwrap_or_default()
}

fn check_finite(entry: &str, v: &[f32]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(bad(ImatrixProblem::NonFinite { entry: entry.into(), index: i as u64, value: v[i] })),
        None => Ok(()),
    }
}

fn f32s(bytes: &[u8], endian: Endian) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| num::<f32>(c, endian)).collect()
}

/// A bounds-checked cursor over a `.dat` file.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, item: &str) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(bad(ImatrixProblem::Truncated { item: item.into(), offset: self.at as u64, needed: n as u64 }));
        };
        let s = self.bytes.get(self.at..end).unwrap_or_default();
        self.at = end;
        Ok(s)
    }

    fn i32(&mut self, item: &str) -> Result<i32> {
        Ok(num(self.take(4, item)?, Endian::Little))
    }
}
