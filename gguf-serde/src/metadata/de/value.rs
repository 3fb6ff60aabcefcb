//! [`ValueDe`]: one stored value (a number, a string, an array read element by element, an
//! enum by name or by its exact stored type), with the path to it for errors.

use super::*;
use crate::format::GgufStr;

/// Where a value is: a key, or an element of an array at a path. Formatted only for errors.
#[derive(Clone, Copy)]
pub(super) enum Path<'p> {
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

pub(super) struct ValueDe<'p, 'de> {
    pub(super) v: ValueRef<'de>,
    pub(super) path: Path<'p>,
    /// Absolute offset of the stored value (`None` for [`from_value`]).
    pub(super) offset: Option<u64>,
}

fn preview(v: &ValueRef<'_>) -> String {
    match v {
        ValueRef::String(s) if s.to_string_lossy().chars().count() > 40 => {
            format!(" {:?}…", s.to_string_lossy().chars().take(40).collect::<String>())
        }
        ValueRef::String(s) => format!(" {s:?}"),
        ValueRef::Array(a) => format!(" of {}", crate::format::count(a.len(), "element")),
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

pub(super) fn int_of(v: &ValueRef<'_>) -> Option<i128> {
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

    /// The text of a string value.
    ///
    /// # Errors
    /// [`FormatError::InvalidUtf8`](crate::FormatError::InvalidUtf8) naming the key (with the
    /// element's index) and the offset of the string's bytes, for one that is not UTF-8.
    #[inline]
    fn text(&self, s: GgufStr<'de>) -> Result<&'de str> {
        s.to_str().map_err(|_| self.not_utf8())
    }

    #[cold]
    fn not_utf8(&self) -> Error {
        crate::FormatError::InvalidUtf8 {
            item: crate::Item::String,
            owner: Some(self.path.to_string()).filter(|k| !k.is_empty()),
            // The offset is that of the string's length; its bytes follow.
            offset: self.offset.map_or(0, |o| o.saturating_add(8)),
        }
        .into()
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
                format!(
                    "invalid length: the array has {}, fewer were expected",
                    crate::format::count(a.len(), "element")
                ),
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
            // A string that is not UTF-8 is handed over as its bytes: nothing is lost, and a
            // visitor that wants text says so with its own error.
            ValueRef::String(s) => match s.to_str() {
                Ok(s) => self.visit(|| visitor.visit_borrowed_str(s)),
                Err(_) => self.visit(|| visitor.visit_borrowed_bytes(s.as_bytes())),
            },
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
            ValueRef::F64(x) => {
                // Rounded to the nearest `f32`, as `as` does; but a finite value that becomes
                // infinite, or one not zero that becomes zero, does not fit (as an integer that
                // does not fit its field is refused). NaN and the infinities stay what they are.
                #[allow(clippy::cast_possible_truncation, reason = "the rounding is checked just below")]
                let y = x as f32;
                if (x.is_finite() && y.is_infinite()) || (x != 0.0 && y == 0.0) {
                    return Err(self.fail(format!("float {x:e} (stored as f64) does not fit in f32")));
                }
                self.visit(|| visitor.visit_f32(y))
            }
            _ => Err(self.mismatch(&visitor)),
        }
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.v {
            ValueRef::F32(x) => self.visit(|| visitor.visit_f32(x)),
            ValueRef::F64(x) => self.visit(|| visitor.visit_f64(x)),
            _ => Err(self.mismatch(&visitor)),
        }
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
            ValueRef::String(s) => {
                let s = self.text(s)?;
                self.visit(|| visitor.visit_borrowed_str(s))
            }
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
            // The stored bytes of a string, UTF-8 or not (`serde_bytes`, `&[u8]`, `Vec<u8>` via
            // `serde_bytes::ByteBuf`).
            ValueRef::String(s) => self.visit(|| visitor.visit_borrowed_bytes(s.as_bytes())),
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
            // array of another type included, or strings that are not all UTF-8, whose first bad
            // one is then refused naming `key[i]`) goes through the sequence, as for `Vec<String>`.
            if let ValueRef::Array(a) = self.v {
                if a.elem_type() == ValueType::String && a.is_utf8() {
                    // `StringArray` itself: built here, without the raw map's second check.
                    if let Some(whole) = super::bulk::string_array::<V>(a) {
                        return Ok(whole);
                    }
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
            ValueRef::Array(a) => match super::bulk::stored_vec::<V>(a) {
                // A `Vec` of the stored numeric type: one copy of the stored bytes; a
                // `Vec<String>`: one pass over the strings.
                Some(whole) => Ok(whole),
                None => self.seq(a, visitor),
            },
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
            ValueRef::String(s) => {
                let s = self.text(s)?;
                self.visit(|| visitor.visit_enum(UnitVariant(s)))
            }
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
