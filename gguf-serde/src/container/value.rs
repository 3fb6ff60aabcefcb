//! GGUF metadata value types, borrowed values read from a file, and owned values to write.
//!
//! Spec: ggml `docs/gguf.md`, "File Structure" (`gguf_metadata_value_type`).

use std::fmt;

use crate::format::{GgufStr, ValueType};

use super::wire::{elements_end, num, string_at};
use crate::format::Endian;

/// A metadata value borrowed from a file's bytes (already validated when the file was opened).
///
/// Scalars are decoded; strings borrow ([`GgufStr`]: the stored bytes, which ggml does not
/// require to be UTF-8, and neither does this crate); arrays are views over their stored bytes
/// ([`ArrayRef`]), so opening a file costs no allocation per array element.
///
/// ```
/// use gguf_serde::{GgufWriter, Gguf, ValueRef, ValueType};
///
/// let mut w = GgufWriter::new(Vec::new());
/// w.add_kv("general.architecture", "llama")?;
/// w.add_kv("llama.context_length", 4096u32)?;
/// w.add_kv("tokenizer.ggml.tokens", vec!["<s>", "</s>", "hello"])?;
/// let bytes = w.finish()?;
/// let file = Gguf::from_slice(&bytes)?;
///
/// // The exact stored type...
/// assert_eq!(file.get("llama.context_length"), Some(ValueRef::U32(4096)));
/// // ...or widened, whatever integer type a writer chose.
/// assert_eq!(file.get("llama.context_length").and_then(|v| v.as_u64()), Some(4096));
/// match file.get("general.architecture") {
///     Some(ValueRef::String(arch)) => assert_eq!(arch, "llama"), // borrowed from `bytes`
///     other => panic!("not a string: {other:?}"),
/// }
/// assert_eq!(file.get("general.architecture").and_then(|v| v.as_str()), Some("llama"));
/// let tokens = file.get("tokenizer.ggml.tokens").and_then(|v| v.as_array()).expect("an array");
/// assert_eq!((tokens.elem_type(), tokens.len()), (ValueType::String, 3));
/// // Strings have no fixed size: walk them (`get(i)` is for fixed-size elements).
/// // Each string is a `GgufStr`: its bytes, and its text if it is UTF-8 (ggml does not require it).
/// let all: Vec<&str> = tokens.strings().expect("strings").map(|s| s.to_str().expect("UTF-8")).collect();
/// assert_eq!(all, ["<s>", "</s>", "hello"]);
/// # Ok::<(), gguf_serde::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// u8.
    U8(u8),
    /// i8.
    I8(i8),
    /// u16.
    U16(u16),
    /// i16.
    I16(i16),
    /// u32.
    U32(u32),
    /// i32.
    I32(i32),
    /// f32.
    F32(f32),
    /// bool: a stored byte of 0 is false, any other byte true (as ggml reads it; the spec
    /// allows only 0 and 1).
    Bool(bool),
    /// A string: its stored bytes, UTF-8 or not (see [`GgufStr`]).
    String(GgufStr<'a>),
    /// An array.
    Array(ArrayRef<'a>),
    /// u64.
    U64(u64),
    /// i64.
    I64(i64),
    /// f64.
    F64(f64),
}

impl<'a> ValueRef<'a> {
    /// The stored type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Self::U8(_) => ValueType::U8,
            Self::I8(_) => ValueType::I8,
            Self::U16(_) => ValueType::U16,
            Self::I16(_) => ValueType::I16,
            Self::U32(_) => ValueType::U32,
            Self::I32(_) => ValueType::I32,
            Self::F32(_) => ValueType::F32,
            Self::Bool(_) => ValueType::Bool,
            Self::String(_) => ValueType::String,
            Self::Array(_) => ValueType::Array,
            Self::U64(_) => ValueType::U64,
            Self::I64(_) => ValueType::I64,
            Self::F64(_) => ValueType::F64,
        }
    }

    /// The full type name, with array element types: `u32`, `string`, `array<string>`,
    /// `array<array<i32>>` (the inner type of an array of arrays is taken from its first element;
    /// an empty one is `array<array>`).
    pub fn type_name(&self) -> String {
        match self {
            Self::Array(a) => a.type_name(),
            v => v.value_type().name().to_owned(),
        }
    }

    /// The value as `u64` if it is an integer type that fits (any width, signed or not).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Self::U8(v) => Some(v.into()),
            Self::U16(v) => Some(v.into()),
            Self::U32(v) => Some(v.into()),
            Self::U64(v) => Some(v),
            Self::I8(v) => u64::try_from(v).ok(),
            Self::I16(v) => u64::try_from(v).ok(),
            Self::I32(v) => u64::try_from(v).ok(),
            Self::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as `i64` if it is an integer type that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Self::U8(v) => Some(v.into()),
            Self::U16(v) => Some(v.into()),
            Self::U32(v) => Some(v.into()),
            Self::U64(v) => i64::try_from(v).ok(),
            Self::I8(v) => Some(v.into()),
            Self::I16(v) => Some(v.into()),
            Self::I32(v) => Some(v.into()),
            Self::I64(v) => Some(v),
            _ => None,
        }
    }

    /// The value as `f64` if it is `f32` or `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Self::F32(v) => Some(v.into()),
            Self::F64(v) => Some(v),
            _ => None,
        }
    }

    /// The string, if the value is one and is valid UTF-8; `None` otherwise (see
    /// [`as_gguf_str`](Self::as_gguf_str) for the bytes of any string, and
    /// [`Gguf::get_str`](crate::Gguf::get_str) for an error that says which of the two it was).
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Self::String(s) => s.to_str().ok(),
            _ => None,
        }
    }

    /// The string as stored (UTF-8 or not), if the value is one.
    pub fn as_gguf_str(&self) -> Option<GgufStr<'a>> {
        match *self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bool, if the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Self::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The array, if the value is one.
    pub fn as_array(&self) -> Option<ArrayRef<'a>> {
        match *self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// An owned copy. A string that is not UTF-8 is copied with each bad sequence replaced by
    /// U+FFFD (the owned [`Value`] holds Rust `String`s): to copy a pair exactly, write the
    /// borrowed value with [`GgufWriter::add_kv_ref`](crate::GgufWriter::add_kv_ref).
    pub fn to_owned_value(&self) -> Value {
        match *self {
            Self::U8(v) => Value::U8(v),
            Self::I8(v) => Value::I8(v),
            Self::U16(v) => Value::U16(v),
            Self::I16(v) => Value::I16(v),
            Self::U32(v) => Value::U32(v),
            Self::I32(v) => Value::I32(v),
            Self::F32(v) => Value::F32(v),
            Self::Bool(v) => Value::Bool(v),
            Self::String(v) => Value::String(v.to_string_lossy().into_owned()),
            Self::Array(a) => Value::Array(a.to_owned_array()),
            Self::U64(v) => Value::U64(v),
            Self::I64(v) => Value::I64(v),
            Self::F64(v) => Value::F64(v),
        }
    }
}

/// An array value borrowed from a file: its element type, its length and its stored bytes.
///
/// The bytes were validated when the file was opened (lengths, nesting), so
/// iterating never fails; strings come out as [`GgufStr`] (UTF-8 or not, as ggml reads them). Iterating strings or nested arrays walks the bytes from the start;
/// fixed-size elements can also be read by index with [`get`](Self::get).
#[derive(Clone, Copy, PartialEq)]
pub struct ArrayRef<'a> {
    pub(crate) elem: ValueType,
    pub(crate) len: u64,
    pub(crate) bytes: &'a [u8],
    pub(crate) endian: Endian,
    /// Every string in the array (at any depth) is UTF-8, as the parser found in one pass when
    /// the file was opened: [`GgufStr::to_str`] of its strings is then free.
    pub(crate) utf8: bool,
}

impl fmt::Debug for ArrayRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArrayRef<{}>[{}]", self.type_name(), self.len)
    }
}

impl<'a> ArrayRef<'a> {
    /// The element type.
    pub fn elem_type(&self) -> ValueType {
        self.elem
    }

    /// The number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stored bytes of the elements, in the file's byte order (for an `array<bool>`, the
    /// bytes as stored, which may be other than 0 and 1: [`iter`](Self::iter) reads them as
    /// ggml does, non-zero as true).
    pub fn raw_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The byte order of the file the array comes from.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// `array<ELEM>`, recursively for arrays of arrays (see [`ValueRef::type_name`]).
    pub fn type_name(&self) -> String {
        match self.elem {
            ValueType::Array => match self.iter().next() {
                Some(ValueRef::Array(inner)) => format!("array<{}>", inner.type_name()),
                _ => "array<array>".to_owned(),
            },
            t => format!("array<{}>", t.name()),
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> ArrayIter<'a> {
        ArrayIter { array: *self, pos: 0, remaining: self.len }
    }

    /// Whether every string in the array is valid UTF-8 (known since the file was opened; an
    /// array without strings is). ggml accepts string arrays whose strings are not.
    pub fn is_utf8(&self) -> bool {
        self.utf8
    }

    /// The strings of a string array, in order, as stored; `None` if the elements are not
    /// strings. [`GgufStr::to_str`] of each is free when the array [`is_utf8`](Self::is_utf8)
    /// (checked once, in bulk, by the parser).
    pub fn strings(&self) -> Option<impl ExactSizeIterator<Item = GgufStr<'a>> + 'a> {
        if self.elem != ValueType::String {
            return None;
        }
        Some(Strings(self.iter()))
    }

    /// Element `i` of an array of a fixed-size type, without walking; `None` past the end or for
    /// strings and arrays (use [`iter`](Self::iter)).
    pub fn get(&self, i: u64) -> Option<ValueRef<'a>> {
        let size = self.elem.fixed_size()?;
        if i >= self.len {
            return None;
        }
        let start = usize::try_from(i).ok()?.checked_mul(size)?;
        let bytes = self.bytes.get(start..start.checked_add(size)?)?;
        Some(decode_fixed(self.elem, bytes, self.endian))
    }

    /// An owned copy of the whole array.
    pub fn to_owned_array(&self) -> Array {
        macro_rules! collect {
            ($variant:ident, $inner:ident) => {
                Array::$variant(
                    self.iter()
                        .map(|v| match v {
                            ValueRef::$inner(x) => x,
                            _ => Default::default(),
                        })
                        .collect(),
                )
            };
        }
        match self.elem {
            ValueType::U8 => Array::U8(self.bytes.to_vec()),
            ValueType::I8 => collect!(I8, I8),
            ValueType::U16 => collect!(U16, U16),
            ValueType::I16 => collect!(I16, I16),
            ValueType::U32 => collect!(U32, U32),
            ValueType::I32 => collect!(I32, I32),
            ValueType::F32 => collect!(F32, F32),
            ValueType::Bool => collect!(Bool, Bool),
            ValueType::U64 => collect!(U64, U64),
            ValueType::I64 => collect!(I64, I64),
            ValueType::F64 => collect!(F64, F64),
            ValueType::String => {
                Array::String(Strings(self.iter()).map(|s| s.to_string_lossy().into_owned()).collect())
            }
            ValueType::Array => Array::Array(
                self.iter()
                    .map(|v| match v {
                        ValueRef::Array(a) => a.to_owned_array(),
                        _ => Array::U8(Vec::new()),
                    })
                    .collect(),
            ),
        }
    }
}

/// The BOOL bytes of one value that are neither 0 nor 1 ([`Kv::odd_bool_bytes`](crate::Kv::odd_bool_bytes)).
///
/// The spec allows 0 (false) and 1 (true) and calls anything else invalid; ggml's reader
/// (`gguf_reader::read(bool &)`) takes any byte other than 0 as true, and so do this crate's
/// readers. The writer writes such a value back as 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OddBoolBytes {
    /// How many of the value's BOOL bytes (1 for a scalar) are neither 0 nor 1.
    pub count: u64,
    /// The first of them.
    pub first: u8,
    /// The absolute byte offset of the first in the file.
    pub offset: u64,
}

/// The BOOL bytes other than 0 and 1 of `v`, a BOOL or an array (at any depth) stored from
/// absolute offset `start` (for an array, the offset of its elements, after the element type and
/// count); `None` if it has none.
pub(crate) fn odd_bool_bytes(v: ValueRef<'_>, raw_bool: u8, start: u64) -> Option<OddBoolBytes> {
    let mut found = None;
    match v {
        ValueRef::Bool(_) => note_odd(&mut found, raw_bool, start),
        ValueRef::Array(a) => odd_in_array(a, start, &mut found),
        _ => {}
    }
    found
}

fn note_odd(found: &mut Option<OddBoolBytes>, byte: u8, offset: u64) {
    if byte > 1 {
        match found {
            Some(f) => f.count = f.count.saturating_add(1),
            None => *found = Some(OddBoolBytes { count: 1, first: byte, offset }),
        }
    }
}

/// Walks `a` (its elements stored from `start`) for [`odd_bool_bytes`]; nested at most
/// `MAX_DEPTH` levels (the parser's limit), so the recursion is bounded.
fn odd_in_array(a: ArrayRef<'_>, start: u64, found: &mut Option<OddBoolBytes>) {
    match a.elem {
        ValueType::Bool => {
            for (i, &b) in a.bytes.iter().enumerate() {
                note_odd(found, b, start.saturating_add(i as u64));
            }
        }
        ValueType::Array => {
            let mut it = a.iter();
            while let Some((v, at)) = it.next_at() {
                if let ValueRef::Array(inner) = v {
                    // Inner elements start after the inner array's type (4 bytes) and count (8).
                    odd_in_array(inner, start.saturating_add(at as u64).saturating_add(12), found);
                }
            }
        }
        _ => {}
    }
}

/// Decodes one fixed-size value; `bytes` has exactly the type's size (a shorter slice gives 0).
#[inline]
pub(crate) fn decode_fixed(t: ValueType, bytes: &[u8], endian: Endian) -> ValueRef<'static> {
    match t {
        ValueType::U8 => ValueRef::U8(num(bytes, endian)),
        ValueType::I8 => ValueRef::I8(num(bytes, endian)),
        ValueType::Bool => ValueRef::Bool(num::<u8>(bytes, endian) != 0),
        ValueType::U16 => ValueRef::U16(num(bytes, endian)),
        ValueType::I16 => ValueRef::I16(num(bytes, endian)),
        ValueType::U32 => ValueRef::U32(num(bytes, endian)),
        ValueType::I32 => ValueRef::I32(num(bytes, endian)),
        ValueType::F32 => ValueRef::F32(num(bytes, endian)),
        ValueType::U64 => ValueRef::U64(num(bytes, endian)),
        ValueType::I64 => ValueRef::I64(num(bytes, endian)),
        ValueType::F64 => ValueRef::F64(num(bytes, endian)),
        ValueType::String | ValueType::Array => ValueRef::U8(0),
    }
}

/// Iterator over the elements of an [`ArrayRef`]; the one decoder of array elements (it also
/// serves [`ArrayRef::strings`], owned copies and the serde deserializer).
///
/// Fixed-size elements are decoded in place; strings are sliced out of the array's bytes (with
/// the parser's verdict on their UTF-8, see `next_str`); an array of arrays gives each inner array as an [`ArrayRef`], its extent found
/// by the parser's own walk.
#[derive(Clone)]
pub struct ArrayIter<'a> {
    array: ArrayRef<'a>,
    /// Offset of the next element in the array's bytes.
    pos: usize,
    remaining: u64,
}

impl fmt::Debug for ArrayIter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArrayIter").field("array", &self.array).field("remaining", &self.remaining).finish()
    }
}

impl<'a> ArrayIter<'a> {
    /// The next element and its offset in the array's bytes.
    #[inline(always)]
    pub(crate) fn next_at(&mut self) -> Option<(ValueRef<'a>, usize)> {
        if self.remaining == 0 {
            return None;
        }
        let at = self.pos;
        let v = match self.array.elem {
            ValueType::String => self.next_str().map(ValueRef::String),
            ValueType::Array => self.next_array().map(ValueRef::Array),
            t => self.next_fixed(t),
        };
        match v {
            Some(v) => {
                // Not 0 (checked above): the subtraction never saturates.
                self.remaining = self.remaining.saturating_sub(1);
                Some((v, at))
            }
            None => {
                // Not reached for the validated bytes of an opened file.
                self.remaining = 0;
                None
            }
        }
    }

    /// The next element of a string array (`remaining` is not touched).
    ///
    /// Where the array's `utf8` flag is set, the string is marked as UTF-8 without a second check:
    /// every [`ArrayRef`] is made by the parser over the bytes it read (`Layout::value_ref`, and
    /// `next_array` for the inner arrays of those bytes, which inherit the flag), and the parser
    /// sets the flag only when every string of the array passed its check (`parse/array.rs`,
    /// `strings`: one SIMD pass over each run of strings, or one per string). The bytes cannot
    /// change afterwards: a [`Gguf`](crate::Gguf) holds its source (a slice or `Vec` it borrows
    /// or owns, a read-only mapping whose file must not change, as
    /// [`Gguf::open`](crate::Gguf::open) documents). Bounds are still checked: a malformed length
    /// gives `None`, never a read outside the array.
    #[inline(always)]
    fn next_str(&mut self) -> Option<GgufStr<'a>> {
        let (bytes, end) = string_at(self.array.bytes, self.pos, self.array.endian)?;
        self.pos = end;
        if self.array.utf8 {
            // The check the parser made, again where release checks are on (`--profile hostile`).
            debug_assert!(std::str::from_utf8(bytes).is_ok(), "a string array element that is not UTF-8");
            Some(GgufStr::from_checked(bytes))
        } else {
            Some(GgufStr::from_bytes(bytes))
        }
    }

    #[inline(never)]
    fn next_array(&mut self) -> Option<ArrayRef<'a>> {
        let (bytes, endian) = (self.array.bytes, self.array.endian);
        let start = self.pos.checked_add(12)?;
        let head = bytes.get(self.pos..start)?;
        let elem = ValueType::from_id(num(head, endian))?;
        let len = num(head.get(4..)?, endian);
        let end = elements_end(bytes, start, elem, len, endian);
        self.pos = end;
        Some(ArrayRef { elem, len, bytes: bytes.get(start..end)?, endian, utf8: self.array.utf8 })
    }

    #[inline(always)]
    fn next_fixed(&mut self, t: ValueType) -> Option<ValueRef<'a>> {
        let end = self.pos.checked_add(t.fixed_size()?)?;
        let v = decode_fixed(t, self.array.bytes.get(self.pos..end)?, self.array.endian);
        self.pos = end;
        Some(v)
    }
}

impl<'a> Iterator for ArrayIter<'a> {
    type Item = ValueRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<ValueRef<'a>> {
        self.next_at().map(|(v, _)| v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for ArrayIter<'_> {}

/// The strings of a string array ([`ArrayRef::strings`]).
struct Strings<'a>(ArrayIter<'a>);

impl<'a> Iterator for Strings<'a> {
    type Item = GgufStr<'a>;

    #[inline]
    fn next(&mut self) -> Option<GgufStr<'a>> {
        if self.0.remaining == 0 {
            return None;
        }
        let s = self.0.next_str();
        // Not 0 (checked above): the subtraction never saturates.
        self.0.remaining = if s.is_some() { self.0.remaining.saturating_sub(1) } else { 0 };
        s
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Strings<'_> {}

/// An owned metadata value: every GGUF type at its exact width.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// u8.
    U8(u8),
    /// i8.
    I8(i8),
    /// u16.
    U16(u16),
    /// i16.
    I16(i16),
    /// u32.
    U32(u32),
    /// i32.
    I32(i32),
    /// f32.
    F32(f32),
    /// bool.
    Bool(bool),
    /// string.
    String(String),
    /// array.
    Array(Array),
    /// u64.
    U64(u64),
    /// i64.
    I64(i64),
    /// f64.
    F64(f64),
}

/// An owned, typed array: one element type for all elements, so an empty array keeps its type.
#[derive(Clone, Debug, PartialEq)]
pub enum Array {
    /// `array<u8>`.
    U8(Vec<u8>),
    /// `array<i8>`.
    I8(Vec<i8>),
    /// `array<u16>`.
    U16(Vec<u16>),
    /// `array<i16>`.
    I16(Vec<i16>),
    /// `array<u32>`.
    U32(Vec<u32>),
    /// `array<i32>`.
    I32(Vec<i32>),
    /// `array<f32>`.
    F32(Vec<f32>),
    /// `array<bool>`.
    Bool(Vec<bool>),
    /// `array<string>`.
    String(Vec<String>),
    /// `array<array<…>>`: each inner array has its own element type.
    Array(Vec<Array>),
    /// `array<u64>`.
    U64(Vec<u64>),
    /// `array<i64>`.
    I64(Vec<i64>),
    /// `array<f64>`.
    F64(Vec<f64>),
}

impl Value {
    /// The stored type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Self::U8(_) => ValueType::U8,
            Self::I8(_) => ValueType::I8,
            Self::U16(_) => ValueType::U16,
            Self::I16(_) => ValueType::I16,
            Self::U32(_) => ValueType::U32,
            Self::I32(_) => ValueType::I32,
            Self::F32(_) => ValueType::F32,
            Self::Bool(_) => ValueType::Bool,
            Self::String(_) => ValueType::String,
            Self::Array(_) => ValueType::Array,
            Self::U64(_) => ValueType::U64,
            Self::I64(_) => ValueType::I64,
            Self::F64(_) => ValueType::F64,
        }
    }
}

impl Array {
    /// The element type.
    pub fn elem_type(&self) -> ValueType {
        match self {
            Self::U8(_) => ValueType::U8,
            Self::I8(_) => ValueType::I8,
            Self::U16(_) => ValueType::U16,
            Self::I16(_) => ValueType::I16,
            Self::U32(_) => ValueType::U32,
            Self::I32(_) => ValueType::I32,
            Self::F32(_) => ValueType::F32,
            Self::Bool(_) => ValueType::Bool,
            Self::String(_) => ValueType::String,
            Self::Array(_) => ValueType::Array,
            Self::U64(_) => ValueType::U64,
            Self::I64(_) => ValueType::I64,
            Self::F64(_) => ValueType::F64,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::I8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::I16(v) => v.len(),
            Self::U32(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::F32(v) => v.len(),
            Self::Bool(v) => v.len(),
            Self::String(v) => v.len(),
            Self::Array(v) => v.len(),
            Self::U64(v) => v.len(),
            Self::I64(v) => v.len(),
            Self::F64(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

macro_rules! from_scalar {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value { Value::$v(x) }
        }
        impl From<Vec<$t>> for Value {
            fn from(x: Vec<$t>) -> Value { Value::Array(Array::$v(x)) }
        }
        impl From<Vec<$t>> for Array {
            fn from(x: Vec<$t>) -> Array { Array::$v(x) }
        }
    )*};
}
from_scalar!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32,
    bool => Bool, String => String, u64 => U64, i64 => I64, f64 => F64);

impl From<&str> for Value {
    fn from(x: &str) -> Value {
        Value::String(x.to_owned())
    }
}

impl From<Vec<&str>> for Value {
    fn from(x: Vec<&str>) -> Value {
        Value::Array(Array::String(x.into_iter().map(str::to_owned).collect()))
    }
}

impl From<Array> for Value {
    fn from(x: Array) -> Value {
        Value::Array(x)
    }
}

impl From<ValueRef<'_>> for Value {
    fn from(x: ValueRef<'_>) -> Value {
        x.to_owned_value()
    }
}
