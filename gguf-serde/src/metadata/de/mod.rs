//! The serde `Deserializer`: a GGUF key/value block becomes a `Deserialize` value.
//!
//! The block of an opened [`Gguf`] (already validated) is viewed as a tree of keys: a struct at
//! key prefix `P` takes, for each of its fields `f`, the key `P.f` (a value) or the keys under
//! `P.f.` (a nested struct). Nothing is copied: strings and arrays are read from the file's bytes
//! as the visitor asks for them, so `&'de str`, `Cow<'de, str>` and `Vec<&'de str>` borrow.
//! See the [crate docs](crate#the-serde-mapping) for the whole mapping.

use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, Visitor};
use serde::Deserialize;

use crate::container::{ArrayIter, ArrayRef, Gguf, Source, Value, ValueRef, READ_AHEAD};
use crate::error::{Error, MetadataError, Result};
use crate::format::ValueType;

use crate::metadata::{resolve_arch_key, MetadataOptions, ARRAY_TOKEN, MAX_NESTING, VALUE_TOKEN};

impl de::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        MetadataError::Message { message: msg.to_string() }.into()
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        MetadataError::MissingField { field }.into()
    }
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
/// [`Error::Io`] from the reader; [`Error::Truncated`] or [`Error::TooLong`] if it ends inside
/// the block; otherwise as [`from_slice`].
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
        let entries: Vec<Entry<'de>> = file.metadata_borrowed().map(Entry::from).collect();
        deserialize_entries(&entries, self)
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
        let entries: Vec<Entry<'a>> = kvs.into_iter().map(Entry::from).collect();
        deserialize_entries(&entries, self)
    }

    /// [`from_gguf`] with these options.
    ///
    /// # Errors
    /// As [`from_gguf`].
    pub fn from_gguf<'a, T: Deserialize<'a>, S: Source>(&self, file: &'a Gguf<S>) -> Result<T> {
        let entries: Vec<Entry<'a>> = file.metadata().map(Entry::from).collect();
        deserialize_entries(&entries, self)
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
        let entries: Vec<Entry<'de>> = self.metadata_borrowed().map(Entry::from).collect();
        deserialize_entries(&entries, opts)
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct Entry<'de> {
    key: &'de str,
    value: ValueRef<'de>,
    offset: u64,
}

impl<'de> From<crate::container::Kv<'de>> for Entry<'de> {
    fn from(kv: crate::container::Kv<'de>) -> Self {
        Entry { key: kv.key, value: kv.value, offset: kv.value_offset }
    }
}

fn deserialize_entries<'de, T: Deserialize<'de>>(entries: &[Entry<'de>], opts: &MetadataOptions) -> Result<T> {
    let arch = match &opts.arch {
        Some(a) => Some(a.as_str()),
        None => entries.iter().find(|e| e.key == "general.architecture").and_then(|e| e.value.as_str()),
    };
    let members: Vec<u32> = (0..entries.len() as u32).collect();
    T::deserialize(GroupDe { entries, members, prefix: String::new(), arch, depth: 0 })
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

// ---------------------------------------------------------------------------------------------
// GroupDe: the keys under a prefix, read as a struct (by field names) or a map (flat keys).

struct GroupDe<'a, 'de> {
    entries: &'a [Entry<'de>],
    /// Indices into `entries` of the keys under `prefix`.
    members: Vec<u32>,
    /// The key prefix with its trailing `.`; empty at the root.
    prefix: String,
    arch: Option<&'a str>,
    depth: usize,
}

impl<'a, 'de> GroupDe<'a, 'de> {
    fn name(&self) -> &str {
        self.prefix.strip_suffix('.').unwrap_or(&self.prefix)
    }

    fn rest(&self, i: u32) -> &'de str {
        let key = self.entries.get(i as usize).map_or("", |e| e.key);
        key.get(self.prefix.len()..).unwrap_or_default()
    }

    fn mismatch(&self, exp: &dyn Expected) -> Error {
        let what = if self.prefix.is_empty() { "the key/value block".to_owned() } else { "a group of keys".to_owned() };
        let first = self.members.first().and_then(|&i| self.entries.get(i as usize));
        err(
            format!(
                "invalid type: expected {exp}, found {what} ({} keys{})",
                self.members.len(),
                first.map(|e| format!(", first {:?}", e.key)).unwrap_or_default()
            ),
            (!self.prefix.is_empty()).then(|| self.name().to_owned()),
            first.map(|e| e.offset),
        )
    }

    fn struct_access(self, fields: &'static [&'static str]) -> Result<StructAccess<'a, 'de>> {
        // Field names with {arch} resolved.
        let mut resolved: Vec<std::borrow::Cow<'static, str>> = Vec::with_capacity(fields.len());
        for f in fields {
            match resolve_arch_key(f, self.arch) {
                Ok(Some(r)) => resolved.push(r.into()),
                Ok(None) => resolved.push((*f).into()),
                Err(_) => {
                    let key = format!("{}{}", self.prefix, f);
                    return Err(resolve_arch_key(&key, None)
                        .err()
                        .unwrap_or_else(|| Error::metadata(MetadataError::UnknownArch, None, None)));
                }
            }
        }
        // Each key goes to the field naming it, or the longest field that is a prefix of it.
        let mut claims: Vec<Claim> = (0..fields.len()).map(|_| Claim::None).collect();
        let mut unknown: Vec<u32> = Vec::new();
        for &m in &self.members {
            let rest = self.rest(m);
            let mut best: Option<(usize, bool)> = None;
            for (fi, f) in resolved.iter().enumerate() {
                let exact = rest == f.as_ref();
                let nested = !exact
                    && rest.len() > f.len()
                    && rest.starts_with(f.as_ref())
                    && rest.as_bytes().get(f.len()) == Some(&b'.');
                if (exact || nested) && best.is_none_or(|(b, _)| resolved.get(b).map_or(0, |x| x.len()) < f.len()) {
                    best = Some((fi, exact));
                }
            }
            let Some((fi, exact)) = best else {
                unknown.push(m);
                continue;
            };
            let Some(claim) = claims.get_mut(fi) else { continue };
            let conflict = |other: u32| {
                let (value, group) = if exact { (m, other) } else { (other, m) };
                let value = self.entries.get(value as usize);
                let group_key = self.entries.get(group as usize).map_or("", |x| x.key);
                err(
                    format!("key is both a value and a prefix of key {group_key:?}"),
                    value.map(|e| e.key.to_owned()),
                    value.map(|e| e.offset),
                )
            };
            match (claim, exact) {
                (c @ Claim::None, true) => *c = Claim::Leaf(m),
                (c @ Claim::None, false) => *c = Claim::Group(vec![m]),
                (Claim::Group(g), false) => g.push(m),
                (Claim::Group(g), true) => return Err(conflict(g.first().copied().unwrap_or(m))),
                (Claim::Leaf(l), _) => return Err(conflict(*l)),
            }
        }
        Ok(StructAccess {
            group: self,
            fields,
            resolved,
            claims,
            unknown,
            next_field: 0,
            next_unknown: 0,
            pending: None,
        })
    }

    fn nested(&self, members: Vec<u32>, prefix: String) -> Result<GroupDe<'a, 'de>> {
        if self.depth + 1 >= MAX_NESTING {
            let first = members.first().and_then(|&i| self.entries.get(i as usize));
            return Err(err(
                format!("keys nested deeper than {MAX_NESTING} levels of structs or maps"),
                first.map(|e| e.key.to_owned()),
                first.map(|e| e.offset),
            ));
        }
        Ok(GroupDe { entries: self.entries, members, prefix, arch: self.arch, depth: self.depth + 1 })
    }
}

/// Turns serde's missing-field error of a struct at `prefix` into one naming the full key, and
/// gives other errors without a key the struct's key.
fn fix_missing(e: Error, prefix: &str, arch: Option<&str>) -> Error {
    if let (Some(MetadataError::MissingField { field }), None, None) = (e.as_metadata(), e.key(), e.offset()) {
        let key = format!("{prefix}{field}");
        let key = resolve_arch_key(&key, arch).ok().flatten().unwrap_or(key);
        return Error::metadata(MetadataError::MissingKey, Some(key), None);
    }
    if prefix.is_empty() {
        e
    } else {
        in_group(e, prefix.strip_suffix('.').unwrap_or(prefix))
    }
}

enum Claim {
    None,
    Leaf(u32),
    Group(Vec<u32>),
}

macro_rules! group_mismatch {
    ($($m:ident),* $(,)?) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            Err(self.mismatch(&visitor))
        }
    )*};
}

impl<'a, 'de> de::Deserializer<'de> for GroupDe<'a, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let prefix = self.prefix.clone();
        let name = self.name().to_owned();
        visitor.visit_map(MapAccess { group: self, pos: 0, pending: None }).map_err(|e| {
            if prefix.is_empty() {
                e
            } else {
                in_group(e, &name)
            }
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (prefix, arch) = (self.prefix.clone(), self.arch);
        let access = self.struct_access(fields)?;
        visitor.visit_map(access).map_err(|e| fix_missing(e, &prefix, arch))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    group_mismatch!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_seq,
        deserialize_identifier,
    );
}

/// A struct's keys: the fields present (in field order), then the keys no field names (which a
/// struct ignores, or refuses with `deny_unknown_fields`).
struct StructAccess<'a, 'de> {
    group: GroupDe<'a, 'de>,
    fields: &'static [&'static str],
    resolved: Vec<std::borrow::Cow<'static, str>>,
    claims: Vec<Claim>,
    unknown: Vec<u32>,
    next_field: usize,
    next_unknown: usize,
    pending: Option<Pending>,
}

enum Pending {
    Leaf(u32),
    Group(Vec<u32>, usize),
}

impl<'a, 'de> de::MapAccess<'de> for StructAccess<'a, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        while let Some(claim) = self.claims.get_mut(self.next_field) {
            let fi = self.next_field;
            self.next_field += 1;
            let pending = match std::mem::replace(claim, Claim::None) {
                Claim::None => continue,
                Claim::Leaf(m) => Pending::Leaf(m),
                Claim::Group(g) => Pending::Group(g, fi),
            };
            self.pending = Some(pending);
            let name: &'static str = self.fields.get(fi).copied().unwrap_or_default();
            return seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(name)).map(Some);
        }
        if let Some(&m) = self.unknown.get(self.next_unknown) {
            self.next_unknown += 1;
            self.pending = Some(Pending::Leaf(m));
            let rest = self.group.rest(m);
            let e = self.group.entries.get(m as usize);
            return seed
                .deserialize(de::value::BorrowedStrDeserializer::<Error>::new(rest))
                .map(Some)
                .map_err(|x| annotate(x, || e.map_or(String::new(), |e| e.key.to_owned()), e.map(|e| e.offset)));
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        match self.pending.take() {
            Some(Pending::Leaf(m)) => {
                let e = self.group.entries.get(m as usize).copied().ok_or_else(|| err("bad index", None, None))?;
                seed.deserialize(ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) })
            }
            Some(Pending::Group(members, fi)) => {
                let f = self.resolved.get(fi).map(|f| f.as_ref()).unwrap_or_default();
                let prefix = format!("{}{}.", self.group.prefix, f);
                seed.deserialize(self.group.nested(members, prefix)?)
            }
            None => Err(err("value asked for before its key", None, None)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.claims.iter().filter(|c| !matches!(c, Claim::None)).count() + self.unknown.len() - self.next_unknown)
    }
}

/// A map's keys: every key under the prefix, its rest as the map key, its value as the value.
struct MapAccess<'a, 'de> {
    group: GroupDe<'a, 'de>,
    pos: usize,
    pending: Option<u32>,
}

impl<'a, 'de> de::MapAccess<'de> for MapAccess<'a, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let Some(&m) = self.group.members.get(self.pos) else { return Ok(None) };
        self.pos += 1;
        self.pending = Some(m);
        let e = self.group.entries.get(m as usize);
        let rest = self.group.rest(m);
        seed.deserialize(KeyDe(rest))
            .map(Some)
            .map_err(|x| annotate(x, || e.map_or(String::new(), |e| e.key.to_owned()), e.map(|e| e.offset)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let m = self.pending.take().ok_or_else(|| err("value asked for before its key", None, None))?;
        let e = self.group.entries.get(m as usize).copied().ok_or_else(|| err("bad index", None, None))?;
        seed.deserialize(ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.group.members.len().saturating_sub(self.pos))
    }
}

/// A map key: a string (borrowed), or an integer parsed from it.
struct KeyDe<'de>(&'de str);

macro_rules! key_parse {
    ($($m:ident => $visit:ident($t:ty)),* $(,)?) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            match self.0.parse::<$t>() {
                Ok(n) => visitor.$visit(n),
                Err(_) => Err(err(format!("map key {:?} is not a {}", self.0, stringify!($t)), None, None)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for KeyDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_enum(de::value::BorrowedStrDeserializer::<Error>::new(self.0))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    key_parse!(
        deserialize_i8 => visit_i8(i8),
        deserialize_i16 => visit_i16(i16),
        deserialize_i32 => visit_i32(i32),
        deserialize_i64 => visit_i64(i64),
        deserialize_u8 => visit_u8(u8),
        deserialize_u16 => visit_u16(u16),
        deserialize_u32 => visit_u32(u32),
        deserialize_u64 => visit_u64(u64),
    );

    serde::forward_to_deserialize_any! {
        bool i128 u128 f32 f64 char str string bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

// ---------------------------------------------------------------------------------------------
// ValueDe: one stored value.

/// Where a value is: a key, or an element of an array at a path. Formatted only for errors.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root(&'p str),
    Elem(&'p Path<'p>, u64),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(k) => f.write_str(k),
            Path::Elem(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

struct ValueDe<'p, 'de> {
    v: ValueRef<'de>,
    path: Path<'p>,
    /// Absolute offset of the stored value (`None` for [`from_value`]).
    offset: Option<u64>,
}

fn preview(v: &ValueRef<'_>) -> String {
    match v {
        ValueRef::String(s) if s.chars().count() > 40 => {
            format!(" {:?}…", s.chars().take(40).collect::<String>())
        }
        ValueRef::String(s) => format!(" {s:?}"),
        ValueRef::Array(a) => format!(" of {} elements", a.len()),
        ValueRef::U8(x) => format!(" {x}"),
        ValueRef::I8(x) => format!(" {x}"),
        ValueRef::U16(x) => format!(" {x}"),
        ValueRef::I16(x) => format!(" {x}"),
        ValueRef::U32(x) => format!(" {x}"),
        ValueRef::I32(x) => format!(" {x}"),
        ValueRef::U64(x) => format!(" {x}"),
        ValueRef::I64(x) => format!(" {x}"),
        ValueRef::F32(x) => format!(" {x}"),
        ValueRef::F64(x) => format!(" {x}"),
        ValueRef::Bool(x) => format!(" {x}"),
    }
}

fn int_of(v: &ValueRef<'_>) -> Option<i128> {
    Some(match *v {
        ValueRef::U8(x) => x.into(),
        ValueRef::I8(x) => x.into(),
        ValueRef::U16(x) => x.into(),
        ValueRef::I16(x) => x.into(),
        ValueRef::U32(x) => x.into(),
        ValueRef::I32(x) => x.into(),
        ValueRef::U64(x) => x.into(),
        ValueRef::I64(x) => x.into(),
        _ => return None,
    })
}

macro_rules! de_int {
    ($($m:ident => $visit:ident($t:ty) $(, $same:ident)?);* $(;)?) => {$(
        fn $m<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            $(
                // The stored type is the field's: no range check.
                if let ValueRef::$same(x) = self.v {
                    return self.visit(|| visitor.$visit(x));
                }
            )?
            let Some(n) = int_of(&self.v) else { return Err(self.mismatch(&visitor)) };
            let x = <$t>::try_from(n).map_err(|_| self.fail(format!(
                "integer {n} (stored as {}) does not fit in {}", self.v.value_type(), stringify!($t)
            )))?;
            self.visit(|| visitor.$visit(x))
        }
    )*};
}

impl<'p, 'de> ValueDe<'p, 'de> {
    #[cold]
    fn fail(&self, msg: String) -> Error {
        err(msg, Some(self.path.to_string()).filter(|k| !k.is_empty()), self.offset)
    }

    #[cold]
    fn mismatch(&self, exp: &dyn Expected) -> Error {
        self.fail(format!("invalid type: expected {exp}, found {}{}", self.v.type_name(), preview(&self.v)))
    }

    fn visit<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        f().map_err(|e| annotate(e, || self.path.to_string(), self.offset))
    }

    fn seq<V: Visitor<'de>>(self, a: ArrayRef<'de>, visitor: V) -> Result<V::Value> {
        let path = self.path;
        let start = self.offset.map(|o| o + 12);
        let mut access = SeqDe { iter: a.iter(), path: &path, start, index: 0 };
        let out = visitor.visit_seq(&mut access).map_err(|e| annotate(e, || path.to_string(), self.offset))?;
        if access.iter.len() != 0 {
            return Err(err(
                format!("invalid length: the array has {} elements, fewer were expected", a.len()),
                Some(path.to_string()),
                self.offset,
            ));
        }
        Ok(out)
    }
}

impl<'p, 'de> de::Deserializer<'de> for ValueDe<'p, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::U8(x) => self.visit(|| visitor.visit_u8(x)),
            ValueRef::I8(x) => self.visit(|| visitor.visit_i8(x)),
            ValueRef::U16(x) => self.visit(|| visitor.visit_u16(x)),
            ValueRef::I16(x) => self.visit(|| visitor.visit_i16(x)),
            ValueRef::U32(x) => self.visit(|| visitor.visit_u32(x)),
            ValueRef::I32(x) => self.visit(|| visitor.visit_i32(x)),
            ValueRef::U64(x) => self.visit(|| visitor.visit_u64(x)),
            ValueRef::I64(x) => self.visit(|| visitor.visit_i64(x)),
            ValueRef::F32(x) => self.visit(|| visitor.visit_f32(x)),
            ValueRef::F64(x) => self.visit(|| visitor.visit_f64(x)),
            ValueRef::Bool(x) => self.visit(|| visitor.visit_bool(x)),
            ValueRef::String(s) => self.visit(|| visitor.visit_borrowed_str(s)),
            ValueRef::Array(a) => self.seq(a, visitor),
        }
    }

    de_int!(
        deserialize_u8 => visit_u8(u8), U8;
        deserialize_i8 => visit_i8(i8), I8;
        deserialize_u16 => visit_u16(u16), U16;
        deserialize_i16 => visit_i16(i16), I16;
        deserialize_u32 => visit_u32(u32), U32;
        deserialize_i32 => visit_i32(i32), I32;
        deserialize_u64 => visit_u64(u64), U64;
        deserialize_i64 => visit_i64(i64), I64;
        deserialize_u128 => visit_u128(u128);
        deserialize_i128 => visit_i128(i128);
    );

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::F32(x) => self.visit(|| visitor.visit_f32(x)),
            ValueRef::F64(x) => self.visit(|| visitor.visit_f64(x)),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f32(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::Bool(x) => self.visit(|| visitor.visit_bool(x)),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::String(s) => self.visit(|| visitor.visit_borrowed_str(s)),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::Array(a) if a.elem_type() == ValueType::U8 => {
                let b = a.raw_bytes();
                self.visit(|| visitor.visit_borrowed_bytes(b))
            }
            ValueRef::Array(a) => self.seq(a, visitor),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        if name == VALUE_TOKEN {
            let tag = self.v.value_type().name();
            return visitor.visit_enum(Exact { de: self, tag });
        }
        if name == ARRAY_TOKEN {
            return match self.v {
                ValueRef::Array(a) => {
                    let tag = a.elem_type().name();
                    visitor.visit_enum(Exact { de: self, tag })
                }
                _ => Err(self.mismatch(&visitor)),
            };
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::Array(a) => self.seq(a, visitor),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, _: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        Err(self.mismatch(&visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.v {
            ValueRef::String(s) => self.visit(|| visitor.visit_enum(UnitVariant(s))),
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// The elements of an array, from the container's element decoder ([`ArrayIter`]).
struct SeqDe<'p, 'de> {
    iter: ArrayIter<'de>,
    path: &'p Path<'p>,
    /// Absolute offset of the first element.
    start: Option<u64>,
    index: u64,
}

impl<'p, 'de> de::SeqAccess<'de> for &mut SeqDe<'p, 'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let Some((v, pos)) = self.iter.next_at() else { return Ok(None) };
        let index = self.index;
        self.index += 1;
        let path = Path::Elem(self.path, index);
        seed.deserialize(ValueDe { v, path, offset: self.start.map(|s| s + pos as u64) }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// A STRING read as an enum: a unit variant of that name.
struct UnitVariant<'de>(&'de str);

impl<'de> de::EnumAccess<'de> for UnitVariant<'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let v = seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(self.0))?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for UnitVariant<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value> {
        Err(err(format!("variant {:?} has data; GGUF stores only unit variants (as STRING)", self.0), None, None))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(err(format!("variant {:?} has data; GGUF stores only unit variants (as STRING)", self.0), None, None))
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(err(format!("variant {:?} has data; GGUF stores only unit variants (as STRING)", self.0), None, None))
    }
}

/// The exact-type protocol of [`Value`] and [`crate::Array`]: an enum whose variant is the stored
/// type name (`"u32"`, `"array"`, …) and whose content is the value itself.
struct Exact<'p, 'de> {
    de: ValueDe<'p, 'de>,
    tag: &'static str,
}

impl<'p, 'de> de::EnumAccess<'de> for Exact<'p, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        let v = seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(self.tag))?;
        Ok((v, self))
    }
}

impl<'p, 'de> de::VariantAccess<'de> for Exact<'p, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Err(self.de.fail("a typed value is not a unit".into()))
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value> {
        Err(self.de.fail("a typed value is not a tuple".into()))
    }

    fn struct_variant<V: Visitor<'de>>(self, _: &'static [&'static str], _: V) -> Result<V::Value> {
        Err(self.de.fail("a typed value is not a struct".into()))
    }
}
