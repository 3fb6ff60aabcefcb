//! The serde `Serializer`: a `Serialize` value becomes a GGUF key/value block.
//!
//! The mapping is written down in the [crate docs](crate#the-serde-mapping). In short: a struct or
//! map is a set of keys (nested ones join with `.`), integers and floats keep their width, strings
//! are STRING, sequences are typed ARRAYs, `None` leaves the key out.
//!
//! The pairs are collected first and checked as a whole (the [`ARCH`] placeholder, empty key
//! segments), then handed to a [`GgufWriter`], which encodes them (and checks the other key
//! rules).

use std::cell::Cell;
use std::io::Write;

use serde::ser::{self, Impossible, Serialize};

use crate::container::write_encoded_len as encoded_len;
use crate::container::{write_array_len as array_len, write_elems_len as elems_len};
use crate::container::{Array, GgufWriter, Value};
use crate::error::{Error, MetadataError, Result, WriteError};
use crate::format::ValueType;
use crate::metadata::{resolve_arch_key, MetadataOptions, ARCH, MAX_NESTING};

impl ser::Error for Error {
    #[cold]
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        MetadataError::Message { message: msg.to_string() }.into()
    }
}

#[cold]
fn err_at(msg: impl Into<String>, key: &str) -> Error {
    Error::metadata(MetadataError::Message { message: msg.into() }, (!key.is_empty()).then(|| key.to_owned()), None)
}

/// Fills in the key of an error raised by a `Serialize` impl (which does not know it).
fn with_key(mut e: Error, key: &str) -> Error {
    if let Some((k @ None, _)) = e.metadata_at() {
        *k = Some(key.to_owned()).filter(|k| !k.is_empty());
    }
    e
}

/// Serializes `value` as the key/value block of a complete GGUF v3 file with no tensors, written
/// to `writer` (in one `write_all` of the header and block, then the padding).
///
/// # Errors
/// [`MetadataError`](crate::MetadataError) naming the key for a value GGUF cannot store (see the
/// mapping table in the crate docs), mixed array element types, an empty sequence with no element
/// type, a map or struct below the top level that writes no keys, or a field renamed with a
/// trailing `.` that holds a value;
/// [`WriteError::InvalidKey`](crate::WriteError::InvalidKey) for an empty, non-ASCII, duplicate or
/// over-long key, or one with an empty segment (`a..b`, `a.`, `.x`);
/// [`WriteError::BadAlignment`](crate::WriteError::BadAlignment) naming the
/// pair's offset in the output for a `general.alignment` that is not a UINT32 power of two (one
/// is taken up to [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT), 2^31, as ggml takes it: the
/// padding after the pairs is then up to `alignment - 1` zero bytes, written to `writer` in
/// pieces of at most 4 KiB, or held in the `Vec` of [`to_vec`]);
/// [`ErrorKind::Io`](crate::ErrorKind::Io) from the writer.
pub fn to_writer<T: ?Sized + Serialize, W: Write>(value: &T, writer: W) -> Result<()> {
    MetadataOptions::new().to_writer(value, writer)
}

/// Serializes `value` as the key/value block of a complete GGUF v3 file with no tensors.
///
/// # Errors
/// As [`to_writer`].
pub fn to_vec<T: ?Sized + Serialize>(value: &T) -> Result<Vec<u8>> {
    MetadataOptions::new().to_vec(value)
}

/// Serializes one value (not a key/value block) to an owned [`Value`], with the same mapping as
/// a struct field: `5u16` is `Value::U16(5)`, `vec!["a"]` an `array<string>`.
///
/// # Errors
/// [`MetadataError`](crate::MetadataError) for a struct, map, `None`, unit, or anything else with
/// no single GGUF value.
pub fn to_value<T: ?Sized + Serialize>(value: &T) -> Result<Value> {
    value.serialize(LeafSer { path: KeyPath::Key(""), hint: None, depth: 0, untyped: None })
}

impl MetadataOptions {
    /// [`to_writer`] with these options.
    ///
    /// # Errors
    /// As [`to_writer`].
    pub fn to_writer<T: ?Sized + Serialize, W: Write>(&self, value: &T, writer: W) -> Result<()> {
        let mut w = GgufWriter::new(writer);
        w.add_serialize_with(value, self)?;
        w.finish()?;
        Ok(())
    }

    /// [`to_vec`] with these options.
    ///
    /// # Errors
    /// As [`to_writer`].
    pub fn to_vec<T: ?Sized + Serialize>(&self, value: &T) -> Result<Vec<u8>> {
        let mut w = GgufWriter::new(Vec::new());
        w.add_serialize_with(value, self)?;
        w.finish()
    }

    /// Serializes `value` to its key/value pairs, in order, with keys resolved and checked (the
    /// pairs [`GgufWriter::add_serialize`] adds).
    ///
    /// # Errors
    /// As [`to_writer`], except the checks of [`GgufWriter::add_value`] (key length, ASCII,
    /// duplicates), which happen when the pairs are added to a writer.
    pub fn to_pairs<T: ?Sized + Serialize>(&self, value: &T) -> Result<Vec<(String, Value)>> {
        self.pairs_at(value, 24)
    }

    /// [`to_pairs`](Self::to_pairs) for a block whose first pair is at output offset `base`: an
    /// error about a value not written gets the output offset where that value would be.
    fn pairs_at<T: ?Sized + Serialize>(&self, value: &T, base: u64) -> Result<Vec<(String, Value)>> {
        let mut out = Vec::new();
        let r = value.serialize(Node {
            out: &mut out,
            key: String::new(),
            root: true,
            prefix_only: false,
            dotted_map_key: false,
            depth: 0,
        });
        if let Err(e) = r {
            // The pairs made before the error are those written before the value.
            let key = e.key().map(str::to_owned);
            return Err(at_output(e, base, &out, key.as_deref(), self));
        }
        let before = out.clone();
        finish_pairs(out, self).map_err(|e| {
            let key = e.key().map(str::to_owned);
            let upto = key.as_deref().and_then(|k| before.iter().position(|(p, _)| p == k)).unwrap_or(before.len());
            // A refused key cites its pair (as the writer's do), anything else its value.
            let value_key = if e.as_write().is_some() { None } else { key.as_deref() };
            at_output(e, base, before.get(..upto).unwrap_or_default(), value_key, self)
        })
    }
}

impl<W: Write> GgufWriter<W> {
    /// Adds the key/value pairs of a `Serialize` value (a struct or map), with the mapping of the
    /// [crate docs](crate#the-serde-mapping). Pairs come in field order.
    ///
    /// # Errors
    /// As [`to_writer`], and as [`GgufWriter::add_value`] for each pair.
    pub fn add_serialize<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.add_serialize_with(value, &MetadataOptions::new())
    }

    /// [`GgufWriter::add_serialize`] with options (e.g. the architecture of
    /// [`ARCH`] keys).
    ///
    /// # Errors
    /// As [`GgufWriter::add_serialize`].
    pub fn add_serialize_with<T: ?Sized + Serialize>(&mut self, value: &T, opts: &MetadataOptions) -> Result<()> {
        for (k, v) in opts.pairs_at(value, self.next_kv_offset())? {
            self.add_value(&k, &v)?;
        }
        Ok(())
    }
}

/// Gives `e`, about the value at `key` (or the pair after `before` when `key` is `None` or the
/// key of a group), the output offset where that value would have been written: after the
/// pairs `before` (from output offset `base`), the key and the type id. Keys of `before` are
/// measured with `{arch}` resolved as it would be. An element (`key` `m[1][2]`) is measured
/// into its array's value; under an empty map key (`[0]`: the key is refused later, when the
/// pairs are finished) its pair has a key of 0 bytes, and the offset is still the element's.
fn at_output(e: Error, base: u64, before: &[(String, Value)], key: Option<&str>, opts: &MetadataOptions) -> Error {
    let arch = opts.arch.clone().or_else(|| {
        before.iter().find_map(|(k, v)| match v {
            Value::String(s) if k == "general.architecture" => Some(s.clone()),
            _ => None,
        })
    });
    let key_len = |k: &str| -> u64 {
        let resolved = resolve_arch_key(k, arch.as_deref()).ok().flatten();
        resolved.as_deref().unwrap_or(k).len() as u64
    };
    let pairs = before.iter().fold(base, |at, (k, v)| {
        at.saturating_add(8).saturating_add(key_len(k)).saturating_add(4).saturating_add(encoded_len(v))
    });
    // An element (`m[1][2]`): its array's value, and as far into it as the arrays measured.
    let element = key.is_some_and(|k| k.contains('['));
    let key = key.map(|k| k.split_once('[').map_or(k, |(pair, _)| pair));
    let at = match key {
        Some(k) => {
            let value = pairs.saturating_add(8).saturating_add(key_len(k)).saturating_add(4);
            value.saturating_add(if element { e.within().unwrap_or(0) } else { 0 })
        }
        None => pairs,
    };
    e.at_output_offset(at)
}

/// Resolves `{arch}` segments and refuses keys with an empty segment.
fn finish_pairs(mut pairs: Vec<(String, Value)>, opts: &MetadataOptions) -> Result<Vec<(String, Value)>> {
    if pairs.iter().any(|(k, _)| k.split('.').any(|s| s == ARCH)) {
        let arch = match &opts.arch {
            Some(a) => Some(a.clone()),
            None => pairs.iter().find_map(|(k, v)| match v {
                Value::String(s) if k == "general.architecture" => Some(s.clone()),
                _ => None,
            }),
        };
        for (k, _) in &mut pairs {
            if let Some(resolved) = resolve_arch_key(k, arch.as_deref())? {
                *k = resolved;
            }
        }
    }
    // Keys are dot-separated names: none may be empty (`a..b`, `a.`, `.x`). A key that is also
    // the prefix of others (`a` and `a.b`, llama.cpp's named chat templates) is allowed: it reads
    // back through the field of its name and a field named for the prefix (crate docs, "Keys").
    if let Some((k, _)) = pairs.iter().find(|(k, _)| crate::format::keys::has_empty_segment(k)) {
        return Err(WriteError::InvalidKey { key: k.clone(), reason: "a segment between dots is empty" }.into());
    }
    Ok(pairs)
}

mod leaf;
mod node;

use leaf::{ArrayBuilder, KeyPath, LeafSer};
use node::{describe, not_unit_variant, Node};
