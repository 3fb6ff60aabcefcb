//! Metadata editing: set, remove and rename keys of a GGUF file, rewriting it safely.
//!
//! An edit rewrites the whole file: the header and key/value block are encoded anew, and the
//! tensor infos and data follow as the [`GgufWriter`] lays them out (offsets the running sum of
//! padded sizes, as ggml writes them). Tensor data is copied by the kernel (`copy_file_range` on
//! Linux), never through user memory. The new file goes to a temporary file in the same folder,
//! which is synced and renamed over the original only when complete: the original is intact
//! after any failure (an invalid edit, an I/O error, a full disk).
//!
//! - A file whose tensor offsets already are ggml's running sums (every file ggml, gguf-py or
//!   this crate wrote) keeps its tensor data byte for byte; only the data section's start moves
//!   when the metadata's size changes.
//! - Setting or removing `general.alignment` re-lays out the data to the new alignment.
//! - The version and byte order of the file are kept.
//!
//! ```
//! use gguf_serde::ops::edit::{apply, Edit};
//! use gguf_serde::{Gguf, GgufWriter, Value, ValueRef};
//! let mut w = GgufWriter::new(Vec::new());
//! w.add_kv("general.name", "old")?;
//! let bytes = w.finish()?;
//! let file = Gguf::from_slice(&bytes)?;
//! let edits = [
//!     Edit::Set { key: "general.name".into(), value: Value::from("new") },
//!     Edit::Rename { from: "general.name".into(), to: "general.basename".into() },
//! ];
//! let out = apply(&file, &edits, GgufWriter::new(Vec::new()), |w, _| Ok(w))?.finish()?;
//! assert_eq!(Gguf::from_slice(&out)?.get("general.basename"), Some(ValueRef::String("new".into())));
//! # Ok::<(), gguf_serde::Error>(())
//! ```

use std::io::Write;

use crate::container::{Gguf, Source, Value, ValueRef};
// What the file-level functions use (feature `mmap`).
use crate::error::{EditError, Error, Result};
use crate::format::keys::{has_empty_segment, GENERAL_ALIGNMENT};
use crate::format::{alignment_value_problem, GgufStr, ValueType};
use crate::GgufWriter;
#[cfg(feature = "mmap")]
use {
    crate::container::atomic::{create_temp, file_range, open_file},
    crate::container::{IfExists, WriteOptions},
    std::fs::File,
    std::io::BufWriter,
    std::path::Path,
};

/// One change to a file's metadata. Keys are bytes, matched as bytes: `"general.name".into()`
/// for text, or the bytes of a key that is not UTF-8 (as [`Kv::key`](crate::Kv::key) gives
/// them, or [`GgufStr::unescape`] reads them from the escaped form `gguf inspect` shows), so
/// that every key of a file can be set, removed and renamed. A new key (set, or the new name of
/// a rename) is written as given, one rule for both: any bytes, ASCII or not, UTF-8 or not, as
/// ggml's reader takes them (the spec requires ASCII keys; `gguf validate` warns about one that
/// is not), but not empty nor longer than 65,535 bytes ([`EditError::KeyLength`]) nor with an
/// empty segment ([`EditError::EmptySegment`]). Unlike [`GgufWriter::add_kv`], which refuses a
/// new key that is not ASCII, an edit keeps what the user gave. Errors show keys escaped
/// ([`GgufStr`]'s `Display`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Edit {
    /// Sets `key` to `value`: in place (same position, possibly a new type) if the key exists,
    /// else appended after the last key (a new key with an empty segment, `a..b`, is refused:
    /// [`EditError::EmptySegment`]).
    Set {
        /// The key's bytes.
        key: Vec<u8>,
        /// The new value, with its type.
        value: Value,
    },
    /// Sets `key` to a STRING of the bytes `value`, UTF-8 or not (ggml stores and reads any
    /// bytes): in place or appended, as [`Set`](Self::Set), which is the same for text
    /// ([`Value::String`]).
    SetString {
        /// The key's bytes.
        key: Vec<u8>,
        /// The string's bytes.
        value: Vec<u8>,
    },
    /// Removes `key`, which must exist.
    Remove {
        /// The key's bytes.
        key: Vec<u8>,
    },
    /// Renames `from`, which must exist, to `to`, which must not exist nor have an empty segment
    /// ([`EditError::EmptySegment`]); the pair keeps its position and value. Renaming a key to
    /// itself does nothing.
    Rename {
        /// The old name's bytes.
        from: Vec<u8>,
        /// The new name's bytes.
        to: Vec<u8>,
    },
}

enum Item<'a> {
    Ref(ValueRef<'a>),
    Owned(Value),
    /// A STRING of these bytes.
    String(Vec<u8>),
}

/// A key: the bytes of one read from the file (UTF-8 or not, kept as they are), or one given.
type Key<'a> = std::borrow::Cow<'a, [u8]>;

/// Checks a key an edit creates (a new key set, the new name of a rename): 1 to 65,535 bytes
/// ([`EditError::KeyLength`]) without an empty segment ([`EditError::EmptySegment`]); any bytes
/// otherwise, as ggml reads them. Refused here, before anything is written, the error names no
/// offset of the output.
fn check_new_key(key: &[u8]) -> Result<()> {
    let shown = || GgufStr::from_bytes(key).to_string();
    if key.is_empty() || key.len() > 65535 {
        return Err(EditError::KeyLength { key: shown(), len: key.len() }.into());
    }
    if has_empty_segment(key) {
        return Err(EditError::EmptySegment { key: shown() }.into());
    }
    Ok(())
}

/// Sets `key` to `item` among `kvs`: in place, or appended.
fn set<'a>(kvs: &mut Vec<(Key<'a>, Item<'a>)>, key: &[u8], item: Item<'a>) -> Result<()> {
    match kvs.iter_mut().find(|(k, _)| **k == *key) {
        Some(slot) => slot.1 = item,
        None => {
            check_new_key(key)?;
            kvs.push((Key::Owned(key.to_vec()), item));
        }
    }
    Ok(())
}

/// The key/value pairs of `file` after `edits`, in order.
fn edited<'a, S: Source>(file: &'a Gguf<S>, edits: &[Edit]) -> Result<Vec<(Key<'a>, Item<'a>)>> {
    let mut kvs: Vec<(Key<'a>, Item<'a>)> =
        file.metadata().map(|kv| (Key::Borrowed(kv.key.as_bytes()), Item::Ref(kv.value))).collect();
    let find = |kvs: &[(Key<'a>, Item<'a>)], k: &[u8]| kvs.iter().position(|(key, _)| **key == *k);
    // Keys in errors: escaped, as `GgufStr` shows them.
    let shown = |k: &[u8]| GgufStr::from_bytes(k).to_string();
    for e in edits {
        match e {
            Edit::Set { key, value } => set(&mut kvs, key, Item::Owned(value.clone()))?,
            Edit::SetString { key, value } => set(&mut kvs, key, Item::String(value.clone()))?,
            Edit::Remove { key } => match find(&kvs, key) {
                Some(i) => {
                    kvs.remove(i);
                }
                None => return Err(EditError::NoSuchKey { key: shown(key), action: "remove" }.into()),
            },
            Edit::Rename { from, to } => {
                let Some(i) = find(&kvs, from) else {
                    return Err(EditError::NoSuchKey { key: shown(from), action: "rename" }.into());
                };
                if from != to {
                    if find(&kvs, to).is_some() {
                        return Err(EditError::KeyExists { key: shown(from), to: shown(to) }.into());
                    }
                    check_new_key(to)?;
                    if let Some(slot) = kvs.get_mut(i) {
                        slot.0 = Key::Owned(to.clone());
                    }
                }
            }
        }
    }
    check_alignment(&kvs)?;
    Ok(kvs)
}

/// Refuses a `general.alignment` among `kvs` that ggml refuses (a type other than u32, zero, not
/// a power of two: [`alignment_problem`]) with [`EditError::BadAlignment`], naming the key and
/// the value before anything is written, rather than the writer's offset of the output.
fn check_alignment(kvs: &[(Key<'_>, Item<'_>)]) -> Result<()> {
    let Some((key, item)) = kvs.iter().find(|(k, _)| **k == *GENERAL_ALIGNMENT.as_bytes()) else { return Ok(()) };
    let (value, ty) = match item {
        Item::Ref(v) => (if let ValueRef::U32(a) = v { Some(*a) } else { None }, v.value_type()),
        Item::Owned(v) => (if let Value::U32(a) = v { Some(*a) } else { None }, v.value_type()),
        Item::String(_) => (None, ValueType::String),
    };
    match alignment_value_problem(ty.name(), value) {
        Some(problem) => Err(EditError::BadAlignment { key: GgufStr::from_bytes(key).to_string(), problem }.into()),
        None => Ok(()),
    }
}

/// Declares `file`'s metadata after `edits` and its tensor infos to `w`, then hands `w` to
/// `data`, which writes the tensor data of every tensor of `file` in order (the writer's
/// [`copy_tensor_data`](GgufWriter::copy_tensor_data) or
/// [`write_tensor_data`](GgufWriter::write_tensor_data)), and returns what `data` returns.
///
/// `w` should be made with `file`'s version and byte order (see [`edit_file`], which does all
/// of this for a file on disk).
///
/// # Errors
/// [`EditError`] for an edit that cannot be applied (e.g. [`EditError::BadAlignment`] for a
/// `general.alignment` that is not a power-of-two u32); the writer's errors (e.g.
/// [`WriteError::InvalidKey`](crate::WriteError::InvalidKey)); whatever `data` returns.
pub fn apply<'f, S: Source, W: Write, T>(
    file: &'f Gguf<S>,
    edits: &[Edit],
    mut w: GgufWriter<W>,
    data: impl FnOnce(GgufWriter<W>, &'f Gguf<S>) -> Result<T>,
) -> Result<T> {
    for (key, item) in edited(file, edits)? {
        match item {
            // A pair of the file: its key's bytes as stored.
            Item::Ref(v) => w.add_kv_ref(GgufStr::from_bytes(&key), v)?,
            // A value set by an edit: the file's key or a new one, any bytes (checked by
            // `check_new_key`), as a renamed key keeps them.
            Item::Owned(v) => w.add_value_keyed(GgufStr::from_bytes(&key), &v, true)?,
            Item::String(s) => w.add_kv_ref(GgufStr::from_bytes(&key), ValueRef::String(GgufStr::from_bytes(&s)))?,
        }
    }
    for t in file.tensors() {
        w.add_tensor(t.name, t.dtype, &t.shape)?;
    }
    data(w, file)
}

/// Applies `edits` to the GGUF file at `path`, rewriting it in place safely (see the
/// [module docs](self)).
///
/// # Errors
/// As [`apply`]; [`ErrorKind::Io`](crate::ErrorKind::Io) (the file is then unchanged); any
/// validation error of the file.
#[cfg(feature = "mmap")]
pub fn edit_file(path: impl AsRef<Path>, edits: &[Edit]) -> Result<()> {
    let path = path.as_ref();
    rewrite_file(path, path, edits)
}

/// Like [`edit_file`], writing the result to `out` (which may be `input`) instead.
///
/// # Errors
/// As [`edit_file`].
#[cfg(feature = "mmap")]
pub fn rewrite_file(input: impl AsRef<Path>, out: impl AsRef<Path>, edits: &[Edit]) -> Result<()> {
    rewrite_with(input.as_ref(), out.as_ref(), edits, None, Ok, Ok)
}

/// The machinery of [`rewrite_file`], with hooks for failure injection: the temporary file's
/// folder, and a wrapper around the output writer (`wrap`, undone by `unwrap`).
#[cfg(feature = "mmap")]
pub(crate) fn rewrite_with<O: Write>(
    input: &Path,
    out: &Path,
    edits: &[Edit],
    temp_dir: Option<&Path>,
    wrap: impl FnOnce(BufWriter<File>) -> std::io::Result<O>,
    unwrap: impl FnOnce(O) -> std::io::Result<BufWriter<File>>,
) -> Result<()> {
    let file = Gguf::open(input)?;
    let src = open_file(input)?;
    let opts = WriteOptions::like(&file);
    // Check the edits before creating anything.
    edited(&file, edits)?;
    let (o, pending) = create_temp(out, temp_dir, IfExists::Replace)?;
    let w = GgufWriter::with_options(wrap(o)?, opts)?;
    let o = apply(&file, edits, w, |mut w, file| {
        for t in file.tensors() {
            w.copy_tensor_data(file_range(&src, t.data_offset, t.nbytes)?)?;
        }
        w.finish()
    })?;
    pending.commit(unwrap(o)?)
}

/// Parses `text` as a metadata value for `gguf set`.
///
/// - With `ty`: as that type. Integers must fit (`u8` 0–255, …); floats are Rust float syntax
///   (`inf`, `NaN` included); `bool` is `true`/`false`/`1`/`0`; `string` takes the text as is.
/// - Without `ty`, for a standard key ([`format::keys::lookup`](crate::format::keys::lookup)
///   knows it: `llama.rope.freq_base`, `general.file_type`, …): as the type the registry gives
///   it, the type llama.cpp reads, whatever type the file holds now (so a key stored with a
///   type llama.cpp refuses is rewritten with the right one). A per-layer key
///   (`{arch}.attention.head_count`) takes its scalar type; an array key cannot be set from text.
/// - Without `ty`, for another key that exists (`existing`): as the existing value's type (not
///   for arrays).
/// - Without `ty`, for a new key, the type is inferred: `true`/`false` → bool; an integer →
///   `u32` if it fits, `i32` if negative and fits, else `u64`/`i64`; a number with a decimal
///   point or exponent → `f32`; anything else → string. (u32 and f32 are the types of nearly
///   all numeric GGUF keys, `general.alignment` included.)
///
/// # Errors
/// [`EditError`] (with `key`) if the text does not parse as the type (`BadStandardValue`, naming
/// the registry's type, for a standard key), or the type is an array.
pub fn parse_value(key: &str, text: &str, ty: Option<ValueType>, existing: Option<ValueRef<'_>>) -> Result<Value> {
    let standard = match ty {
        None => crate::format::keys::lookup(key).map(|m| m.spec),
        Some(_) => None,
    };
    let bad = |ty: &'static str| {
        Error::from(match standard {
            Some(spec) => EditError::BadStandardValue {
                key: key.to_owned(),
                text: text.to_owned(),
                template: spec.key,
                expected: spec.ty,
            },
            None => EditError::BadValue { key: key.to_owned(), text: text.to_owned(), ty },
        })
    };
    let ty = match (ty, existing) {
        (Some(t), _) => t,
        (None, _) if standard.is_some() => match standard.and_then(|s| s.ty.scalar()) {
            Some(t) => t,
            None => return Err(EditError::ArrayFromText { key: key.to_owned() }.into()),
        },
        (None, Some(v)) => v.value_type(),
        (None, None) => {
            return infer(text)
                .ok_or_else(|| EditError::IntegerTooLarge { key: key.to_owned(), text: text.to_owned() }.into())
        }
    };
    macro_rules! num {
        ($t:ty, $v:ident) => {
            text.trim().parse::<$t>().map(Value::$v).map_err(|_| bad(ty.name()))
        };
    }
    match ty {
        ValueType::U8 => num!(u8, U8),
        ValueType::I8 => num!(i8, I8),
        ValueType::U16 => num!(u16, U16),
        ValueType::I16 => num!(i16, I16),
        ValueType::U32 => num!(u32, U32),
        ValueType::I32 => num!(i32, I32),
        ValueType::U64 => num!(u64, U64),
        ValueType::I64 => num!(i64, I64),
        // A finite number beyond the type's range is refused, not written as infinity (Rust's
        // parse rounds 1e40 to f32::INFINITY); `inf` and `nan` spelled out are taken as they are.
        ValueType::F32 => match text.trim().parse::<f32>() {
            Ok(f) if f.is_infinite() && !text.trim().to_ascii_lowercase().contains("inf") => Err(bad(ty.name())),
            r => r.map(Value::F32).map_err(|_| bad(ty.name())),
        },
        ValueType::F64 => match text.trim().parse::<f64>() {
            Ok(f) if f.is_infinite() && !text.trim().to_ascii_lowercase().contains("inf") => Err(bad(ty.name())),
            r => r.map(Value::F64).map_err(|_| bad(ty.name())),
        },
        ValueType::Bool => match text.trim() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(bad("bool")),
        },
        ValueType::String => Ok(Value::String(text.to_owned())),
        ValueType::Array => Err(EditError::ArrayFromText { key: key.to_owned() }.into()),
    }
}

/// The value a text means without a type; `None` for an integer too large for any integer type
/// (rather than a silently rounded float).
fn infer(text: &str) -> Option<Value> {
    match text {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let numeric = !text.is_empty() && text.bytes().all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c));
    if numeric && text.bytes().any(|c| c.is_ascii_digit()) {
        if let Ok(u) = text.parse::<u64>() {
            return Some(u32::try_from(u).map_or(Value::U64(u), Value::U32));
        }
        if let Ok(i) = text.parse::<i64>() {
            return Some(i32::try_from(i).map_or(Value::I64(i), Value::I32));
        }
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        if digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if let Ok(f) = text.parse::<f32>() {
            return Some(Value::F32(f));
        }
    }
    Some(Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    //! Failure injection: whatever fails while the new file is written, the original stays
    //! byte-identical and no temporary file is left.

    use std::io::{self, BufWriter, Write};
    use std::path::{Path, PathBuf};

    use super::{rewrite_with, Edit};
    use crate::{GgmlType, GgufWriter, Value};

    /// A writer that accepts `left` bytes, then fails with `kind` (or ENOSPC).
    struct FailAfter<W> {
        inner: W,
        left: usize,
        enospc: bool,
    }

    impl<W: Write> Write for FailAfter<W> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(if self.enospc {
                    io::Error::from_raw_os_error(28) // ENOSPC: no space left on device
                } else {
                    io::Error::other("injected failure")
                });
            }
            let n = buf.len().min(self.left);
            let n = self.inner.write(&buf[..n])?;
            self.left -= n;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }

    /// A folder of its own (removed when the guard drops, also when the test fails) holding
    /// `m.gguf`, and that file's bytes.
    fn setup() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let tmp = gguf_test_support::temp_dir();
        let d = tmp.path();
        let mut w = GgufWriter::new(Vec::new());
        w.add_kv("general.name", "x").unwrap();
        w.add_tensor("t", GgmlType::F32, &[300]).unwrap();
        w.add_tensor("u", GgmlType::F32, &[7]).unwrap();
        w.write_tensor_data(&[1u8; 1200]).unwrap();
        w.write_tensor_data(&[2u8; 28]).unwrap();
        let bytes = w.finish().unwrap();
        let p = d.join("m.gguf");
        std::fs::write(&p, &bytes).unwrap();
        (tmp, p, bytes)
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    fn edits() -> Vec<Edit> {
        vec![Edit::Set { key: "general.name".into(), value: Value::from("a longer name than before") }]
    }

    #[test]
    fn a_float_beyond_its_type_is_refused_and_inf_spelled_out_is_taken() {
        use crate::format::ValueType;
        for (text, ty) in [("1e40", ValueType::F32), ("-3.5e38", ValueType::F32), ("1e400", ValueType::F64)] {
            assert!(super::parse_value("k", text, Some(ty), None).is_err(), "{text}");
        }
        assert!(
            matches!(super::parse_value("k", "3.4e38", Some(ValueType::F32), None), Ok(Value::F32(f)) if f.is_finite())
        );
        assert!(
            matches!(super::parse_value("k", "-inf", Some(ValueType::F32), None), Ok(Value::F32(f)) if f == f32::NEG_INFINITY)
        );
        assert!(matches!(super::parse_value("k", "1e300", Some(ValueType::F64), None), Ok(Value::F64(_))));
    }

    /// Errors quote a key in the escaped form inspect, show and validate print, once: a bad
    /// byte as `\xNN`, a newline as `\n`, a backslash of the key as `\\` (not `\\xfe`, the
    /// `Debug` of the escaped text). The expected texts are the escaping's definition, by hand.
    #[test]
    fn edit_errors_quote_keys_escaped_once() {
        let mut w = GgufWriter::new(Vec::new());
        w.add_kv("a", 1u32).unwrap();
        w.add_kv_ref(crate::GgufStr::from_bytes(br"bad.key\xff"), crate::ValueRef::U32(2)).unwrap();
        let bytes = w.finish().unwrap();
        let file = crate::Gguf::from_slice(&bytes).unwrap();
        let err = |edit: Edit| match super::apply(&file, &[edit], GgufWriter::new(Vec::new()), |w, _| Ok(w)) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted"),
        };
        assert_eq!(
            err(Edit::Remove { key: b"no.\xfe\n".to_vec() }),
            r#"cannot edit "no.\xfe\n": no such key to remove"#
        );
        assert_eq!(
            err(Edit::Rename { from: b"a".to_vec(), to: br"bad.key\xff".to_vec() }),
            r#"cannot edit "a": cannot rename to "bad.key\\xff": that key exists"#
        );
        assert_eq!(
            err(Edit::Rename { from: b"a".to_vec(), to: b"x..\xfe".to_vec() }),
            r#"cannot edit "x..\xfe": a segment between dots is empty (a new key may not be `a..b`, `a.` or `.x`)"#
        );
        let e = super::parse_value(r"k\xff", "x", Some(crate::format::ValueType::U32), None).unwrap_err();
        assert_eq!(e.to_string(), r#"cannot edit "k\xff": "x" is not a valid u32"#);
    }

    #[test]
    fn a_writer_failing_anywhere_leaves_the_original() {
        let (_tmp, p, original) = setup();
        let dir = p.parent().unwrap();
        // The new file is about 1.4 KB: fail in the header, the tensor infos, each tensor's data
        // and padding, and at the very end (the flush).
        for (left, enospc) in [(0, false), (1, true), (20, false), (60, true), (100, false), (130, true), (700, false)]
            .into_iter()
            .chain((1000..1500).step_by(37).map(|n| (n, n % 2 == 0)))
        {
            let r = rewrite_with(
                &p,
                &p,
                &edits(),
                None,
                |w| Ok(FailAfter { inner: w, left, enospc }),
                |f: FailAfter<BufWriter<std::fs::File>>| Ok(f.inner),
            );
            let Err(e) = r else {
                // Only a budget past the whole file succeeds.
                assert!(left >= 1400, "succeeded with {left} bytes");
                std::fs::write(&p, &original).unwrap();
                continue;
            };
            if enospc {
                let msg = format!("{e}");
                assert!(msg.contains("No space left on device") || msg.contains("writer misuse"), "{msg}");
            }
            assert!(std::fs::read(&p).unwrap() == original, "original changed after a failure at byte {left}");
            assert_eq!(files(dir), ["m.gguf"], "temporary file left after a failure at byte {left}");
        }
    }

    #[test]
    fn failing_flush_and_failing_unwrap_leave_the_original() {
        let (_tmp, p, original) = setup();
        let dir = p.parent().unwrap();
        let r = rewrite_with(&p, &p, &edits(), None, Ok, |_w| Err(io::Error::other("injected at the end")));
        assert!(r.is_err());
        assert!(std::fs::read(&p).unwrap() == original);
        assert_eq!(files(dir), ["m.gguf"]);
    }

    #[test]
    fn an_unwritable_temp_dir_leaves_the_original() {
        let (_tmp, p, original) = setup();
        let dir = p.parent().unwrap();
        // A "folder" that is a file: no temporary file can be made in it (even as root).
        let not_a_dir = p.clone();
        let e = rewrite_with(&p, &p, &edits(), Some(&not_a_dir), Ok, Ok).unwrap_err();
        assert!(e.to_string().contains("creating a temporary file in"), "{e}");
        assert!(std::fs::read(&p).unwrap() == original);
        // A missing folder.
        let e = rewrite_with(&p, &p, &edits(), Some(&dir.join("missing/deeper")), Ok, Ok).unwrap_err();
        assert!(e.to_string().contains("creating a temporary file in"), "{e}");
        assert!(std::fs::read(&p).unwrap() == original);
        assert_eq!(files(dir), ["m.gguf"]);
    }

    #[test]
    fn a_failing_rename_leaves_the_original() {
        let (_tmp, p, original) = setup();
        let dir = p.parent().unwrap();
        // The target is a folder: refused before anything is written (renaming over it would
        // replace it, or fail once the new file is complete).
        let target = dir.join("folder");
        std::fs::create_dir_all(target.join("inside")).unwrap();
        let e = rewrite_with(&p, &target, &edits(), None, Ok, Ok).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(std::fs::read(&p).unwrap() == original);
        assert_eq!(files(dir), ["folder", "m.gguf"]);
    }
}
