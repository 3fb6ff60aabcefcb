//! The registry against gguf-py and llama.cpp: `tests/data/standard-keys.json` (made by
//! `tests/py/make_standard_keys.py` from gguf-py 0.19.0 and llama.cpp's `src/llama-arch.cpp`)
//! holds gguf-py's `gguf.constants.Keys` in its order, the type each `GGUFWriter.add_*` method
//! writes, and concrete keys (every gguf-py template and every llama.cpp key name filled in with
//! llama.cpp's architecture names, and near misses of each) with the template each is an instance
//! of. What llama.cpp's loader accepts for a key is its `llama_model_loader` (`get_key`, `get_arr`,
//! `get_key_or_arr` in `src/llama-model-loader.cpp`), transcribed below.
//!
//! Unit tests rather than ones of `tests/suite`, so that a mutation run of the registry
//! (`TESTING.md`) needs only the library's test build.

use serde_json::Value;

use super::{has_empty_segment, is_split_key, lookup, KeyType, STANDARD_KEYS};
use crate::format::ValueType;

const DATA: &str = include_str!("../../../tests/data/standard-keys.json");

fn data() -> Value {
    serde_json::from_str(DATA).unwrap()
}

fn str_at(v: &Value, i: usize) -> Option<&str> {
    v[i].as_str()
}

/// Every value type, by id.
fn all_types() -> impl Iterator<Item = ValueType> {
    (0..13).map(|id| ValueType::from_id(id).unwrap())
}

#[test]
fn registry_is_gguf_pys_key_list_in_its_order() {
    let d = data();
    let theirs: Vec<(&str, &str)> =
        d["keys"].as_array().unwrap().iter().map(|k| (str_at(k, 0).unwrap(), str_at(k, 1).unwrap())).collect();
    let ours: Vec<(&str, &str)> = STANDARD_KEYS.iter().map(|s| (s.gguf_py, s.key)).collect();
    assert_eq!(ours, theirs);
}

#[test]
fn concrete_keys_resolve_to_their_gguf_py_template() {
    let d = data();
    let lookups = d["lookups"].as_array().unwrap();
    let (mut resolved, mut refused) = (0, 0);
    for e in lookups {
        let key = str_at(e, 0).unwrap();
        let want = str_at(e, 1).map(|template| (template, str_at(e, 2)));
        let got = lookup(key).map(|m| (m.spec.key, m.arch));
        assert_eq!(got, want, "lookup({key:?})");
        if want.is_some() {
            resolved += 1;
        } else {
            refused += 1;
        }
    }
    // The data covers both sides: every template, each architecture, and more misses than hits.
    assert!(resolved >= 1200 && refused >= 2000, "{resolved} resolved, {refused} refused");
}

#[test]
fn types_take_what_gguf_py_writes() {
    let d = data();
    let name = |v: &Value| ValueType::from_name(v.as_str().unwrap()).unwrap();
    let writes = d["writes"].as_array().unwrap();
    assert!(writes.len() >= 245, "{} writes", writes.len());
    for w in writes {
        let template = str_at(w, 0).unwrap();
        let (ty, element) = (name(&w[1]), (!w[2].is_null()).then(|| name(&w[2])));
        let spec = STANDARD_KEYS.iter().find(|s| s.key == template).unwrap_or_else(|| panic!("{template}"));
        assert!(spec.ty.accepts(ty, element), "{template}: {ty} {element:?} refused by {}", spec.ty);
        // One value written: the registry's scalar type is the one gguf-py wrote. An array of a
        // per-layer key: its element type, or i32 (gguf-py's integer lists) or bool (the
        // sliding-window pattern) for a u32 key.
        match (spec.ty, element) {
            (_, None) => assert_eq!(spec.ty.scalar(), Some(ty), "{template}"),
            (KeyType::Array(t), Some(e)) => assert_eq!((spec.ty.scalar(), t), (None, e), "{template}"),
            (KeyType::PerLayer(t), Some(e)) => assert!(
                t == e || (t == ValueType::U32 && matches!(e, ValueType::I32 | ValueType::Bool)),
                "{template}: {e} for {t}"
            ),
            (KeyType::Scalar(_), Some(e)) => panic!("{template}: gguf-py writes an array of {e}"),
        }
    }
}

/// What `llama_model_loader::get_arr` (`src/llama-model-loader.cpp`) takes into a `T` of
/// `want` from an array of `elem`: its switch on the element type. Into a `std::array` (the
/// per-layer values of `get_key_or_arr`) bool elements count as integers; any other element type
/// ("is not a string/float32/uint32/int32/uint64 array") or another `T` ("has wrong array element
/// type") throws.
fn get_arr_takes(elem: ValueType, want: ValueType, into_std_array: bool) -> bool {
    use ValueType::*;
    match elem {
        Bool if into_std_array => matches!(want, I32 | U32),
        U32 | I32 => matches!(want, I32 | U32),
        U64 => want == U64,
        F32 => want == F32,
        String => want == String,
        _ => false,
    }
}

#[test]
fn accepts_is_llama_cpp_loaders_check() {
    use ValueType::*;
    // Every value a file can hold: a scalar of each type, an array of each element type.
    let values: Vec<(ValueType, Option<ValueType>)> = all_types()
        .filter(|&t| t != Array)
        .map(|t| (t, None))
        .chain(all_types().filter(|&t| t != Array).map(|e| (Array, Some(e))))
        .collect();
    let mut checked = 0;
    for (ty, element) in values {
        // `get_key<T>` (GKV::get_kv): "key … has wrong type … but expected type …" unless the
        // stored type is exactly T's.
        for t in all_types().filter(|&t| t != Array) {
            assert_eq!(KeyType::Scalar(t).accepts(ty, element), ty == t, "scalar {t}: {ty} {element:?}");
            checked += 1;
        }
        // `get_arr` into a `std::vector<T>`: an array whose element type its switch takes for T.
        for t in [I32, U32, U64, F32, String] {
            let want = ty == Array && get_arr_takes(element.unwrap(), t, false);
            assert_eq!(KeyType::Array(t).accepts(ty, element), want, "array {t}: {ty} {element:?}");
            checked += 1;
        }
        // `get_key_or_arr` into a `std::array<T, N>` (T int, uint32_t, float): an array goes to
        // `get_arr`, anything else to `get_key<T>`.
        for t in [I32, U32, F32] {
            let want = if ty == Array { get_arr_takes(element.unwrap(), t, true) } else { ty == t };
            assert_eq!(KeyType::PerLayer(t).accepts(ty, element), want, "per layer {t}: {ty} {element:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 24 * (12 + 5 + 3));
}

#[test]
fn scalar_and_display() {
    use ValueType::*;
    for t in all_types().filter(|&t| t != Array) {
        assert_eq!(KeyType::Scalar(t).scalar(), Some(t));
        assert_eq!(KeyType::PerLayer(t).scalar(), Some(t));
        assert_eq!(KeyType::Array(t).scalar(), None);
    }
    // The spelling the docs give (`gguf inspect`'s for arrays).
    assert_eq!(KeyType::Scalar(F32).to_string(), "f32");
    assert_eq!(KeyType::Array(String).to_string(), "array<string>");
    assert_eq!(KeyType::PerLayer(U32).to_string(), "u32 or array<u32>");
}

#[test]
fn split_keys_are_gguf_pys_split_class() {
    // gguf-py's `Keys.Split` (`split.no`, `split.count`, `split.tensors.count`: llama.cpp's
    // `LLM_KV_SPLIT_*`, what gguf-split writes), and no other key.
    let d = data();
    let mut split = 0;
    for k in d["keys"].as_array().unwrap() {
        let (class, key) = (str_at(k, 0).unwrap(), str_at(k, 1).unwrap());
        assert_eq!(is_split_key(key), class.starts_with("Split."), "{key}");
        split += usize::from(is_split_key(key));
    }
    assert_eq!(split, 3);
    for e in d["lookups"].as_array().unwrap() {
        let key = str_at(e, 0).unwrap();
        assert_eq!(is_split_key(key), key.starts_with("split.") && str_at(e, 1) == Some(key), "{key}");
    }
}

#[test]
fn empty_segments() {
    // No gguf-py key, filled in, has an empty segment, except where a chat template's `{name}`
    // (any text) has one.
    let d = data();
    let mut keys = 0;
    for e in d["lookups"].as_array().unwrap() {
        let key = str_at(e, 0).unwrap();
        if str_at(e, 1).is_some_and(|t| !t.contains("{name}")) {
            assert!(!has_empty_segment(key), "{key}");
            keys += 1;
        }
    }
    assert!(keys > 1000, "{keys}");
    for k in ["a..b", "a.", ".x", ".", "..", "general.", ".general.name"] {
        assert!(has_empty_segment(k), "{k}");
    }
    // The empty key is not counted (it is refused on its own).
    for k in ["", "a", "a.b", "general.base_model.0.name", "é.x"] {
        assert!(!has_empty_segment(k), "{k}");
    }
}
