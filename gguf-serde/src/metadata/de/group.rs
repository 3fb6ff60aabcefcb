//! [`GroupDe`]: the keys under a prefix, read as a struct (by field names, [`StructAccess`]) or,
//! through [`MapAccess`](super::map::MapAccess), as a map of flat keys.

use super::*;

pub(super) struct GroupDe<'a, 'de> {
    pub(super) entries: &'a [Entry<'de>],
    /// Every pair of the file whose key is not UTF-8 (those under `prefix` belong here).
    pub(super) skipped: &'a [Skipped<'de>],
    /// Indices into `entries` of the keys under `prefix`.
    pub(super) members: Vec<u32>,
    /// The key prefix with its trailing `.`; empty at the root.
    pub(super) prefix: String,
    pub(super) arch: Option<&'a str>,
    pub(super) depth: usize,
}

impl<'a, 'de> GroupDe<'a, 'de> {
    fn name(&self) -> &str {
        self.prefix.strip_suffix('.').unwrap_or(&self.prefix)
    }

    pub(super) fn rest(&self, i: u32) -> &'de str {
        let key = self.entries.get(i as usize).map_or("", |e| e.key);
        key.get(self.prefix.len()..).unwrap_or_default()
    }

    fn mismatch(&self, exp: &dyn Expected) -> Error {
        let what = if self.prefix.is_empty() { "the key/value block".to_owned() } else { "a group of keys".to_owned() };
        let first = self.members.first().and_then(|&i| self.entries.get(i as usize));
        err(
            format!(
                "invalid type: expected {exp}, found {what} ({}{})",
                crate::format::count(self.members.len(), "key"),
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
        // The keys under the prefix that are not UTF-8 and that no field's group takes: unknown
        // keys too (a field name is text, so none is one of them exactly).
        let unknown_bad: Vec<&'a Skipped<'de>> = self
            .skipped
            .iter()
            .filter(|s| s.key.starts_with(self.prefix.as_bytes()))
            .filter(|s| {
                let rest = s.key.get(self.prefix.len()..).unwrap_or_default();
                !resolved.iter().any(|f| {
                    let f = f.as_bytes();
                    rest.len() > f.len()
                        && rest.starts_with(f)
                        && (f.ends_with(b".") || rest.get(f.len()) == Some(&b'.'))
                })
            })
            .collect();
        Ok(StructAccess {
            group: self,
            fields,
            resolved,
            claims,
            unknown,
            unknown_bad,
            next_field: 0,
            next_unknown: 0,
            pending: None,
        })
    }

    pub(super) fn nested(&self, members: Vec<u32>, prefix: String) -> Result<GroupDe<'a, 'de>> {
        if self.depth + 1 >= MAX_NESTING {
            let first = members.first().and_then(|&i| self.entries.get(i as usize));
            return Err(err(
                format!("keys nested deeper than {MAX_NESTING} levels of structs or maps"),
                first.map(|e| e.key.to_owned()),
                first.map(|e| e.offset),
            ));
        }
        Ok(GroupDe {
            entries: self.entries,
            skipped: self.skipped,
            members,
            prefix,
            arch: self.arch,
            depth: self.depth + 1,
        })
    }
}

/// Turns serde's missing-field error of a struct at `prefix` into one naming the full key (and
/// a key under it that is not UTF-8, which the serde view skipped), and gives other errors
/// without a key the struct's key.
fn fix_missing(e: Error, prefix: &str, arch: Option<&str>, skipped: &[Skipped<'_>]) -> Error {
    if let (Some(MetadataError::MissingField { field }), None, None) = (e.as_metadata(), e.key(), e.offset()) {
        let key = format!("{prefix}{field}");
        let key = resolve_arch_key(&key, arch).ok().flatten().unwrap_or(key);
        let under = format!("{key}.");
        let not_utf8 =
            skipped.iter().find(|s| s.key.starts_with(under.as_bytes())).map(|s| (s.shown.clone(), s.offset));
        return Error::metadata(MetadataError::MissingKey { not_utf8 }, Some(key), None);
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
        let skipped = self.skipped;
        visitor
            .visit_map(MapAccess::new(self, arch_names))
            .map_err(|e| fix_missing(found_key(e, entries, &members), &prefix, arch, skipped))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (prefix, arch, skipped) = (self.prefix.clone(), self.arch, self.skipped);
        let access = self.struct_access(fields)?;
        visitor.visit_map(access).map_err(|e| fix_missing(e, &prefix, arch, skipped))
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
/// struct ignores, or refuses with `deny_unknown_fields`): those that are UTF-8, then the others,
/// given to the field visitor as bytes.
struct StructAccess<'a, 'de> {
    group: GroupDe<'a, 'de>,
    fields: &'static [&'static str],
    resolved: Vec<std::borrow::Cow<'static, str>>,
    claims: Vec<Claim>,
    unknown: Vec<u32>,
    unknown_bad: Vec<&'a Skipped<'de>>,
    next_field: usize,
    next_unknown: usize,
    pending: Option<Pending<'a, 'de>>,
}

enum Pending<'a, 'de> {
    Leaf(u32),
    Group(Vec<u32>, usize),
    Both(u32, Vec<u32>, usize),
    Skipped(&'a Skipped<'de>),
}

impl StructAccess<'_, '_> {
    /// How many keys no field names are left to give.
    fn unknown_left(&self) -> usize {
        (self.unknown.len() + self.unknown_bad.len()).saturating_sub(self.next_unknown)
    }

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
        // Then the keys that are not UTF-8, as bytes (serde's field visitors take bytes: an
        // unknown field to ignore, or to refuse with `deny_unknown_fields`).
        if let Some(&s) = self.unknown_bad.get(self.next_unknown.saturating_sub(self.unknown.len())) {
            self.next_unknown += 1;
            self.pending = Some(Pending::Skipped(s));
            let rest = s.key.get(self.group.prefix.len()..).unwrap_or_default();
            return seed
                .deserialize(de::value::BorrowedBytesDeserializer::<Error>::new(rest))
                .map(Some)
                .map_err(|x| annotate(x, || s.shown.clone(), Some(s.offset)));
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        match self.pending.take() {
            Some(Pending::Leaf(m)) => {
                let e = self.group.entries.get(m as usize).copied().ok_or_else(|| err("bad index", None, None))?;
                seed.deserialize(ValueDe { v: e.value, path: Path::Root(e.key), offset: Some(e.offset) })
            }
            Some(Pending::Skipped(s)) => {
                seed.deserialize(ValueDe { v: s.value, path: Path::Root(&s.shown), offset: Some(s.offset) })
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
        Some(self.claims.iter().filter(|c| !matches!(c, Claim::None)).count() + self.unknown_left())
    }
}
