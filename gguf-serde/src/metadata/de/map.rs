//! A group of keys read as a map ([`MapAccess`]): flat keys, or nested groups by the next key
//! part; a field whose key holds a value and has keys under it ([`EitherDe`]); map keys parsed
//! from key text ([`KeyDe`]).

use super::*;

/// A map's entries, read flat (every key under the prefix is an entry, its rest the map key:
/// `"rope.freq_base"`) or grouped by the first segment of the rest (the segment is the map key,
/// the keys under it are the value: `"e0"` → `{dim, gate}`). The first value decides: a value
/// type that asks for a struct or map groups, any other reads flat. Only `next_entry_seed`
/// (which serde's `BTreeMap` and `HashMap` use) can group; a visitor that asks for a key first
/// (serde's flatten buffer, `serde_json::Value`) reads flat.
pub(super) struct MapAccess<'a, 'de> {
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
    pub(super) fn new(group: GroupDe<'a, 'de>, arch_names: bool) -> Self {
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
pub(super) enum Choice {
    Undecided,
    Leaf,
    Group,
}

/// A key that is a value and also the prefix of other keys (or a map entry that may be either):
/// a struct or map reads the keys under it, any other type the value. `leaf` may be absent (a
/// group only) and `group` empty (a value only); the type then fails against what there is.
pub(super) struct EitherDe<'c, 'a, 'de> {
    pub(super) leaf: Option<Entry<'de>>,
    pub(super) group: GroupDe<'a, 'de>,
    pub(super) chosen: &'c Cell<Choice>,
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
