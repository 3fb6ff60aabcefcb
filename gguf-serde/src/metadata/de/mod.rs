//! The serde `Deserializer`: a GGUF key/value block becomes a `Deserialize` value.
//!
//! The block of an opened [`Gguf`] (already validated) is viewed as a tree of keys: a struct at
//! key prefix `P` takes, for each of its fields `f`, the key `P.f` (a value) or the keys under
//! `P.f.` (a nested struct). Nothing is copied: strings and arrays are read from the file's bytes
//! as the visitor asks for them, so `&'de str`, `Cow<'de, str>` and `Vec<&'de str>` borrow; a
//! numeric array read into a `Vec` of its stored type is copied at once, and a string array into
//! a `Vec<String>` in one pass (`bulk.rs`).
//! See the [crate docs](crate#the-serde-mapping) for the whole mapping.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, Visitor};
use serde::Deserialize;

use crate::container::{ArrayIter, ArrayRef, Gguf, Source, Value, ValueRef, READ_AHEAD};
use crate::error::{Error, Found, MetadataError, Result};
use crate::format::{Endian, ValueType};

use crate::metadata::{
    resolve_arch_key, MetadataOptions, ARRAY_TOKEN, MAX_NESTING, RAW_BE, RAW_LE, STRING_ARRAY_TOKEN, VALUE_TOKEN,
};

impl de::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        MetadataError::Message { message: msg.to_string() }.into()
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        MetadataError::MissingField { field }.into()
    }

    /// serde's message, with the value found kept (see `found_key`).
    #[cold]
    fn invalid_type(unexp: de::Unexpected<'_>, exp: &dyn Expected) -> Self {
        with_found(Self::custom(format_args!("invalid type: {unexp}, expected {exp}")), unexp)
    }

    /// serde's message, with the value found kept (see `found_key`).
    #[cold]
    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn Expected) -> Self {
        with_found(Self::custom(format_args!("invalid value: {unexp}, expected {exp}")), unexp)
    }
}

fn with_found(mut e: Error, unexp: de::Unexpected<'_>) -> Error {
    use de::Unexpected as U;
    let found = match unexp {
        U::Bool(b) => Found::Bool(b),
        U::Unsigned(x) => Found::Int(x.into()),
        U::Signed(x) => Found::Int(x.into()),
        U::Float(x) => Found::Float(x),
        U::Str(s) => Found::Str(s.to_owned()),
        U::Bytes(b) => Found::Bytes(b.to_vec()),
        U::Seq => Found::Seq,
        _ => return e,
    };
    e.set_found(found);
    e
}

/// Whether the stored value `v` is what serde reported as found: the value serde's buffer of a
/// flattened struct made of it (integers of any width as one integer, `f32` widened).
fn is_found(v: &ValueRef<'_>, found: &Found) -> bool {
    match (found, v) {
        (Found::Bool(b), ValueRef::Bool(x)) => b == x,
        (Found::Int(n), v) => int_of(v) == Some(*n),
        (Found::Float(f), ValueRef::F32(x)) => f64::from(*x) == *f || (x.is_nan() && f.is_nan()),
        (Found::Float(f), ValueRef::F64(x)) => x == f || (x.is_nan() && f.is_nan()),
        (Found::Str(s), ValueRef::String(x)) => x == s,
        // Only a STRING that is not UTF-8 is handed over as bytes (`deserialize_any`).
        (Found::Bytes(b), ValueRef::String(x)) => x.as_bytes() == b.as_slice() && !x.is_utf8(),
        (Found::Seq, ValueRef::Array(_)) => true,
        _ => false,
    }
}

/// Names the key of an error raised without one by a visitor that read buffered values (serde's
/// flatten): the one member of the group whose value is the value serde reported as found; if
/// several hold it, the message lists them (at most 5) and the key stays unnamed.
fn found_key(mut e: Error, entries: &[Entry<'_>], members: &[u32]) -> Error {
    if e.key().is_some() || e.offset().is_some() {
        return e;
    }
    let Some(found) = e.found().cloned() else { return e };
    let group = || members.iter().filter_map(|&m| entries.get(m as usize));
    let whole = group().filter(|x| is_found(&x.value, &found)).map(|x| (x.key.to_owned(), x.offset));
    let mut hits: Vec<(String, u64)> = whole.take(5).collect();
    if hits.is_empty() && !matches!(found, Found::Seq) {
        // Not a whole value: an element of an array (serde fails at the first element that does
        // not fit, so the first element holding the value is the one), named `key[i]`.
        for x in group() {
            if let ValueRef::Array(a) = x.value {
                if let Some(hit) = found_element(a, &found, &Path::Root(x.key), x.offset + 12, 0) {
                    hits.push(hit);
                    if hits.len() == 5 {
                        break;
                    }
                }
            }
        }
    }
    let mut hits = hits.into_iter();
    let (Some(first), second) = (hits.next(), hits.next()) else { return e };
    match second {
        // A STRING that is not UTF-8 read as a value (a `Value` in a flattened map): the error
        // reading it as text gives, at the offset of its bytes.
        None if matches!(found, Found::Bytes(_)) => crate::FormatError::InvalidUtf8 {
            item: crate::Item::String,
            owner: Some(first.0),
            offset: first.1.saturating_add(8),
        }
        .into(),
        None => {
            if let Some((k, o)) = e.metadata_at() {
                *k = Some(first.0);
                *o = Some(first.1);
            }
            e
        }
        Some(second) => {
            let mut keys: Vec<String> = vec![first.0, second.0];
            keys.extend(hits.map(|x| x.0));
            let message = format!("{e} (the value of one of the keys {})", keys.join(", "));
            let mut out = err(message, None, None);
            out.set_found(found);
            out
        }
    }
}

/// The path (`key[i]`, `key[i][j]`) and absolute offset of the first element of `a` (whose
/// elements start at `start`), or of its nested arrays, whose value is `found`. Arrays nest at
/// most [`MAX_DEPTH`](crate::format::MAX_DEPTH) levels in a validated file (checked here too).
fn found_element(a: ArrayRef<'_>, found: &Found, path: &Path<'_>, start: u64, depth: u32) -> Option<(String, u64)> {
    if depth as usize > crate::format::MAX_DEPTH {
        return None;
    }
    let mut iter = a.iter();
    let mut index = 0u64;
    while let Some((v, pos)) = iter.next_at() {
        let at = start.saturating_add(pos as u64);
        let here = Path::Elem(path, index);
        if is_found(&v, found) {
            return Some((here.to_string(), at));
        }
        if let ValueRef::Array(inner) = v {
            if let Some(hit) = found_element(inner, found, &here, at.saturating_add(12), depth + 1) {
                return Some(hit);
            }
        }
        index += 1;
    }
    None
}

/// Deserializes a `T` from the key/value block of the GGUF file in `bytes` (a whole file, or at
/// least everything up to its tensor data). Strings and arrays borrow from `bytes`.
///
/// # Errors
/// Any error of [`Gguf::from_slice`] (the whole file is validated first);
/// [`MetadataError`](crate::MetadataError) with the full key, the expected and found types and the
/// byte offset of the value when the metadata does not fit `T`.
pub fn from_slice<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Result<T> {
    MetadataOptions::new().from_slice(bytes)
}

/// Deserializes a `T` from the key/value block of a GGUF file read from `reader`.
///
/// Only the header and the key/value block are read, by the container's parser, in pieces of
/// what it needs plus at most 8 KiB (so the reader may be a plain file or pipe); tensor infos
/// and tensor data are not read (beyond that read-ahead), and the header's tensor count is not
/// used. A plain reader has no length: a count or length is checked by reading as far as it
/// claims, at most to the end of the reader, so memory grows only as far as the reader really
/// yields bytes. The block is validated and deserialized as with [`from_slice`], with the same
/// errors and byte offsets as the same bytes in memory would give. `T` cannot borrow. To
/// deserialize the metadata of a file whose tensors are also wanted, open it with
/// [`Gguf::open`] or [`Gguf::from_reader`] and use [`Gguf::deserialize_metadata`].
///
/// # Errors
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from the reader;
/// [`FormatError::Truncated`](crate::FormatError::Truncated) or
/// [`FormatError::TooLong`](crate::FormatError::TooLong) if it ends inside the block; otherwise
/// as [`from_slice`].
pub fn from_reader<T: DeserializeOwned, R: Read>(reader: R) -> Result<T> {
    MetadataOptions::new().from_reader(reader)
}

/// Deserializes a `T` from the key/value block of an opened file; `T` may borrow from `file`.
///
/// # Errors
/// As [`from_slice`], less the parsing.
pub fn from_gguf<'a, T: Deserialize<'a>, S: Source>(file: &'a Gguf<S>) -> Result<T> {
    MetadataOptions::new().from_gguf(file)
}

/// Deserializes a `T` from an owned [`Value`], with the mapping of a struct field: a `Value::U32`
/// reads as any integer type it fits, an `array<string>` as `Vec<String>`, and so on.
///
/// # Errors
/// [`MetadataError`](crate::MetadataError) if the value does not fit `T`.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    // Encode the one value as a tiny file and read it back: the one decoding path for both.
    let mut w = crate::GgufWriter::new(Vec::new());
    w.add_value("value", &value)?;
    let bytes = w.finish()?;
    let file = Gguf::from_slice(&bytes)?;
    let kv = file.metadata_borrowed().next().ok_or_else(|| Error::not_found("key", "value"))?;
    T::deserialize(ValueDe { v: kv.value, path: Path::Root(""), offset: None }).map_err(|mut e| {
        if let Some((_, offset)) = e.metadata_at() {
            *offset = None;
        }
        e
    })
}

impl MetadataOptions {
    /// [`from_slice`] with these options.
    ///
    /// # Errors
    /// As [`from_slice`].
    pub fn from_slice<'de, T: Deserialize<'de>>(&self, bytes: &'de [u8]) -> Result<T> {
        let file = Gguf::from_slice(bytes)?;
        deserialize_entries(&entries_of(file.metadata_borrowed()), self)
    }

    /// [`from_reader`] with these options.
    ///
    /// # Errors
    /// As [`from_reader`].
    pub fn from_reader<T: DeserializeOwned, R: Read>(&self, reader: R) -> Result<T> {
        let file = Gguf::kv_block_from_reader(reader, READ_AHEAD)?;
        self.from_gguf(&file)
    }

    /// Deserializes a `T` from key/value pairs, such as those of
    /// [`ShardedGguf::metadata`](crate::ShardedGguf::metadata); `T` may borrow from them.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn from_kvs<'a, T: Deserialize<'a>>(
        &self,
        kvs: impl IntoIterator<Item = crate::container::Kv<'a>>,
    ) -> Result<T> {
        deserialize_entries(&entries_of(kvs), self)
    }

    /// [`from_gguf`] with these options.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn from_gguf<'a, T: Deserialize<'a>, S: Source>(&self, file: &'a Gguf<S>) -> Result<T> {
        deserialize_entries(&entries_of(file.metadata()), self)
    }
}

impl<S: Source> Gguf<S> {
    /// Deserializes the key/value block into a `T` (see [`from_gguf`]); `T` may borrow from `self`.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn deserialize_metadata<'a, T: Deserialize<'a>>(&'a self) -> Result<T> {
        MetadataOptions::new().from_gguf(self)
    }

    /// [`Gguf::deserialize_metadata`] with options.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn deserialize_metadata_with<'a, T: Deserialize<'a>>(&'a self, opts: &MetadataOptions) -> Result<T> {
        opts.from_gguf(self)
    }
}

impl<'de> Gguf<&'de [u8]> {
    /// Like [`Gguf::deserialize_metadata`], borrowing from the slice rather than from `self`, so
    /// the result may outlive this `Gguf`.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn deserialize_metadata_borrowed<T: Deserialize<'de>>(&self) -> Result<T> {
        self.deserialize_metadata_borrowed_with(&MetadataOptions::new())
    }

    /// [`Gguf::deserialize_metadata_borrowed`] with options.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn deserialize_metadata_borrowed_with<T: Deserialize<'de>>(&self, opts: &MetadataOptions) -> Result<T> {
        deserialize_entries(&entries_of(self.metadata_borrowed()), opts)
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct Entry<'de> {
    key: &'de str,
    value: ValueRef<'de>,
    offset: u64,
}

/// A pair whose key is not UTF-8. Keys are matched to field names and map keys as text: such a
/// key can be no field's key, and the serde view of the metadata leaves it out (its pair is in
/// [`Gguf::metadata`], with the key as a [`GgufStr`](crate::GgufStr)); but a struct with
/// `deny_unknown_fields` refuses it, and a missing field with such a key under it says so.
struct Skipped<'de> {
    key: &'de [u8],
    /// The key escaped, as `GgufStr` shows it (for errors).
    shown: String,
    value: ValueRef<'de>,
    /// The offset of the value, as [`Entry::offset`].
    offset: u64,
}

/// The entries of `kvs` (pairs whose key is UTF-8) and the others.
fn entries_of<'de>(kvs: impl IntoIterator<Item = crate::container::Kv<'de>>) -> (Vec<Entry<'de>>, Vec<Skipped<'de>>) {
    let (mut entries, mut skipped) = (Vec::new(), Vec::new());
    for kv in kvs {
        match kv.key.to_str() {
            Ok(key) => entries.push(Entry { key, value: kv.value, offset: kv.value_offset }),
            Err(_) => skipped.push(Skipped {
                key: kv.key.as_bytes(),
                shown: kv.key.to_string(),
                value: kv.value,
                offset: kv.value_offset,
            }),
        }
    }
    (entries, skipped)
}

fn deserialize_entries<'de, T: Deserialize<'de>>(
    (entries, skipped): &(Vec<Entry<'de>>, Vec<Skipped<'de>>),
    opts: &MetadataOptions,
) -> Result<T> {
    let arch = match &opts.arch {
        Some(a) => Some(a.as_str()),
        None => entries.iter().find(|e| e.key == "general.architecture").and_then(|e| e.value.as_str()),
    };
    let members: Vec<u32> = (0..entries.len() as u32).collect();
    T::deserialize(GroupDe { entries, skipped, members, prefix: String::new(), arch, depth: 0 })
}

#[cold]
fn err(msg: impl Into<String>, key: Option<String>, offset: Option<u64>) -> Error {
    Error::metadata(MetadataError::Message { message: msg.into() }, key, offset)
}

/// Fills in the key and offset of an error a visitor raised (which knows neither).
fn annotate(mut e: Error, key: impl FnOnce() -> String, offset: Option<u64>) -> Error {
    if let Some((k @ None, o @ None)) = e.metadata_at() {
        *k = Some(key()).filter(|k| !k.is_empty());
        *o = offset;
    }
    e
}

/// Gives a metadata error without a key the key `name` of the struct or map it happened in.
fn in_group(mut e: Error, name: &str) -> Error {
    if let Some((k @ None, _)) = e.metadata_at() {
        *k = Some(name.to_owned());
    }
    e
}

/// Calls `$then!` with serde's `Deserializer` methods that read one value, not a group of keys
/// (every method but `any`, `option`, `newtype_struct`, `map`, `struct` and `ignored_any`), each
/// with the arguments it takes before the visitor: [`GroupDe`] refuses them all, [`EitherDe`]
/// hands them all to the value at the field's key.
macro_rules! leaf_methods {
    ($then:ident) => {
        $then!(
            deserialize_bool(),
            deserialize_i8(),
            deserialize_i16(),
            deserialize_i32(),
            deserialize_i64(),
            deserialize_i128(),
            deserialize_u8(),
            deserialize_u16(),
            deserialize_u32(),
            deserialize_u64(),
            deserialize_u128(),
            deserialize_f32(),
            deserialize_f64(),
            deserialize_char(),
            deserialize_str(),
            deserialize_string(),
            deserialize_bytes(),
            deserialize_byte_buf(),
            deserialize_unit(),
            deserialize_seq(),
            deserialize_identifier(),
            deserialize_unit_struct(name: &'static str),
            deserialize_tuple(len: usize),
            deserialize_tuple_struct(name: &'static str, len: usize),
            deserialize_enum(name: &'static str, variants: &'static [&'static str]),
        );
    };
}

mod bulk;
mod group;
mod map;
mod value;

use group::GroupDe;
use map::{Choice, EitherDe, MapAccess};
use value::{int_of, Path, ValueDe};
