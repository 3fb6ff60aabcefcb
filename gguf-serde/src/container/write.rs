//! The streaming writer.
//!
//! Declare key/value pairs and tensor infos, then give each tensor's bytes in declaration order;
//! the header is written before the first tensor's data, and nothing of the tensor data is held
//! in memory. Layout follows ggml's `gguf_write_to_buf`: tensor offsets are the running sum of
//! sizes padded to the alignment, the data section starts at the aligned end of the tensor infos,
//! and every tensor (the last one too) is followed by zero padding to the alignment. A file read
//! and written back with the same keys, tensors and version is therefore byte-identical to one
//! that ggml wrote.
//!
//! Strings: keys, string values and tensor names are written as the bytes given. Text given as
//! `&str`/`String` is UTF-8, as gguf-py writes it (`str.encode("utf-8")`); a key or tensor name
//! copied from a file is given as its [`GgufStr`] and keeps its bytes, UTF-8 or not, as ggml's
//! writer keeps any bytes it read (a file that ggml loads is copied, not refused). New keys given
//! to [`GgufWriter::add_kv`]/[`add_value`](GgufWriter::add_value) must be ASCII (the spec's rule);
//! [`GgufWriter::add_kv_ref`] copies a pair with its key as stored.
//!
//! Bools: written as 0 or 1, also when copied from a file that stores another byte (read as
//! true, as ggml reads it): ggml's writer writes 1 for such a value too (`llama-quantize` and
//! `llama-gguf-split` copy pairs through `gguf_set_kv`), so a copy reads the same with every
//! reader and no longer holds what the spec forbids.

use std::collections::HashSet;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use super::align_up;
use super::value::{Array, ArrayRef, Value, ValueRef};
use crate::error::{Error, Result, WriteError};
use crate::format::keys::GENERAL_ALIGNMENT;
use crate::format::Ne;
use crate::format::ValueType;
use crate::format::{alignment_value_problem, Endian, DEFAULT_ALIGNMENT, MAX_DEPTH, MAX_DIMS, MAX_TENSOR_NAME};
use crate::format::{GgmlType, GgufStr};

mod encode;
use encode::Encoder;
pub(crate) use encode::{array_len, elems_len, encoded_len};

/// Options of a [`GgufWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Format version to write: 3 (default) or 2 (same layout; 2 must be little-endian).
    pub version: u32,
    /// Byte order of every number, length and count. Tensor data is written exactly as given: the
    /// caller supplies it in this byte order.
    pub endian: Endian,
    /// Whether a file with no tensors gets zero padding after its (empty) tensor infos, up to the
    /// alignment (at most `alignment - 1` bytes: up to 2 GiB for the largest,
    /// [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT), written as a stream of zeros). ggml's
    /// `gguf_write_to_file` writes it; gguf-py's `GGUFWriter` writes it from
    /// `write_tensors_to_file`, not when only the header and key/value pairs are written. Readers
    /// ignore it: ggml puts such a file's data offset at the end of the tensor infos, padding or
    /// not. Default `true`.
    pub pad_empty_data: bool,
}

impl WriteOptions {
    /// The default options: version 3, little-endian, padding after empty tensor infos.
    pub fn new() -> Self {
        WriteOptions::default()
    }

    /// These options with format version `version` (3 or 2; checked by [`GgufWriter`]).
    pub fn with_version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    /// These options with byte order `endian`.
    pub fn with_endian(mut self, endian: Endian) -> Self {
        self.endian = endian;
        self
    }

    /// These options with [`pad_empty_data`](Self::pad_empty_data) set to `pad`.
    pub fn with_pad_empty_data(mut self, pad: bool) -> Self {
        self.pad_empty_data = pad;
        self
    }

    /// Options that write a file laid out like `file`: its version, its byte order, and zero
    /// padding after the tensor infos exactly when `file` has it (always when it has tensors; for
    /// a metadata-only file, when the file extends to the end of its tensor infos rounded up to
    /// the alignment, as ggml writes it, and not when it ends right after the tensor infos).
    /// Every whole-file operation ([`crate::ops`]) writes with these, so reading a file and
    /// writing it back is byte-identical.
    pub fn like<S: super::Source>(file: &super::Gguf<S>) -> WriteOptions {
        WriteOptions {
            version: file.version(),
            endian: file.endian(),
            pad_empty_data: file.tensor_count() > 0
                || align_up(file.tensor_infos_end(), file.alignment()).is_some_and(|end| file.file_len() >= end),
        }
    }
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions { version: 3, endian: Endian::Little, pad_empty_data: true }
    }
}

#[derive(Debug)]
struct Pending {
    /// The name's bytes, as given.
    name: Vec<u8>,
    dtype: GgmlType,
    ne: Ne,
    nbytes: u64,
    offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Declaring,
    Data {
        next: usize,
    },
    Finished,
    /// An error left part of an item written: the file cannot be completed.
    Failed,
}

fn failed() -> Error {
    WriteError::Misuse {
        reason: "an earlier error left the output partly written; the file cannot be completed".into(),
    }
    .into()
}

/// A streaming GGUF writer over any `Write`.
///
/// ```
/// use gguf_serde::{GgufWriter, GgmlType, Gguf};
/// let mut w = GgufWriter::new(Vec::new());
/// w.add_kv("general.architecture", "llama")?;
/// w.add_tensor("w", GgmlType::F32, &[2, 3])?; // canonical shape: 2 rows of 3
/// w.write_tensor_data(&[0u8; 24])?;
/// let bytes = w.finish()?;
/// let file = Gguf::from_slice(&bytes)?;
/// assert_eq!(&*file.tensor("w").unwrap().shape, &[2, 3]);
/// # Ok::<(), gguf_serde::Error>(())
/// ```
#[derive(Debug)]
pub struct GgufWriter<W: Write> {
    out: W,
    opts: WriteOptions,
    kv_bytes: Vec<u8>,
    kv_count: u64,
    keys: HashSet<Vec<u8>>,
    alignment: u32,
    tensors: Vec<Pending>,
    names: HashSet<Vec<u8>>,
    next_offset: u64,
    state: State,
    written: u64,
}

impl GgufWriter<AtomicFile> {
    /// Writes to a temporary file in the folder of `path`; [`GgufWriter::commit`] renames it into
    /// place, replacing a file that is there (to keep one instead, and fail:
    /// `GgufWriter::new(AtomicFile::create(path, IfExists::Fail)?)`, see [`IfExists`]). Dropped
    /// or failed before that, the temporary file is removed and any existing file at `path` is
    /// untouched. On Linux the file is written with direct I/O where the file system takes it, so
    /// it is not left in the page cache (see [`AtomicFile`]).
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if the temporary file cannot be created.
    ///
    /// [`IfExists`]: crate::container::IfExists
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        Ok(GgufWriter::new(AtomicFile::new(path)?))
    }

    /// As [`GgufWriter::create`], with options.
    ///
    /// # Errors
    /// As [`GgufWriter::create`] and [`GgufWriter::with_options`].
    pub fn create_with_options(path: impl AsRef<Path>, opts: WriteOptions) -> Result<Self> {
        GgufWriter::with_options(AtomicFile::new(path)?, opts)
    }

    /// Finishes the file ([`GgufWriter::finish`]), syncs it and renames it into place.
    ///
    /// # Errors
    /// As [`GgufWriter::finish`] and [`AtomicFile::commit`].
    pub fn commit(self) -> Result<()> {
        self.finish()?.commit()
    }
}

impl<W: Write> GgufWriter<W> {
    /// A writer of GGUF version 3, little-endian.
    pub fn new(out: W) -> Self {
        GgufWriter {
            out,
            opts: WriteOptions::default(),
            kv_bytes: Vec::new(),
            kv_count: 0,
            keys: HashSet::new(),
            alignment: DEFAULT_ALIGNMENT,
            tensors: Vec::new(),
            names: HashSet::new(),
            next_offset: 0,
            state: State::Declaring,
            written: 0,
        }
    }

    /// A writer with `opts`.
    ///
    /// # Errors
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) for a version other than 2 or 3, or
    /// version 2 big-endian.
    pub fn with_options(out: W, opts: WriteOptions) -> Result<Self> {
        if !(2..=3).contains(&opts.version) || (opts.version == 2 && opts.endian == Endian::Big) {
            return Err(WriteError::Misuse {
                reason: format!(
                    "cannot write version {} {}-endian (2 little-endian or 3 either way)",
                    opts.version,
                    opts.endian.name()
                ),
            }
            .into());
        }
        let mut w = GgufWriter::new(out);
        w.opts = opts;
        Ok(w)
    }

    /// The byte order of the output (tensor data must be given in it).
    pub fn endian(&self) -> Endian {
        self.opts.endian
    }

    /// The alignment in force: the value of `general.alignment` if it was added, else 32.
    pub fn alignment(&self) -> u32 {
        self.alignment
    }

    /// Checks a key to add; `copied`: the key of a pair copied from a file, any bytes (as ggml
    /// keeps them), not only ASCII.
    fn check_key(&mut self, key: GgufStr<'_>, copied: bool) -> Result<()> {
        if self.state != State::Declaring {
            return Err(
                WriteError::Misuse { reason: format!("key {key:?} added after tensor data was started") }.into()
            );
        }
        let reason = if key.is_empty() {
            Some("empty")
        } else if key.len() > 65535 {
            Some("longer than 65,535 bytes")
        } else if !copied && !key.as_bytes().is_ascii() {
            Some("not ASCII (the spec requires ASCII keys)")
        } else if self.keys.contains(key.as_bytes()) {
            Some("already added (duplicate key)")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(WriteError::InvalidKey { key: key.to_string(), reason }.into());
        }
        Ok(())
    }

    fn set_alignment(&mut self, key: &str, value: Option<u32>, type_name: &'static str) -> Result<()> {
        if key != GENERAL_ALIGNMENT {
            return Ok(());
        }
        if let Some(problem) = alignment_value_problem(type_name, value) {
            return Err(WriteError::BadAlignment { problem, offset: self.next_kv_offset() }.into());
        }
        // No problem: a UINT32 power of two.
        if let Some(a) = value {
            self.alignment = a;
        }
        Ok(())
    }

    /// Adds a key/value pair; the value's Rust type chooses its GGUF type (`u32` is UINT32,
    /// `&str` STRING, `Vec<f32>` ARRAY of FLOAT32, …). `general.alignment` (UINT32, a power of
    /// two from 1 to [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT), 2^31, as ggml takes it) sets
    /// the alignment of the tensor data: the padding after the tensor infos and after each tensor
    /// is up to `alignment - 1` zero bytes, written in pieces of at most 4 KiB.
    ///
    /// # Errors
    /// [`WriteError::InvalidKey`](crate::WriteError::InvalidKey) for an empty, over-long (> 65,535
    /// bytes), non-ASCII or duplicate key;
    /// [`WriteError::BadAlignment`](crate::WriteError::BadAlignment);
    /// [`WriteError::TooDeep`](crate::WriteError::TooDeep) for arrays nested past [`MAX_DEPTH`];
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) once tensor data has started.
    pub fn add_kv(&mut self, key: &str, value: impl Into<Value>) -> Result<()> {
        self.add_value(key, &value.into())
    }

    /// Adds a key/value pair from an owned [`Value`]. Errors as [`GgufWriter::add_kv`].
    ///
    /// # Errors
    /// As [`GgufWriter::add_kv`].
    pub fn add_value(&mut self, key: &str, value: &Value) -> Result<()> {
        self.add_value_keyed(key.into(), value, false)
    }

    /// [`GgufWriter::add_value`] with a key of any bytes; `copied`: a key read from a file or
    /// given to an edit (an edit's key, an import of an export), not refused for not being
    /// ASCII, as [`GgufWriter::add_kv_ref`] takes it.
    pub(crate) fn add_value_keyed(&mut self, key_bytes: GgufStr<'_>, value: &Value, copied: bool) -> Result<()> {
        self.check_key(key_bytes, copied).map_err(|e| e.at_output_offset(self.next_kv_offset()))?;
        let key_shown = key_bytes.escaped();
        let key: &str = &key_shown;
        let align = match value {
            Value::U32(a) => Some(*a),
            _ => None,
        };
        self.set_alignment(key, align, value.value_type().name())?;
        let mut enc = Encoder { out: Vec::new(), endian: self.opts.endian, base: self.next_kv_offset() };
        enc.string(key_bytes.as_bytes());
        enc.u32(value.value_type().id());
        enc.value(value, key, 1)?;
        self.push_kv(key_bytes.as_bytes(), enc.out);
        Ok(())
    }

    /// Adds a key/value pair borrowed from another file, copying its stored bytes (re-encoded if
    /// the byte orders differ). The key is a `&str`, or the [`GgufStr`] of a key read from a file:
    /// its bytes are written as they are, UTF-8 or not, ASCII or not (as ggml copies a key it
    /// read), and so are the bytes of every string in the value. A BOOL is written as 0 or 1 (a
    /// stored byte other than 0 and 1 is true, written 1, as ggml's `gguf_set_kv` copies it).
    ///
    /// # Errors
    /// As [`GgufWriter::add_kv`], except that a key is not refused for not being ASCII.
    pub fn add_kv_ref<'k>(&mut self, key: impl Into<GgufStr<'k>>, value: ValueRef<'_>) -> Result<()> {
        let key_bytes: GgufStr<'_> = key.into();
        self.check_key(key_bytes, true).map_err(|e| e.at_output_offset(self.next_kv_offset()))?;
        let key_shown = key_bytes.escaped();
        let key: &str = &key_shown;
        let align = match value {
            ValueRef::U32(a) => Some(a),
            _ => None,
        };
        self.set_alignment(key, align, value.value_type().name())?;
        let mut enc = Encoder { out: Vec::new(), endian: self.opts.endian, base: self.next_kv_offset() };
        enc.string(key_bytes.as_bytes());
        enc.u32(value.value_type().id());
        enc.value_ref(value, key, 1)?;
        self.push_kv(key_bytes.as_bytes(), enc.out);
        Ok(())
    }

    /// Where the next pair will start in the output: after the 24-byte header and the pairs so
    /// far (for the offsets of errors).
    pub(crate) fn next_kv_offset(&self) -> u64 {
        (self.kv_bytes.len() as u64).saturating_add(24)
    }

    fn push_kv(&mut self, key: &[u8], bytes: Vec<u8>) {
        if self.kv_bytes.is_empty() {
            self.kv_bytes = bytes;
        } else {
            self.kv_bytes.extend_from_slice(&bytes);
        }
        // One per pair held in memory: cannot reach u64::MAX.
        self.kv_count = self.kv_count.saturating_add(1);
        self.keys.insert(key.to_vec());
    }

    /// Declares a tensor by canonical shape (outermost first; stored as `ne` = `shape` reversed).
    /// An empty `shape` (a scalar) is stored as one dimension of length 1, as ggml does. The
    /// name is a `&str`, or the [`GgufStr`] of a name read from a file: its bytes are written as
    /// they are, UTF-8 or not (ggml's writer takes any bytes).
    ///
    /// # Errors
    /// [`WriteError::InvalidTensor`](crate::WriteError::InvalidTensor) for a name of 64 bytes or
    /// more, an empty name, a duplicate name, more than 4 dims, a last dim that is not a multiple
    /// of the block size, or a size that overflows `i64`;
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) once tensor data has started.
    pub fn add_tensor<'n>(&mut self, name: impl Into<GgufStr<'n>>, dtype: GgmlType, shape: &[u64]) -> Result<()> {
        let mut ne: Vec<u64> = shape.iter().rev().copied().collect();
        if ne.is_empty() {
            ne.push(1);
        }
        self.add_tensor_ne(name, dtype, &ne)
    }

    /// Declares a tensor by stored dims `ne` (fastest first). Errors as [`GgufWriter::add_tensor`].
    ///
    /// # Errors
    /// As [`GgufWriter::add_tensor`].
    pub fn add_tensor_ne<'n>(&mut self, name: impl Into<GgufStr<'n>>, dtype: GgmlType, ne: &[u64]) -> Result<()> {
        let name: GgufStr<'n> = name.into();
        let bad = |reason: String| Err(WriteError::InvalidTensor { name: name.to_string(), reason }.into());
        if self.state != State::Declaring {
            return Err(WriteError::Misuse {
                reason: format!("tensor {name:?} declared after tensor data was started"),
            }
            .into());
        }
        if name.is_empty() {
            return bad("empty name".into());
        }
        if name.len() as u64 >= MAX_TENSOR_NAME {
            return bad(format!("name is {} bytes; ggml keeps at most {}", name.len(), MAX_TENSOR_NAME - 1));
        }
        if self.names.contains(name.as_bytes()) {
            return bad("duplicate tensor name".into());
        }
        if ne.len() > MAX_DIMS {
            return bad(format!("{} dimensions, at most {MAX_DIMS}", ne.len()));
        }
        if ne.iter().any(|&d| d > i64::MAX as u64) {
            return bad(format!("dimension larger than int64 in ne {ne:?}"));
        }
        let ne0 = ne.first().copied().unwrap_or(1);
        if ne0.checked_rem(dtype.block_size()) != Some(0) {
            return bad(format!(
                "row length {ne0} (last canonical dim) is not a multiple of the {dtype} block size {}",
                dtype.block_size()
            ));
        }
        let n_elements = ne.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).filter(|&n| n <= i64::MAX as u64);
        let nbytes = dtype.nbytes(ne).filter(|&n| n <= i64::MAX as u64);
        let (Some(_), Some(nbytes)) = (n_elements, nbytes) else {
            return bad(format!("size of ne {ne:?} overflows int64"));
        };
        let offset = self.next_offset;
        let next =
            offset.checked_add(nbytes).and_then(|e| align_up(e, self.alignment)).filter(|&n| n <= i64::MAX as u64);
        let Some(next) = next else {
            return bad("data section larger than int64".into());
        };
        self.next_offset = next;
        let Some(ne) = Ne::new(ne) else {
            return bad(format!("{} dimensions, at most {MAX_DIMS}", ne.len()));
        };
        self.tensors.push(Pending { name: name.as_bytes().to_vec(), dtype, ne, nbytes, offset });
        self.names.insert(name.as_bytes().to_vec());
        Ok(())
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.out.write_all(bytes) {
            self.state = State::Failed;
            return Err(Error::io("writing GGUF", e));
        }
        // Bytes written to one output: a u64 does not overflow (saturating for form's sake).
        self.written = self.written.saturating_add(bytes.len() as u64);
        Ok(())
    }

    fn pad(&mut self) -> Result<()> {
        // In small pieces: nothing of the alignment's size is allocated.
        const ZEROS: [u8; 4096] = [0; 4096];
        let target = align_up(self.written, self.alignment).unwrap_or(self.written);
        while self.written < target {
            let n = usize::try_from(target.saturating_sub(self.written)).map_or(ZEROS.len(), |n| n.min(ZEROS.len()));
            self.emit(ZEROS.get(..n).unwrap_or(&ZEROS))?;
        }
        Ok(())
    }

    /// Writes the header, the key/value pairs, the tensor infos and the padding before the data
    /// section. Called by the first [`write_tensor_data`](Self::write_tensor_data) or
    /// [`finish`](Self::finish) if not called before; declarations are closed afterwards.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer;
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) if called twice.
    pub fn write_header(&mut self) -> Result<()> {
        if self.state == State::Failed {
            return Err(failed());
        }
        if self.state != State::Declaring {
            return Err(WriteError::Misuse { reason: "header already written".into() }.into());
        }
        // Offsets assume a fixed alignment; recompute in case general.alignment came after tensors.
        let mut off = 0u64;
        for t in &mut self.tensors {
            t.offset = off;
            off = off
                .checked_add(t.nbytes)
                .and_then(|e| align_up(e, self.alignment))
                .ok_or_else(|| WriteError::Misuse { reason: "data section overflows u64".into() })?;
        }
        let mut enc = Encoder {
            out: Vec::with_capacity(self.kv_bytes.len().saturating_add(24)),
            endian: self.opts.endian,
            base: 0,
        };
        enc.out.extend_from_slice(&super::wire::MAGIC);
        enc.u32(self.opts.version);
        enc.u64(self.tensors.len() as u64);
        enc.u64(self.kv_count);
        let kv = std::mem::take(&mut self.kv_bytes);
        enc.out.extend_from_slice(&kv);
        for t in &self.tensors {
            enc.string(&t.name);
            enc.u32(t.ne.dims().len() as u32);
            for &d in t.ne.dims() {
                enc.u64(d);
            }
            enc.u32(t.dtype.id());
            enc.u64(t.offset);
        }
        self.emit(&enc.out)?;
        if !self.tensors.is_empty() || self.opts.pad_empty_data {
            self.pad()?;
        }
        self.state = State::Data { next: 0 };
        Ok(())
    }

    fn next_tensor(&mut self) -> Result<(usize, u64, String)> {
        if self.state == State::Declaring {
            self.write_header()?;
        }
        match self.state {
            State::Data { next } => match self.tensors.get(next) {
                Some(t) => Ok((next, t.nbytes, GgufStr::from_bytes(&t.name).to_string())),
                None => Err(WriteError::Misuse {
                    reason: format!("data given for more tensors than the {} declared", self.tensors.len()),
                }
                .into()),
            },
            State::Failed => Err(failed()),
            _ => Err(WriteError::Misuse { reason: "writer already finished".into() }.into()),
        }
    }

    /// Writes the data of the next declared tensor (in declaration order), then its padding.
    /// The bytes are written as given (in the output's byte order).
    ///
    /// # Errors
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) if `bytes` is not the declared
    /// size (nothing is written, so the call can be repeated with the right data);
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) if every declared tensor already has its
    /// data, or after an error that left the output partly written (an
    /// [`ErrorKind::Io`](crate::ErrorKind::Io), or a reader that was short or long in
    /// [`copy_tensor_data`](Self::copy_tensor_data)): such a writer refuses every later call;
    /// [`ErrorKind::Io`](crate::ErrorKind::Io).
    pub fn write_tensor_data(&mut self, bytes: &[u8]) -> Result<()> {
        let (i, nbytes, name) = self.next_tensor()?;
        if bytes.len() as u64 != nbytes {
            return Err(WriteError::SizeMismatch { name, expected: nbytes, found: bytes.len() as u64 }.into());
        }
        self.emit(bytes)?;
        self.pad()?;
        self.state = State::Data { next: i.saturating_add(1) };
        Ok(())
    }

    /// Starts the data of the next declared tensor, to be given in pieces through the returned
    /// [`TensorDataWriter`] (for data made chunk by chunk, e.g. by a converter) and closed with
    /// [`TensorDataWriter::finish`], which checks the total and writes the padding.
    ///
    /// # Errors
    /// As [`GgufWriter::write_tensor_data`].
    pub fn tensor_data_writer(&mut self) -> Result<TensorDataWriter<'_, W>> {
        let (index, expected, name) = self.next_tensor()?;
        Ok(TensorDataWriter { w: self, index, expected, written: 0, name, done: false })
    }

    /// Copies the data of the next declared tensor from `reader`, which must yield exactly the
    /// declared number of bytes, then writes its padding. Memory use is a small fixed buffer.
    ///
    /// # Errors
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) if the reader yields fewer or
    /// more bytes (the bytes it yielded up to the declared size were written: unless there were
    /// none, the writer then refuses every later call); otherwise as
    /// [`GgufWriter::write_tensor_data`].
    pub fn copy_tensor_data(&mut self, mut reader: impl Read) -> Result<()> {
        let (i, nbytes, name) = self.next_tensor()?;
        let copied = match std::io::copy(&mut (&mut reader).take(nbytes), &mut self.out) {
            Ok(n) => n,
            Err(e) => {
                self.state = State::Failed;
                return Err(Error::io("copying tensor data", e));
            }
        };
        self.written = self.written.saturating_add(copied);
        let mut extra = [0u8; 1];
        let more = reader.read(&mut extra);
        if copied > 0 && !(copied == nbytes && matches!(more, Ok(0))) {
            // Part of this tensor went out without the rest: no later call can repair the file.
            self.state = State::Failed;
        }
        let more = more.map_err(|e| Error::io("copying tensor data", e))?;
        if copied != nbytes || more != 0 {
            return Err(
                WriteError::SizeMismatch { name, expected: nbytes, found: copied.saturating_add(more as u64) }.into()
            );
        }
        self.pad()?;
        self.state = State::Data { next: i.saturating_add(1) };
        Ok(())
    }

    /// Writes the header if no tensor data was written, checks every declared tensor got its data,
    /// flushes and returns the inner writer.
    ///
    /// # Errors
    /// [`WriteError::Misuse`](crate::WriteError::Misuse) if a declared tensor has no data or an
    /// earlier error left the output partly written; [`ErrorKind::Io`](crate::ErrorKind::Io).
    pub fn finish(mut self) -> Result<W> {
        if self.state == State::Declaring {
            self.write_header()?;
        }
        if self.state == State::Failed {
            return Err(failed());
        }
        if let State::Data { next } = self.state {
            if next != self.tensors.len() {
                let missing: Vec<String> =
                    self.tensors.iter().skip(next).map(|t| GgufStr::from_bytes(&t.name).to_string()).collect();
                return Err(WriteError::Misuse { reason: format!("no data written for tensors {missing:?}") }.into());
            }
        }
        self.state = State::Finished;
        self.out.flush().map_err(|e| Error::io("flushing GGUF", e))?;
        Ok(self.out)
    }
}

/// The data of one tensor given in pieces; from [`GgufWriter::tensor_data_writer`].
///
/// Dropped without [`finish`](Self::finish) after some bytes were written, the writer is left
/// failed: every later call returns [`WriteError::Misuse`](crate::WriteError::Misuse).
#[derive(Debug)]
pub struct TensorDataWriter<'w, W: Write> {
    w: &'w mut GgufWriter<W>,
    index: usize,
    expected: u64,
    written: u64,
    name: String,
    done: bool,
}

impl<W: Write> TensorDataWriter<'_, W> {
    /// Writes the next piece.
    ///
    /// # Errors
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) if the pieces exceed the
    /// declared size (nothing of this piece is written, and the writer is failed);
    /// [`ErrorKind::Io`](crate::ErrorKind::Io).
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let found = self.written.saturating_add(bytes.len() as u64);
        if found > self.expected {
            self.w.state = State::Failed;
            return Err(WriteError::SizeMismatch { name: self.name.clone(), expected: self.expected, found }.into());
        }
        self.w.emit(bytes)?;
        self.written = found;
        Ok(())
    }

    /// Checks that the declared size was written and writes the padding.
    ///
    /// # Errors
    /// [`WriteError::SizeMismatch`](crate::WriteError::SizeMismatch) if fewer bytes were written
    /// (the writer is then failed); [`ErrorKind::Io`](crate::ErrorKind::Io).
    pub fn finish(mut self) -> Result<()> {
        if self.written != self.expected {
            self.w.state = State::Failed;
            return Err(WriteError::SizeMismatch {
                name: std::mem::take(&mut self.name),
                expected: self.expected,
                found: self.written,
            }
            .into());
        }
        self.w.pad()?;
        self.w.state = State::Data { next: self.index.saturating_add(1) };
        self.done = true;
        Ok(())
    }
}

impl<W: Write> Drop for TensorDataWriter<'_, W> {
    fn drop(&mut self) {
        if !self.done && self.written > 0 {
            self.w.state = State::Failed;
        }
    }
}

/// A file written as a temporary file in the target's folder and given the target's name by
/// [`commit`](Self::commit). Dropped without `commit` (an error, a panic), the temporary file is
/// removed and the target is untouched. On Linux, where the file system has `O_TMPFILE` (ext4,
/// XFS, Btrfs, tmpfs, ...), the temporary file has no name at all until it is complete, so even a
/// process killed by SIGKILL (or a crash) leaves nothing in the folder; elsewhere (or with the
/// environment variable `GGUF_NO_TMPFILE` set to a value other than empty or `0`) it is a named
/// `.gguf-tmp-*.tmp`, removed on error and by [`remove_temporaries`](crate::container::remove_temporaries)
/// but left behind by SIGKILL. A file at the target is replaced at the commit
/// ([`new`](Self::new)), or kept ([`create`](Self::create) with
/// [`IfExists::Fail`](crate::container::IfExists::Fail): the commit then fails, atomically, if
/// a file appeared at the target meanwhile). A file replaced gives the new one its permissions;
/// a new one gets 0666 less the umask. A symbolic link is followed (the file it points to is replaced, the
/// link stays); a target that is not a regular file (`/dev/null`, a FIFO, a folder) is refused.
///
/// On Linux the bytes go to the disk with direct I/O (`O_DIRECT`) where the file system takes
/// it: collected in aligned buffers of 4 MiB (at most four, 16 MiB, allocated as needed) and
/// written a buffer at a time, past the page cache (no copy into page-cache pages, which on a
/// virtual machine whose free memory goes back to the host costs seconds per gigabyte of output),
/// by an I/O thread of the file with positioned writes, while [`write`](Write::write) goes on
/// filling the next buffer (it waits only while every other buffer is being written); the last
/// part of the file that does not fill a block (the direct-I/O alignment of `statx`, at least
/// 4096 bytes) goes through the page cache at [`commit`](Self::commit). An error of a write in
/// flight is returned by the next `write`, [`flush`](Write::flush) (which waits for every write
/// in flight) or `commit`; dropping the file stops and joins its thread. The bytes written are
/// the same either way. What a user sees: the new file is not left in the page cache, so the
/// next program to read it (llama.cpp loading the model) reads it from the disk rather than from
/// memory. Where direct I/O is refused (a file system without it such as tmpfs before Linux 6.6
/// or some FUSE ones, `EINVAL` when it is turned on or at a write: the refused writes are then
/// made again through the page cache, at their offsets; other systems), or when the environment
/// variable `GGUF_NO_DIRECT_IO` is set to a value other than empty or `0`, the file is written
/// through the page cache, and the disk starts writing every 32 MiB as it reaches the file
/// (`sync_file_range`, Linux), so the sync of [`commit`](Self::commit) mostly waits for the tail
/// rather than the whole file. Either way the file is synced (`fsync`) before it is renamed.
#[derive(Debug)]
pub struct AtomicFile {
    sink: Sink,
    pending: crate::container::atomic::PendingFile,
}

/// Where the bytes of an [`AtomicFile`] go.
#[derive(Debug)]
enum Sink {
    /// Direct I/O.
    Direct(crate::container::direct::DirectWriter),
    /// The page cache, with early writeback.
    Buffered { out: BufWriter<std::fs::File>, writeback: crate::container::atomic::Writeback },
    /// A switch from direct to buffered output failed: the file cannot be completed.
    Broken,
}

impl AtomicFile {
    /// Creates the temporary file next to `path`; the commit replaces a file at `path`.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) if it cannot be created, or if `path` exists and is
    /// not a regular file.
    pub fn new(path: impl AsRef<Path>) -> Result<Self> {
        AtomicFile::create(path, crate::container::IfExists::Replace)
    }

    /// Creates the temporary file next to `path`; the commit replaces a file at `path` or keeps
    /// it and fails, as `if_exists` says.
    ///
    /// # Errors
    /// As [`new`](Self::new); with [`IfExists::Fail`](crate::container::IfExists::Fail),
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) with an [`std::io::ErrorKind::AlreadyExists`]
    /// source if `path` exists (a link too).
    pub fn create(path: impl AsRef<Path>, if_exists: crate::container::IfExists) -> Result<Self> {
        AtomicFile::with_options(path.as_ref(), true, if_exists.replaces())
    }

    /// [`new`](Self::new), with direct I/O tried (`direct`) or not.
    #[cfg(test)]
    pub(crate) fn with_direct_io(path: &Path, direct: bool) -> Result<Self> {
        AtomicFile::with_options(path, direct, true)
    }

    /// [`new`](Self::new), with direct I/O tried (`direct`) or not, replacing a file at `path`
    /// at commit (`replace`) or failing if one is there.
    pub(crate) fn with_options(path: &Path, direct: bool, replace: bool) -> Result<Self> {
        use crate::container::{atomic, direct};
        let (file, pending) = atomic::create_temp_file(path, None, replace)?;
        let file = if direct {
            match direct::DirectWriter::new(file) {
                Ok(d) => return Ok(AtomicFile { sink: Sink::Direct(d), pending }),
                Err(direct::Refused(file)) => file,
            }
        } else {
            file
        };
        let sink = Sink::Buffered { out: atomic::buffered(file), writeback: Default::default() };
        Ok(AtomicFile { sink, pending })
    }

    /// Whether the bytes still go to the disk with direct I/O (for tests).
    #[cfg(test)]
    pub(crate) fn is_direct(&self) -> bool {
        matches!(self.sink, Sink::Direct(_))
    }

    /// The direct writer, while the bytes go to the disk with direct I/O (for tests).
    #[cfg(test)]
    pub(crate) fn direct_writer(&self) -> Option<&crate::container::direct::DirectWriter> {
        match &self.sink {
            Sink::Direct(d) => Some(d),
            _ => None,
        }
    }

    /// Flushes, syncs to disk and renames the temporary file to the target path.
    ///
    /// # Errors
    /// [`ErrorKind::Io`](crate::ErrorKind::Io) (with an [`std::io::ErrorKind::AlreadyExists`]
    /// source for a file that appeared at the target of an [`IfExists::Fail`] write); the target
    /// is untouched and the temporary file removed.
    ///
    /// [`IfExists::Fail`]: crate::container::IfExists::Fail
    pub fn commit(self) -> Result<()> {
        self.seal()?.persist()
    }

    /// Flushes and syncs the temporary file without renaming it yet (several files renamed
    /// together, as the shards of `--keep-split`).
    pub(crate) fn seal(self) -> Result<crate::container::atomic::SealedFile> {
        match self.sink {
            Sink::Direct(d) => {
                let file = d.finish().map_err(|e| Error::io("writing", e))?;
                self.pending.seal_file(file)
            }
            Sink::Buffered { out, .. } => self.pending.seal(out),
            Sink::Broken => Err(broken()),
        }
    }

    /// Goes on through the page cache after the file system refused a direct write: once every
    /// write in flight is done, the refused ones are made again there, then the bytes held, and
    /// the file continues from them.
    fn fall_back(&mut self) -> std::io::Result<()> {
        let Sink::Direct(d) = std::mem::replace(&mut self.sink, Sink::Broken) else { return Err(broken_io()) };
        let on_file = d.on_file();
        let (file, held) = d.into_buffered()?;
        let mut out = crate::container::atomic::buffered(file);
        out.write_all(&held)?;
        let mut writeback = crate::container::atomic::Writeback::from_offset(on_file);
        writeback.wrote(held.len(), &out);
        self.sink = Sink::Buffered { out, writeback };
        Ok(())
    }
}

fn broken_io() -> std::io::Error {
    std::io::Error::other("an earlier error left the output unusable")
}

fn broken() -> Error {
    Error::io("writing", broken_io())
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Sink::Direct(d) = &mut self.sink {
            match d.write(buf) {
                Err(e) if crate::container::direct::is_refusal(&e) => self.fall_back()?,
                r => return r,
            }
        }
        match &mut self.sink {
            Sink::Buffered { out, writeback } => {
                let n = out.write(buf)?;
                writeback.wrote(n, out);
                Ok(n)
            }
            _ => Err(broken_io()),
        }
    }

    /// Writes what is held to the file; with direct I/O, the whole blocks, and waits until every
    /// write in flight is done (the rest, less than a block, is written by
    /// [`commit`](AtomicFile::commit)).
    fn flush(&mut self) -> std::io::Result<()> {
        if let Sink::Direct(d) = &mut self.sink {
            match d.flush() {
                Err(e) if crate::container::direct::is_refusal(&e) => self.fall_back()?,
                r => return r,
            }
        }
        match &mut self.sink {
            Sink::Buffered { out, .. } => out.flush(),
            _ => Err(broken_io()),
        }
    }
}
