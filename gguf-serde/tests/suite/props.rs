//! proptest strategies for metadata values, shared by the two property tests of this binary:
//! `roundtrip_props.rs` (the container: every bit pattern of the floats, NaN payloads included,
//! since it keeps bytes) and `serde_proptest.rs` (the serde mapping: no NaN, since its round trip
//! is checked with `==`).

use gguf_serde::{Array, Value};
use proptest::prelude::*;

/// Whether the floats may be NaN.
#[derive(Clone, Copy, Debug)]
pub enum Nan {
    /// Any bit pattern, NaN payloads included.
    Any,
    /// Any bit pattern that is not NaN (infinities and signed zeros included).
    Never,
}

/// f32 of every bit pattern (less NaN for [`Nan::Never`]).
pub fn f32s(nan: Nan) -> BoxedStrategy<f32> {
    let s = any::<u32>().prop_map(f32::from_bits);
    match nan {
        Nan::Any => s.boxed(),
        Nan::Never => s.prop_filter("not NaN", |x| !x.is_nan()).boxed(),
    }
}

/// f64 of every bit pattern (less NaN for [`Nan::Never`]).
pub fn f64s(nan: Nan) -> BoxedStrategy<f64> {
    let s = any::<u64>().prop_map(f64::from_bits);
    match nan {
        Nan::Any => s.boxed(),
        Nan::Never => s.prop_filter("not NaN", |x| !x.is_nan()).boxed(),
    }
}

/// Strings of 0 to 9 arbitrary chars (any Unicode scalar value, NUL and newlines included).
pub fn strings() -> impl Strategy<Value = String> + Clone {
    prop::collection::vec(any::<char>(), 0..10).prop_map(String::from_iter)
}

/// Arrays of 0 to 5 elements of every element type, and arrays of such arrays nested up to
/// `depth` levels more (empty arrays and empty inner arrays included).
pub fn arrays(nan: Nan, depth: u32) -> BoxedStrategy<Array> {
    use prop::collection::vec;
    let n = 0..6;
    let leaf = prop_oneof![
        vec(any::<u8>(), n.clone()).prop_map(Array::U8),
        vec(any::<i8>(), n.clone()).prop_map(Array::I8),
        vec(any::<u16>(), n.clone()).prop_map(Array::U16),
        vec(any::<i16>(), n.clone()).prop_map(Array::I16),
        vec(any::<u32>(), n.clone()).prop_map(Array::U32),
        vec(any::<i32>(), n.clone()).prop_map(Array::I32),
        vec(f32s(nan), n.clone()).prop_map(Array::F32),
        vec(any::<bool>(), n.clone()).prop_map(Array::Bool),
        vec(strings(), n.clone()).prop_map(Array::String),
        vec(any::<u64>(), n.clone()).prop_map(Array::U64),
        vec(any::<i64>(), n.clone()).prop_map(Array::I64),
        vec(f64s(nan), n).prop_map(Array::F64),
    ];
    leaf.prop_recursive(depth, 48, 4, |inner| vec(inner, 0..4).prop_map(Array::Array)).boxed()
}

/// Values of all 13 GGUF types, arrays as [`arrays`] makes them.
pub fn values(nan: Nan, depth: u32) -> BoxedStrategy<Value> {
    prop_oneof![
        any::<u8>().prop_map(Value::U8),
        any::<i8>().prop_map(Value::I8),
        any::<u16>().prop_map(Value::U16),
        any::<i16>().prop_map(Value::I16),
        any::<u32>().prop_map(Value::U32),
        any::<i32>().prop_map(Value::I32),
        f32s(nan).prop_map(Value::F32),
        any::<bool>().prop_map(Value::Bool),
        strings().prop_map(Value::String),
        any::<u64>().prop_map(Value::U64),
        any::<i64>().prop_map(Value::I64),
        f64s(nan).prop_map(Value::F64),
        arrays(nan, depth).prop_map(Value::Array),
    ]
    .boxed()
}
