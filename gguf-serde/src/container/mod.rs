//! The GGUF container, without serde: open and validate a file, read its metadata and tensor
//! infos, borrow tensor data, and write files with a streaming writer.
//!
//! Spec: ggml `docs/gguf.md`, "File Structure". Layout of a file:
//!
//! ```text
//! "GGUF" | version u32 | tensor_count u64 | kv_count u64 | kv[kv_count] | tensor_info[tensor_count]
//!        | 0x00 padding to general.alignment (absolute offset) | tensor data, each tensor padded
//! ```
//!
//! # Policies
//! - **Versions**: 2 and 3 are read (they parse the same way). Version 1 (u32 counts and lengths,
//!   superseded in 2023) is refused with [`FormatError::UnsupportedVersion`], as ggml does; so are
//!   0 and anything above 3.
//! - **Byte order**: a version field whose low 16 bits are zero is a byte-swapped small version: the
//!   file is big-endian and is read as such (every number, length and count, and tensor data is
//!   handed out as stored). [`Gguf::endian`] tells which.
//! - **UTF-8**: keys, string values and tensor names are read as the bytes they are, UTF-8 or not,
//!   as ggml reads them (the spec says UTF-8, but ggml's `gguf.cpp` never checks, and llama.cpp
//!   loads such files). They are handed out as [`GgufStr`] (the bytes, with
//!   `to_str`, a lossy and an escaped display), compared and looked up as bytes, and written back
//!   unchanged. Only an accessor that hands out text ([`Kv::key_str`], [`TensorInfo::name_str`],
//!   [`Gguf::get_str`], serde's `&str`/`String`) fails on them, with
//!   [`FormatError::InvalidUtf8`] naming the key or tensor and the offset. The parser checks
//!   string arrays for UTF-8 in one SIMD pass as it reads them, so that the strings of a valid
//!   array (every real vocabulary) are `&str` without a second check.
//! - **Limits**: arrays of arrays nest at most [`MAX_DEPTH`](crate::format::MAX_DEPTH) levels; tensors have at most
//!   [`MAX_DIMS`](crate::format::MAX_DIMS) dimensions; tensor names are at most [`MAX_TENSOR_NAME`](crate::format::MAX_TENSOR_NAME) bytes on read (the spec's
//!   limit) and at most 63 on write (what ggml keeps).
//! - **Bools**: a BOOL byte other than 0 and 1 (the spec allows only those) is read as true, as
//!   ggml's `gguf.cpp` reads it (`gguf_reader::read(bool &)`: any non-zero byte), in scalars and
//!   arrays, by every reader of the crate (and so by serde, the derive and the Python package).
//!   [`Kv::odd_bool_bytes`] finds such bytes (`gguf validate` warns about them, naming the key
//!   and the offset); the writer writes every bool as 0 or 1, also one copied from a file with
//!   [`GgufWriter::add_kv_ref`], as ggml's writer does (`llama-quantize` and `llama-gguf-split`
//!   copy pairs through `gguf_set_kv`): a copy reads the same everywhere.
//! - **Alignment**: `general.alignment` must be a UINT32 power of two, on read and on write, as
//!   ggml and gguf-py require; every one a UINT32 holds is taken, up to
//!   [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT) (2^31). Another value is refused by the
//!   reader with [`FormatError::BadAlignment`] naming the pair's offset, by the writer with
//!   [`WriteError::BadAlignment`]. A large alignment costs a reader nothing (a file with tensors
//!   must hold the padding up to its aligned data offset, or its tensors are out of bounds), but a
//!   writer up to `alignment - 1` zero bytes after the tensor infos and after each tensor: the
//!   writer streams them in pieces of at most 4 KiB (no buffer of their size), and
//!   `gguf validate` warns above [`MAX_USEFUL_ALIGNMENT`](crate::format::MAX_USEFUL_ALIGNMENT)
//!   (64 KiB). A file without tensors has its data offset at the end of its tensor infos, as
//!   ggml reports it; the writer pads it (or not) as [`WriteOptions::pad_empty_data`] says, and
//!   a copy made with [`WriteOptions::like`] pads it only if the file was.
//! - **Tensor data**: each offset must be a multiple of the alignment, tensors must not overlap, and
//!   every tensor must lie inside the file. ggml additionally requires offsets to be the running sum
//!   of padded sizes; the spec does not, and neither does this reader.
//! - **Memory**: opening allocates in proportion to the bytes the metadata really occupies (the
//!   file up to the end of its tensor infos, or up to where it was refused), never to a count or
//!   length it merely claims: at most 16 bytes per byte of metadata plus 16 KiB (the worst case
//!   is a file made only of the smallest key/value pairs; real models stay far below). Counts are checked against the bytes left in the
//!   file and at most 64 entries are reserved before they are parsed, so a count written over
//!   a large model's header reserves nothing. [`Gguf::from_reader`] also holds the metadata bytes
//!   themselves, read in pieces of what the parser asks for plus at most 8 KiB (the buffer, while
//!   it grows, at most about 3 times the metadata). Strings and arrays are borrowed, never
//!   copied. Tests: `gguf-serde/tests/suite/resources.rs`.
//! - **Sources**: one resumable parser of the grammar (`parse/`) and one driver (`feed.rs`)
//!   serve a slice, a memory mapping, a `Read + Seek` ([`Gguf::from_reader`]) and a plain `Read`
//!   (serde's [`from_reader`](crate::from_reader), which reads the header and key/value pairs
//!   only). The parser stops where its bytes end and says which it needs ("need these bytes at
//!   this offset", a state, not an error); the driver reads them and the parser goes on where it
//!   stopped. So every source, read in any pieces, accepts and refuses exactly what the whole
//!   file in memory does, with the same error (`gguf-serde/tests/suite/validation/`, the `open` fuzz target).
//! - **Shapes**: GGUF stores dimensions fastest first (`ne[0]` is the row length). This crate speaks
//!   of the *canonical shape*, outermost first, which is the stored dims reversed (numpy/PyTorch
//!   order); [`TensorInfo::ne`] gives the stored order for whoever needs it.
//!
//! # Inside the container
//! Each file uses only those listed before it (no import cycle):
//!
//! | file | what it holds |
//! |---|---|
//! | `wire.rs` | the bytes at their lowest: the magic, numbers by byte order, the walk over length-prefixed strings and over an array's elements; also used by string arrays ([`crate::StringArray`]) and the importance matrix reader |
//! | `value.rs` | [`ValueRef`]/[`ArrayRef`] decoded from validated bytes, owned [`Value`]/[`Array`] |
//! | `parse/` | the one parser of the grammar: header and pairs (`mod.rs`), the cursor (`cursor.rs`), arrays (`array.rs`), tensor infos (`tensors.rs`) |
//! | `feed.rs` | the driver that feeds the parser from every source |
//! | `atomic.rs`, `write.rs` | atomic output, the streaming writer |
//! | `error.rs` | what the container refuses: [`FormatError`] (the parser), [`WriteError`] (the writer), [`ShardError`] (split models) |
//! | `mod.rs`, `sharded.rs`, `remote.rs`, `url.rs` | [`Gguf`] and its accessors, split models, remote files |

// Parsing code that file bytes reach: no unwrap/expect/panic/indexing; every exception
// is an `#[allow]` with its reason next to it. Applies to every file of this folder.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
// Offsets, lengths and counts come from hostile files: every addition, multiplication and
// subtraction is checked or saturating, or says why it cannot overflow.
#![deny(clippy::arithmetic_side_effects)]

pub(crate) mod atomic;
mod direct;
pub use atomic::{remove_temporaries, IfExists};
mod error;
mod feed;
mod parse;
#[cfg(feature = "remote")]
pub mod remote;
mod url;
pub use url::is_remote;
pub mod sharded;
mod value;
pub(crate) mod wire;
mod write;

use std::io::{Read, Seek, SeekFrom};
#[cfg(feature = "mmap")]
use std::{fs::File, path::Path};

pub use error::{FormatError, Item, ShardError, WriteError};
pub(crate) use feed::READ_AHEAD;
use parse::Goal;
pub(crate) use parse::{align_up, Layout};
#[cfg(feature = "mmap")]
pub use sharded::ShardedGguf;
#[cfg(all(feature = "mmap", feature = "remote"))]
pub use sharded::PARALLEL_SHARD_FETCHES;
pub use sharded::{parse_shard_path, shard_path, ShardTensor, TensorSource};
pub use value::{Array, ArrayIter, ArrayRef, OddBoolBytes, Value, ValueRef};
pub(crate) use write::encoded_len as write_encoded_len;
pub(crate) use write::{array_len as write_array_len, elems_len as write_elems_len};
pub use write::{AtomicFile, GgufWriter, TensorDataWriter, WriteOptions};

use crate::error::{Error, Result};
use crate::format::{Endian, GgmlType, GgufStr};
/// Re-exported here, where [`TensorInfo`] uses them; defined in [`crate::format`].
pub use crate::format::{Ne, Shape};

/// Bytes a [`Gguf`] reads from: a slice, a memory mapping, or a metadata-only buffer.
pub trait Source {
    /// The bytes held: the whole file, or (for [`MetadataOnly`]) its start up to the data section.
    fn bytes(&self) -> &[u8];

    /// A hint that the bytes in `range` (offsets into [`bytes`](Self::bytes)) will not be read
    /// again soon. A memory mapping ([`Gguf::open`]) gives the whole pages inside the range back
    /// to the system (they stay in the page cache and are mapped again, from the file, if read),
    /// so that a pass over a large file keeps little of it resident; the default does nothing.
    fn release(&self, range: std::ops::Range<usize>) {
        let _ = range;
    }
}

impl Source for &[u8] {
    fn bytes(&self) -> &[u8] {
        self
    }
}

impl Source for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

#[cfg(feature = "mmap")]
impl Source for memmap2::Mmap {
    fn bytes(&self) -> &[u8] {
        self
    }

    fn release(&self, range: std::ops::Range<usize>) {
        // Whole 4 KiB pages inside the range (the mapping starts on a page boundary). Where pages
        // are larger the system may round the range out to them: harmless, see below.
        const PAGE_MASK: usize = !4095;
        let Some(start) = range.start.checked_next_multiple_of(4096) else { return };
        let end = range.end.min(self.len()) & PAGE_MASK;
        #[cfg(unix)]
        if start < end {
            // SAFETY: an `Mmap` is a read-only shared mapping of a file: MADV_DONTNEED only drops
            // its pages from this process, and a later read maps them again with the file's
            // contents (the bytes do not change, under `Gguf::open`'s own condition that the file
            // is not modified while mapped). An error (unsupported advice) only leaves them mapped.
            #[allow(unsafe_code)]
            let _ = unsafe {
                self.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end.saturating_sub(start))
            };
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }
}

/// The metadata of a file read through [`Gguf::from_reader`]: the bytes from the start of the file
/// to the end of the tensor infos. Tensor data is not held ([`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded)).
#[derive(Clone, Debug)]
pub struct MetadataOnly(Vec<u8>);

impl Source for MetadataOnly {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A validated GGUF file over a byte source `S`.
///
/// - `Gguf<&[u8]>` from [`Gguf::from_slice`]: keys, strings, names and tensor data borrow from the
///   slice.
/// - `Gguf<memmap2::Mmap>` from [`Gguf::open`]: the file is memory-mapped; nothing is copied.
/// - `Gguf<MetadataOnly>` from [`Gguf::from_reader`]: metadata and tensor infos, no tensor data.
///
/// Opening validates everything listed in the [module docs](self); afterwards no accessor fails
/// on the file's content.
#[derive(Debug)]
pub struct Gguf<S> {
    source: S,
    layout: Layout,
}

impl<'a> Gguf<&'a [u8]> {
    /// Parses and validates a whole file held in memory.
    ///
    /// # Errors
    /// Any validation error of the [module docs](self), with its byte offset.
    pub fn from_slice(bytes: &'a [u8]) -> Result<Self> {
        let layout = feed::parse(&mut feed::Whole(bytes), Goal::TensorInfos)?;
        Ok(Gguf { source: bytes, layout })
    }

    /// The KV entries with lifetimes tied to the slice rather than to `self` (see
    /// [`Gguf::metadata`]).
    pub fn metadata_borrowed(&self) -> impl ExactSizeIterator<Item = Kv<'a>> + '_ {
        let data: &'a [u8] = self.source;
        self.layout.kvs.iter().map(move |e| Kv::new(&self.layout, data, e))
    }

    /// Like [`Gguf::tensor_data`], with the lifetime of the slice; `name` as for [`Gguf::tensor`].
    ///
    /// # Errors
    /// None for a tensor of this file; [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) for a name it does not have.
    pub fn tensor_data_borrowed(&self, name: impl AsRef<[u8]>) -> Result<&'a [u8]> {
        let data: &'a [u8] = self.source;
        let name = GgufStr::from_bytes(name.as_ref());
        let t = self.tensor(name).ok_or_else(|| Error::not_found("tensor", name))?;
        if t.nbytes == 0 {
            return Ok(&[]);
        }
        slice_range(data, t.data_offset, t.nbytes).ok_or_else(|| Error::data_not_loaded(name))
    }
}

#[cfg(feature = "mmap")]
impl Gguf<memmap2::Mmap> {
    /// Memory-maps the file at `path` and validates it. Tensor data is not read until used.
    ///
    /// ```
    /// use gguf_serde::{GgmlType, Gguf, ValueRef};
    ///
    /// // The GGUF spec's test vector, checked into this repository.
    /// let file = Gguf::open("../tests/data/small.gguf")?;
    /// assert_eq!(file.get("general.architecture"), Some(ValueRef::String("llama".into())));
    /// let t = file.tensor("w_q8_0").expect("the test vector has it");
    /// assert_eq!((t.dtype, &*t.shape), (GgmlType::Q8_0, &[4, 64][..]));
    /// // Borrowed from the mapping: 4 rows of 64 elements, 2 blocks of 34 bytes per row.
    /// assert_eq!(file.tensor_data(&t)?.len(), 4 * 2 * 34);
    /// # Ok::<(), gguf_serde::Error>(())
    /// ```
    ///
    /// # Safety of the mapping (a decision)
    ///
    /// `open` is a safe function over memmap2's `unsafe` `Mmap::map`, as most readers of mapped
    /// model files are (llama.cpp maps its models too). The mapping is read-only, and every read
    /// through it is bounds-checked against the length it had when it was made. What no check can
    /// prevent is another process changing the file while it is mapped: truncating it makes a
    /// read of the lost pages end the process with `SIGBUS`, and rewriting bytes in place changes
    /// data this value has already validated (strictly, Rust does not allow the bytes behind a
    /// `&[u8]` to change at all). So the file must not be truncated or modified in place while
    /// it is open. This crate's own writers never do that: [`GgufWriter::create`] and the
    /// [`ops`](crate::ops) functions write a temporary file and rename it over the old one, which
    /// leaves an open mapping on the old file's contents. When the file may be changed by
    /// others, read it into memory instead: [`Gguf::from_vec`]`(std::fs::read(path)?)`, or
    /// [`Gguf::from_reader`] for the metadata alone.
    ///
    /// Requires the `mmap` feature (a default).
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if the file cannot be opened or mapped, or is not a regular file (a FIFO,
    /// a device, a folder); any validation error.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        // A FIFO would block in `open` and a device or folder cannot be mapped: refuse them first.
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
                return Err(Error::io(format!("opening {}", crate::format::shown_path(&path)), e));
            }
            _ => {}
        }
        let file =
            File::open(path).map_err(|e| Error::io(format!("opening {}", crate::format::shown_path(&path)), e))?;
        // SAFETY: the mapping is read-only and private to this value; like every reader of mapped
        // files we rely on the file not being changed underneath it (documented above). All reads
        // go through bounds-checked slices.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| Error::io(format!("mapping {}", crate::format::shown_path(&path)), e))?;
        let layout = feed::parse(&mut feed::Whole(&map), Goal::TensorInfos)?;
        Ok(Gguf { source: map, layout })
    }
}

impl Gguf<MetadataOnly> {
    /// Reads the metadata and tensor infos of a file from `reader`, which is positioned at the
    /// start of the file; tensor data is not read: the parser reads the items as their lengths
    /// say, asking for each piece it needs, and at most 8 KiB (a read-ahead) is read past the end
    /// of the tensor infos. Counts and lengths are checked against the file's length (from
    /// `Seek`) before anything is read for them, so memory follows what the file really holds.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the reader; any validation error (tensor bounds are checked against the
    /// file's length).
    pub fn from_reader<R: Read + Seek>(reader: R) -> Result<Self> {
        Self::from_reader_in_pieces(reader, feed::READ_AHEAD)
    }

    /// [`Gguf::from_reader`] reading at most `read_ahead` bytes past what the parser asks for
    /// (0: the parser stops and resumes at every item). For tests and fuzzing.
    #[doc(hidden)]
    pub fn from_reader_in_pieces<R: Read + Seek>(mut reader: R, read_ahead: usize) -> Result<Self> {
        let start = reader.stream_position()?;
        let end = reader.seek(SeekFrom::End(0))?;
        reader.seek(SeekFrom::Start(start))?;
        let file_len = end.saturating_sub(start);
        let mut feed = feed::Pieces::new(reader, Some(file_len), "reading metadata").with_read_ahead(read_ahead);
        let layout = feed::parse(&mut feed, Goal::TensorInfos)?;
        Ok(Gguf { source: MetadataOnly::cut(feed.into_bytes(), &layout), layout })
    }

    /// The header and key/value pairs of a file read from a plain `reader` (at the start of the
    /// file), and nothing after them; what serde's [`from_reader`](crate::from_reader) reads.
    /// The tensor count is not used and the result has no tensor infos: it is not a file of its
    /// own (its `file_len`, `data_offset` and `tensor_infos_end` are the end of the pairs). The
    /// reader's length is not known, so a count is checked by reading as far as it claims, at
    /// most to the end of the reader; the errors are those the same bytes in memory give for the
    /// header and pairs. Reads at most `read_ahead` bytes past what the parser asks for.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the reader; any validation error of the header and pairs.
    #[doc(hidden)]
    pub fn kv_block_from_reader<R: Read>(reader: R, read_ahead: usize) -> Result<Self> {
        let mut feed = feed::Pieces::new(reader, None, "reading GGUF").with_read_ahead(read_ahead);
        let layout = feed::parse(&mut feed, Goal::KvBlock)?;
        Ok(Gguf { source: MetadataOnly::cut(feed.into_bytes(), &layout), layout })
    }
}

impl MetadataOnly {
    /// The metadata of `layout` in `bytes`: the read-ahead past its end dropped.
    fn cut(mut bytes: Vec<u8>, layout: &Layout) -> MetadataOnly {
        bytes.truncate(usize::try_from(layout.infos_end).unwrap_or(usize::MAX));
        MetadataOnly(bytes)
    }
}

impl Gguf<Vec<u8>> {
    /// Parses and validates a whole file held in an owned buffer.
    ///
    /// # Errors
    /// As [`Gguf::from_slice`].
    pub fn from_vec(bytes: Vec<u8>) -> Result<Self> {
        let layout = feed::parse(&mut feed::Whole(&bytes), Goal::TensorInfos)?;
        Ok(Gguf { source: bytes, layout })
    }
}

fn slice_range(data: &[u8], start: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    data.get(start..end)
}

impl<S: Source> Gguf<S> {
    /// The format version: 2 or 3.
    pub fn version(&self) -> u32 {
        self.layout.version
    }

    /// The byte order.
    pub fn endian(&self) -> Endian {
        self.layout.endian
    }

    /// `general.alignment`, or 32 if the file does not set it. Bytes.
    pub fn alignment(&self) -> u32 {
        self.layout.alignment
    }

    /// Absolute byte offset where the data section starts: the end of the tensor infos rounded
    /// up to the alignment, or, in a file without tensors, the end of the tensor infos itself
    /// (what ggml's `gguf_get_data_offset` reports: its reader seeks to the padded offset only
    /// when there are tensors; gguf-py's `GGUFReader.data_offset` rounds up in either case).
    /// Tensor `data_offset`s are this plus the stored relative offset.
    pub fn data_offset(&self) -> u64 {
        self.layout.data_offset
    }

    /// Absolute byte offset where the tensor infos end (before the padding).
    pub fn tensor_infos_end(&self) -> u64 {
        self.layout.infos_end
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.layout.file_len
    }

    /// The byte source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The bytes held by the source (the whole file, or the metadata only).
    pub fn bytes(&self) -> &[u8] {
        self.source.bytes()
    }

    /// The number of key/value pairs.
    pub fn kv_count(&self) -> usize {
        self.layout.kvs.len()
    }

    /// The key/value pairs, in file order.
    pub fn metadata(&self) -> impl ExactSizeIterator<Item = Kv<'_>> + '_ {
        let data = self.source.bytes();
        self.layout.kvs.iter().map(move |e| Kv::new(&self.layout, data, e))
    }

    /// The value of `key`, if present. Keys are compared as bytes: `key` is a `&str` for the usual
    /// UTF-8 key, or the bytes (a [`GgufStr`], a `&[u8]`) of one that is not. Linear in the number
    /// of keys (a few dozen in real files).
    pub fn get(&self, key: impl AsRef<[u8]>) -> Option<ValueRef<'_>> {
        let key = key.as_ref();
        self.metadata().find(|kv| kv.key.as_bytes() == key).map(|kv| kv.value)
    }

    /// The text of the string value of `key`: `None` if the file has no such key or its value is
    /// not a string.
    ///
    /// # Errors
    /// [`FormatError::InvalidUtf8`] (with the key and the offset of the string's bytes) for a
    /// string that is not UTF-8; its bytes are in [`Gguf::get`]'s [`ValueRef::String`].
    pub fn get_str(&self, key: impl AsRef<[u8]>) -> Result<Option<&str>> {
        let key = key.as_ref();
        let Some(kv) = self.metadata().find(|kv| kv.key.as_bytes() == key) else { return Ok(None) };
        kv.value_str()
    }

    /// The number of tensors.
    pub fn tensor_count(&self) -> usize {
        self.layout.tensors.len()
    }

    /// The tensor infos, in file order.
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = TensorInfo<'_>> + '_ {
        let data = self.source.bytes();
        self.layout.tensors.iter().map(move |t| TensorInfo::new(&self.layout, data, t))
    }

    /// The tensor info at position `index` in file order (0-based), if there is one.
    pub fn tensor_at(&self, index: usize) -> Option<TensorInfo<'_>> {
        let data = self.source.bytes();
        self.layout.tensors.get(index).map(|t| TensorInfo::new(&self.layout, data, t))
    }

    /// The tensor info named `name` (binary search over a sorted index). Names are compared as
    /// bytes: `name` is a `&str`, or the bytes ([`GgufStr`], `&[u8]`) of a name that is not UTF-8.
    pub fn tensor(&self, name: impl AsRef<[u8]>) -> Option<TensorInfo<'_>> {
        let name = name.as_ref();
        let data = self.source.bytes();
        let name_of = |i: u32| -> &[u8] {
            self.layout.tensors.get(i as usize).and_then(|t| data.get(t.name.clone())).unwrap_or_default()
        };
        let pos = self.layout.tensors_by_name.binary_search_by(|&i| name_of(i).cmp(name)).ok()?;
        let idx = *self.layout.tensors_by_name.get(pos)?;
        self.layout.tensors.get(idx as usize).map(|t| TensorInfo::new(&self.layout, data, t))
    }

    /// The stored bytes of a tensor: `info.nbytes` bytes at `info.data_offset`, in the file's byte
    /// order, without copying. A tensor of 0 bytes (a dimension of 0) has the empty slice, from
    /// every source.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) (`"tensor of this file"`) for an `info` that is not one of this
    /// file's tensor infos (one of another file: this file has no tensor of that name, or one with
    /// another type, shape or place); [`ErrorKind::DataNotLoaded`](crate::ErrorKind::DataNotLoaded) for a tensor of a file opened
    /// with [`Gguf::from_reader`], unless it has 0 bytes.
    pub fn tensor_data(&self, info: &TensorInfo<'_>) -> Result<&[u8]> {
        // One binary search: an info of another file must not read this file's bytes.
        if self.tensor(info.name).as_ref() != Some(info) {
            return Err(Error::not_found("tensor of this file", info.name));
        }
        if info.nbytes == 0 {
            return Ok(&[]);
        }
        slice_range(self.source.bytes(), info.data_offset, info.nbytes).ok_or_else(|| Error::data_not_loaded(info.name))
    }

    /// The stored bytes of the tensor named `name` (as for [`Gguf::tensor`]).
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) if there is no such tensor; otherwise as [`Gguf::tensor_data`].
    pub fn tensor_data_by_name(&self, name: impl AsRef<[u8]>) -> Result<&[u8]> {
        let name = GgufStr::from_bytes(name.as_ref());
        let info = self.tensor(name).ok_or_else(|| Error::not_found("tensor", name))?;
        self.tensor_data(&info)
    }
}

/// One key/value pair of the metadata, made by the parser ([`Gguf::metadata`]); to write one, use
/// [`GgufWriter::add_kv`]. It is `#[non_exhaustive]`: it may gain fields.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Kv<'a> {
    /// The key as stored, e.g. `general.architecture`: compares equal to a `&str`; its text is
    /// [`key_str`](Self::key_str) (ggml does not require keys to be UTF-8, see [`GgufStr`]).
    pub key: GgufStr<'a>,
    /// The value with its stored type.
    pub value: ValueRef<'a>,
    /// Absolute byte offset of the pair (its key length field).
    pub offset: u64,
    /// Absolute byte offset of the value (after its type id).
    pub value_offset: u64,
    /// The stored byte of a BOOL value (which [`ValueRef::Bool`] reads as ggml does); 0 for
    /// other types.
    bool_byte: u8,
}

impl<'a> Kv<'a> {
    fn new(layout: &Layout, data: &'a [u8], e: &parse::KvEntry) -> Kv<'a> {
        let value = layout.value_ref(data, &e.value);
        let bool_byte = match value {
            ValueRef::Bool(_) => {
                usize::try_from(e.value_offset).ok().and_then(|i| data.get(i)).copied().unwrap_or_default()
            }
            _ => 0,
        };
        Kv {
            key: GgufStr::from_bytes(data.get(e.key.clone()).unwrap_or_default()),
            value,
            offset: e.offset,
            value_offset: e.value_offset,
            bool_byte,
        }
    }

    /// The value's BOOL bytes (a BOOL, or the elements of an `array<bool>` at any depth of an
    /// array of arrays) that are neither 0 nor 1: how many, and the first with its absolute
    /// offset; `None` if there are none (always for other types). ggml reads such a byte as
    /// true, and so does this crate ([`ValueRef::Bool`]); the spec allows only 0 and 1, which is
    /// what the writer writes back. `gguf validate` warns with this.
    ///
    /// ```
    /// use gguf_serde::{Gguf, GgufWriter, ValueRef};
    ///
    /// let mut w = GgufWriter::new(Vec::new());
    /// w.add_kv("a.flag", true)?;
    /// let mut bytes = w.finish()?;
    /// let at = Gguf::from_slice(&bytes)?.metadata().next().expect("one pair").value_offset;
    /// bytes[at as usize] = 0x02; // stored as 2: true for ggml
    /// let file = Gguf::from_slice(&bytes)?;
    /// let kv = file.metadata().next().expect("one pair");
    /// assert_eq!(kv.value, ValueRef::Bool(true));
    /// let odd = kv.odd_bool_bytes().expect("one odd byte");
    /// assert_eq!((odd.count, odd.first, odd.offset), (1, 0x02, at));
    /// # Ok::<(), gguf_serde::Error>(())
    /// ```
    pub fn odd_bool_bytes(&self) -> Option<OddBoolBytes> {
        // An array's elements follow its element type (4 bytes) and count (8).
        let start = match self.value {
            ValueRef::Array(_) => self.value_offset.saturating_add(12),
            _ => self.value_offset,
        };
        value::odd_bool_bytes(self.value, self.bool_byte, start)
    }

    /// The key as text.
    ///
    /// # Errors
    /// [`FormatError::InvalidUtf8`] naming the key (escaped, as [`GgufStr`]'s `Display` shows it: `\xNN` for a bad byte) and the offset of its
    /// bytes, for a key that is not UTF-8.
    pub fn key_str(&self) -> Result<&'a str> {
        self.key.to_str().map_err(|_| {
            let owner = Some(self.key.to_string());
            FormatError::InvalidUtf8 { item: Item::Key, owner, offset: self.offset.saturating_add(8) }.into()
        })
    }

    /// The text of the value, if it is a string (`None` for another type).
    ///
    /// # Errors
    /// [`FormatError::InvalidUtf8`] naming the key and the offset of the string's bytes, for a
    /// string that is not UTF-8.
    pub fn value_str(&self) -> Result<Option<&'a str>> {
        let ValueRef::String(s) = self.value else { return Ok(None) };
        s.to_str().map(Some).map_err(|_| {
            let owner = Some(self.key.to_string());
            FormatError::InvalidUtf8 { item: Item::String, owner, offset: self.value_offset.saturating_add(8) }.into()
        })
    }
}

/// A tensor info, in the canonical terms of the GGUF layout.
///
/// Made by the parser ([`Gguf::tensors`], [`Gguf::tensor`]); to write tensor infos, use
/// [`GgufWriter::add_tensor`]. It is `#[non_exhaustive]`: it may gain fields.
///
/// ```
/// use gguf_serde::{GgmlType, Gguf};
///
/// // The GGUF spec's test vector: its BF16 tensor has 6 rows of 16 elements.
/// let file = Gguf::open("../tests/data/small.gguf")?;
/// let t = file.tensor("e_bf16").expect("the test vector has it");
/// assert_eq!(t.dtype, GgmlType::BF16);
/// assert_eq!(&*t.shape, &[6, 16]); // canonical: outermost first
/// assert_eq!(t.ne().dims(), &[16, 6]); // stored `ne`: fastest first, as ggml has it
/// assert_eq!((t.n_elements, t.nbytes), (96, 96 * 2));
/// // The third tensor: after 1024 bytes of F32 and 272 of Q8_0, each padded to 32 bytes.
/// assert_eq!(t.relative_offset, 1024 + 288);
/// assert_eq!(t.data_offset, file.data_offset() + t.relative_offset);
/// # Ok::<(), gguf_serde::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct TensorInfo<'a> {
    /// The tensor's name as stored, e.g. `blk.0.attn_q.weight`: compares equal to a `&str`; its
    /// text is [`name_str`](Self::name_str) (ggml does not require names to be UTF-8, see
    /// [`GgufStr`]).
    pub name: GgufStr<'a>,
    /// Its ggml type.
    pub dtype: GgmlType,
    /// Canonical shape, outermost first: the stored dims reversed. A tensor stored with one
    /// dimension of length 1 (how ggml writes a scalar) has shape `[1]`; one stored with no
    /// dimensions has shape `[]`.
    pub shape: Shape,
    /// Absolute byte offset of the data in the file: the data section start plus the stored
    /// relative offset.
    pub data_offset: u64,
    /// Bytes of data: `ne[0] / block_size × type_size × ne[1] × …`.
    pub nbytes: u64,
    /// Number of elements (product of the dims; 1 for no dims).
    pub n_elements: u64,
    /// The offset as stored, relative to the data section.
    pub relative_offset: u64,
    /// Absolute byte offset of this tensor info in the file.
    pub info_offset: u64,
}

impl<'a> TensorInfo<'a> {
    fn new(layout: &Layout, data: &'a [u8], t: &parse::TensorEntry) -> TensorInfo<'a> {
        let ne = t.ne.get(..t.n_dims as usize).unwrap_or_default();
        TensorInfo {
            name: GgufStr::from_bytes(data.get(t.name.clone()).unwrap_or_default()),
            dtype: t.dtype,
            shape: Shape::from_ne(ne).unwrap_or_default(),
            data_offset: layout.data_offset.saturating_add(t.offset),
            nbytes: t.nbytes,
            n_elements: t.n_elements,
            relative_offset: t.offset,
            info_offset: t.info_offset,
        }
    }

    /// The stored dims, fastest first (`ne[0]` is the row length): [`shape`](Self::shape)
    /// reversed, as the file stores them.
    pub fn ne(&self) -> Ne {
        self.shape.ne()
    }

    /// The name as text.
    ///
    /// # Errors
    /// [`FormatError::InvalidUtf8`] naming the tensor (escaped, as [`GgufStr`]'s `Display` shows it) and the offset of
    /// the name's bytes, for a name that is not UTF-8.
    pub fn name_str(&self) -> Result<&'a str> {
        self.name.to_str().map_err(|_| {
            let owner = Some(self.name.to_string());
            FormatError::InvalidUtf8 { item: Item::TensorName, owner, offset: self.info_offset.saturating_add(8) }
                .into()
        })
    }
}
