//! The one parser of the GGUF grammar: header → key/value pairs → tensor infos, checked as they
//! are read, into a [`Layout`] (an index of offsets into the bytes).
//!
//! Follows ggml `docs/gguf.md` ("File Structure") and checks everything ggml's `gguf.cpp`
//! checks, plus what it misses (wrapping element counts, data past the end of the file, bool
//! bytes other than 0/1, UTF-8). Every count is compared with the bytes left in the *file*
//! before anything is allocated for it.
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

use super::value::{decode_fixed, num, ArrayRef, ValueRef};
use crate::error::{AlignmentProblem, Error, FormatError, Item, Result};
use crate::format::keys::GENERAL_ALIGNMENT;
use crate::format::{alignment_problem, ValueType, DEFAULT_ALIGNMENT};
use crate::format::{Endian, MAX_DEPTH, MAX_DIMS, MAX_TENSOR_NAME};
use crate::format::{GgmlType, REMOVED_TYPE_IDS};

/// The smallest key/value pair: 8 (key length) + 1 (key) + 4 (type) + 1 (value) bytes.
const MIN_KV: u64 = 14;
/// The smallest tensor info: 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset) bytes.
const MIN_TENSOR: u64 = 24;
/// Strings validated at once by the parser ([`string_run`]): about 100 KiB of a vocabulary,
/// walked and then validated while in the cache.
const RUN_STRINGS: u64 = 4096;
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
        let key = c.str_at(&pair.key);
        let value = match pair.ty {
            ValueType::String => RawValue::String(c.string(Item::String, Some(key))?),
            ValueType::Array => {
                let (elem, len, bytes) = self.walk.array(c, key, &mut self.pos)?;
                RawValue::Array { elem, len, bytes }
            }
            t => RawValue::Scalar(scalar(c, t, key)?),
        };
        if key == GENERAL_ALIGNMENT {
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
        let key = c.str_at(&key_range);
        if key.is_empty() {
            return Err(FormatError::EmptyKey { offset }.into());
        }
        let hash = self.key_hasher.hash_one(key);
        if self.key_hashes.contains(&hash) && self.kvs.iter().any(|e| c.str_at(&e.key) == key) {
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
    if magic != b"GGUF" {
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

/// The bytes read so far at a position of the file.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// The file's length, if known; `data` is at most that long.
    len: Option<u64>,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    /// Bytes of the file from `pos` on (those read so far while its length is unknown; every
    /// error that reports this is decided with the length known).
    fn remaining(&self) -> u64 {
        self.len.unwrap_or(self.data.len() as u64).saturating_sub(self.pos as u64)
    }

    /// Whether the file has `n` bytes from `pos` on; asks for them while its length is unknown.
    fn has(&self, n: u64) -> Res<bool> {
        if self.data.len().saturating_sub(self.pos) as u64 >= n {
            return Ok(true);
        }
        match self.len {
            Some(len) => Ok(len.saturating_sub(self.pos as u64) >= n),
            None => Err(Halt::More { offset: self.pos as u64, needed: n }),
        }
    }

    /// Takes `n` bytes: `Truncated` if the file ends before, `More` if they are not read yet.
    fn take(&mut self, n: u64, item: Item, key: Option<&str>) -> Res<&'a [u8]> {
        let start = self.pos;
        let end = usize::try_from(n).ok().and_then(|n| start.checked_add(n));
        if let Some((end, bytes)) = end.and_then(|end| Some((end, self.data.get(start..end)?))) {
            self.pos = end;
            return Ok(bytes);
        }
        match self.len {
            Some(len) if (start as u64).saturating_add(n) > len => Err(FormatError::Truncated {
                item,
                owner: key.map(str::to_owned),
                offset: start as u64,
                needed: n,
                available: self.remaining(),
            }
            .into()),
            _ => Err(Halt::More { offset: start as u64, needed: n }),
        }
    }

    fn u32(&mut self, item: Item, key: Option<&str>) -> Res<u32> {
        let b = self.take(4, item, key)?;
        Ok(num(b, self.endian))
    }

    fn u64(&mut self, item: Item, key: Option<&str>) -> Res<u64> {
        let b = self.take(8, item, key)?;
        Ok(num(b, self.endian))
    }

    /// Reads a `u64` length and checks it against the bytes left in the file.
    fn length(&mut self, item: Item, key: Option<&str>) -> Res<u64> {
        let at = self.pos as u64;
        let n = self.u64(item, key)?;
        if !self.has(n)? {
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
    fn string(&mut self, item: Item, key: Option<&str>) -> Res<Range<usize>> {
        let n = self.length(item, key)?;
        let start = self.pos;
        let bytes = self.take(n, item, key)?;
        if std::str::from_utf8(bytes).is_err() {
            return Err(FormatError::InvalidUtf8 { item, key: key.map(str::to_owned), offset: start as u64 }.into());
        }
        Ok(start..self.pos)
    }

    fn str_at(&self, r: &Range<usize>) -> &'a str {
        str_in(self.data, r)
    }
}

/// The (validated) string at `r` of `data`.
fn str_in<'a>(data: &'a [u8], r: &Range<usize>) -> &'a str {
    data.get(r.clone()).and_then(|b| std::str::from_utf8(b).ok()).unwrap_or_default()
}

fn scalar(c: &mut Cursor<'_>, t: ValueType, key: &str) -> Res<ValueRef<'static>> {
    let at = c.pos;
    let size = t.fixed_size().unwrap_or(1) as u64;
    let bytes = c.take(size, Item::Value, Some(key))?;
    if t == ValueType::Bool {
        if let Some(&byte) = bytes.first().filter(|&&b| b > 1) {
            return Err(FormatError::InvalidBool { key: key.to_owned(), byte, offset: at as u64 }.into());
        }
    }
    Ok(decode_fixed(t, bytes, c.endian))
}

/// An array being read: its element type and count, the elements read, where they start.
#[derive(Clone, Copy)]
struct Frame {
    elem: ValueType,
    len: u64,
    done: u64,
    start: usize,
}

/// The arrays being read, outermost first (an array of arrays nests at most [`MAX_DEPTH`]), held
/// inline; the state that lets a value resume at its current element.
struct Walk {
    frames: [Frame; MAX_DEPTH],
    depth: usize,
}

impl Walk {
    fn new() -> Walk {
        Walk { frames: [Frame { elem: ValueType::U8, len: 0, done: 0, start: 0 }; MAX_DEPTH], depth: 0 }
    }

    fn top(&self) -> Option<Frame> {
        self.frames.get(self.depth.checked_sub(1)?).copied()
    }

    fn top_mut(&mut self) -> Option<&mut Frame> {
        self.frames.get_mut(self.depth.checked_sub(1)?)
    }

    fn push(&mut self, f: Frame) {
        if let Some(slot) = self.frames.get_mut(self.depth) {
            *slot = f;
            // The slot exists: depth < frames.len() (at most MAX_DEPTH), so this cannot overflow.
            self.depth = self.depth.saturating_add(1);
        }
    }

    /// Reads an array value (its header if not read yet, then its elements from the one it
    /// stopped at), committing each element to `checkpoint`; returns element type, count and
    /// the byte range of the elements.
    fn array(&mut self, c: &mut Cursor<'_>, key: &str, checkpoint: &mut usize) -> Res<(ValueType, u64, Range<usize>)> {
        if self.depth == 0 {
            self.push(array_header(c, key, 1)?);
            *checkpoint = c.pos;
        }
        while let Some(top) = self.top() {
            // A frame's `done` counts up to its `len` and never past it, and `depth` is at least
            // 1 while there is a top frame: the saturating operations below never saturate.
            if top.done == top.len {
                self.depth = self.depth.saturating_sub(1);
                match self.top_mut() {
                    None => return Ok((top.elem, top.len, top.start..c.pos)),
                    Some(parent) => parent.done = parent.done.saturating_add(1),
                }
            } else if top.elem == ValueType::Array {
                let inner = array_header(c, key, self.depth.saturating_add(1))?;
                self.push(inner);
            } else {
                let left = top.len.saturating_sub(top.done);
                let done = match top.elem {
                    ValueType::String => strings(c, key, left)?,
                    elem => fixed_elements(c, key, elem, left)?,
                };
                if let Some(t) = self.top_mut() {
                    t.done = t.done.saturating_add(done);
                }
            }
            *checkpoint = c.pos;
        }
        // Not reached: the loop returns when the outermost array ends.
        Ok((ValueType::U8, 0, c.pos..c.pos))
    }
}

/// An array's element type and count, checked against the bytes left.
fn array_header(c: &mut Cursor<'_>, key: &str, depth: usize) -> Res<Frame> {
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
    if !c.has(len.saturating_mul(elem.min_size() as u64))? {
        return Err(FormatError::TooLong {
            item: Item::Array,
            owner: Some(key.to_owned()),
            offset: count_at,
            count: len,
            remaining: c.remaining(),
        }
        .into());
    }
    Ok(Frame { elem, len, done: 0, start: c.pos })
}

/// All `len` elements of a fixed-size type (their bytes fit: the count was checked); returns
/// `len`.
fn fixed_elements(c: &mut Cursor<'_>, key: &str, elem: ValueType, len: u64) -> Res<u64> {
    let start = c.pos;
    let size = elem.fixed_size().unwrap_or(1) as u64;
    let bytes = c.take(len.saturating_mul(size), Item::Array, Some(key))?;
    if elem == ValueType::Bool {
        if let Some(i) = bytes.iter().position(|&b| b > 1) {
            return Err(FormatError::InvalidBool {
                key: key.to_owned(),
                byte: bytes.get(i).copied().unwrap_or_default(),
                offset: start.saturating_add(i) as u64,
            }
            .into());
        }
    }
    Ok(len)
}

/// Reads at least one of the next `max` strings of an array; returns how many.
///
/// A run of strings whose length fields are all ASCII ([`string_run`]) is validated with one
/// SIMD UTF-8 pass over the run (262,144 calls fewer for a Gemma vocabulary); a run that fails
/// it is read again string by string to name the first bad one. The string that ends a run (a
/// length with a byte ≥ 0x80, or one not wholly in the bytes read so far) is read on its own,
/// with every check.
fn strings(c: &mut Cursor<'_>, key: &str, max: u64) -> Res<u64> {
    let (end, n) = string_run(c.data, c.pos, max, c.endian);
    if n == 0 {
        c.string(Item::String, Some(key))?;
        return Ok(1);
    }
    // simdutf8: the same validation as std, several times faster on non-ASCII text.
    if c.data.get(c.pos..end).is_some_and(|run| simdutf8::basic::from_utf8(run).is_ok()) {
        c.pos = end;
        return Ok(n);
    }
    for _ in 0..n {
        c.string(Item::String, Some(key))?;
    }
    Ok(n)
}

/// A run of length-prefixed strings (a `u64` length, then the bytes) from `pos` in `bytes`: the
/// end of the longest run of at most `max` (and [`RUN_STRINGS`]) strings that lie wholly in
/// `bytes` and whose 8-byte length fields are all ASCII (< 0x80), and the number of strings in
/// it (0 if the first one does not qualify).
///
/// Each string of such a run is delimited by ASCII bytes, so it starts and ends on a character
/// boundary of the run: the run is valid UTF-8 exactly when every string in it is, and one SIMD
/// validation of the run stands for one per string.
#[inline]
#[allow(
    clippy::arithmetic_side_effects,
    reason = "at <= bytes.len() - 8 (loop condition), body + len <= bytes.len() (checked just before), \
              n < max: nothing overflows, and this is the hot loop of string arrays"
)]
fn string_run(bytes: &[u8], pos: usize, max: u64, endian: Endian) -> (usize, u64) {
    // This loop runs at the latency of one load and one addition per string: the next position
    // is `body + len`, with `body` computed while the length is loaded.
    let Some(last) = bytes.len().checked_sub(8) else { return (pos, 0) };
    let max = max.min(RUN_STRINGS);
    let (mut at, mut n) = (pos, 0u64);
    while n < max && at <= last {
        let Some(&raw) = bytes.get(at..at + 8).and_then(<[u8]>::first_chunk::<8>) else { break };
        if u64::from_ne_bytes(raw) & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        let len = match endian {
            Endian::Little => u64::from_le_bytes(raw),
            Endian::Big => u64::from_be_bytes(raw),
        };
        let body = at + 8;
        if len > (bytes.len() - body) as u64 {
            break;
        }
        at = body + len as usize;
        n += 1;
    }
    (at, n)
}

fn tensor_info(c: &mut Cursor<'_>) -> Res<TensorEntry> {
    let info_offset = c.pos as u64;
    let name_len_at = c.pos;
    let name_len = c.length(Item::TensorName, None)?;
    if name_len > MAX_TENSOR_NAME {
        // The name itself (its first 256 bytes).
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
    if ne0.checked_rem(dtype.block_size()) != Some(0) {
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

/// Checks the tensors against each other and the file: unique names; offsets aligned, inside
/// the file, not overlapping. Returns the indices sorted by name and the data section's start.
fn check_tensors(
    tensors: &[TensorEntry],
    data: &[u8],
    infos_end: u64,
    alignment: u32,
    file_len: u64,
) -> Result<(Vec<u32>, u64)> {
    // Duplicate names: sort indices by name and compare neighbours.
    let mut by_name: Vec<u32> = (0..tensors.len() as u32).collect();
    let name_of =
        |i: u32| -> &[u8] { tensors.get(i as usize).and_then(|t| data.get(t.name.clone())).unwrap_or_default() };
    by_name.sort_unstable_by(|&a, &b| name_of(a).cmp(name_of(b)));
    for w in by_name.windows(2) {
        if let [a, b] = *w {
            if name_of(a) == name_of(b) {
                let later = a.max(b) as usize;
                let (name, offset) =
                    tensors.get(later).map(|t| (str_in(data, &t.name).to_owned(), t.info_offset)).unwrap_or_default();
                return Err(FormatError::DuplicateTensor { name, offset }.into());
            }
        }
    }

    // ggml (`gguf_init_from_file_impl`) seeks to the aligned offset only when there are tensors:
    // a metadata-only file's data section starts right after its (empty) tensor infos.
    let padded = if tensors.is_empty() { Some(infos_end) } else { align_up(infos_end, alignment) };
    let data_offset = padded.ok_or(FormatError::TooLong {
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
        let name = || str_in(data, &t.name).to_owned();
        if t.offset.checked_rem(u64::from(alignment)) != Some(0) {
            return Err(FormatError::MisalignedTensor { name: name(), relative_offset: t.offset, alignment }.into());
        }
        let start = data_offset.checked_add(t.offset);
        let end = start.and_then(|s| s.checked_add(t.nbytes));
        match (start, end) {
            (Some(start), Some(end)) if end <= file_len => {
                if let Some((p, p_end)) = prev {
                    if start < p_end && t.nbytes > 0 {
                        return Err(FormatError::TensorsOverlap {
                            first: str_in(data, &p.name).to_owned(),
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
    Ok((by_name, data_offset))
}

/// `x` rounded up to a multiple of `align` (a power of two); `None` if that overflows `u64` or
/// `align` is 0.
pub(crate) fn align_up(x: u64, align: u32) -> Option<u64> {
    let mask = u64::from(align).checked_sub(1)?;
    x.checked_add(mask).map(|v| v & !mask)
}

/// Where the `len` elements of type `elem` that start at `start` in `bytes` end: the grammar's
/// own walk, for the element decoder's arrays of arrays. `bytes` was validated when the file
/// was opened, so the walk cannot fail (if it did, the end of `bytes` is returned).
pub(crate) fn elements_end(bytes: &[u8], start: usize, elem: ValueType, len: u64, endian: Endian) -> usize {
    let mut c = Cursor { data: bytes, pos: start, len: Some(bytes.len() as u64), endian };
    let mut walk = Walk::new();
    walk.push(Frame { elem, len, done: 0, start });
    let mut checkpoint = start;
    match walk.array(&mut c, "", &mut checkpoint) {
        Ok((_, _, range)) => range.end,
        Err(_) => bytes.len(),
    }
}

impl Layout {
    /// The borrowed view of KV entry `e` over `data`.
    pub(crate) fn value_ref<'a>(&self, data: &'a [u8], v: &RawValue) -> ValueRef<'a> {
        match v {
            RawValue::Scalar(s) => *s,
            RawValue::String(r) => ValueRef::String(str_in(data, r)),
            RawValue::Array { elem, len, bytes } => ValueRef::Array(ArrayRef {
                elem: *elem,
                len: *len,
                bytes: data.get(bytes.clone()).unwrap_or_default(),
                endian: self.endian,
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
        let RawValue::Array { elem, len, bytes } = &layout.kvs[0].value else { panic!("not an array") };
        assert_eq!((*elem, *len, bytes.clone()), (ValueType::String, 3, 49..f.len()));
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
