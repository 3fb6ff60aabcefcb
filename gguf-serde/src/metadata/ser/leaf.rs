//! [`LeafSer`]: one GGUF value (a scalar, string or array), as an array element or through
//! [`to_value`]; arrays built element by element ([`ArrayBuilder`]).

use super::*;

pub(super) struct LeafSer<'k> {
    /// Where the value is, for errors: the full key (empty for `to_value`), or an element of an
    /// array at a path (`key[1][0]`).
    pub(super) path: KeyPath<'k>,
    /// The element type forced by [`crate::elem`] for the next sequence (and, when it is not
    /// `array`, for the sequences inside it).
    pub(super) hint: Option<ValueType>,
    /// Array nesting so far.
    pub(super) depth: usize,
    /// For an element of an array: set when the element is an empty sequence with no element
    /// type, which then takes the type of its siblings ([`ArrayBuilder::finish`]).
    pub(super) untyped: Option<&'k Cell<bool>>,
}

/// The key of a value being serialized, or an element of an array at a path; formatted only for
/// errors.
#[derive(Clone, Copy)]
pub(super) enum KeyPath<'k> {
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

pub(super) struct LeafSeq<'k> {
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
pub(super) struct ArrayBuilder {
    pub(super) arr: Option<Array>,
    pub(super) hint: Option<ValueType>,
    pub(super) cap: usize,
    pub(super) index: usize,
    pub(super) depth: usize,
    /// Indices of elements that are empty sequences with no element type of their own.
    pub(super) untyped: Vec<usize>,
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
    pub(super) fn new(len: Option<usize>, hint: Option<ValueType>, depth: usize) -> Self {
        // The length comes from the caller's own data, but stay modest anyway.
        ArrayBuilder { arr: None, hint, cap: len.unwrap_or(0).min(1 << 16), index: 0, depth, untyped: Vec::new() }
    }

    pub(super) fn push_ser<T: ?Sized + Serialize>(&mut self, v: &T, path: &KeyPath<'_>) -> Result<()> {
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
    pub(super) fn finish(self, path: &KeyPath<'_>, untyped: Option<&Cell<bool>>) -> Result<Array> {
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
