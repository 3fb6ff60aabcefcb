//! The serde `Deserializer`: a GGUF key/value block becomes a `Deserialize` value.
//!
//! The block of an opened [`Gguf`] (already validated) is viewed as a tree of keys: a struct at
//! key prefix `P` takes, for each of its fields `f`, the key `P.f` (a value) or the keys under
//! `P.f.` (a nested struct). Nothing is copied: strings and arrays are read from the file's bytes
//! as the visitor asks for them, so `&'de str`, `Cow<'de, str>` and `Vec<&'de str>` borrow.
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
        (Found::Str(s), ValueRef::String(x)) => s == x,
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
        // Each key goes to the field naming it, or the longest field that is a prefix of it. A
        // field whose name ends in `.` (`"chat_template."`) names only the keys under that prefix.
        let mut claims: Vec<Claim> = (0..fields.len()).map(|_| Claim::None).collect();
        let mut unknown: Vec<u32> = Vec::new();
        for &m in &self.members {
            let rest = self.rest(m);
            let mut best: Option<(usize, bool)> = None;
            for (fi, f) in resolved.iter().enumerate() {
                let f = f.as_ref();
                let exact = rest == f && !f.ends_with('.');
                let nested = !exact
                    && rest.len() > f.len()
                    && rest.starts_with(f)
                    && (f.ends_with('.') || rest.as_bytes().get(f.len()) == Some(&b'.'));
                if (exact || nested) && best.is_none_or(|(b, _)| resolved.get(b).map_or(0, |x| x.len()) < f.len()) {
                    best = Some((fi, exact));
                }
            }
            let Some((fi, exact)) = best else {
                unknown.push(m);
                continue;
            };
            let Some(claim) = claims.get_mut(fi) else { continue };
            match (std::mem::replace(claim, Claim::None), exact) {
                (Claim::None, true) => *claim = Claim::Leaf(m),
                (Claim::None, false) => *claim = Claim::Group(vec![m]),
                (Claim::Group(mut g), false) => {
                    g.push(m);
                    *claim = Claim::Group(g);
                }
                (Claim::Group(g), true) => *claim = Claim::Both(m, g),
                (Claim::Leaf(l), false) => *claim = Claim::Both(l, vec![m]),
                (Claim::Both(l, mut g), false) => {
                    g.push(m);
                    *claim = Claim::Both(l, g);
                }
                (Claim::Leaf(l) | Claim::Both(l, _), true) => {
                    // Two keys of one name (a file the container accepted from a source that
                    // does not check duplicates, such as a list of pairs).
                    let e = self.entries.get(m as usize);
                    let first = self.entries.get(l as usize).map_or(0, |x| x.offset);
                    return Err(err(
                        format!("key appears twice (first value at offset {first})"),
                        e.map(|e| e.key.to_owned()),
                        e.map(|e| e.offset),
                    ));
                }
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
    /// A value at the field's key and keys under it: the field's type chooses ([`EitherDe`]).
    Both(u32, Vec<u32>),
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

macro_rules! group_mismatch {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {$(
        fn $m<V: Visitor<'de>>(self, $($a: $t,)* visitor: V) -> Result<V::Value> {
            $(let _ = $a;)*
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
        let (prefix, arch) = (self.prefix.clone(), self.arch);
        // A struct with a #[serde(flatten)] field comes here (serde reads it as a map); its
        // `{arch}` fields match keys named with the placeholder.
        let is_struct = format!("{}", &visitor as &dyn Expected).starts_with("struct ");
        let arch_names = arch.is_some() && is_struct;
        // Its fields are checked against values serde buffered: an error names no key, and is
        // given the key of the value it reports (the members are kept for that).
        let (entries, members) = (self.entries, if is_struct { self.members.clone() } else { Vec::new() });
        visitor
            .visit_map(MapAccess::new(self, arch_names))
            .map_err(|e| fix_missing(found_key(e, entries, &members), &prefix, arch))
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

    leaf_methods!(group_mismatch);
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
    Both(u32, Vec<u32>, usize),
}

impl StructAccess<'_, '_> {
    /// The key prefix of the keys under field `fi`, with its trailing `.`.
    fn field_prefix(&self, fi: usize) -> String {
        let f = self.resolved.get(fi).map(|f| f.as_ref()).unwrap_or_default();
        if f.ends_with('.') {
            format!("{}{}", self.group.prefix, f)
        } else {
            format!("{}{}.", self.group.prefix, f)
        }
    }
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
                Claim::Both(l, g) => Pending::Both(l, g, fi),
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
                let prefix = self.field_prefix(fi);
                seed.deserialize(self.group.nested(members, prefix)?)
            }
            Some(Pending::Both(leaf, members, fi)) => {
                let e = self.group.entries.get(leaf as usize).copied().ok_or_else(|| err("bad index", None, None))?;
                let prefix = self.field_prefix(fi);
                let chosen = Cell::new(Choice::Undecided);
                let group = self.group.nested(members.clone(), prefix)?;
                let out = seed.deserialize(EitherDe { leaf: Some(e), group, chosen: &chosen })?;
                // The value was read: the keys under it are keys no field names. (A struct that
                // read the keys under it leaves the value unread.)
                if chosen.get() == Choice::Leaf {
                    self.unknown.extend(members);
                }
                Ok(out)
            }
            None => Err(err("value asked for before its key", None, None)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.claims.iter().filter(|c| !matches!(c, Claim::None)).count() + self.unknown.len() - self.next_unknown)
    }
}

/// A map's entries, read flat (every key under the prefix is an entry, its rest the map key:
/// `"rope.freq_base"`) or grouped by the first segment of the rest (the segment is the map key,
/// the keys under it are the value: `"e0"` → `{dim, gate}`). The first value decides: a value
/// type that asks for a struct or map groups, any other reads flat. Only `next_entry_seed`
/// (which serde's `BTreeMap` and `HashMap` use) can group; a visitor that asks for a key first
/// (serde's flatten buffer, `serde_json::Value`) reads flat.
struct MapAccess<'a, 'de> {
    group: GroupDe<'a, 'de>,
    mode: MapMode,
    /// Next member (flat) or next group (grouped).
    pos: usize,
    pending: Option<u32>,
    pending_group: Option<usize>,
    groups: Vec<KeyGroup<'de>>,
    /// A struct with a flattened field reads through the map: keys whose segment is the
    /// architecture are named with the placeholder, as its fields are (`{arch}.context_length`).
    arch_names: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MapMode {
    Undecided,
    Flat,
    Grouped,
}

/// The keys of a map that share a first segment: the key that is exactly it, and those under it.
struct KeyGroup<'de> {
    seg: &'de str,
    exact: Option<u32>,
    nested: Vec<u32>,
}

impl<'a, 'de> MapAccess<'a, 'de> {
    fn new(group: GroupDe<'a, 'de>, arch_names: bool) -> Self {
        MapAccess {
            group,
            mode: MapMode::Undecided,
            pos: 0,
            pending: None,
            pending_group: None,
            groups: Vec::new(),
            arch_names,
        }
    }

    /// The members grouped by their first segment, in the order of first appearance.
    fn key_groups(&self) -> Vec<KeyGroup<'de>> {
        let mut index: HashMap<&'de str, usize> = HashMap::new();
        let mut out: Vec<KeyGroup<'de>> = Vec::new();
        for &m in &self.group.members {
            let rest = self.group.rest(m);
            let (seg, nested) = match rest.split_once('.') {
                Some((s, _)) => (s, true),
                None => (rest, false),
            };
            let gi = *index.entry(seg).or_insert_with(|| {
                out.push(KeyGroup { seg, exact: None, nested: Vec::new() });
                out.len() - 1
            });
            let Some(g) = out.get_mut(gi) else { continue };
            if nested {
                g.nested.push(m);
            } else if g.exact.is_none() {
                g.exact = Some(m);
            }
        }
        out
    }

    fn either(&self, gi: usize, leaf: Option<u32>) -> Result<(EitherParts<'a, 'de>, &'de str)> {
        let g = self.groups.get(gi).ok_or_else(|| err("bad index", None, None))?;
        let prefix = format!("{}{}.", self.group.prefix, g.seg);
        let leaf = leaf.or(g.exact).and_then(|m| self.group.entries.get(m as usize).copied());
        Ok(((leaf, self.group.nested(g.nested.clone(), prefix)?), g.seg))
    }

    fn key_error(&self, e: Error, m: u32) -> Error {
        let entry = self.group.entries.get(m as usize);
        annotate(e, || entry.map_or(String::new(), |e| e.key.to_owned()), entry.map(|e| e.offset))
    }

    fn group_key_error(&self, e: Error, seg: &str) -> Error {
        annotate(e, || format!("{}{seg}", self.group.prefix), None)
    }

    /// The flat map key of member `m`: its rest, with the architecture named `{arch}` if asked.
    fn flat_key(&self, m: u32) -> Cow<'de, str> {
        let rest = self.group.rest(m);
        match self.group.arch {
            Some(arch) if self.arch_names && rest.split('.').any(|s| s == arch) => Cow::Owned(
                rest.split('.')
                    .map(|s| if s == arch { crate::metadata::ARCH } else { s })
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => Cow::Borrowed(rest),
        }
    }
}

type EitherParts<'a, 'de> = (Option<Entry<'de>>, GroupDe<'a, 'de>);

impl<'a, 'de> de::MapAccess<'de> for MapAccess<'a, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.mode == MapMode::Undecided {
            self.mode = MapMode::Flat;
        }
        if self.mode == MapMode::Grouped {
            let Some(seg) = self.groups.get(self.pos).map(|g| g.seg) else { return Ok(None) };
            self.pending_group = Some(self.pos);
            self.pos += 1;
            return seed.deserialize(KeyDe(Cow::Borrowed(seg))).map(Some).map_err(|e| self.group_key_error(e, seg));
        }
        let Some(&m) = self.group.members.get(self.pos) else { return Ok(None) };
        self.pos += 1;
        self.pending = Some(m);
        seed.deserialize(KeyDe(self.flat_key(m))).map(Some).map_err(|e| self.key_error(e, m))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        if let Some(gi) = self.pending_group.take() {
            let ((leaf, group), _) = self.either(gi, None)?;
            let chosen = Cell::new(Choice::Undecided);
            return seed.deserialize(EitherDe { leaf, group, chosen: &chosen });
        }
        let m = self.pending.take().ok_or_else(|| err("value asked for before its key", None, None))?;
        let e = self.group.entries.get(m as usize).copied().ok_or_else(|| err("bad index", None, None))?;
        seed.deserialize(ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) })
    }

    fn next_entry_seed<K: DeserializeSeed<'de>, V: DeserializeSeed<'de>>(
        &mut self,
        kseed: K,
        vseed: V,
    ) -> Result<Option<(K::Value, V::Value)>> {
        if self.mode == MapMode::Undecided {
            let Some(&first) = self.group.members.first() else { return Ok(None) };
            // The value type decides, on the first entry: its group of keys if it asks for a
            // struct or map, else the first key's value.
            self.groups = self.key_groups();
            let ((_, group), seg) = self.either(0, None)?;
            let leaf = self.group.entries.get(first as usize).copied();
            let chosen = Cell::new(Choice::Undecided);
            let value = vseed.deserialize(EitherDe { leaf, group, chosen: &chosen })?;
            let key = if chosen.get() == Choice::Group {
                self.mode = MapMode::Grouped;
                self.pos = 1;
                kseed.deserialize(KeyDe(Cow::Borrowed(seg))).map_err(|e| self.group_key_error(e, seg))?
            } else {
                self.mode = MapMode::Flat;
                self.groups = Vec::new();
                self.pos = 1;
                kseed.deserialize(KeyDe(self.flat_key(first))).map_err(|e| self.key_error(e, first))?
            };
            return Ok(Some((key, value)));
        }
        match self.next_key_seed(kseed)? {
            Some(k) => Ok(Some((k, self.next_value_seed(vseed)?))),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        let n = if self.mode == MapMode::Grouped { self.groups.len() } else { self.group.members.len() };
        Some(n.saturating_sub(self.pos))
    }
}

/// What an [`EitherDe`]'s visitor asked for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Choice {
    Undecided,
    Leaf,
    Group,
}

/// A key that is a value and also the prefix of other keys (or a map entry that may be either):
/// a struct or map reads the keys under it, any other type the value. `leaf` may be absent (a
/// group only) and `group` empty (a value only); the type then fails against what there is.
struct EitherDe<'c, 'a, 'de> {
    leaf: Option<Entry<'de>>,
    group: GroupDe<'a, 'de>,
    chosen: &'c Cell<Choice>,
}

macro_rules! either_leaf {
    ($($m:ident($($a:ident: $t:ty),*)),* $(,)?) => {$(
        fn $m<V: Visitor<'de>>(self, $($a: $t,)* visitor: V) -> Result<V::Value> {
            self.chosen.set(Choice::Leaf);
            match self.leaf {
                Some(e) => ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) }.$m($($a,)* visitor),
                None => self.group.$m($($a,)* visitor),
            }
        }
    )*};
}

impl<'c, 'a, 'de> de::Deserializer<'de> for EitherDe<'c, 'a, 'de> {
    type Error = Error;

    either_leaf!(deserialize_any());
    leaf_methods!(either_leaf);

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        if name != VALUE_TOKEN && name != ARRAY_TOKEN && name != STRING_ARRAY_TOKEN {
            return visitor.visit_newtype_struct(self);
        }
        self.chosen.set(Choice::Leaf);
        match self.leaf {
            Some(e) => ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) }
                .deserialize_newtype_struct(name, visitor),
            None => self.group.deserialize_newtype_struct(name, visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.chosen.set(Choice::Group);
        match self.leaf {
            // A value only: the map fails against it, naming its key, type and offset.
            Some(e) if self.group.members.is_empty() => {
                ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) }.deserialize_map(visitor)
            }
            _ => self.group.deserialize_map(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.chosen.set(Choice::Group);
        match self.leaf {
            Some(e) if self.group.members.is_empty() => {
                ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) }
                    .deserialize_struct(name, fields, visitor)
            }
            _ => self.group.deserialize_struct(name, fields, visitor),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// A map key: a string (borrowed from the file, or with the architecture named `{arch}`), or an
/// integer parsed from it.
struct KeyDe<'de>(Cow<'de, str>);

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
        match self.0 {
            Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
            Cow::Owned(s) => visitor.visit_string(s),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_enum(de::value::CowStrDeserializer::<Error>::new(self.0))
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
        ValueRef::Array(a) if a.len() == 1 => " of 1 element".to_string(),
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
        if name == STRING_ARRAY_TOKEN {
            // A whole string array at once ([`crate::StringArray`]); anything else (an empty
            // array of another type included) goes through the sequence, as for `Vec<String>`.
            if let ValueRef::Array(a) = self.v {
                if a.elem_type() == ValueType::String {
                    let key = match a.endian() {
                        Endian::Little => RAW_LE,
                        Endian::Big => RAW_BE,
                    };
                    let raw = RawStrings { key: Some(key), bytes: a.raw_bytes() };
                    return self.visit(|| visitor.visit_map(raw));
                }
            }
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

/// The stored elements of an `array<string>` as one map entry (see
/// [`STRING_ARRAY_TOKEN`](crate::metadata::STRING_ARRAY_TOKEN)).
struct RawStrings<'de> {
    key: Option<&'static str>,
    bytes: &'de [u8],
}

impl<'de> de::MapAccess<'de> for RawStrings<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.key.take() {
            Some(k) => seed.deserialize(de::value::BorrowedStrDeserializer::<Error>::new(k)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(de::value::BorrowedBytesDeserializer::<Error>::new(self.bytes))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.key.is_some()))
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
