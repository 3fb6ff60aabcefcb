//! [`Node`]: the value at a key (or the root), which may be a struct or map of further keys
//! ([`Group`]), a sequence ([`NodeSeq`]) or one value; map keys through [`KeySer`].

use super::*;

pub(super) struct Node<'a> {
    pub(super) out: &'a mut Vec<(String, Value)>,
    /// The full key; empty at the root.
    pub(super) key: String,
    /// Whether this is the top level (a map key may be empty too, and is refused later).
    pub(super) root: bool,
    /// A struct field renamed with a trailing `.` (`"chat_template."`): the key is a prefix, and
    /// the value must be a struct or map of keys under it.
    pub(super) prefix_only: bool,
    /// The value of a map entry whose key has a dot (`"x.y"`): it may be a value, but not a
    /// struct or map, whose keys (`m.x.y.field`) would read back as a group `x` of a group `y`.
    pub(super) dotted_map_key: bool,
    pub(super) depth: usize,
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

pub(super) fn describe(v: &Value) -> String {
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

pub(super) fn not_unit_variant(name: &str, variant: &str) -> String {
    format!(
        "enum variant {name}::{variant} has data; GGUF stores only unit variants (as STRING): for variants \
         with fields use an internally tagged enum, #[serde(tag = \"type\")]"
    )
}

/// A sequence at a key: an array value.
pub(super) struct NodeSeq<'a> {
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
pub(super) struct Group<'a> {
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
