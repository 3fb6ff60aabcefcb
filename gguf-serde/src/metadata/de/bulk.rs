//! Numeric arrays read into a `Vec` of their stored type in one copy ([`stored_vec`]), from a
//! plain `Vec<f32>` (or `Vec<i32>`, …) field of a plain serde derive; string arrays read into a
//! `Vec<String>` in one pass, without a visitor call per string ([`strings`]), and into a
//! [`StringArray`](crate::StringArray) in one pass over the stored bytes ([`string_array`]).
//!
//! serde has no specialization: `Vec<T>`'s `Deserialize` asks for a sequence with its own
//! visitor and pushes the elements one by one. [`ValueDe::deserialize_seq`](super::ValueDe)
//! recognizes that visitor by its type: when it is exactly the one `Vec<T>` uses and `T` is the
//! array's stored element type (a `Vec<f32>` from an `array<f32>`), the array's stored bytes are
//! copied into the vector at once (and byte-swapped for a big-endian file) instead of visiting
//! every element. The result is the one the element-wise visit gives, bit for bit: that visitor
//! keeps each element as the deserializer hands it (`visit_f32(x)` gives `x`), and an element of
//! the stored type is handed as it is stored.
//!
//! How the visitor is recognized: the `TypeId` of the visitor `Vec<T>` passes to
//! `deserialize_seq` is learnt by deserializing a `Vec<T>` from a probe deserializer that records
//! it ([`vec_visitor_id`]), and compared with the visitor at hand with the `typeid` crate (a
//! `TypeId` of a type that may hold lifetimes; serde's visitor of `Vec<f32>` holds none, so equal
//! ids mean the same type; a `Box<[f32]>`, which serde reads through `Vec<f32>`, has that visitor
//! too). Any other visitor (a `VecDeque`, a user's own `visit_seq`, a `Vec<f64>` from an
//! `array<f32>`, a `Vec<Box<str>>`) is visited element by element as before.

use std::any::TypeId;
use std::mem::ManuallyDrop;

use super::*;

/// A numeric element type whose GGUF type is `TYPE` and whose `Vec` can be filled in one copy.
trait Elem: bytemuck::Pod + 'static {
    /// The stored element type this Rust type is.
    const TYPE: ValueType;
    /// The `TypeId` of the visitor `Vec<Self>`'s `Deserialize` uses ([`vec_visitor_id`]).
    fn vec_visitor_id() -> Option<TypeId>;
    /// Reverses the bytes of every element (from one byte order to the other).
    fn swap_bytes(v: &mut [Self]);
}

macro_rules! elems {
    ($($t:ty => $v:ident, $bits:ty);* $(;)?) => {$(
        impl Elem for $t {
            const TYPE: ValueType = ValueType::$v;
            fn vec_visitor_id() -> Option<TypeId> {
                // Once per element type (the probe allocates nothing, but a lock-free read is
                // cheaper than a call into serde for every inner array of an array of arrays).
                static ID: std::sync::OnceLock<Option<TypeId>> = std::sync::OnceLock::new();
                *ID.get_or_init(vec_visitor_id::<$t>)
            }
            fn swap_bytes(v: &mut [Self]) {
                for x in bytemuck::cast_slice_mut::<$t, $bits>(v) {
                    *x = x.swap_bytes();
                }
            }
        }
    )*};
}
elems!(u8 => U8, u8; i8 => I8, u8; u16 => U16, u16; i16 => I16, u16; u32 => U32, u32; i32 => I32, u32;
    u64 => U64, u64; i64 => I64, u64; f32 => F32, u32; f64 => F64, u64);

/// The whole array as `V::Value` if `V` is the visitor of `Vec<T>` for `T` the stored element
/// type of `a` (`u8` … `f64`, or `String` for strings; not `bool` or arrays), else `None` (visit
/// the elements).
#[inline]
pub(super) fn stored_vec<'de, V: Visitor<'de>>(a: ArrayRef<'de>) -> Option<V::Value> {
    match a.elem_type() {
        ValueType::U8 => copy::<u8, V>(a),
        ValueType::I8 => copy::<i8, V>(a),
        ValueType::U16 => copy::<u16, V>(a),
        ValueType::I16 => copy::<i16, V>(a),
        ValueType::U32 => copy::<u32, V>(a),
        ValueType::I32 => copy::<i32, V>(a),
        ValueType::U64 => copy::<u64, V>(a),
        ValueType::I64 => copy::<i64, V>(a),
        ValueType::F32 => copy::<f32, V>(a),
        ValueType::F64 => copy::<f64, V>(a),
        ValueType::String => strings::<V>(a),
        ValueType::Bool | ValueType::Array => None,
    }
}

/// The whole `array<string>` as `V::Value` if `V` is the visitor of `Vec<String>` and every string
/// of `a` is UTF-8 (the parser's verdict, [`ArrayRef::is_utf8`]), else `None` (visit the
/// elements: a string that is not UTF-8 fails there, with its key, index and offset).
///
/// The vector is allocated once at the array's length (serde's own visitor reserves at most
/// 1 MiB, 43,690 `String`s, and grows from there), and each string is copied into a `String` of
/// exactly its length, in one pass over the stored elements with no visitor call per element.
/// The strings are the ones the element-wise visit gives (serde's `String` visitor copies the
/// `&str` it is handed, which is the stored string).
fn strings<'de, V: Visitor<'de>>(a: ArrayRef<'de>) -> Option<V::Value> {
    static ID: std::sync::OnceLock<Option<TypeId>> = std::sync::OnceLock::new();
    let id = (*ID.get_or_init(vec_visitor_id::<String>))?;
    // `V` is `Vec<String>`'s visitor, a type without lifetimes, so an equal id is that very type,
    // and its `Value` is `Vec<String>` (checked again by `into_value`).
    if !a.is_utf8() || id != typeid::of::<V>() || typeid::of::<V::Value>() != TypeId::of::<Vec<String>>() {
        return None;
    }
    let strings = a.strings()?;
    // The array's length is that of the validated file (every string paid at least 8 bytes in it).
    let mut v: Vec<String> = Vec::with_capacity(strings.len());
    for s in strings {
        // Free: the parser checked every string of the array (`is_utf8` above).
        v.push(String::from(s.to_str().ok()?));
    }
    if u64::try_from(v.len()).ok() != Some(a.len()) {
        return None;
    }
    into_value::<Vec<String>, V>(v)
}

/// The whole `array<string>` as `V::Value` if `V` is [`StringArray`](crate::StringArray)'s
/// visitor and the parser found every string of `a` UTF-8 ([`ArrayRef::is_utf8`]): one pass over
/// the stored elements, no second UTF-8 check (`StringArray::from_utf8_array`). `None` otherwise
/// (the raw-elements protocol of [`STRING_ARRAY_TOKEN`], which checks them, or the sequence).
pub(super) fn string_array<'de, V: Visitor<'de>>(a: ArrayRef<'de>) -> Option<V::Value> {
    // `ArrayVisitor` has no lifetimes: an equal id is that very type.
    if typeid::of::<V>() != TypeId::of::<crate::metadata::string_array::ArrayVisitor>() {
        return None;
    }
    into_value::<crate::StringArray, V>(crate::StringArray::from_utf8_array(&a)?)
}

/// `v` as `V::Value` if that is the type `W` (a type without lifetimes), else `None`.
fn into_value<'de, W: 'static, V: Visitor<'de>>(v: W) -> Option<V::Value> {
    if typeid::of::<V::Value>() != TypeId::of::<W>() {
        return None;
    }
    let v = ManuallyDrop::new(v);
    // SAFETY: `V::Value` is `W` (its `TypeId`, checked above, is that of the 'static type `W`,
    // which no other type shares, with or without lifetimes): the bits of `v` are a valid
    // `V::Value`, and `v` is not dropped, so the value has one owner.
    #[allow(unsafe_code)]
    Some(unsafe { std::mem::transmute_copy::<W, V::Value>(&v) })
}

fn copy<'de, T: Elem, V: Visitor<'de>>(a: ArrayRef<'de>) -> Option<V::Value> {
    debug_assert_eq!(a.elem_type(), T::TYPE);
    // `V` is `Vec<T>`'s visitor, a type without lifetimes, so an equal id is that very type, and
    // its `Value` is `Vec<T>` (checked too).
    if T::vec_visitor_id()? != typeid::of::<V>() || typeid::of::<V::Value>() != TypeId::of::<Vec<T>>() {
        return None;
    }
    let size = std::mem::size_of::<T>();
    let bytes = a.raw_bytes();
    // A validated array holds exactly `len` elements; anything else is visited (and fails there).
    if u64::try_from(bytes.len() / size).ok() != Some(a.len()) || !bytes.len().is_multiple_of(size) {
        return None;
    }
    // One copy of the stored bytes (not aligned for `T` in general) into a vector of exactly
    // their size, not zeroed first (`vec![0; n]` is a `calloc`, which clears memory the heap
    // reuses: a second pass over it); then, for a file whose byte order is not the host's, one
    // pass reversing each element's bytes.
    let mut v: Vec<T> = Vec::with_capacity(bytes.len() / size);
    v.extend(bytes.chunks_exact(size).map(bytemuck::pod_read_unaligned::<T>));
    let host = if cfg!(target_endian = "big") { Endian::Big } else { Endian::Little };
    if a.endian() != host {
        T::swap_bytes(&mut v);
    }
    into_value::<Vec<T>, V>(v)
}

/// The `TypeId` (see `typeid::of`) of the visitor with which `Vec<T>`'s `Deserialize` calls
/// `deserialize_seq`, or `None` if it asks for anything else.
fn vec_visitor_id<T: for<'de> Deserialize<'de>>() -> Option<TypeId> {
    match Vec::<T>::deserialize(Probe) {
        Err(Stop(id)) => id,
        Ok(_) => None,
    }
}

/// A deserializer that answers `deserialize_seq` with an error holding its visitor's type, and
/// every other request with an error holding nothing.
struct Probe;

/// The probe's answer.
#[derive(Debug)]
struct Stop(Option<TypeId>);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Stop(None)
    }
}

impl<'de> de::Deserializer<'de> for Probe {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Stop> {
        Err(Stop(None))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, Stop> {
        Err(Stop(Some(typeid::of::<V>())))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct tuple tuple_struct map struct enum identifier
        ignored_any
    }
}
