//! `gguf_serde._native`: the Rust half of the Python package `gguf_serde` (python/gguf_serde/
//! holds the Python half, which is what users import).
//!
//! - [`Reader`]: a file opened and validated by [`Gguf::open`], with what `GGUFReader` needs to
//!   lay its fields out as gguf-py does, lazily: the pairs (key, offset, type), each pair's parts
//!   (offset, NumPy scalar type, count: gguf-py's `ReaderField.parts`), its data indices and types,
//!   and its decoded value (`ReaderField.contents()`), and the tensor infos.
//! - The codecs over NumPy buffers ([`quantize`], [`dequantize`]) and the type table.
//! - The whole-file operations: [`quantize_file`], [`dequantize_file`], [`convert`], [`split`],
//!   [`merge`], with progress callbacks.
//!
//! Errors: the library's [`gguf_serde::Error`] becomes `gguf_serde.GGUFError` (a `ValueError`),
//! an I/O error `OSError` (`FileNotFoundError`, … by its kind); see [`to_py`].

use std::path::PathBuf;
use std::sync::Mutex;

use gguf_serde::ops::file_type::LlamaFileType;
use gguf_serde::ops::quantize::{QuantizeParams, TensorTypeOverride};
use gguf_serde::ops::split::{SplitBy, SplitOptions};
use gguf_serde::{codec, AlignmentProblem, Endian, ErrorKind, FormatError, GgmlType, Gguf, Mmap, ValueRef, ValueType};
use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use rayon::prelude::*;

create_exception!(
    gguf_serde,
    GGUFError,
    PyValueError,
    "A file, value or operation gguf-serde refuses; the message says what and where (a ValueError, as gguf-py's refusals are)."
);
create_exception!(
    gguf_serde,
    DuplicateKeyError,
    GGUFError,
    "A key stored twice in one file (the Python package raises it as gguf_serde.DuplicateKeyError, also a KeyError, as gguf-py raises KeyError)."
);

create_exception!(
    gguf_serde,
    InvalidUtf8Error,
    GGUFError,
    "A string of the file (key, value or tensor name) that is not UTF-8; args: (message, offset of the string's bytes). GGUFReader raises it as gguf_serde.GGUFUnicodeDecodeError, also a UnicodeDecodeError, as gguf-py raises when it decodes the string."
);

/// The Python exception for a library error: I/O errors as `OSError` of their kind; the reader's
/// refusals that gguf-py also refuses with the wording gguf-py uses, then ours in parentheses
/// (code written for gguf-py may match on its words); everything else as `GGUFError`.
fn to_py(e: gguf_serde::Error) -> PyErr {
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Io(io) => return os_error(io.kind(), msg),
        ErrorKind::Format(f) => {
            let gguf_py = match f {
                FormatError::BadMagic { .. } => Some("GGUF magic invalid".to_owned()),
                FormatError::UnsupportedVersion { version, .. } => {
                    Some(format!("Sorry, file appears to be version {version} which we cannot handle"))
                }
                FormatError::TooManyDims { n_dims, .. } => {
                    Some(format!("Tensor dimensions count {n_dims} exceeds GGML_MAX_DIMS (4)"))
                }
                FormatError::DuplicateTensor { name, .. } => Some(format!("Found duplicated tensor with name {name}")),
                FormatError::BadAlignment { problem: AlignmentProblem::WrongType(_), .. } => {
                    Some("Bad type for general.alignment field".to_owned())
                }
                FormatError::BadAlignment {
                    problem: AlignmentProblem::Zero | AlignmentProblem::NotPowerOfTwo(_),
                    ..
                } => Some("Invalid alignment: must be a non-zero power of two".to_owned()),
                FormatError::InvalidUtf8 { offset, .. } => return InvalidUtf8Error::new_err((msg, *offset)),
                // args: (gguf-py's message exactly, ours), as code written for gguf-py may compare
                // `e.args[0]`.
                FormatError::DuplicateKey { key, offset, .. } => {
                    return DuplicateKeyError::new_err((
                        format!("Duplicate {key} already in list at offset {offset}"),
                        msg,
                    ))
                }
                _ => None,
            };
            if let Some(words) = gguf_py {
                return GGUFError::new_err(format!("{words} ({msg})"));
            }
        }
        _ => {}
    }
    GGUFError::new_err(msg)
}

/// The `OSError` subclass Python raises for an I/O error of kind `kind`, with message `msg`.
fn os_error(kind: std::io::ErrorKind, msg: String) -> PyErr {
    match kind {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
        std::io::ErrorKind::AlreadyExists => PyFileExistsError::new_err(msg),
        std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(msg),
        _ => PyOSError::new_err(msg),
    }
}

/// Runs `f` without the GIL held, as `py.detach`; a panic in it (a bug: the library returns
/// errors for bad input) becomes a `GGUFError` naming it, so that no panic reaches Python as
/// pyo3's `PanicException` (a `BaseException`, which `except Exception` does not catch).
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))).map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        GGUFError::new_err(format!("internal error in gguf-serde (please report it): {what}"))
    })
}

/// A ggml type from its id, or `ValueError`.
fn ggml_type(id: u32) -> PyResult<GgmlType> {
    GgmlType::from_id(id).ok_or_else(|| PyValueError::new_err(format!("unknown ggml type id {id}")))
}

/// The NumPy scalar type of a part, as gguf_serde/_reader.py's `_PART_DTYPES` lists them (GGUF's
/// value type ids for the fixed-size types: u8 0, i8 1, u16 2, i16 3, u32 4, i32 5, f32 6, bool 7,
/// u64 10, i64 11, f64 12).
type PartCode = u8;
const PART_U8: PartCode = ValueType::U8 as u8;
const PART_U32: PartCode = ValueType::U32 as u8;
const PART_U64: PartCode = ValueType::U64 as u8;

/// The parts of one field as gguf-py's `GGUFReader` lays them out: NumPy views of the file, each
/// an (absolute offset, scalar type, element count); which of them hold the data; the value types
/// (the field's, then for an array its first element's, recursively).
///
/// Parts are kept as runs: `repeat` parts one after another, each of `count` items of one type,
/// the run's first at `offset` (an array of `n` fixed-size elements is one run of `n` parts of
/// one item, which Python makes from one view instead of `n`).
#[derive(Default)]
struct Parts {
    offsets: Vec<u64>,
    codes: Vec<PartCode>,
    counts: Vec<u64>,
    repeats: Vec<u64>,
    /// Parts in all runs so far.
    n: u64,
    data: Vec<u64>,
    types: Vec<u32>,
}

impl Parts {
    /// Appends one part; returns its index.
    fn push(&mut self, offset: u64, code: PartCode, count: u64) -> u64 {
        self.run(offset, code, count, 1)
    }

    /// Appends `repeat` consecutive parts of `count` items each; returns the first one's index.
    fn run(&mut self, offset: u64, code: PartCode, count: u64, repeat: u64) -> u64 {
        self.offsets.push(offset);
        self.codes.push(code);
        self.counts.push(count);
        self.repeats.push(repeat);
        self.n += repeat;
        self.n - repeat
    }
}

/// The `N` bytes at `pos` of `bytes` (validated by the parser, so in bounds; a `ValueError` if
/// not).
fn read_array<const N: usize>(bytes: &[u8], pos: u64) -> PyResult<[u8; N]> {
    usize::try_from(pos)
        .ok()
        .and_then(|p| bytes.get(p..p.checked_add(N)?))
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| PyValueError::new_err(format!("offset {pos} is past the end of the file")))
}

/// Reads a `u64` of byte order `endian` at `pos` of `bytes`.
fn read_u64(bytes: &[u8], pos: u64, endian: Endian) -> PyResult<u64> {
    let b = read_array(bytes, pos)?;
    Ok(if endian == Endian::Big { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) })
}

/// Reads a `u32` of byte order `endian` at `pos` of `bytes`.
fn read_u32(bytes: &[u8], pos: u64, endian: Endian) -> PyResult<u32> {
    let b = read_array(bytes, pos)?;
    Ok(if endian == Endian::Big { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
}

/// Where `len` bytes from `start` end, or a `ValueError` if that is past the end of `bytes`
/// (lengths are read from the mapping when the parts are made: a file changed since it was
/// opened may hold any length).
fn span_end(bytes: &[u8], start: u64, len: Option<u64>) -> PyResult<u64> {
    len.and_then(|n| start.checked_add(n))
        .filter(|&end| end <= bytes.len() as u64)
        .ok_or_else(|| PyValueError::new_err(format!("a value at offset {start} runs past the end of the file")))
}

/// Appends the parts of a value of type `type_id` stored at `pos` (as gguf-py's
/// `_get_field_parts` lays them out: a string is its length and its bytes, a scalar one part, an
/// array its element type, its length and each element's parts); records the types when
/// `record_types` (gguf-py keeps the types of an array's first element only). Returns where the
/// value ends.
fn walk(bytes: &[u8], endian: Endian, pos: u64, type_id: u32, p: &mut Parts, record_types: bool) -> PyResult<u64> {
    let vt = ValueType::from_id(type_id)
        .ok_or_else(|| PyValueError::new_err(format!("Unknown/unhandled field type {type_id}")))?;
    if record_types {
        p.types.push(type_id);
    }
    match vt {
        ValueType::String => {
            let len = read_u64(bytes, pos, endian)?;
            let end = span_end(bytes, pos + 8, Some(len))?;
            p.push(pos, PART_U64, 1);
            let i = p.push(pos + 8, PART_U8, len);
            p.data.push(i);
            Ok(end)
        }
        ValueType::Array => {
            let elem = read_u32(bytes, pos, endian)?;
            let len = read_u64(bytes, pos + 4, endian)?;
            p.push(pos, PART_U32, 1);
            p.push(pos + 4, PART_U64, 1);
            let mut at = pos + 12;
            let elem_type = ValueType::from_id(elem)
                .ok_or_else(|| PyValueError::new_err(format!("Unknown/unhandled field type {elem}")))?;
            if let Some(size) = elem_type.fixed_size() {
                // Fixed-size elements: one part each, without a call per element.
                if len > 0 && record_types {
                    p.types.push(elem);
                }
                let end = span_end(bytes, at, len.checked_mul(size as u64))?;
                if len > 0 {
                    let first = p.run(at, elem as PartCode, 1, len);
                    p.data.extend(first..first + len);
                }
                return Ok(end);
            }
            for i in 0..len {
                at = walk(bytes, endian, at, elem, p, record_types && i == 0)?;
            }
            Ok(at)
        }
        _ => {
            let size = vt.fixed_size().unwrap_or(1) as u64;
            let i = p.push(pos, type_id as PartCode, 1);
            p.data.push(i);
            Ok(pos + size)
        }
    }
}

/// The bytes of `v` as native-endian `u64`s (read back with `numpy.frombuffer(b, numpy.uint64)`).
fn u64_bytes<'py>(py: Python<'py>, v: &[u64]) -> Bound<'py, PyBytes> {
    PyBytes::new_with(py, v.len() * 8, |out| {
        for (chunk, x) in out.chunks_exact_mut(8).zip(v) {
            chunk.copy_from_slice(&x.to_ne_bytes());
        }
        Ok(())
    })
    .unwrap_or_else(|_| PyBytes::new(py, &[]))
}

/// The `len` strings stored one after another in `raw` (each a `u64` length of byte order
/// `endian`, then its bytes), checked now: `None` if a length runs past `raw` or a string is
/// not UTF-8.
fn checked_strings(raw: &[u8], len: u64, endian: Endian) -> Option<Vec<&str>> {
    let mut out = Vec::with_capacity(usize::try_from(len).ok()?.min(raw.len() / 8));
    let mut pos = 0u64;
    for _ in 0..len {
        let n = read_u64(raw, pos, endian).ok()?;
        let start = usize::try_from(pos.checked_add(8)?).ok()?;
        let end = start.checked_add(usize::try_from(n).ok()?)?;
        out.push(std::str::from_utf8(raw.get(start..end)?).ok()?);
        pos = end as u64;
    }
    Some(out)
}

/// A GGUF file opened with [`Gguf::open`] (memory-mapped and validated), read by
/// `gguf_serde.GGUFReader`.
#[pyclass(frozen, module = "gguf_serde._native")]
struct Reader {
    file: Gguf<Mmap>,
}

#[pymethods]
impl Reader {
    /// Opens and validates the file at `path` (without the GIL held). A key or tensor name that
    /// is not UTF-8 raises `InvalidUtf8Error` (a `UnicodeDecodeError`) here, as gguf-py's
    /// `GGUFReader` decodes them when it opens a file; a string value that is not UTF-8 raises
    /// only when it is read, as in gguf-py (`contents()`).
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = detached(py, || Gguf::open(&path))?.map_err(to_py)?;
        for kv in file.metadata() {
            kv.key_str().map_err(to_py)?;
        }
        for t in file.tensors() {
            t.name_str().map_err(to_py)?;
        }
        Ok(Reader { file })
    }

    /// `(version, big_endian, alignment, data_offset, tensor_infos_end, tensor_count, kv_count)`.
    fn header(&self) -> (u32, bool, u32, u64, u64, usize, usize) {
        let f = &self.file;
        let end = f.tensor_infos_end();
        (f.version(), f.endian() == Endian::Big, f.alignment(), f.data_offset(), end, f.tensor_count(), f.kv_count())
    }

    /// The pairs in file order: `(key, offset of the pair, value type id, element type id of an
    /// array or None, absolute offset of an array's first element or of the value, element count
    /// of an array, byte length of a string (without its length field), or 1)`.
    fn kvs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        let base = self.file.bytes().as_ptr() as usize;
        for kv in self.file.metadata() {
            let (elem, at, len) = match kv.value {
                // The elements are a slice of the file: their offset is where the slice starts.
                ValueRef::Array(a) => {
                    (Some(a.elem_type() as u32), (a.raw_bytes().as_ptr() as usize - base) as u64, a.len())
                }
                // A string: its length in bytes (as validated at open).
                ValueRef::String(s) => (None, kv.value_offset, s.len() as u64),
                _ => (None, kv.value_offset, 1),
            };
            list.append((kv.key_str().map_err(to_py)?, kv.offset, kv.value.value_type() as u32, elem, at, len))?;
        }
        Ok(list)
    }

    /// The strings of the string array of pair `index`, read from the mapping now (it is shared
    /// with the file: a change made to the file since it was opened shows, as in gguf-py's
    /// `numpy.memmap`), as one `str` with the strings joined by NUL (`"\0"`; split in Python:
    /// one string made instead of one per element), or as a list when a string holds a NUL
    /// itself. `None` when the bytes are no longer what the file held when it was opened (a
    /// string that is not UTF-8, a length past the array): the caller then decodes the parts as
    /// gguf-py does and raises what it raises (`UnicodeDecodeError`).
    fn kv_strings<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let kv = self.file.metadata().nth(index).ok_or_else(|| PyValueError::new_err(format!("no pair {index}")))?;
        let Some(a) = kv.value.as_array().filter(|a| a.elem_type() == ValueType::String) else {
            return Err(PyValueError::new_err(format!("pair {index} is not an array of strings")));
        };
        let Some(strings) = checked_strings(a.raw_bytes(), a.len(), self.file.endian()) else {
            return Ok(None);
        };
        if strings.iter().any(|s| s.contains('\0')) {
            return Ok(Some(PyList::new(py, strings)?.into_any()));
        }
        Ok(Some(PyString::new(py, &strings.join("\0")).into_any()))
    }

    /// The parts of pair `index` as gguf-py lays them out: `(offsets, codes, counts, repeats,
    /// data, types)`, one entry per run of parts (see [`Parts`]); offsets, counts, repeats and
    /// data as native `u64` bytes, codes one byte per run (see [`PartCode`]), types a list of
    /// value type ids.
    #[allow(clippy::type_complexity)]
    fn kv_parts<'py>(
        &self,
        py: Python<'py>,
        index: usize,
    ) -> PyResult<(
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Vec<u32>,
    )> {
        let kv = self.file.metadata().nth(index).ok_or_else(|| PyValueError::new_err(format!("no pair {index}")))?;
        let bytes = self.file.bytes();
        let endian = self.file.endian();
        let mut p = Parts::default();
        let klen = kv.key.len() as u64;
        p.push(kv.offset, PART_U64, 1);
        p.push(kv.offset + 8, PART_U8, klen);
        p.push(kv.offset + 8 + klen, PART_U32, 1);
        walk(bytes, endian, kv.value_offset, kv.value.value_type() as u32, &mut p, true)?;
        Ok((
            u64_bytes(py, &p.offsets),
            PyBytes::new(py, &p.codes),
            u64_bytes(py, &p.counts),
            u64_bytes(py, &p.repeats),
            u64_bytes(py, &p.data),
            p.types,
        ))
    }

    /// The tensor infos in file order: `(name, info offset, ggml type id, stored dims (ne),
    /// absolute data offset, bytes, elements)`.
    #[allow(clippy::type_complexity)]
    fn tensors(&self) -> PyResult<Vec<(&str, u64, u32, Vec<u64>, u64, u64, u64)>> {
        self.file
            .tensors()
            .map(|t| {
                let name = t.name_str().map_err(to_py)?;
                Ok((name, t.info_offset, t.dtype.id(), t.ne().dims().to_vec(), t.data_offset, t.nbytes, t.n_elements))
            })
            .collect()
    }
}

/// Every ggml type: `(name, id, block size, bytes per block, can quantize, can dequantize)`.
#[pyfunction]
fn ggml_types() -> Vec<(&'static str, u32, u64, u64, bool, bool)> {
    GgmlType::ALL
        .iter()
        .map(|&t| (t.name(), t.id(), t.block_size(), t.type_size(), codec::can_quantize(t), codec::can_dequantize(t)))
        .collect()
}

/// A contiguous buffer's items as a slice (the GIL is held, and the Python caller keeps the
/// array alive and unshared for the call).
fn as_slice<'a, T: pyo3::buffer::Element>(py: Python<'_>, buf: &'a PyBuffer<T>) -> PyResult<&'a [T]> {
    let cells = buf
        .as_slice(py)
        .ok_or_else(|| PyValueError::new_err("the array is not C-contiguous or has another item type"))?;
    // SAFETY: `ReadOnlyCell<T>` is `#[repr(transparent)]` over `UnsafeCell<T>`, which has `T`'s
    // layout; the Python wrapper passes a C-contiguous array that no other thread writes while
    // this call runs (it made the array itself or holds the caller's array for the call).
    #[allow(unsafe_code)]
    Ok(unsafe { std::slice::from_raw_parts(cells.as_ptr().cast::<T>(), cells.len()) })
}

fn as_mut_slice<'a, T: pyo3::buffer::Element>(py: Python<'_>, buf: &'a mut PyBuffer<T>) -> PyResult<&'a mut [T]> {
    let cells = buf
        .as_mut_slice(py)
        .ok_or_else(|| PyValueError::new_err("the output is not a writable C-contiguous array of the item type"))?;
    // SAFETY: `Cell<T>` has `T`'s layout; the output array was just made by the Python wrapper
    // (`numpy.empty`) and nothing else refers to it during the call.
    #[allow(unsafe_code)]
    Ok(unsafe { std::slice::from_raw_parts_mut(cells.as_ptr().cast_mut().cast::<T>(), cells.len()) })
}

/// Quantizes the `float32` array `src` (whole blocks) to type `type_id` into the `uint8` array
/// `dst`, in parallel, as [`codec::quantize_par`] (ggml's reference quantizers).
#[pyfunction]
fn quantize(py: Python<'_>, type_id: u32, src: PyBuffer<f32>, mut dst: PyBuffer<u8>) -> PyResult<()> {
    let t = ggml_type(type_id)?;
    let (x, y) = (as_slice(py, &src)?, as_mut_slice(py, &mut dst)?);
    detached(py, || codec::quantize_par(t, Endian::Little, x, y))?.map_err(|e| to_py(e.into()))
}

/// Dequantizes the `uint8` array `src` (whole blocks of type `type_id`, little-endian) into the
/// `float32` array `dst`, in parallel ([`codec::dequantize_par`]).
#[pyfunction]
fn dequantize(py: Python<'_>, type_id: u32, src: PyBuffer<u8>, mut dst: PyBuffer<f32>) -> PyResult<()> {
    let t = ggml_type(type_id)?;
    let (x, y) = (as_slice(py, &src)?, as_mut_slice(py, &mut dst)?);
    detached(py, || codec::dequantize_par(t, Endian::Little, x, y))?.map_err(|e| to_py(e.into()))
}

/// The blocks of `src` (blocks of `block` floats) that ggml's C quantizers (the codecs') and
/// gguf-py's NumPy ones may quantize differently, as native `u64` indices: a block with a NaN or
/// infinite element, of largest magnitude outside [2⁻⁶⁴, 2⁶⁴] (all zeros included), and with
/// `affine` (Q4_1, Q5_1: scale from max − min) also a zero minimum or a range in (0, 2⁻⁶⁴).
/// gguf_serde/_numpy_quants.py redoes those with gguf-py's arithmetic.
#[pyfunction]
fn irregular_blocks<'py>(
    py: Python<'py>,
    src: PyBuffer<f32>,
    block: usize,
    affine: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    if block == 0 {
        return Err(PyValueError::new_err("block size 0"));
    }
    let x = as_slice(py, &src)?;
    const TINY: f32 = f32::from_bits((127 - 64) << 23); // 2^-64
    const HUGE: f32 = f32::from_bits((127 + 64) << 23); // 2^64
    let odd: Vec<u64> = detached(py, || {
        x.par_chunks(block)
            .enumerate()
            .filter(|(_, b)| {
                // Branch-free, so that it vectorizes: NaN and ±inf are the values whose exponent
                // bits are all ones.
                let (mut hi, mut lo, mut non_finite) = (f32::NEG_INFINITY, f32::INFINITY, false);
                for &v in *b {
                    non_finite |= v.to_bits() & 0x7f80_0000 == 0x7f80_0000;
                    hi = if v > hi { v } else { hi };
                    lo = if v < lo { v } else { lo };
                }
                if non_finite {
                    return true;
                }
                let amax = hi.max(-lo);
                let span = hi - lo;
                !(TINY..=HUGE).contains(&amax) || (affine && (lo == 0.0 || (span > 0.0 && span < TINY)))
            })
            .map(|(i, _)| i as u64)
            .collect()
    })?;
    Ok(u64_bytes(py, &odd))
}

/// A Python progress callback called from the library's worker threads: with the GIL taken for
/// each call; the first exception it raises is kept and raised when the operation returns.
struct Progress {
    callback: Option<Py<PyAny>>,
    error: Mutex<Option<PyErr>>,
}

impl Progress {
    fn new(callback: Option<Py<PyAny>>) -> Self {
        Progress { callback, error: Mutex::new(None) }
    }

    fn call(&self, done: u64, total: Option<u64>) {
        let Some(cb) = &self.callback else { return };
        Python::attach(|py| {
            let r = match total {
                Some(t) => cb.call1(py, (done, t)),
                None => cb.call1(py, (done,)),
            };
            if let Err(e) = r {
                let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e);
            }
        });
    }

    /// The callback's first exception, if any.
    fn finish(self) -> PyResult<()> {
        match self.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A ggml type from its name (`Q4_K`, case-insensitive), or `ValueError`.
fn parse_type(name: &str) -> PyResult<GgmlType> {
    name.parse::<GgmlType>().map_err(|e| PyValueError::new_err(e.to_string()))
}

fn paths(v: &[PathBuf]) -> Vec<String> {
    v.iter().map(|p| p.to_string_lossy().into_owned()).collect()
}

/// Quantizes the model at `input` (a file, or the first shard of a split model) to `output` as
/// `llama-quantize` does for `ftype` (`gguf quantize`); returns `(files written, converted
/// tensor names, kept tensor names, bytes in, bytes out)`.
#[pyfunction]
#[pyo3(signature = (input, output, ftype, *, pure=false, leave_output_tensor=false, output_tensor_type=None,
    token_embedding_type=None, tensor_types=Vec::new(), override_kv=Vec::new(), exclude=Vec::new(),
    imatrix=None, keep_split=false, threads=None, progress=None))]
#[allow(clippy::too_many_arguments)]
#[allow(clippy::type_complexity)]
fn quantize_file(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    ftype: &str,
    pure: bool,
    leave_output_tensor: bool,
    output_tensor_type: Option<&str>,
    token_embedding_type: Option<&str>,
    tensor_types: Vec<String>,
    override_kv: Vec<String>,
    exclude: Vec<String>,
    imatrix: Option<PathBuf>,
    keep_split: bool,
    threads: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, Vec<String>, Vec<String>, u64, u64)> {
    // `COPY` (every tensor as it is) is llama-quantize's, not a file type: as `gguf quantize`.
    let (ft, only_copy) = if ftype.eq_ignore_ascii_case("copy") {
        (LlamaFileType::F32, true)
    } else {
        let ft: LlamaFileType = ftype.parse().map_err(|e: gguf_serde::ops::file_type::UnknownFileType| {
            PyValueError::new_err(format!("unknown llama.cpp file type {:?}", e.0))
        })?;
        (ft, false)
    };
    let mut params = QuantizeParams::new(ft);
    params.only_copy = only_copy;
    params.pure = pure;
    params.leave_output_tensor = leave_output_tensor;
    params.output_tensor_type = output_tensor_type.map(parse_type).transpose()?;
    params.token_embedding_type = token_embedding_type.map(parse_type).transpose()?;
    params.tensor_types =
        tensor_types.iter().map(TensorTypeOverride::parse).collect::<Result<_, _>>().map_err(to_py)?;
    params.kv_overrides = override_kv
        .iter()
        .map(|s| gguf_serde::ops::kv_override::KvOverride::parse(s))
        .collect::<Result<_, _>>()
        .map_err(to_py)?;
    params.exclude = exclude.into_iter().map(String::into_bytes).collect();
    params.keep_split = keep_split;
    params.threads = threads;
    if let Some(path) = imatrix {
        let m = detached(py, || gguf_serde::ops::imatrix::Imatrix::open(&path))?.map_err(to_py)?;
        params.imatrix = Some(std::sync::Arc::new(m));
    }
    let prog = Progress::new(progress);
    let report = detached(py, || {
        let model = gguf_serde::ShardedGguf::open(&input)?;
        let cb = |done: u64, total: u64| prog.call(done, Some(total));
        gguf_serde::ops::requant::requantize_sharded(&model, &output, &params, Some(&cb))
    })?
    .map_err(to_py)?;
    prog.finish()?;
    Ok((paths(&report.paths), report.converted, report.kept, report.bytes_in, report.bytes_out))
}

/// Writes every tensor of `input` converted to the float type `dtype` (`F32`, `F16`, `BF16`)
/// to `output` (`gguf dequantize`), except names matching a glob of `exclude`; returns as
/// [`quantize_file`].
#[pyfunction]
#[pyo3(signature = (input, output, dtype="F32", *, exclude=Vec::new(), progress=None))]
#[allow(clippy::type_complexity)]
fn dequantize_file(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    dtype: &str,
    exclude: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, Vec<String>, Vec<String>, u64, u64)> {
    let target = parse_type(dtype)?;
    if !matches!(target, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) {
        return Err(GGUFError::new_err(format!(
            "dequantize_file: dtype {} is not a float type: give F32, F16 or BF16",
            target.name()
        )));
    }
    let prog = Progress::new(progress);
    let report = detached(py, || {
        let model = Gguf::open(&input)?;
        let cb = |done: u64, total: u64| prog.call(done, Some(total));
        let opts = gguf_serde::ops::dequantize::DequantizeOptions::new(target).with_exclude(exclude).with_progress(&cb);
        gguf_serde::ops::dequantize::dequantize(&model, &output, &opts)
    })?
    .map_err(to_py)?;
    prog.finish()?;
    Ok((paths(&report.paths), report.converted, report.kept, report.bytes_in, report.bytes_out))
}

/// Splits `input` into `PREFIX-00001-of-0000N.gguf`, … as `llama-gguf-split` does; returns the
/// shard paths.
#[pyfunction]
#[pyo3(signature = (input, prefix, *, max_tensors=None, max_size=None, no_tensor_first_split=false))]
fn split(
    py: Python<'_>,
    input: PathBuf,
    prefix: PathBuf,
    max_tensors: Option<usize>,
    max_size: Option<u64>,
    no_tensor_first_split: bool,
) -> PyResult<Vec<String>> {
    let by = match (max_tensors, max_size) {
        (Some(_), Some(_)) => return Err(PyValueError::new_err("give max_tensors or max_size, not both")),
        (_, Some(b)) => SplitBy::MaxBytes(b),
        (Some(n), None) => SplitBy::MaxTensors(n),
        (None, None) => SplitOptions::default().by,
    };
    let opts = SplitOptions::new(by).with_no_tensor_first_split(no_tensor_first_split);
    let out = detached(py, || gguf_serde::ops::split::split_file(&input, &prefix, &opts))?.map_err(to_py)?;
    Ok(paths(&out))
}

/// Merges the split model of which `shard` is a shard into one file at `output`.
#[pyfunction]
fn merge(py: Python<'_>, shard: PathBuf, output: PathBuf) -> PyResult<()> {
    detached(py, || gguf_serde::ops::split::merge_file(&shard, &output, gguf_serde::container::IfExists::Replace))?
        .map_err(to_py)
}

/// The converter's error as `GGUFError`, or `OSError` (`FileNotFoundError`, … by its kind) for
/// a file that cannot be read or written (the message names the file and the cause).
fn convert_err(e: gguf_serde::convert::ConvertError) -> PyErr {
    match e {
        gguf_serde::convert::ConvertError::Gguf(g) => to_py(g),
        gguf_serde::convert::ConvertError::Io { ref source, .. } => os_error(source.kind(), format!("{e}: {source}")),
        other => GGUFError::new_err(other.to_string()),
    }
}

/// Converts the Hugging Face checkpoint in `model_dir` to GGUF at `output` as
/// `convert_hf_to_gguf.py` does (`gguf convert`): `outtype` `f32`, `f16`, `bf16`, `q8_0` or
/// `auto`; `metadata` the JSON text of a `--metadata` override; `progress(done)` is called
/// with the bytes of source tensor data converted so far; `fp8_as_q8` the reference's
/// `--fp8-as-q8`; returns `(files written, outtype resolved)`.
#[pyfunction]
#[pyo3(signature = (model_dir, output, outtype="auto", *, model_name=None, metadata=None, split_max_size=None,
    vocab=true, fp8_as_q8=false, progress=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    model_dir: PathBuf,
    output: PathBuf,
    outtype: &str,
    model_name: Option<String>,
    metadata: Option<String>,
    split_max_size: Option<u64>,
    vocab: bool,
    fp8_as_q8: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<String>, String)> {
    let ot: gguf_serde::convert::OutType = outtype.parse().map_err(|e: String| PyValueError::new_err(e))?;
    let metadata: Option<serde_json::Value> = metadata
        .map(|m| serde_json::from_str(&m))
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("metadata: not JSON: {e}")))?;
    let card = model_card(&model_dir)?;
    let prog = Progress::new(progress);
    // The library reports each chunk's bytes; the callback gets the running total.
    let total = std::sync::atomic::AtomicU64::new(0);
    let cb = |n: u64| {
        let done = total.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
        prog.call(done, None)
    };
    let mut opts = gguf_serde::convert::ConvertOptions::new(ot);
    opts.name = model_name.as_deref();
    opts.split_max_size = split_max_size;
    opts.vocab = vocab;
    opts.fp8_as_q8 = fp8_as_q8;
    opts.model_card = card.as_ref();
    opts.metadata_override = metadata.as_ref();
    opts.progress = Some(&cb);
    let report = detached(py, || gguf_serde::convert::convert(&model_dir, &output, &opts))?.map_err(convert_err)?;
    prog.finish()?;
    Ok((paths(&report.files), report.outtype.label().to_owned()))
}

/// The YAML front matter of the checkpoint's model card (`README.md`), as the reference reads it;
/// `None` without a card or front matter.
fn model_card(dir: &std::path::Path) -> PyResult<Option<serde_json::Value>> {
    let path = dir.join("README.md");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let Some(yaml) = gguf_serde::convert::general::front_matter(&text) else { return Ok(None) };
    let card: serde_json::Value = serde_norway::from_str(&yaml)
        .map_err(|e| GGUFError::new_err(format!("{}: the front matter is not YAML: {e}", path.display())))?;
    Ok(Some(card).filter(|c| !c.is_null()))
}

/// The module `gguf_serde._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Reader>()?;
    m.add("GGUFError", py.get_type::<GGUFError>())?;
    m.add("DuplicateKeyError", py.get_type::<DuplicateKeyError>())?;
    m.add("InvalidUtf8Error", py.get_type::<InvalidUtf8Error>())?;
    m.add_function(wrap_pyfunction!(ggml_types, m)?)?;
    m.add_function(wrap_pyfunction!(quantize, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(irregular_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(quantize_file, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize_file, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
