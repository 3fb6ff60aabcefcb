//! `Serialize` and `Deserialize` for [`Value`] and [`Array`].
//!
//! With this crate's serializer and deserializer both keep the exact stored type: a `Value::U16`
//! is written as UINT16, an empty `Array::F32` as an empty `array<f32>`, and reading gives back
//! the type that is stored. With other formats, a `Value` is its plain content (`5`, `"text"`,
//! `[1, 2]`); read back from them, integers and floats take the width the format reports (serde
//! JSON: `u64`, `i64`, `f64`), an array takes the type of its elements, and an empty array
//! (whose element type is not known) is `array<u8>`; bytes (a format's byte string) are refused,
//! since no `Value` holds them. The same holds for a `Value` inside a struct with
//! `#[serde(flatten)]`, which serde buffers through its own format-neutral representation: a
//! STRING that is not UTF-8 there is [`FormatError::InvalidUtf8`](crate::FormatError::InvalidUtf8),
//! as for a `Value` field.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, EnumAccess, SeqAccess, VariantAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::container::{Array, Value};
use crate::metadata::{array_token, ARRAY_TOKEN, VALUE_TOKEN};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::U8(x) => s.serialize_u8(*x),
            Value::I8(x) => s.serialize_i8(*x),
            Value::U16(x) => s.serialize_u16(*x),
            Value::I16(x) => s.serialize_i16(*x),
            Value::U32(x) => s.serialize_u32(*x),
            Value::I32(x) => s.serialize_i32(*x),
            Value::F32(x) => s.serialize_f32(*x),
            Value::Bool(x) => s.serialize_bool(*x),
            Value::String(x) => s.serialize_str(x),
            Value::Array(a) => a.serialize(s),
            Value::U64(x) => s.serialize_u64(*x),
            Value::I64(x) => s.serialize_i64(*x),
            Value::F64(x) => s.serialize_f64(*x),
        }
    }
}

/// The elements of an array as a plain sequence.
struct Elems<'a>(&'a Array);

impl Serialize for Elems<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn all<S: Serializer, T: Serialize>(s: S, v: &[T]) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(v.len()))?;
            for x in v {
                seq.serialize_element(x)?;
            }
            seq.end()
        }
        match self.0 {
            Array::U8(v) => all(s, v),
            Array::I8(v) => all(s, v),
            Array::U16(v) => all(s, v),
            Array::I16(v) => all(s, v),
            Array::U32(v) => all(s, v),
            Array::I32(v) => all(s, v),
            Array::F32(v) => all(s, v),
            Array::Bool(v) => all(s, v),
            Array::String(v) => all(s, v),
            Array::Array(v) => all(s, v),
            Array::U64(v) => all(s, v),
            Array::I64(v) => all(s, v),
            Array::F64(v) => all(s, v),
        }
    }
}

impl Serialize for Array {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The newtype name carries the element type to this crate's serializer; other formats see
        // a transparent newtype.
        s.serialize_newtype_struct(array_token(self.elem_type()), &Elems(self))
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_newtype_struct(VALUE_TOKEN, ValueVisitor)
    }
}

impl<'de> Deserialize<'de> for Array {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Array, D::Error> {
        d.deserialize_newtype_struct(ARRAY_TOKEN, ArrayVisitor)
    }
}

struct ValueVisitor;

macro_rules! visit_scalar {
    ($($m:ident($t:ty) => $v:ident),* $(,)?) => {$(
        fn $m<E: de::Error>(self, x: $t) -> Result<Value, E> {
            Ok(Value::$v(x))
        }
    )*};
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a GGUF value (number, bool, string or array)")
    }

    visit_scalar!(
        visit_u8(u8) => U8, visit_i8(i8) => I8, visit_u16(u16) => U16, visit_i16(i16) => I16,
        visit_u32(u32) => U32, visit_i32(i32) => I32, visit_u64(u64) => U64, visit_i64(i64) => I64,
        visit_f32(f32) => F32, visit_f64(f64) => F64, visit_bool(bool) => Bool, visit_string(String) => String,
    );

    fn visit_str<E: de::Error>(self, x: &str) -> Result<Value, E> {
        Ok(Value::String(x.to_owned()))
    }

    fn visit_char<E: de::Error>(self, x: char) -> Result<Value, E> {
        Ok(Value::String(x.to_string()))
    }

    /// Refused: a `Value` holds no bytes (GGUF has none; an `array<u8>` is a sequence). From this
    /// crate's deserializer bytes come only from a STRING that is not UTF-8 in serde's buffer of
    /// a flattened struct, which then gives [`FormatError::InvalidUtf8`](crate::FormatError::InvalidUtf8)
    /// naming the key, as a `Value` field does; read such a key as bytes or through
    /// [`Gguf::metadata`](crate::Gguf::metadata).
    fn visit_bytes<E: de::Error>(self, x: &[u8]) -> Result<Value, E> {
        Err(E::invalid_type(de::Unexpected::Bytes(x), &self))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value, A::Error> {
        ArrayVisitor.visit_seq(seq).map(Value::Array)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, v): (String, _) = data.variant()?;
        Ok(match tag.as_str() {
            "u8" => Value::U8(v.newtype_variant()?),
            "i8" => Value::I8(v.newtype_variant()?),
            "u16" => Value::U16(v.newtype_variant()?),
            "i16" => Value::I16(v.newtype_variant()?),
            "u32" => Value::U32(v.newtype_variant()?),
            "i32" => Value::I32(v.newtype_variant()?),
            "u64" => Value::U64(v.newtype_variant()?),
            "i64" => Value::I64(v.newtype_variant()?),
            "f32" => Value::F32(v.newtype_variant()?),
            "f64" => Value::F64(v.newtype_variant()?),
            "bool" => Value::Bool(v.newtype_variant()?),
            "string" => Value::String(v.newtype_variant()?),
            "array" => Value::Array(v.newtype_variant()?),
            other => return Err(de::Error::unknown_variant(other, TYPE_NAMES)),
        })
    }
}

const TYPE_NAMES: &[&str] =
    &["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64", "bool", "string", "array"];

struct ArrayVisitor;

impl<'de> Visitor<'de> for ArrayVisitor {
    type Value = Array;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a GGUF array (a sequence of values of one type)")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Array, D::Error> {
        d.deserialize_seq(self)
    }

    fn visit_bytes<E: de::Error>(self, x: &[u8]) -> Result<Array, E> {
        Ok(Array::U8(x.to_vec()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Array, A::Error> {
        // Element type from the first element; every other must match.
        let mut out: Option<Array> = None;
        let mut i = 0usize;
        while let Some(v) = seq.next_element::<Value>()? {
            let arr = out.get_or_insert_with(|| empty_like(&v));
            if !push(arr, v) {
                return Err(de::Error::custom(format_args!(
                    "mixed array element types: element {i} differs from element 0 ({})",
                    arr.elem_type()
                )));
            }
            i += 1;
        }
        Ok(out.unwrap_or(Array::U8(Vec::new())))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Array, A::Error> {
        let (tag, v): (String, _) = data.variant()?;
        Ok(match tag.as_str() {
            "u8" => Array::U8(v.newtype_variant()?),
            "i8" => Array::I8(v.newtype_variant()?),
            "u16" => Array::U16(v.newtype_variant()?),
            "i16" => Array::I16(v.newtype_variant()?),
            "u32" => Array::U32(v.newtype_variant()?),
            "i32" => Array::I32(v.newtype_variant()?),
            "u64" => Array::U64(v.newtype_variant()?),
            "i64" => Array::I64(v.newtype_variant()?),
            "f32" => Array::F32(v.newtype_variant()?),
            "f64" => Array::F64(v.newtype_variant()?),
            "bool" => Array::Bool(v.newtype_variant()?),
            "string" => Array::String(v.newtype_variant()?),
            "array" => Array::Array(v.newtype_variant()?),
            other => return Err(de::Error::unknown_variant(other, TYPE_NAMES)),
        })
    }
}

fn empty_like(v: &Value) -> Array {
    match v {
        Value::U8(_) => Array::U8(Vec::new()),
        Value::I8(_) => Array::I8(Vec::new()),
        Value::U16(_) => Array::U16(Vec::new()),
        Value::I16(_) => Array::I16(Vec::new()),
        Value::U32(_) => Array::U32(Vec::new()),
        Value::I32(_) => Array::I32(Vec::new()),
        Value::F32(_) => Array::F32(Vec::new()),
        Value::Bool(_) => Array::Bool(Vec::new()),
        Value::String(_) => Array::String(Vec::new()),
        Value::Array(_) => Array::Array(Vec::new()),
        Value::U64(_) => Array::U64(Vec::new()),
        Value::I64(_) => Array::I64(Vec::new()),
        Value::F64(_) => Array::F64(Vec::new()),
    }
}

fn push(arr: &mut Array, v: Value) -> bool {
    match (arr, v) {
        (Array::U8(a), Value::U8(x)) => a.push(x),
        (Array::I8(a), Value::I8(x)) => a.push(x),
        (Array::U16(a), Value::U16(x)) => a.push(x),
        (Array::I16(a), Value::I16(x)) => a.push(x),
        (Array::U32(a), Value::U32(x)) => a.push(x),
        (Array::I32(a), Value::I32(x)) => a.push(x),
        (Array::F32(a), Value::F32(x)) => a.push(x),
        (Array::Bool(a), Value::Bool(x)) => a.push(x),
        (Array::String(a), Value::String(x)) => a.push(x),
        (Array::Array(a), Value::Array(x)) => a.push(x),
        (Array::U64(a), Value::U64(x)) => a.push(x),
        (Array::I64(a), Value::I64(x)) => a.push(x),
        (Array::F64(a), Value::F64(x)) => a.push(x),
        _ => return false,
    }
    true
}
