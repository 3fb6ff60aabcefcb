//! The validating parser: bytes → [`Layout`], an index of offsets into the bytes.
//!
//! Follows ggml `docs/gguf.md` ("File Structure") and checks everything ggml's `gguf.cpp`
//! checks, plus what it misses (wrapping element counts, data past the end of the file, bool
//! bytes other than 0/1, UTF-8). Every count is compared with the bytes left in the *file*
//! before anything is allocated for it.

use std::collections::HashSet;
use std::ops::Range;

use super::value::{ArrayRef, ValueRef};
use crate::error::{AlignmentProblem, FormatError, Item, Result};
use crate::format::{Endian, MAX_DEPTH, MAX_DIMS, MAX_TENSOR_NAME};
use crate::format::{GgmlType, REMOVED_TYPE_IDS};
use crate::format::{ValueType, DEFAULT_ALIGNMENT};

/// A decoded value whose strings and arrays are byte ranges of the source.
#[derive(Clone, Debug)]
pub(crate) enum RawValue {
    Scalar(ValueRef<'static>),
    String(Range<usize>),
    Array { elem: ValueType, len: u64, bytes: Range<usize> },
}

#[derive(Clone, Debug)]
pub(crate) struct KvEntry {
    pub key: Range<usize>,
    pub value: RawValue,
    /// Offset of the key/value pair (its key length) in the file.
    pub offset: u64,
    /// Offset of the value (after the type id) in the file.
    pub value_offset: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct TensorEntry {
    pub name: Range<usize>,
    pub dtype: GgmlType,
    pub ne: [u64; MAX_DIMS],
    pub n_dims: u8,
    /// Relative to the data section.
    pub offset: u64,
    pub nbytes: u64,
    pub n_elements: u64,
    /// Offset of the tensor info in the file.
    pub info_offset: u64,
}

/// The parsed index of a GGUF file: header fields, KV entries and tensor infos as ranges into
/// the bytes they were parsed from.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub version: u32,
    pub endian: Endian,
    pub alignment: u32,
    pub kvs: Vec<KvEntry>,
    pub tensors: Vec<TensorEntry>,
    /// Tensor indices sorted by name, for lookups.
    pub tensors_by_name: Vec<u32>,
    /// End of the tensor infos (start of the padding before the data section).
    pub infos_end: u64,
    /// Absolute start of the data section: `infos_end` rounded up to the alignment.
    pub data_offset: u64,
    /// The file's length in bytes.
    pub file_len: u64,
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    file_len: u64,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> u64 {
        self.file_len.saturating_sub(self.pos as u64)
    }

    /// Takes `n` bytes. Past the end of the file this is `Truncated`; past the end of `data`
    /// but inside the file (a metadata-only buffer that must grow) it is also `Truncated`, with
    /// `available >= needed`, which [`super::Gguf::from_reader`] recognizes.
    fn take(&mut self, n: u64, item: Item, key: Option<&str>) -> Result<&'a [u8]> {
        let start = self.pos;
        let end = usize::try_from(n).ok().and_then(|n| start.checked_add(n));
        match end.and_then(|end| self.data.get(start..end)) {
            Some(bytes) => {
                self.pos += bytes.len();
                Ok(bytes)
            }
            None => Err(FormatError::Truncated {
                item,
                owner: key.map(str::to_owned),
                offset: start as u64,
                needed: n,
                available: self.remaining(),
            }
            .into()),
        }
    }

    fn array<const N: usize>(&mut self, item: Item, key: Option<&str>) -> Result<[u8; N]> {
        let b = self.take(N as u64, item, key)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        if self.endian == Endian::Big {
            out.reverse();
        }
        Ok(out)
    }

    fn u32(&mut self, item: Item, key: Option<&str>) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(item, key)?))
    }

    fn u64(&mut self, item: Item, key: Option<&str>) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(item, key)?))
    }

    /// Reads a `u64` length and checks it against the bytes left in the file.
    fn len(&mut self, item: Item, key: Option<&str>) -> Result<u64> {
        let at = self.pos as u64;
        let n = self.u64(item, key)?;
        if n > self.remaining() {
            return Err(FormatError::TooLong {
                item,
                owner: key.map(str::to_owned),
                offset: at,
                count: n,
                remaining: self.remaining(),
            }
            .into());
        }
        Ok(n)
    }

    /// A `u64`-length-prefixed UTF-8 string; returns its byte range.
    fn string(&mut self, item: Item, key: Option<&str>) -> Result<Range<usize>> {
        let n = self.len(item, key)?;
        let start = self.pos;
        let bytes = self.take(n, item, key)?;
        if std::str::from_utf8(bytes).is_err() {
            return Err(FormatError::InvalidUtf8 { item, key: key.map(str::to_owned), offset: start as u64 }.into());
        }
        Ok(start..self.pos)
    }

    fn str_at(&self, r: &Range<usize>) -> &'a str {
        self.data.get(r.clone()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default()
    }
}

/// Reads the magic and version; returns the version and byte order.
fn header(c: &mut Cursor<'_>) -> Result<(u32, Endian)> {
    let magic = c.data.get(..4.min(c.data.len())).unwrap_or_default();
    if magic != b"GGUF" {
        if magic.len() < 4 && c.file_len >= 4 {
            // A metadata buffer that is too short; let the reader grow it.
            c.take(4, Item::Header, None)?;
        }
        return Err(FormatError::BadMagic { found: magic.to_vec() }.into());
    }
    c.pos = 4;
    let raw = c.u32(Item::Header, None)?;
    let (version, endian) = Endian::detect(raw);
    c.endian = endian;
    if !(2..=3).contains(&version) {
        return Err(FormatError::UnsupportedVersion { version }.into());
    }
    Ok((version, endian))
}

/// Parses and validates everything before the tensor data. `data` holds at least the metadata
/// (or the whole file); `file_len` is the length of the whole file.
pub(crate) fn parse(data: &[u8], file_len: u64) -> Result<Layout> {
    let mut c = Cursor { data, pos: 0, file_len, endian: Endian::Little };
    let (version, endian) = header(&mut c)?;

    let at = c.pos as u64;
    let n_tensors = c.u64(Item::Header, None)?;
    let kv_at = c.pos as u64;
    let n_kv = c.u64(Item::Header, None)?;
    // Each key/value pair takes at least 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes;
    // each tensor info at least 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset).
    const MIN_KV: u64 = 14;
    const MIN_TENSOR: u64 = 24;
    if n_kv > c.remaining() / MIN_KV {
        return Err(FormatError::TooLong {
            item: Item::KvCount,
            owner: None,
            offset: kv_at,
            count: n_kv,
            remaining: c.remaining(),
        }
        .into());
    }
    if n_tensors > c.remaining().saturating_sub(n_kv * MIN_KV) / MIN_TENSOR {
        return Err(FormatError::TooLong {
            item: Item::TensorCount,
            owner: None,
            offset: at,
            count: n_tensors,
            remaining: c.remaining(),
        }
        .into());
    }

    // The counts passed the check above against the bytes left in the *file*, which for a model
    // includes its tensor data: a lying count in a 10 GB file could still reserve gigabytes (and
    // abort the process when the allocation fails). So reserve at most PREALLOC entries up front;
    // past that the tables grow with the entries really parsed, each of which took real bytes.
    const PREALLOC: u64 = 64;
    let mut kvs = Vec::with_capacity(n_kv.min(PREALLOC) as usize);
    let mut seen: HashSet<&str> = HashSet::with_capacity(n_kv.min(PREALLOC) as usize);
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..n_kv {
        let offset = c.pos as u64;
        let key_range = c.string(Item::Key, None)?;
        let key = c.str_at(&key_range);
        if key.is_empty() {
            return Err(FormatError::EmptyKey { offset }.into());
        }
        if !seen.insert(key) {
            return Err(FormatError::DuplicateKey { key: key.to_owned(), offset }.into());
        }
        let type_at = c.pos as u64;
        let type_id = c.u32(Item::Value, Some(key))?;
        let ty = ValueType::from_id(type_id).ok_or_else(|| FormatError::UnknownValueType {
            key: key.to_owned(),
            id: type_id,
            in_array: false,
            offset: type_at,
        })?;
        let value_offset = c.pos as u64;
        let value = value(&mut c, ty, key)?;
        if key == "general.alignment" {
            alignment = match value {
                RawValue::Scalar(ValueRef::U32(0)) => {
                    return Err(FormatError::BadAlignment { problem: AlignmentProblem::Zero, offset }.into())
                }
                RawValue::Scalar(ValueRef::U32(a)) if a.is_power_of_two() => a,
                RawValue::Scalar(ValueRef::U32(a)) => {
                    return Err(FormatError::BadAlignment { problem: AlignmentProblem::NotPowerOfTwo(a), offset }.into())
                }
                _ => {
                    return Err(
                        FormatError::BadAlignment { problem: AlignmentProblem::WrongType(ty.name()), offset }.into()
                    )
                }
            };
        }
        kvs.push(KvEntry { key: key_range, value, offset, value_offset });
    }
    drop(seen);

    let mut tensors = Vec::with_capacity(n_tensors.min(PREALLOC) as usize);
    for _ in 0..n_tensors {
        tensors.push(tensor_info(&mut c)?);
    }
    let infos_end = c.pos as u64;

    // Duplicate names: sort indices by name and compare neighbours.
    let mut by_name: Vec<u32> = (0..tensors.len() as u32).collect();
    let name_of = |i: u32| -> &[u8] {
        tensors.get(i as usize).and_then(|t: &TensorEntry| data.get(t.name.clone())).unwrap_or_default()
    };
    by_name.sort_unstable_by(|&a, &b| name_of(a).cmp(name_of(b)));
    for w in by_name.windows(2) {
        if let [a, b] = *w {
            if name_of(a) == name_of(b) {
                let later = a.max(b) as usize;
                let (name, offset) =
                    tensors.get(later).map(|t| (c.str_at(&t.name).to_owned(), t.info_offset)).unwrap_or_default();
                return Err(FormatError::DuplicateTensor { name, offset }.into());
            }
        }
    }

    let data_offset = align_up(infos_end, alignment).ok_or(FormatError::TooLong {
        item: Item::Header,
        owner: None,
        offset: infos_end,
        count: infos_end,
        remaining: 0,
    })?;

    // Offsets aligned, inside the file, not overlapping.
    let mut by_offset: Vec<u32> = (0..tensors.len() as u32).collect();
    by_offset.sort_unstable_by_key(|&i| tensors.get(i as usize).map(|t| t.offset));
    let mut prev: Option<(&TensorEntry, u64)> = None;
    for &i in &by_offset {
        let Some(t) = tensors.get(i as usize) else { continue };
        let name = || c.str_at(&t.name).to_owned();
        if t.offset % u64::from(alignment) != 0 {
            return Err(FormatError::MisalignedTensor { name: name(), relative_offset: t.offset, alignment }.into());
        }
        let start = data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(t.nbytes));
        match (start, end) {
            (Some(start), Some(end)) if end <= file_len => {
                if let Some((p, p_end)) = prev {
                    if start < p_end && t.nbytes > 0 {
                        return Err(FormatError::TensorsOverlap {
                            first: c.str_at(&p.name).to_owned(),
                            second: name(),
                            second_start: start,
                            first_end: p_end,
                        }
                        .into());
                    }
                }
                if prev.is_none_or(|(_, p_end)| end > p_end) {
                    prev = Some((t, end));
                }
            }
            (start, end) => {
                return Err(FormatError::TensorOutOfBounds {
                    name: name(),
                    start: start.unwrap_or(u64::MAX),
                    end: end.unwrap_or(u64::MAX),
                    file_len,
                }
                .into())
            }
        }
    }

    Ok(Layout { version, endian, alignment, kvs, tensors, tensors_by_name: by_name, infos_end, data_offset, file_len })
}

/// `x` rounded up to a multiple of `align` (a power of two).
pub(crate) fn align_up(x: u64, align: u32) -> Option<u64> {
    let a = u64::from(align);
    x.checked_add(a - 1).map(|v| v & !(a - 1))
}

fn value(c: &mut Cursor<'_>, ty: ValueType, key: &str) -> Result<RawValue> {
    Ok(match ty {
        ValueType::String => RawValue::String(c.string(Item::String, Some(key))?),
        ValueType::Array => {
            let (elem, len, bytes) = array(c, key, 1)?;
            RawValue::Array { elem, len, bytes }
        }
        t => RawValue::Scalar(scalar(c, t, key)?),
    })
}

fn scalar(c: &mut Cursor<'_>, t: ValueType, key: &str) -> Result<ValueRef<'static>> {
    let at = c.pos;
    let size = t.fixed_size().unwrap_or(1) as u64;
    let bytes = c.take(size, Item::Value, Some(key))?;
    if t == ValueType::Bool {
        if let Some(&byte) = bytes.first().filter(|&&b| b > 1) {
            return Err(FormatError::InvalidBool { key: key.to_owned(), byte, offset: at as u64 }.into());
        }
    }
    Ok(super::value::decode_fixed(t, bytes, c.endian))
}

/// Parses an array header and validates its elements; returns element type, count and the
/// byte range of the elements.
fn array(c: &mut Cursor<'_>, key: &str, depth: usize) -> Result<(ValueType, u64, Range<usize>)> {
    let at = c.pos as u64;
    if depth > MAX_DEPTH {
        return Err(FormatError::TooDeep { key: key.to_owned(), limit: MAX_DEPTH, offset: at }.into());
    }
    let id = c.u32(Item::Array, Some(key))?;
    let elem = ValueType::from_id(id).ok_or_else(|| FormatError::UnknownValueType {
        key: key.to_owned(),
        id,
        in_array: true,
        offset: at,
    })?;
    let count_at = c.pos as u64;
    let len = c.u64(Item::Array, Some(key))?;
    let too_long = |c: &Cursor<'_>| FormatError::TooLong {
        item: Item::Array,
        owner: Some(key.to_owned()),
        offset: count_at,
        count: len,
        remaining: c.remaining(),
    };
    if len > c.remaining() / elem.min_size() as u64 {
        return Err(too_long(c).into());
    }
    let start = c.pos;
    match elem.fixed_size() {
        Some(size) => {
            let bytes = c.take(len * size as u64, Item::Array, Some(key))?;
            if elem == ValueType::Bool {
                if let Some(i) = bytes.iter().position(|&b| b > 1) {
                    return Err(FormatError::InvalidBool {
                        key: key.to_owned(),
                        byte: bytes.get(i).copied().unwrap_or_default(),
                        offset: (start + i) as u64,
                    }
                    .into());
                }
            }
        }
        None if elem == ValueType::String => {
            if !string_array_fast(c, len) {
                c.pos = start;
                for _ in 0..len {
                    c.string(Item::String, Some(key))?;
                }
            }
        }
        None => {
            for _ in 0..len {
                array(c, key, depth + 1)?;
            }
        }
    }
    Ok((elem, len, start..c.pos))
}

/// Walks `len` strings of an array and validates them all at once; returns `false` (with
/// `c.pos` unspecified) when the fast path cannot decide, so the caller re-walks string by string
/// to report the precise error.
///
/// Each string is preceded by its 8-byte length. When every byte of every length is ASCII
/// (< 0x80), each string is delimited by ASCII bytes, so it starts and ends on character
/// boundaries of the whole region; then the whole region being valid UTF-8 implies every string
/// is. One `from_utf8` over the region replaces one call per string (262,144 in a Gemma
/// vocabulary).
fn string_array_fast(c: &mut Cursor<'_>, len: u64) -> bool {
    let start = c.pos;
    let data = c.data;
    let mut pos = start;
    for _ in 0..len {
        let Some(raw) = pos.checked_add(8).and_then(|end| data.get(pos..end)) else { return false };
        let mut b = [0u8; 8];
        b.copy_from_slice(raw);
        if u64::from_ne_bytes(b) & 0x8080_8080_8080_8080 != 0 {
            return false;
        }
        let n = match c.endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        };
        let next = usize::try_from(n).ok().and_then(|n| (pos + 8).checked_add(n));
        match next {
            Some(next) if next <= data.len() => pos = next,
            _ => return false,
        }
    }
    match data.get(start..pos) {
        // simdutf8: the same validation as std, several times faster on non-ASCII text.
        Some(region) if simdutf8::basic::from_utf8(region).is_ok() => {
            c.pos = pos;
            true
        }
        _ => false,
    }
}

fn tensor_info(c: &mut Cursor<'_>) -> Result<TensorEntry> {
    let info_offset = c.pos as u64;
    let name_len_at = c.pos;
    let name_len = c.len(Item::TensorName, None)?;
    if name_len > MAX_TENSOR_NAME {
        // The name itself (its first 256 bytes), through `take` so a metadata buffer grows to hold it.
        let shown = c.take(name_len.min(256), Item::TensorName, None)?;
        return Err(FormatError::TensorNameTooLong {
            name: String::from_utf8_lossy(shown).into_owned(),
            len: name_len,
            max: MAX_TENSOR_NAME,
            offset: name_len_at as u64,
        }
        .into());
    }
    c.pos = name_len_at;
    let name = c.string(Item::TensorName, None)?;
    let name_str = c.str_at(&name);
    let dims_at = c.pos as u64;
    let n_dims = c.u32(Item::Dims, Some(name_str))?;
    if n_dims as usize > MAX_DIMS {
        return Err(FormatError::TooManyDims { name: name_str.to_owned(), n_dims, offset: dims_at }.into());
    }
    let mut ne = [1u64; MAX_DIMS];
    for (i, d) in ne.iter_mut().enumerate().take(n_dims as usize) {
        let at = c.pos as u64;
        *d = c.u64(Item::Dims, Some(name_str))?;
        if *d > i64::MAX as u64 {
            return Err(FormatError::BadDim { name: name_str.to_owned(), index: i, value: *d, offset: at }.into());
        }
    }
    let type_at = c.pos as u64;
    let type_id = c.u32(Item::Dims, Some(name_str))?;
    let dtype = GgmlType::from_id(type_id).ok_or_else(|| {
        if REMOVED_TYPE_IDS.contains(&type_id) {
            FormatError::RemovedTensorType { name: name_str.to_owned(), id: type_id, offset: type_at }
        } else {
            FormatError::UnknownTensorType { name: name_str.to_owned(), id: type_id, offset: type_at }
        }
    })?;
    let offset = c.u64(Item::Dims, Some(name_str))?;
    let dims = ne.get(..n_dims as usize).unwrap_or_default();
    let n_elements = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)).filter(|&n| n <= i64::MAX as u64);
    let Some(n_elements) = n_elements else {
        return Err(FormatError::SizeOverflow { name: name_str.to_owned(), ne: dims.to_vec() }.into());
    };
    let ne0 = ne[0];
    if ne0 % dtype.block_size() != 0 {
        return Err(FormatError::NotBlockMultiple {
            name: name_str.to_owned(),
            dtype,
            ne0,
            block_size: dtype.block_size(),
        }
        .into());
    }
    let nbytes = dtype.nbytes(dims).filter(|&n| n <= i64::MAX as u64);
    let Some(nbytes) = nbytes else {
        return Err(FormatError::SizeOverflow { name: name_str.to_owned(), ne: dims.to_vec() }.into());
    };
    Ok(TensorEntry { name, dtype, ne, n_dims: n_dims as u8, offset, nbytes, n_elements, info_offset })
}

impl Layout {
    /// The borrowed view of KV entry `e` over `data`.
    pub(crate) fn value_ref<'a>(&self, data: &'a [u8], v: &RawValue) -> ValueRef<'a> {
        match v {
            RawValue::Scalar(s) => *s,
            RawValue::String(r) => {
                ValueRef::String(data.get(r.clone()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default())
            }
            RawValue::Array { elem, len, bytes } => ValueRef::Array(ArrayRef {
                elem: *elem,
                len: *len,
                bytes: data.get(bytes.clone()).unwrap_or_default(),
                endian: self.endian,
            }),
        }
    }
}
