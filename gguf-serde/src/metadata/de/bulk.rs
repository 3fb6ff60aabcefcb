//! Numeric arrays read into a `Vec` of their stored type in one copy ([`stored_vec`]), from a
//! plain `Vec<f32>` (or `Vec<i32>`, …) field of a plain serde derive.
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
//! ids mean the same type). Any other visitor (a `VecDeque`, a `Box<[f32]>`'s, a user's own
//! `visit_seq`, a `Vec<f64>` from an `array<f32>`) is visited element by element as before.

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
/// type of `a` (`u8` … `f64`; not `bool`, strings or arrays), else `None` (visit the elements).
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
        ValueType::Bool | ValueType::String | ValueType::Array => None,
    }
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
    // One copy of the stored bytes into a zeroed vector (fresh pages of the allocator), then, for
    // a file whose byte order is not the host's, one pass reversing each element's bytes.
    let mut v: Vec<T> = vec![T::zeroed(); bytes.len() / size];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
    let host = if cfg!(target_endian = "big") { Endian::Big } else { Endian::Little };
    if a.endian() != host {
        T::swap_bytes(&mut v);
    }
    let v = ManuallyDrop::new(v);
    // SAFETY: `V::Value` is `Vec<T>` (its `TypeId`, checked above, is that of the 'static type
    // `Vec<T>`, which no other type shares): the bits of `v` are a valid `V::Value`, and `v`
    // is not dropped, so the vector has one owner.
    #[allow(unsafe_code)]
    Some(unsafe { std::mem::transmute_copy::<Vec<T>, V::Value>(&v) })
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
