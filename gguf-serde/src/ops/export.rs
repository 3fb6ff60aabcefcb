//! A GGUF file as a safetensors file and back (`gguf export`, `gguf import`).
//!
//! [`export`] writes every tensor under its GGUF name with its canonical shape (outermost first:
//! ggml's `ne` reversed, which is PyTorch's order: a `[out, in]` weight stays `[out, in]`).
//! [`ExportDtype::Keep`] keeps plain types (F32, F16, BF16, F64, I8, I16, I32, I64) and
//! dequantizes every quantized type to F32 with this crate's codecs, which are bit-identical to
//! ggml's reference dequantization and so to gguf-py's `gguf.quants.dequantize`;
//! [`ExportDtype::F32`], [`F16`](ExportDtype::F16) and [`BF16`](ExportDtype::BF16) convert every
//! float and quantized tensor to that type (through F32, rounding to nearest even as ggml's
//! `ggml_fp32_to_fp16` and `ggml_fp32_to_bf16` do), integer tensors are kept.
//!
//! The file follows the safetensors format as the `safetensors` crate writes and checks it: an
//! 8-byte little-endian header length, a JSON header padded with spaces to a multiple of 8 bytes,
//! then the tensors' little-endian data, contiguous, each at its `data_offsets` (relative to the
//! end of the header). Tensors are laid out by element size, largest first (then in the GGUF
//! file's order), as the `safetensors` crate orders them, so every tensor's data is aligned to
//! its element size. A big-endian GGUF file is byte-swapped to little-endian.
//!
//! The GGUF metadata goes into the header's `__metadata__` (a map of strings to strings), under
//! these keys:
//!
//! | key | value |
//! |---|---|
//! | `format` | `pt` (what Hugging Face's loaders expect) |
//! | `gguf.version` | the GGUF version, `3` |
//! | `gguf.metadata` | JSON text: an array of `{"key", "type", "value"}` in the file's order, `type` as [`ValueRef::type_name`] gives it (`u32`, `string`, `array<string>`, `array<array<i32>>`), `value` a JSON number, string, bool or array (every item); a non-finite float is the string `"nan"`, `"inf"` or `"-inf"` |
//! | `gguf.tensors` | JSON text: an array of `{"name", "type"}` in the GGUF file's order, `type` the tensor's ggml type in the GGUF file (`Q4_K`, `F16`) before any conversion |
//!
//! JSON and safetensors names are text. Keys and tensor names are written in the reversible
//! escaped form of [`GgufStr::escaped`](crate::GgufStr::escaped) (the text as it is, but `\xNN`
//! for a byte that is not UTF-8, `\\` for a backslash, `\n`, `\u{…}` for control characters),
//! which [`import`] reads back to the same bytes; no two tensors get one safetensors name
//! (a tensor that would take the name `__metadata__` is refused, [`ExportError::DuplicateName`]).
//! A string value that is UTF-8 is written as it is; one that is not (which ggml accepts) is
//! written as its escaped text, and imports as that text (valid UTF-8): it does not come back
//! as the same bytes.
//!
//! [`import`] reads such a file back: every key with its type and value, the tensors in the GGUF
//! order of `gguf.tensors` with their safetensors type (a tensor that was quantized comes back as
//! F32), `general.alignment` honoured, keys and tensor names unescaped to their bytes. A file
//! exported with [`ExportDtype::Keep`] from a GGUF file without quantized tensors imports to the
//! same bytes (little-endian files; keys and names that are not UTF-8 included, string values
//! that are not UTF-8 excepted). A safetensors file without these keys imports with no metadata
//! and its tensors in data order, named as they are.
//!
//! Output is atomic ([`AtomicFile`]: a temporary file renamed into place; nothing is left after an
//! error) and streamed: a tensor is converted a chunk of whole blocks at a time and the mapped
//! input pages of each chunk are released once written, so memory stays flat whatever the model's
//! size.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use crate::codec::{self, swap_blocks};
use crate::container::{Array, AtomicFile, Gguf, GgufWriter, IfExists, Source, Value, ValueRef, WriteOptions};
use crate::format::{Endian, GgmlType, GgufStr, ValueType};
use crate::ops::globs::NameGlobs;

/// The type [`export`] writes tensors in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExportDtype {
    /// Plain types as they are; quantized types dequantized to F32.
    #[default]
    Keep,
    /// Every float and quantized tensor as F32.
    F32,
    /// Every float and quantized tensor as F16.
    F16,
    /// Every float and quantized tensor as BF16.
    BF16,
}

/// Options of [`export`].
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ExportOptions<'a> {
    /// The output type.
    pub dtype: ExportDtype,
    /// Tensors whose whole name matches one of these globs ([`NameGlobs`]) are left out; each
    /// the bytes of a pattern (UTF-8 text, or bytes that are not UTF-8).
    pub exclude: Vec<Vec<u8>>,
    /// Called with the number of source bytes converted so far and the total, from any thread.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    /// What becomes of a file at the output path: replaced (the default) or kept, the write
    /// failing ([`IfExists`]).
    pub if_exists: IfExists,
}

impl<'a> ExportOptions<'a> {
    /// [`ExportDtype::Keep`], nothing excluded, no progress.
    pub fn new(dtype: ExportDtype) -> Self {
        ExportOptions { dtype, ..Default::default() }
    }

    /// Leaves out the tensors matching `exclude` (each a `String`, `&str` or bytes).
    pub fn with_exclude<P: Into<Vec<u8>>>(mut self, exclude: impl IntoIterator<Item = P>) -> Self {
        self.exclude = exclude.into_iter().map(Into::into).collect();
        self
    }

    /// Reports progress to `progress`.
    pub fn with_progress(mut self, progress: &'a (dyn Fn(u64, u64) + Sync)) -> Self {
        self.progress = Some(progress);
        self
    }

    /// These options with [`if_exists`](Self::if_exists) set to `if_exists`.
    pub fn with_if_exists(mut self, if_exists: IfExists) -> Self {
        self.if_exists = if_exists;
        self
    }
}

/// Why an export or import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Reading the GGUF file or writing the output failed (its own error, which names the path
    /// or tensor).
    #[error(transparent)]
    Gguf(#[from] crate::Error),
    /// A tensor's type has no safetensors counterpart and no dequantization in this crate.
    #[error("tensor {tensor}: type {dtype} cannot be exported")]
    Unsupported {
        /// The tensor.
        tensor: String,
        /// Its ggml type.
        dtype: GgmlType,
    },
    /// The input of [`import`] is not a valid safetensors file (one that cannot be opened is
    /// [`ExportError::Gguf`], an I/O error).
    #[error("{path} is not a valid safetensors file")]
    SafeTensors {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: safetensors::SafeTensorError,
    },
    /// A tensor of the safetensors file has a type GGUF has no type for (U8, BOOL, F8_E4M3, …).
    #[error("tensor {tensor}: safetensors type {dtype} has no GGUF type")]
    UnsupportedSafetensorsType {
        /// The tensor.
        tensor: String,
        /// The safetensors type's name.
        dtype: String,
    },
    /// Two entries of the safetensors header would have the same name: the safetensors name of
    /// a tensor (its escaped GGUF name) is `__metadata__`, the header's metadata entry. (The
    /// escaped form is reversible, so two GGUF names never give one safetensors name.)
    #[error("tensor {second}: its safetensors name {} is taken by {first}", crate::format::Quoted(.name))]
    #[non_exhaustive]
    DuplicateName {
        /// The safetensors name.
        name: String,
        /// What has it first (`the safetensors metadata entry`, or a tensor).
        first: String,
        /// The tensor refused (its GGUF name, escaped).
        second: String,
    },
    /// The `__metadata__` entry `entry` of the safetensors file is not what [`export`] writes.
    #[error("__metadata__ {entry}: {reason}")]
    BadMetadata {
        /// The entry (`gguf.metadata`, `gguf.tensors`, `gguf.version`).
        entry: &'static str,
        /// What is wrong, naming the key or tensor.
        reason: String,
    },
}

/// What [`export`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportReport {
    /// Tensors written.
    pub tensors: usize,
    /// Of them, tensors converted to another type.
    pub converted: usize,
    /// Tensors left out by `exclude`.
    pub excluded: usize,
    /// Bytes of the output file.
    pub bytes: u64,
}

/// The safetensors name of a plain ggml type.
fn st_name(t: GgmlType) -> Option<&'static str> {
    Some(match t {
        GgmlType::F32 => "F32",
        GgmlType::F16 => "F16",
        GgmlType::BF16 => "BF16",
        GgmlType::F64 => "F64",
        GgmlType::I8 => "I8",
        GgmlType::I16 => "I16",
        GgmlType::I32 => "I32",
        GgmlType::I64 => "I64",
        _ => return None,
    })
}

/// The type `t` is written in under `dtype`.
fn out_type(t: GgmlType, dtype: ExportDtype) -> GgmlType {
    let is_int = matches!(t, GgmlType::I8 | GgmlType::I16 | GgmlType::I32 | GgmlType::I64);
    match dtype {
        _ if is_int => t,
        ExportDtype::Keep if !t.is_quantized() => t,
        ExportDtype::Keep | ExportDtype::F32 => GgmlType::F32,
        ExportDtype::F16 => GgmlType::F16,
        ExportDtype::BF16 => GgmlType::BF16,
    }
}

/// A float as JSON: the number, or `"nan"`, `"inf"`, `"-inf"`.
fn float_json(x: f64) -> Json {
    match serde_json::Number::from_f64(x) {
        Some(n) => Json::Number(n),
        None if x.is_nan() => json!("nan"),
        None if x > 0.0 => json!("inf"),
        None => json!("-inf"),
    }
}

/// A metadata value as `gguf.metadata` writes it.
fn value_json(v: &ValueRef<'_>) -> Json {
    match *v {
        ValueRef::U8(x) => json!(x),
        ValueRef::I8(x) => json!(x),
        ValueRef::U16(x) => json!(x),
        ValueRef::I16(x) => json!(x),
        ValueRef::U32(x) => json!(x),
        ValueRef::I32(x) => json!(x),
        ValueRef::U64(x) => json!(x),
        ValueRef::I64(x) => json!(x),
        ValueRef::F32(x) => float_json(f64::from(x)),
        ValueRef::F64(x) => float_json(x),
        ValueRef::Bool(x) => json!(x),
        // JSON holds text: a string that is not UTF-8 is written as its escaped text (`\xNN` for
        // each bad byte), and imports as that text.
        ValueRef::String(s) => json!(s.to_str().map_or_else(|_| s.escaped(), std::borrow::Cow::Borrowed)),
        ValueRef::Array(a) => Json::Array(a.iter().map(|v| value_json(&v)).collect()),
    }
}

/// Writes `file` as a safetensors file at `out` (atomically): see the [module docs](self).
///
/// # Errors
/// [`ExportError::Unsupported`] for a tensor of a type that has neither a safetensors type nor a
/// dequantization, [`ExportError::DuplicateName`] for a tensor named `__metadata__` (both
/// checked before anything is written); [`ExportError::Gguf`] for a glob that is
/// not valid ([`NameGlobs::new`]), a tensor whose data cannot be read, or an I/O error writing
/// `out` (the target is then untouched).
pub fn export<S: Source + Sync>(
    file: &Gguf<S>,
    out: impl AsRef<Path>,
    options: &ExportOptions<'_>,
) -> Result<ExportReport, ExportError> {
    let out = out.as_ref();
    let excluded = NameGlobs::new(&options.exclude)?;
    let all: Vec<_> = file.tensors().collect();
    let kept: Vec<_> = all.iter().filter(|t| !excluded.is_match(t.name.as_bytes())).collect();
    for t in &kept {
        let target = out_type(t.dtype, options.dtype);
        if target != t.dtype && !codec::can_dequantize(t.dtype) {
            return Err(ExportError::Unsupported { tensor: t.name.to_string(), dtype: t.dtype });
        }
        if st_name(target).is_none() {
            return Err(ExportError::Unsupported { tensor: t.name.to_string(), dtype: t.dtype });
        }
    }
    // Data order: element size, largest first, then the file's order.
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(out_type(kept[i].dtype, options.dtype).type_size()));

    let mut header = Map::new();
    let kvs: Vec<Json> = file
        .metadata()
        .map(|kv| json!({"key": kv.key.escaped(), "type": kv.value.type_name(), "value": value_json(&kv.value)}))
        .collect();
    let tensors: Vec<Json> = kept.iter().map(|t| json!({"name": t.name.escaped(), "type": t.dtype.name()})).collect();
    let meta = json!({
        "format": "pt",
        "gguf.version": file.version().to_string(),
        "gguf.metadata": Json::Array(kvs).to_string(),
        "gguf.tensors": Json::Array(tensors).to_string(),
    });
    header.insert("__metadata__".into(), meta);
    let mut offset = 0u64;
    for &i in &order {
        let t = kept[i];
        let target = out_type(t.dtype, options.dtype);
        let n = target.row_bytes(t.n_elements).unwrap_or(0);
        let name = t.name.escaped().into_owned();
        if header.contains_key(&name) {
            let first = match kept.iter().find(|u| u.name.escaped() == name.as_str()) {
                Some(u) if u.name != t.name => format!("tensor {}", u.name),
                _ => "the safetensors metadata entry".to_owned(),
            };
            return Err(ExportError::DuplicateName { name, first, second: t.name.to_string() });
        }
        header
            .insert(name, json!({"dtype": st_name(target), "shape": &*t.shape, "data_offsets": [offset, offset + n]}));
        offset += n;
    }
    let mut text = Json::Object(header).to_string().into_bytes();
    while !text.len().is_multiple_of(8) {
        text.push(b' ');
    }

    let total: u64 = kept.iter().map(|t| t.nbytes).sum();
    let mut done = 0u64;
    let mut f = AtomicFile::create(out, options.if_exists)?;
    let io = |e: std::io::Error| {
        ExportError::Gguf(crate::Error::io(format!("writing {}", crate::format::shown_path(&out)), e))
    };
    f.write_all(&(text.len() as u64).to_le_bytes()).map_err(io)?;
    f.write_all(&text).map_err(io)?;
    let mut report = ExportReport { excluded: all.len() - kept.len(), ..Default::default() };
    let endian = file.endian();
    let mut swapped: Vec<u8> = Vec::new();
    let mut floats: Vec<f32> = Vec::new();
    let mut bytes: Vec<u8> = Vec::new();
    for &i in &order {
        let t = kept[i];
        let target = out_type(t.dtype, options.dtype);
        let data = file.tensor_data(t)?;
        // Whole blocks, about 4 Mi elements a chunk.
        let block = t.dtype.block_size().max(1);
        let per_chunk = ((4u64 << 20) / block).max(1) * block;
        let chunk_bytes = t.dtype.row_bytes(per_chunk).unwrap_or(data.len() as u64).max(1) as usize;
        report.tensors += 1;
        report.converted += usize::from(target != t.dtype);
        for part in data.chunks(chunk_bytes) {
            if target == t.dtype {
                if endian == Endian::Little {
                    f.write_all(part).map_err(io)?;
                } else {
                    swapped.clear();
                    swapped.extend_from_slice(part);
                    swap_blocks(t.dtype, &mut swapped);
                    f.write_all(&swapped).map_err(io)?;
                }
            } else {
                let n = (part.len() as u64 / t.dtype.type_size().max(1) * block) as usize;
                floats.resize(n, 0.0);
                dequantize_part(t.dtype, endian, part, &mut floats).map_err(|e| e.in_tensor(t.name))?;
                if target == GgmlType::F32 {
                    f.write_all(bytemuck::cast_slice(&floats)).map_err(io)?;
                } else {
                    bytes.resize(target.row_bytes(n as u64).unwrap_or(0) as usize, 0);
                    codec::quantize(target, &floats, &mut bytes)
                        .map_err(|e| crate::Error::from(e).in_tensor(t.name))?;
                    f.write_all(&bytes).map_err(io)?;
                }
            }
            crate::ops::requant::release(file, part);
            done += part.len() as u64;
            if let Some(p) = options.progress {
                p(done, total);
            }
        }
    }
    f.commit()?;
    report.bytes = 8 + text.len() as u64 + offset;
    Ok(report)
}

/// Dequantizes `part` (whole blocks of `dtype` in `endian` order) into `out`, on rayon's pool
/// with feature `parallel`.
fn dequantize_part(dtype: GgmlType, endian: Endian, part: &[u8], out: &mut [f32]) -> crate::Result<()> {
    #[cfg(feature = "parallel")]
    {
        Ok(codec::dequantize_par(dtype, endian, part, out)?)
    }
    #[cfg(not(feature = "parallel"))]
    {
        Ok(codec::dequantize_endian(dtype, endian, part, out)?)
    }
}

/// The GGUF value of `type_name` (as [`ValueRef::type_name`] writes it) from `gguf.metadata`'s
/// JSON `v`.
fn json_value(type_name: &str, v: &Json) -> Result<Value, String> {
    if let Some(inner) = type_name.strip_prefix("array<").and_then(|r| r.strip_suffix('>')) {
        let items = v.as_array().ok_or_else(|| format!("{type_name} value is not a JSON array"))?;
        return Ok(Value::Array(json_array(inner, items)?));
    }
    let float = |v: &Json| -> Result<f64, String> {
        match v {
            Json::String(s) if s == "nan" => Ok(f64::NAN),
            Json::String(s) if s == "inf" => Ok(f64::INFINITY),
            Json::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
            v => v.as_f64().ok_or_else(|| format!("{v} is not a {type_name}")),
        }
    };
    let int = |v: &Json| -> Result<i128, String> {
        v.as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
            .ok_or_else(|| format!("{v} is not a {type_name}"))
    };
    macro_rules! int_as {
        ($variant:ident, $t:ty) => {
            Value::$variant(<$t>::try_from(int(v)?).map_err(|_| format!("{v} does not fit {type_name}"))?)
        };
    }
    Ok(match ValueType::from_name(type_name).ok_or_else(|| format!("unknown type {type_name:?}"))? {
        ValueType::U8 => int_as!(U8, u8),
        ValueType::I8 => int_as!(I8, i8),
        ValueType::U16 => int_as!(U16, u16),
        ValueType::I16 => int_as!(I16, i16),
        ValueType::U32 => int_as!(U32, u32),
        ValueType::I32 => int_as!(I32, i32),
        ValueType::U64 => int_as!(U64, u64),
        ValueType::I64 => int_as!(I64, i64),
        ValueType::F32 => Value::F32(float(v)? as f32),
        ValueType::F64 => Value::F64(float(v)?),
        ValueType::Bool => Value::Bool(v.as_bool().ok_or_else(|| format!("{v} is not a bool"))?),
        ValueType::String => Value::String(v.as_str().ok_or_else(|| format!("{v} is not a string"))?.to_owned()),
        ValueType::Array => return Err("array type without element type".into()),
    })
}

/// An array of `inner` items (a type name) from JSON items.
fn json_array(inner: &str, items: &[Json]) -> Result<Array, String> {
    macro_rules! each {
        ($variant:ident, $pat:pat => $e:expr) => {
            Array::$variant(
                items
                    .iter()
                    .map(|v| match json_value(inner, v)? {
                        $pat => Ok($e),
                        _ => Err(format!("{v} is not a {inner}")),
                    })
                    .collect::<Result<_, String>>()?,
            )
        };
    }
    if inner.starts_with("array") {
        return Ok(Array::Array(
            items
                .iter()
                .map(|v| match json_value(inner, v)? {
                    Value::Array(a) => Ok(a),
                    _ => Err(format!("{v} is not an {inner}")),
                })
                .collect::<Result<_, String>>()?,
        ));
    }
    Ok(match ValueType::from_name(inner).ok_or_else(|| format!("unknown type {inner:?}"))? {
        ValueType::U8 => each!(U8, Value::U8(x) => x),
        ValueType::I8 => each!(I8, Value::I8(x) => x),
        ValueType::U16 => each!(U16, Value::U16(x) => x),
        ValueType::I16 => each!(I16, Value::I16(x) => x),
        ValueType::U32 => each!(U32, Value::U32(x) => x),
        ValueType::I32 => each!(I32, Value::I32(x) => x),
        ValueType::U64 => each!(U64, Value::U64(x) => x),
        ValueType::I64 => each!(I64, Value::I64(x) => x),
        ValueType::F32 => each!(F32, Value::F32(x) => x),
        ValueType::F64 => each!(F64, Value::F64(x) => x),
        ValueType::Bool => each!(Bool, Value::Bool(x) => x),
        ValueType::String => each!(String, Value::String(x) => x),
        ValueType::Array => return Err("array type without element type".into()),
    })
}

/// Writes the safetensors file `input` as a GGUF file at `out` (atomically; a file at `out`
/// replaced or kept as `if_exists` says): see the [module docs](self).
///
/// # Errors
/// [`ExportError::Gguf`] with an I/O error naming `input` for a file that cannot be opened or
/// read; [`ExportError::SafeTensors`] for one that is not valid safetensors;
/// [`ExportError::BadMetadata`] for a `gguf.*` entry of `__metadata__` that is not as [`export`]
/// writes it (naming the key or tensor); [`ExportError::UnsupportedSafetensorsType`];
/// [`ExportError::Gguf`] for what the GGUF writer refuses or an I/O error writing `out` (the
/// target is then untouched).
pub fn import(
    input: impl AsRef<Path>,
    out: impl AsRef<Path>,
    if_exists: IfExists,
) -> Result<ExportReport, ExportError> {
    let input = input.as_ref();
    let st_err = |source| ExportError::SafeTensors { path: input.to_path_buf(), source };
    // A file that cannot be opened or read is an I/O error naming it (not an invalid file).
    let io_err = |e| ExportError::Gguf(crate::Error::io(format!("opening {}", crate::format::shown_path(&input)), e));
    let file = std::fs::File::open(input).map_err(io_err)?;
    // SAFETY: the file is only read; as every memory-mapped reader, this one assumes the file is
    // not truncated or changed while it is mapped (as `Gguf::open` documents).
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
    let (_, meta) = safetensors::SafeTensors::read_metadata(&map).map_err(st_err)?;
    let st = safetensors::SafeTensors::deserialize(&map).map_err(st_err)?;
    let extra = meta.metadata().clone().unwrap_or_default();
    let bad = |entry: &'static str, reason: String| ExportError::BadMetadata { entry, reason };

    let version = match extra.get("gguf.version") {
        Some(v) => v.parse::<u32>().map_err(|_| bad("gguf.version", format!("{v:?} is not a version")))?,
        None => 3,
    };
    let mut w = GgufWriter::with_options(
        AtomicFile::create(out.as_ref(), if_exists)?,
        WriteOptions::new().with_version(version),
    )?;
    if let Some(text) = extra.get("gguf.metadata") {
        let kvs: Vec<Json> = serde_json::from_str(text).map_err(|e| bad("gguf.metadata", e.to_string()))?;
        for kv in &kvs {
            let (Some(key), Some(ty), Some(v)) = (kv["key"].as_str(), kv["type"].as_str(), kv.get("value")) else {
                return Err(bad("gguf.metadata", format!("{kv} is not {{\"key\", \"type\", \"value\"}}")));
            };
            let value = json_value(ty, v).map_err(|r| bad("gguf.metadata", format!("key {key}: {r}")))?;
            // The key's bytes (escaped by `export`), as a key copied from a file: any bytes.
            let raw = GgufStr::unescape(key).map_err(|e| bad("gguf.metadata", e.to_string()))?;
            w.add_value_keyed(GgufStr::from_bytes(&raw), &value, true)?;
        }
    }
    // Tensor order: gguf.tensors (names escaped by `export`), else the data order (names as
    // they are).
    let escaped = extra.contains_key("gguf.tensors");
    let names: Vec<String> = match extra.get("gguf.tensors") {
        Some(text) => {
            let list: Vec<Json> = serde_json::from_str(text).map_err(|e| bad("gguf.tensors", e.to_string()))?;
            list.iter()
                .map(|t| {
                    t["name"].as_str().map(str::to_owned).ok_or_else(|| bad("gguf.tensors", format!("{t} has no name")))
                })
                .collect::<Result<_, _>>()?
        }
        None => meta.offset_keys(),
    };
    let mut report = ExportReport::default();
    let mut views = Vec::with_capacity(names.len());
    for name in &names {
        let view = st.tensor(name).map_err(|_| bad("gguf.tensors", format!("tensor {name} is not in the file")))?;
        let dtype = match view.dtype() {
            safetensors::Dtype::F32 => GgmlType::F32,
            safetensors::Dtype::F16 => GgmlType::F16,
            safetensors::Dtype::BF16 => GgmlType::BF16,
            safetensors::Dtype::F64 => GgmlType::F64,
            safetensors::Dtype::I8 => GgmlType::I8,
            safetensors::Dtype::I16 => GgmlType::I16,
            safetensors::Dtype::I32 => GgmlType::I32,
            safetensors::Dtype::I64 => GgmlType::I64,
            other => {
                return Err(ExportError::UnsupportedSafetensorsType {
                    tensor: name.clone(),
                    dtype: format!("{other:?}"),
                })
            }
        };
        let shape: Vec<u64> = view.shape().iter().map(|&d| d as u64).collect();
        let raw = match escaped {
            true => GgufStr::unescape(name).map_err(|e| bad("gguf.tensors", e.to_string()))?,
            false => name.as_bytes().to_vec(),
        };
        w.add_tensor(GgufStr::from_bytes(&raw), dtype, &shape)?;
        views.push(view);
    }
    for view in &views {
        w.write_tensor_data(view.data())?;
        report.tensors += 1;
    }
    w.commit()?;
    report.bytes = std::fs::metadata(out.as_ref()).map(|m| m.len()).unwrap_or(0);
    Ok(report)
}
