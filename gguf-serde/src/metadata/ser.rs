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
/// pair's offset in the output for a `general.alignment` that is not a UINT32 power of two of at most
/// [`MAX_ALIGNMENT`](crate::format::MAX_ALIGNMENT) (so the padding is at most 64 KiB − 1 bytes);
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
/// measured with `{arch}` resolved as it would be.
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
        Some(k) if !k.is_empty() => {
            let value = pairs.saturating_add(8).saturating_add(key_len(k)).saturating_add(4);
            value.saturating_add(if element { e.within().unwrap_or(0) } else { 0 })
        }
        _ => pairs,
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

// ---------------------------------------------------------------------------------------------
// Node: the value at a key (or the root), which may be a struct/map of further keys.

struct Node<'a> {
    out: &'a mut Vec<(String, Value)>,
    /// The full key; empty at the root.
    key: String,
    /// Whether this is the top level (a map key may be empty too, and is refused later).
    root: bool,
    /// A struct field renamed with a trailing `.` (`"chat_template."`): the key is a prefix, and
    /// the value must be a struct or map of keys under it.
    prefix_only: bool,
    /// The value of a map entry whose key has a dot (`"x.y"`): it may be a value, but not a
    /// struct or map, whose keys (`m.x.y.field`) would read back as a group `x` of a group `y`.
    dotted_map_key: bool,
    depth: usize,
}

impl<'a> Node<'a> {
    fn leaf(&self) -> LeafSer<'_> {
        // A value at a key: no array around it yet.
        LeafSer { path: KeyPath::Key(&self.key), hint: None, depth: 0, untyped: None }
    }

    fn push(self, v: Value) -> Result<()> {
        if self.root {
            return Err(err_at(format!("the top level must be a struct or map of keys, found {}", describe(&v)), ""));
        }
        if self.prefix_only {
            return Err(err_at(
                format!(
                    "a field renamed with a trailing `.` names the keys under a prefix, and must hold a struct or \
                     map, found {}",
                    describe(&v)
                ),
                &self.key,
            ));
        }
        self.out.push((self.key, v));
        Ok(())
    }

    fn group(self) -> Result<Group<'a>> {
        if self.depth >= MAX_NESTING {
            return Err(err_at(format!("structs or maps nested deeper than {MAX_NESTING} levels"), &self.key));
        }
        if self.dotted_map_key {
            return Err(err_at(
                "a map key with a dot holds a struct or map: its keys would read back as nested groups, not as \
                 this entry; use map keys without dots for maps of structs",
                &self.key,
            ));
        }
        let prefix = match (self.root, self.prefix_only) {
            (true, _) => String::new(),
            (false, true) => self.key.clone(),
            (false, false) => format!("{}.", self.key),
        };
        let start = self.out.len();
        let (root, key, depth) = (self.root, self.key, self.depth + 1);
        Ok(Group { out: self.out, prefix, root, key, start, depth, pending_key: None })
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("array<{}>", a.elem_type()),
        v => v.value_type().to_string(),
    }
}

macro_rules! node_leaf {
    ($($method:ident($t:ty)),* $(,)?) => {$(
        fn $method(self, v: $t) -> Result<()> {
            let value = self.leaf().$method(v)?;
            self.push(value)
        }
    )*};
}

impl<'a> ser::Serializer for Node<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = NodeSeq<'a>;
    type SerializeTuple = NodeSeq<'a>;
    type SerializeTupleStruct = NodeSeq<'a>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Group<'a>;
    type SerializeStruct = Group<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    node_leaf!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
    );

    fn serialize_none(self) -> Result<()> {
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<()> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.leaf().serialize_unit().map(|_| ())
    }

    fn serialize_unit_struct(self, name: &'static str) -> Result<()> {
        self.leaf().serialize_unit_struct(name).map(|_| ())
    }

    fn serialize_unit_variant(self, name: &'static str, idx: u32, variant: &'static str) -> Result<()> {
        let value = self.leaf().serialize_unit_variant(name, idx, variant)?;
        self.push(value)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, v: &T) -> Result<()> {
        if crate::metadata::array_token_type(name).is_some() {
            let value = self.leaf().serialize_newtype_struct(name, v)?;
            return self.push(value);
        }
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<()> {
        Err(err_at(not_unit_variant(name, variant), &self.key))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<NodeSeq<'a>> {
        let seq = ArrayBuilder::new(len, None, 1);
        Ok(NodeSeq { node: self, seq })
    }

    fn serialize_tuple(self, len: usize) -> Result<NodeSeq<'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<NodeSeq<'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(err_at(not_unit_variant(name, variant), &self.key))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Group<'a>> {
        self.group()
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Group<'a>> {
        self.group()
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(err_at(not_unit_variant(name, variant), &self.key))
    }
}

fn not_unit_variant(name: &str, variant: &str) -> String {
    format!(
        "enum variant {name}::{variant} has data; GGUF stores only unit variants (as STRING): for variants \
         with fields use an internally tagged enum, #[serde(tag = \"type\")]"
    )
}

/// A sequence at a key: an array value.
struct NodeSeq<'a> {
    node: Node<'a>,
    seq: ArrayBuilder,
}

impl NodeSeq<'_> {
    fn elem<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.seq.push_ser(v, &KeyPath::Key(&self.node.key))
    }

    fn done(self) -> Result<()> {
        let a = self.seq.finish(&KeyPath::Key(&self.node.key), None)?;
        self.node.push(Value::Array(a))
    }
}

impl ser::SerializeSeq for NodeSeq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.elem(v)
    }
    fn end(self) -> Result<()> {
        self.done()
    }
}

impl ser::SerializeTuple for NodeSeq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.elem(v)
    }
    fn end(self) -> Result<()> {
        self.done()
    }
}

impl ser::SerializeTupleStruct for NodeSeq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.elem(v)
    }
    fn end(self) -> Result<()> {
        self.done()
    }
}

/// A struct or map: its fields are keys under `prefix`.
struct Group<'a> {
    out: &'a mut Vec<(String, Value)>,
    /// The key so far with a trailing `.`; empty at the root.
    prefix: String,
    root: bool,
    /// The key of the struct or map itself (for errors).
    key: String,
    /// `out.len()` when the group began: a group that adds nothing is empty.
    start: usize,
    depth: usize,
    pending_key: Option<String>,
}

impl Group<'_> {
    fn field<T: ?Sized + Serialize>(&mut self, name: &str, v: &T, prefix_only: bool, map_entry: bool) -> Result<()> {
        let key = format!("{}{}", self.prefix, name);
        let dotted_map_key = map_entry && name.contains('.');
        let node =
            Node { out: &mut *self.out, key: key.clone(), root: false, prefix_only, dotted_map_key, depth: self.depth };
        v.serialize(node).map_err(|e| with_key(e, &key))
    }

    /// An empty struct or map below the top level writes no keys, and GGUF has no empty group:
    /// it would read back as missing (or `None`), so it is refused.
    fn end(self) -> Result<()> {
        if self.root || self.out.len() > self.start {
            return Ok(());
        }
        Err(err_at(
            "an empty map or struct writes no keys, and GGUF has no empty group to read back: leave it out with \
             skip_serializing_if (and #[serde(default)] to read it as empty), or use an Option that is None",
            &self.key,
        ))
    }
}

impl ser::SerializeStruct for Group<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, name: &'static str, v: &T) -> Result<()> {
        self.field(name, v, name.ends_with('.'), false)
    }
    fn end(self) -> Result<()> {
        Group::end(self)
    }
}

impl ser::SerializeMap for Group<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, k: &T) -> Result<()> {
        let prefix = self.prefix.trim_end_matches('.');
        self.pending_key = Some(k.serialize(KeySer).map_err(|e| with_key(e, prefix))?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        let Some(k) = self.pending_key.take() else {
            return Err(err_at("map value serialized before its key", &self.prefix));
        };
        self.field(&k, v, false, true)
    }
    fn end(self) -> Result<()> {
        Group::end(self)
    }
}

/// Map keys: strings, chars and integers (written in decimal), unit variants.
struct KeySer;

fn bad_key(what: &str) -> Error {
    MetadataError::Message { message: format!("a map key must be a string, char or integer, found {what}") }.into()
}

macro_rules! key_int {
    ($($m:ident($t:ty)),*) => {$(
        fn $m(self, v: $t) -> Result<String> { Ok(v.to_string()) }
    )*};
}

impl ser::Serializer for KeySer {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = Impossible<String, Error>;
    type SerializeTuple = Impossible<String, Error>;
    type SerializeTupleStruct = Impossible<String, Error>;
    type SerializeTupleVariant = Impossible<String, Error>;
    type SerializeMap = Impossible<String, Error>;
    type SerializeStruct = Impossible<String, Error>;
    type SerializeStructVariant = Impossible<String, Error>;

    key_int!(
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_i128(i128),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_u128(u128)
    );
    fn serialize_bool(self, _: bool) -> Result<String> {
        Err(bad_key("bool"))
    }
    fn serialize_f32(self, _: f32) -> Result<String> {
        Err(bad_key("f32"))
    }
    fn serialize_f64(self, _: f64) -> Result<String> {
        Err(bad_key("f64"))
    }
    fn serialize_char(self, v: char) -> Result<String> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String> {
        Ok(v.to_owned())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String> {
        Err(bad_key("bytes"))
    }
    fn serialize_none(self) -> Result<String> {
        Err(bad_key("None"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<String> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<String> {
        Err(bad_key("unit"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String> {
        Err(bad_key("a unit struct"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Result<String> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String> {
        Err(bad_key("an enum variant with data"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(bad_key("a sequence"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(bad_key("a tuple"))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct> {
        Err(bad_key("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(bad_key("an enum variant with data"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(bad_key("a map"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(bad_key("a struct"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(bad_key("an enum variant with data"))
    }
}

// ---------------------------------------------------------------------------------------------
// LeafSer: one GGUF value (a scalar, string or array), as an array element or through to_value.

struct LeafSer<'k> {
    /// Where the value is, for errors: the full key (empty for `to_value`), or an element of an
    /// array at a path (`key[1][0]`).
    path: KeyPath<'k>,
    /// The element type forced by [`crate::elem`] for the next sequence (and, when it is not
    /// `array`, for the sequences inside it).
    hint: Option<ValueType>,
    /// Array nesting so far.
    depth: usize,
    /// For an element of an array: set when the element is an empty sequence with no element
    /// type, which then takes the type of its siblings ([`ArrayBuilder::finish`]).
    untyped: Option<&'k Cell<bool>>,
}

/// The key of a value being serialized, or an element of an array at a path; formatted only for
/// errors.
#[derive(Clone, Copy)]
enum KeyPath<'k> {
    Key(&'k str),
    Elem(&'k KeyPath<'k>, usize),
}

impl std::fmt::Display for KeyPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyPath::Key(k) => f.write_str(k),
            KeyPath::Elem(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

#[cold]
fn err_path(msg: impl Into<String>, path: &KeyPath<'_>) -> Error {
    err_at(msg, &path.to_string())
}

impl LeafSer<'_> {
    fn no_value(&self, what: &str) -> Error {
        err_path(format!("{what} has no GGUF value"), &self.path)
    }
}

/// `serialize_*` methods of [`LeafSer`] for Rust types stored as the GGUF value type of the same
/// width.
macro_rules! leaf_value {
    ($($method:ident($t:ty) => $variant:ident),* $(,)?) => {$(
        fn $method(self, v: $t) -> Result<Value> {
            Ok(Value::$variant(v))
        }
    )*};
}

impl<'k> ser::Serializer for LeafSer<'k> {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = LeafSeq<'k>;
    type SerializeTuple = LeafSeq<'k>;
    type SerializeTupleStruct = LeafSeq<'k>;
    type SerializeTupleVariant = Impossible<Value, Error>;
    type SerializeMap = Impossible<Value, Error>;
    type SerializeStruct = Impossible<Value, Error>;
    type SerializeStructVariant = Impossible<Value, Error>;

    leaf_value!(serialize_bool(bool) => Bool, serialize_i8(i8) => I8, serialize_i16(i16) => I16, serialize_i32(i32) => I32, serialize_i64(i64) => I64);
    fn serialize_i128(self, v: i128) -> Result<Value> {
        i64::try_from(v)
            .map(Value::I64)
            .map_err(|_| err_path(format!("i128 value {v} does not fit in i64"), &self.path))
    }
    leaf_value!(serialize_u8(u8) => U8, serialize_u16(u16) => U16, serialize_u32(u32) => U32, serialize_u64(u64) => U64);
    fn serialize_u128(self, v: u128) -> Result<Value> {
        u64::try_from(v)
            .map(Value::U64)
            .map_err(|_| err_path(format!("u128 value {v} does not fit in u64"), &self.path))
    }
    leaf_value!(serialize_f32(f32) => F32, serialize_f64(f64) => F64);
    fn serialize_char(self, v: char) -> Result<Value> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value> {
        Ok(Value::String(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value> {
        match self.hint {
            None | Some(ValueType::U8) => Ok(Value::Array(Array::U8(v.to_vec()))),
            Some(t) => {
                Err(err_path(format!("bytes are array<u8>, but the array type is forced to array<{t}>"), &self.path))
            }
        }
    }
    fn serialize_none(self) -> Result<Value> {
        Err(self.no_value("None (here an array element or a single value)"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Value> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value> {
        Err(self.no_value("unit `()`"))
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<Value> {
        Err(self.no_value(&format!("unit struct {name}")))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Value> {
        Ok(Value::String(variant.to_owned()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, v: &T) -> Result<Value> {
        match crate::metadata::array_token_type(name) {
            Some(t) => v.serialize(LeafSer { hint: Some(t), ..self }),
            None => v.serialize(self),
        }
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<Value> {
        Err(err_path(not_unit_variant(name, variant), &self.path))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<LeafSeq<'k>> {
        if self.depth >= crate::format::MAX_DEPTH {
            return Err(err_path(format!("arrays nested deeper than {} levels", crate::format::MAX_DEPTH), &self.path));
        }
        Ok(LeafSeq { path: self.path, seq: ArrayBuilder::new(len, self.hint, self.depth + 1), untyped: self.untyped })
    }
    fn serialize_tuple(self, len: usize) -> Result<LeafSeq<'k>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<LeafSeq<'k>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(err_path(not_unit_variant(name, variant), &self.path))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(self.no_value("a map inside an array (or passed to to_value)"))
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Self::SerializeStruct> {
        Err(self.no_value(&format!("struct {name} inside an array (or passed to to_value)")))
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(err_path(not_unit_variant(name, variant), &self.path))
    }
}

struct LeafSeq<'k> {
    path: KeyPath<'k>,
    seq: ArrayBuilder,
    untyped: Option<&'k Cell<bool>>,
}

impl LeafSeq<'_> {
    fn done(self) -> Result<Value> {
        self.seq.finish(&self.path, self.untyped).map(Value::Array)
    }
}

impl ser::SerializeSeq for LeafSeq<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.seq.push_ser(v, &self.path)
    }
    fn end(self) -> Result<Value> {
        self.done()
    }
}

impl ser::SerializeTuple for LeafSeq<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.seq.push_ser(v, &self.path)
    }
    fn end(self) -> Result<Value> {
        self.done()
    }
}

impl ser::SerializeTupleStruct for LeafSeq<'_> {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<()> {
        self.seq.push_ser(v, &self.path)
    }
    fn end(self) -> Result<Value> {
        self.done()
    }
}

/// Builds a typed [`Array`] element by element; the first element (or the forced type) fixes the
/// element type.
struct ArrayBuilder {
    arr: Option<Array>,
    hint: Option<ValueType>,
    cap: usize,
    index: usize,
    depth: usize,
    /// Indices of elements that are empty sequences with no element type of their own.
    untyped: Vec<usize>,
}

fn empty_array(t: ValueType, cap: usize) -> Array {
    match t {
        ValueType::U8 => Array::U8(Vec::with_capacity(cap)),
        ValueType::I8 => Array::I8(Vec::with_capacity(cap)),
        ValueType::U16 => Array::U16(Vec::with_capacity(cap)),
        ValueType::I16 => Array::I16(Vec::with_capacity(cap)),
        ValueType::U32 => Array::U32(Vec::with_capacity(cap)),
        ValueType::I32 => Array::I32(Vec::with_capacity(cap)),
        ValueType::F32 => Array::F32(Vec::with_capacity(cap)),
        ValueType::Bool => Array::Bool(Vec::with_capacity(cap)),
        ValueType::String => Array::String(Vec::with_capacity(cap)),
        ValueType::Array => Array::Array(Vec::with_capacity(cap)),
        ValueType::U64 => Array::U64(Vec::with_capacity(cap)),
        ValueType::I64 => Array::I64(Vec::with_capacity(cap)),
        ValueType::F64 => Array::F64(Vec::with_capacity(cap)),
    }
}

impl ArrayBuilder {
    fn new(len: Option<usize>, hint: Option<ValueType>, depth: usize) -> Self {
        // The length comes from the caller's own data, but stay modest anyway.
        ArrayBuilder { arr: None, hint, cap: len.unwrap_or(0).min(1 << 16), index: 0, depth, untyped: Vec::new() }
    }

    fn push_ser<T: ?Sized + Serialize>(&mut self, v: &T, path: &KeyPath<'_>) -> Result<()> {
        let untyped = Cell::new(false);
        // A forced scalar type applies to the innermost arrays: `elem::string` on a
        // `Vec<Vec<String>>` makes every inner array `array<string>`, empty ones included.
        let hint = self.hint.filter(|t| *t != ValueType::Array);
        let elem = KeyPath::Elem(path, self.index);
        let value = v
            .serialize(LeafSer { path: elem, hint, depth: self.depth, untyped: Some(&untyped) })
            .map_err(|e| e.add_within(self.head_and_elems()))?;
        if untyped.get() {
            self.untyped.push(self.index);
        }
        self.push(value, path)
    }

    /// The distance from the start of this array's value to its next element: the 12-byte head
    /// and the elements so far.
    fn head_and_elems(&self) -> u64 {
        12u64.saturating_add(self.arr.as_ref().map_or(0, elems_len))
    }

    fn push(&mut self, v: Value, path: &KeyPath<'_>) -> Result<()> {
        let t = v.value_type();
        let arr = match &mut self.arr {
            Some(a) => a,
            None => {
                let want = match self.hint {
                    // Arrays inside an array whose innermost type is forced.
                    Some(h) if t == ValueType::Array && h != ValueType::Array => ValueType::Array,
                    Some(h) => h,
                    None => t,
                };
                self.arr.insert(empty_array(want, self.cap))
            }
        };
        let index = self.index;
        let mismatch = |arr: &Array, v: &Value| {
            let why = if index == 0 { "the array type forced for this field" } else { "the type of element 0" };
            err_path(
                format!(
                    "mixed array element types: element {index} is {}, but the elements are {} ({why})",
                    describe(v),
                    arr.elem_type()
                ),
                path,
            )
        };
        macro_rules! put {
            ($($variant:ident),*) => {
                match (arr, v) {
                    $((Array::$variant(a), Value::$variant(x)) => a.push(x),)*
                    (Array::Array(a), Value::Array(x)) => a.push(x),
                    (arr, v) => return Err(mismatch(arr, &v)),
                }
            };
        }
        put!(U8, I8, U16, I16, U32, I32, F32, Bool, String, U64, I64, F64);
        self.index += 1;
        Ok(())
    }

    /// The array. An empty sequence with no forced type has no element type: as an element of an
    /// array (`untyped` is given) it is marked and takes the type of its first sibling that has
    /// one; otherwise, or when no sibling has one, it is an error.
    fn finish(self, path: &KeyPath<'_>, untyped: Option<&Cell<bool>>) -> Result<Array> {
        let empty_error = |path: &KeyPath<'_>| {
            err_path(
                "empty sequence has no element type: force one with #[serde(with = \"gguf_serde::elem::u32\")] \
                 (or another elem:: type: elem::string on a Vec<Vec<String>> types the inner arrays), use a \
                 Value, or skip it with skip_serializing_if = \"Vec::is_empty\"",
                path,
            )
        };
        match (self.arr, self.hint) {
            (Some(Array::Array(mut inner)), _) if !self.untyped.is_empty() => {
                let typed =
                    inner.iter().enumerate().find(|(i, _)| !self.untyped.contains(i)).map(|(_, a)| a.elem_type());
                let Some(t) = typed else {
                    let first = self.untyped.first().copied().unwrap_or(0);
                    let before = inner.get(..first).unwrap_or_default().iter().map(array_len);
                    let at = before.fold(12u64, u64::saturating_add);
                    return Err(empty_error(&KeyPath::Elem(path, first)).add_within(at));
                };
                for &i in &self.untyped {
                    if let Some(a) = inner.get_mut(i) {
                        *a = empty_array(t, 0);
                    }
                }
                Ok(Array::Array(inner))
            }
            (Some(a), _) => Ok(a),
            (None, Some(t)) => Ok(empty_array(t, 0)),
            (None, None) => match untyped {
                Some(flag) => {
                    flag.set(true);
                    Ok(Array::U8(Vec::new()))
                }
                None => Err(empty_error(path)),
            },
        }
    }
}
