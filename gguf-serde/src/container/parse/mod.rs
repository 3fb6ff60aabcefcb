//! The one parser of the GGUF grammar: header → key/value pairs → tensor infos, checked as they
//! are read, into a [`Layout`] (an index of offsets into the bytes).
//!
//! Follows ggml `docs/gguf.md` ("File Structure") and checks everything ggml's `gguf.cpp`
//! checks, plus what it misses (wrapping element counts, data past the end of the file). BOOL
//! bytes and strings are read as ggml reads them: any byte other than 0 is true, any bytes are a
//! string (UTF-8 is checked, not required). Every count is compared with the bytes left in the
//! *file* before anything is allocated for it.
//!
//! # Resuming
//! [`Parser::resume`] is given the bytes of the file from its start, as many as have been read,
//! and either finishes ([`Step::Done`]) or says which bytes it needs next ([`Step::NeedMore`]):
//! a state, not an error. It keeps what it has parsed and, given more bytes, goes on from where
//! it stopped (the start of the header, of a pair's key, of a value or of the current array
//! element, or of a tensor info; nothing is parsed twice but that one item). Whether a count or
//! length fits in the file is decided from the file's length when it is known; while it is not
//! (a plain `Read`), the parser asks for the bytes the count claims, and the driver tells it the
//! length when the source ends ([`Parser::set_len`]), after which it never asks again. So every
//! source, fed in any pieces, gives the answer the whole file in memory gives, error included.
//! The driver for every source is `feed.rs`.

use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::ops::Range;

use super::value::{decode_fixed, ArrayRef, ValueRef};
use super::wire::{ascii_length_run, num, MAGIC};
use crate::error::{AlignmentProblem, Error, FormatError, Item, Result};
use crate::format::keys::GENERAL_ALIGNMENT;
use crate::format::{alignment_problem, ValueType, DEFAULT_ALIGNMENT};
use crate::format::{Endian, MAX_DEPTH, MAX_DIMS, MAX_TENSOR_NAME};
use crate::format::{GgmlType, GgufStr, REMOVED_TYPE_IDS};

mod array;
mod cursor;
mod tensors;

use array::Walk;
use cursor::{scalar, str_in, Cursor};
use tensors::{check_tensors, tensor_info};

/// The smallest key/value pair: 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes.
const MIN_KV: u64 = 14;
/// The smallest tensor info: 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset) bytes.
const MIN_TENSOR: u64 = 24;
/// Entries reserved before any is parsed. The counts passed the check against the bytes left in
/// the *file*, which for a model includes its tensor data: a lying count in a 10 GB file could
/// still reserve gigabytes (and abort the process when the allocation fails). Past this the
/// tables grow with the entries really parsed, each of which took real bytes.
const PREALLOC: u64 = 64;

/// A decoded value whose strings and arrays are byte ranges of the source.
#[derive(Clone, Debug)]
pub(crate) enum RawValue {
    Scalar(ValueRef<'static>),
    String(Range<usize>),
    /// `utf8`: every string in the array (at any depth) was found to be UTF-8.
    Array {
        elem: ValueType,
        len: u64,
        bytes: Range<usize>,
        utf8: bool,
    },
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
    /// Absolute start of the data section: `infos_end` rounded up to the alignment, or
    /// `infos_end` itself in a file without tensors (as ggml reports it).
    pub data_offset: u64,
    /// The file's length in bytes.
    ///
    /// For [`Goal::KvBlock`], all three are the end of the key/value pairs.
    pub file_len: u64,
}

/// Where the parser stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Goal {
    /// After the key/value pairs. The header's tensor count is not used (nor checked), and the
    /// layout has no tensors.
    KvBlock,
    /// After the tensor infos, with the tensors checked against the file (alignment, bounds,
    /// overlaps, names).
    TensorInfos,
}

/// What [`Parser::resume`] reached.
#[derive(Debug)]
pub(crate) enum Step {
    /// Everything up to the goal is parsed and valid.
    Done(Layout),
    /// The parser needs the `needed` bytes at absolute `offset` (which the file has, or may have
    /// while its length is unknown); call `resume` again with the bytes up to `offset + needed`.
    NeedMore { offset: u64, needed: u64 },
}

/// Why a parsing function stopped: it needs bytes not read yet, or the file is refused.
enum Halt {
    More { offset: u64, needed: u64 },
    Fail(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Halt {
        Halt::Fail(e)
    }
}

impl From<FormatError> for Halt {
    fn from(e: FormatError) -> Halt {
        Halt::Fail(e.into())
    }
}

type Res<T> = std::result::Result<T, Halt>;

/// The header fields.
#[derive(Clone, Copy)]
struct Head {
    version: u32,
    endian: Endian,
    n_kv: u64,
    n_tensors: u64,
}

/// A key/value pair whose key and type are read; its value is being read.
#[derive(Clone)]
struct Pair {
    key: Range<usize>,
    offset: u64,
    value_offset: u64,
    ty: ValueType,
}

/// The resumable parser (see the module docs).
pub(crate) struct Parser {
    goal: Goal,
    /// The file's length, once known.
    len: Option<u64>,
    /// Where parsing goes on: everything before it is parsed into the fields below.
    pos: usize,
    head: Option<Head>,
    alignment: u32,
    kvs: Vec<KvEntry>,
    /// Hashes of the keys read, for finding a duplicate without holding the keys (whose bytes
    /// may move as the buffer grows); a hash seen before is confirmed by comparing the keys.
    key_hasher: RandomState,
    key_hashes: HashSet<u64>,
    pair: Option<Pair>,
    walk: Walk,
    tensors: Vec<TensorEntry>,
}

impl Parser {
    /// A parser for a file of `len` bytes (`None`: not known until the source ends).
    pub(crate) fn new(goal: Goal, len: Option<u64>) -> Parser {
        Parser {
            goal,
            len,
            pos: 0,
            head: None,
            alignment: DEFAULT_ALIGNMENT,
            kvs: Vec::new(),
            key_hasher: RandomState::new(),
            key_hashes: HashSet::new(),
            pair: None,
            walk: Walk::new(),
            tensors: Vec::new(),
        }
    }

    /// Tells the parser the file's length, once the source has ended (it is then the bytes given).
    pub(crate) fn set_len(&mut self, len: Option<u64>) {
        if self.len.is_none() {
            self.len = len;
        }
    }

    /// Parses on; `data` is the file from its start, as far as it has been read (at least as far
    /// as on the previous call).
    ///
    /// # Errors
    /// Any validation error of the [container docs](super), with its byte offset.
    pub(crate) fn resume(&mut self, data: &[u8]) -> Result<Step> {
        match self.run(data) {
            Ok(layout) => Ok(Step::Done(layout)),
            Err(Halt::More { offset, needed }) => Ok(Step::NeedMore { offset, needed }),
            Err(Halt::Fail(e)) => Err(e),
        }
    }

    fn run(&mut self, data: &[u8]) -> Res<Layout> {
        let head = match self.head {
            Some(head) => head,
            None => {
                let mut c = Cursor { data, pos: 0, len: self.len, endian: Endian::Little };
                let head = header(&mut c, self.goal)?;
                self.kvs.reserve(head.n_kv.min(PREALLOC) as usize);
                self.key_hashes.reserve(head.n_kv.min(PREALLOC) as usize);
                self.pos = c.pos;
                self.head = Some(head);
                head
            }
        };
        let mut c = Cursor { data, pos: self.pos, len: self.len, endian: head.endian };
        while (self.kvs.len() as u64) < head.n_kv {
            self.pair(&mut c)?;
        }
        // Keys are read: free their hashes before the tensor infos take memory.
        self.key_hashes = HashSet::new();
        if self.goal == Goal::KvBlock {
            // No tensors, no data section: every offset past the pairs is their end.
            let end = c.pos as u64;
            return Ok(self.layout(head, Vec::new(), end, end, end));
        }
        if self.tensors.capacity() == 0 {
            self.tensors.reserve(head.n_tensors.min(PREALLOC) as usize);
        }
        while (self.tensors.len() as u64) < head.n_tensors {
            let t = tensor_info(&mut c)?;
            self.tensors.push(t);
            self.pos = c.pos;
        }
        let Some(file_len) = self.len else {
            // The tensors are checked against the file's length: read on to the end.
            let offset = data.len() as u64;
            return Err(Halt::More { offset, needed: u64::MAX.saturating_sub(offset) });
        };
        let infos_end = c.pos as u64;
        let (by_name, data_offset) = check_tensors(&self.tensors, data, infos_end, self.alignment, file_len)?;
        Ok(self.layout(head, by_name, infos_end, data_offset, file_len))
    }

    fn layout(&mut self, head: Head, by_name: Vec<u32>, infos_end: u64, data_offset: u64, file_len: u64) -> Layout {
        Layout {
            version: head.version,
            endian: head.endian,
            alignment: self.alignment,
            kvs: std::mem::take(&mut self.kvs),
            tensors: std::mem::take(&mut self.tensors),
            tensors_by_name: by_name,
            infos_end,
            data_offset,
            file_len,
        }
    }

    /// One key/value pair, resumed where it stopped.
    fn pair(&mut self, c: &mut Cursor<'_>) -> Res<()> {
        let pair = match &self.pair {
            Some(pair) => pair.clone(),
            None => {
                let pair = self.pair_head(c)?;
                self.pos = c.pos;
                self.pair = Some(pair.clone());
                pair
            }
        };
        let key_bytes = c.str_at(&pair.key);
        // Errors name the key as `Display` shows it (escaped: bad bytes as `\xNN`; borrowed when
        // nothing needs escaping).
        let key_shown = key_bytes.escaped();
        let key: &str = &key_shown;
        let value = match pair.ty {
            ValueType::String => RawValue::String(c.string(Item::String, Some(key))?),
            ValueType::Array => {
                let (elem, len, bytes, utf8) = self.walk.array(c, key, &mut self.pos)?;
                RawValue::Array { elem, len, bytes, utf8 }
            }
            t => RawValue::Scalar(scalar(c, t, key)?),
        };
        if key_bytes == GENERAL_ALIGNMENT {
            let offset = pair.offset;
            self.alignment = match value {
                RawValue::Scalar(ValueRef::U32(a)) => match alignment_problem(a) {
                    None => a,
                    Some(problem) => return Err(FormatError::BadAlignment { problem, offset }.into()),
                },
                _ => {
                    return Err(FormatError::BadAlignment {
                        problem: AlignmentProblem::WrongType(pair.ty.name()),
                        offset,
                    }
                    .into())
                }
            };
        }
        self.kvs.push(KvEntry { key: pair.key, value, offset: pair.offset, value_offset: pair.value_offset });
        self.pair = None;
        self.pos = c.pos;
        Ok(())
    }

    /// A pair's key (not empty, not seen before) and value type.
    fn pair_head(&mut self, c: &mut Cursor<'_>) -> Res<Pair> {
        let offset = c.pos as u64;
        let key_range = c.string(Item::Key, None)?;
        // Keys are compared and hashed as bytes, UTF-8 or not (as ggml compares them).
        let key_bytes = c.str_at(&key_range);
        if key_bytes.is_empty() {
            return Err(FormatError::EmptyKey { offset }.into());
        }
        let hash = self.key_hasher.hash_one(key_bytes.as_bytes());
        if self.key_hashes.contains(&hash) && self.kvs.iter().any(|e| c.str_at(&e.key) == key_bytes) {
            return Err(FormatError::DuplicateKey { key: key_bytes.to_string(), offset }.into());
        }
        let key_shown = key_bytes.escaped();
        let key: &str = &key_shown;
        let type_at = c.pos as u64;
        let type_id = c.u32(Item::Value, Some(key))?;
        let ty = ValueType::from_id(type_id).ok_or_else(|| FormatError::UnknownValueType {
            key: key.to_owned(),
            id: type_id,
            in_array: false,
            offset: type_at,
        })?;
        self.key_hashes.insert(hash);
        Ok(Pair { key: key_range, offset, value_offset: c.pos as u64, ty })
    }
}

/// Reads the header: magic, version (and byte order), counts; checks the counts against the
/// bytes left in the file.
fn header(c: &mut Cursor<'_>, goal: Goal) -> Res<Head> {
    // The magic: 4 bytes, or all of a shorter file.
    let n = if c.has(4)? { 4 } else { c.remaining() };
    let magic = c.take(n, Item::Header, None)?;
    if magic != MAGIC {
        return Err(FormatError::BadMagic { found: magic.to_vec() }.into());
    }
    let raw = c.u32(Item::Header, None)?;
    let (version, endian) = Endian::detect(raw);
    c.endian = endian;
    if !(2..=3).contains(&version) {
        return Err(FormatError::UnsupportedVersion { version }.into());
    }

    let at = c.pos as u64;
    let n_tensors = c.u64(Item::Header, None)?;
    let kv_at = c.pos as u64;
    let n_kv = c.u64(Item::Header, None)?;
    // `n > remaining / MIN` is `n × MIN > remaining`: whether the file has that many bytes.
    let kv_bytes = n_kv.saturating_mul(MIN_KV);
    if !c.has(kv_bytes)? {
        return Err(FormatError::TooLong {
            item: Item::KvCount,
            owner: None,
            offset: kv_at,
            count: n_kv,
            remaining: c.remaining(),
        }
        .into());
    }
    if goal == Goal::TensorInfos && !c.has(kv_bytes.saturating_add(n_tensors.saturating_mul(MIN_TENSOR)))? {
        return Err(FormatError::TooLong {
            item: Item::TensorCount,
            owner: None,
            offset: at,
            count: n_tensors,
            remaining: c.remaining(),
        }
        .into());
    }
    Ok(Head { version, endian, n_kv, n_tensors })
}

/// `x` rounded up to a multiple of `align` (a power of two); `None` if that overflows `u64` or
/// `align` is 0.
pub(crate) fn align_up(x: u64, align: u32) -> Option<u64> {
    let mask = u64::from(align).checked_sub(1)?;
    x.checked_add(mask).map(|v| v & !mask)
}

impl Layout {
    /// The borrowed view of KV entry `e` over `data`.
    pub(crate) fn value_ref<'a>(&self, data: &'a [u8], v: &RawValue) -> ValueRef<'a> {
        match v {
            RawValue::Scalar(s) => *s,
            RawValue::String(r) => ValueRef::String(str_in(data, r)),
            RawValue::Array { elem, len, bytes, utf8 } => ValueRef::Array(ArrayRef {
                elem: *elem,
                len: *len,
                bytes: data.get(bytes.clone()).unwrap_or_default(),
                endian: self.endian,
                utf8: *utf8,
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A little-endian version 3 file: no tensors, one pair `a` = array<string> ["xy", "é", ""]
    /// (spec layout: header 24 bytes; key length 8 + key 1 + type 4 = offset 37 for the array's
    /// element type, 41 its count, 49 the first string's length, 57 its bytes).
    fn file() -> Vec<u8> {
        let strings: Vec<u8> =
            ["xy", "é", ""].iter().flat_map(|s| [&(s.len() as u64).to_le_bytes()[..], s.as_bytes()].concat()).collect();
        let (version, n_tensors, n_kv, key_len) = (3u32.to_le_bytes(), 0u64.to_le_bytes(), 1u64.to_le_bytes(), 1u64);
        let (array, string, count) = (9u32.to_le_bytes(), 8u32.to_le_bytes(), 3u64.to_le_bytes());
        [&b"GGUF"[..], &version, &n_tensors, &n_kv, &key_len.to_le_bytes(), b"a", &array, &string, &count, &strings]
            .concat()
    }

    fn need(p: &mut Parser, data: &[u8]) -> (u64, u64) {
        match p.resume(data).unwrap() {
            Step::NeedMore { offset, needed } => (offset, needed),
            Step::Done(_) => panic!("done with {} bytes", data.len()),
        }
    }

    #[test]
    fn a_cut_header_is_a_state_until_the_length_is_known() {
        let f = file();
        // Length unknown: the tensor count at offset 8 is wanted, 8 bytes.
        let mut p = Parser::new(Goal::TensorInfos, None);
        assert_eq!(need(&mut p, &f[..10]), (8, 8));
        // The same with the length known and the bytes not read yet.
        let mut q = Parser::new(Goal::TensorInfos, Some(f.len() as u64));
        assert_eq!(need(&mut q, &f[..10]), (8, 8));
        // The source ends there: the error a 10-byte file gives.
        p.set_len(Some(10));
        let e = p.resume(&f[..10]).unwrap_err();
        assert!(
            matches!(
                e.as_format(),
                Some(FormatError::Truncated { item: Item::Header, offset: 8, needed: 8, available: 2, .. })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn a_string_array_resumes_at_the_string_it_stopped_at() {
        let f = file();
        assert_eq!(f.len(), 49 + 10 + 10 + 8);
        // Length known (a `Read + Seek`), bytes up to the middle of the second string (its 2
        // bytes at 67): "xy" is read, then the second string's length, and its bytes are asked for.
        let mut p = Parser::new(Goal::KvBlock, Some(f.len() as u64));
        assert_eq!(need(&mut p, &f[..68]), (67, 2));
        // Length unknown: the count (3 strings of at least 8 bytes from 49) is checked first; with
        // those bytes there, the two first strings are read and the third's length is asked for.
        let mut q = Parser::new(Goal::KvBlock, None);
        assert_eq!(need(&mut q, &f[..60]), (49, 24));
        assert_eq!(need(&mut q, &f[..73]), (69, 8));
        // Given the rest, it finishes from there.
        let Step::Done(layout) = p.resume(&f).unwrap() else { panic!("not done") };
        assert_eq!((layout.kvs.len(), layout.infos_end), (1, f.len() as u64));
        let RawValue::Array { elem, len, bytes, utf8 } = &layout.kvs[0].value else { panic!("not an array") };
        assert_eq!((*elem, *len, bytes.clone(), *utf8), (ValueType::String, 3, 49..f.len(), true));
        let a = layout.value_ref(&f, &layout.kvs[0].value).as_array().unwrap();
        assert_eq!(a.strings().unwrap().collect::<Vec<_>>(), ["xy", "é", ""]);
    }

    #[test]
    fn a_count_is_checked_by_reading_as_far_as_it_claims() {
        // Length unknown: the array's count (3) needs 3 × 8 bytes after it; a source that ends
        // first gives the error of the whole cut file.
        let f = file();
        let mut p = Parser::new(Goal::KvBlock, None);
        assert_eq!(need(&mut p, &f[..50]), (49, 24));
        p.set_len(Some(50));
        let e = p.resume(&f[..50]).unwrap_err();
        let want =
            FormatError::TooLong { item: Item::Array, owner: Some("a".into()), offset: 41, count: 3, remaining: 1 };
        assert_eq!(format!("{:?}", e.as_format()), format!("{:?}", Some(want)));
    }
}
