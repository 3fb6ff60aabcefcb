//! Property tests: random `Value` trees under random nested dotted keys (also with values at
//! keys that prefix others), and fixed struct types with random field values (maps of structs,
//! maps that may be empty, a value beside the keys under it), round-trip exactly; the container
//! reader (no serde) sees the same keys and values that were serialized.

use std::collections::{BTreeMap, HashMap};

use gguf_serde::{from_slice, to_vec, Gguf, Value};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::props::{self, Nan};

fn finite_f32() -> BoxedStrategy<f32> {
    props::f32s(Nan::Never)
}

fn finite_f64() -> BoxedStrategy<f64> {
    props::f64s(Nan::Never)
}

fn value() -> BoxedStrategy<Value> {
    // No NaN: the round trip through serde is checked with `==`.
    props::values(Nan::Never, 2)
}

/// A tree of keys: leaves are values, nodes are maps of key segments.
#[derive(Debug, Clone)]
enum Tree {
    Leaf(Value),
    Node(BTreeMap<String, Tree>),
}

impl Serialize for Tree {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Tree::Leaf(v) => v.serialize(s),
            Tree::Node(m) => m.serialize(s),
        }
    }
}

fn tree() -> impl Strategy<Value = BTreeMap<String, Tree>> {
    let segment = "[a-z_][a-z0-9_]{0,5}";
    let t = value()
        .prop_map(Tree::Leaf)
        .prop_recursive(4, 24, 4, move |inner| prop::collection::btree_map(segment, inner, 1..4).prop_map(Tree::Node));
    prop::collection::btree_map(segment, t, 1..6)
}

fn flatten(prefix: &str, m: &BTreeMap<String, Tree>, out: &mut Vec<(String, Value)>) {
    for (k, t) in m {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match t {
            Tree::Leaf(v) => out.push((key, v.clone())),
            Tree::Node(sub) => flatten(&key, sub, out),
        }
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Fixed {
    a: u8,
    b: i16,
    c: u64,
    d: f32,
    e: Option<i64>,
    s: String,
    #[serde(with = "gguf_serde::elem::u32")]
    ids: Vec<u32>,
    #[serde(with = "gguf_serde::elem::string")]
    names: Vec<String>,
    inner: Inner,
    #[serde(rename = "x.y.z")]
    deep: bool,
    mode: Mode,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Inner {
    m: Vec<Vec<i16>>,
    t: (u8, u8, u8),
    f: Option<f64>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone, Copy)]
enum Mode {
    #[serde(rename = "spm")]
    Spm,
    #[serde(rename = "bpe")]
    Bpe,
}

fn fixed() -> impl Strategy<Value = Fixed> {
    let inner = (
        prop::collection::vec(prop::collection::vec(any::<i16>(), 1..4), 0..4)
            .prop_filter("non-empty", |v| !v.is_empty()),
        any::<(u8, u8, u8)>(),
        proptest::option::of(finite_f64()),
    )
        .prop_map(|(m, t, f)| Inner { m, t, f });
    (
        (any::<u8>(), any::<i16>(), any::<u64>(), finite_f32(), proptest::option::of(any::<i64>()), ".{0,10}"),
        (prop::collection::vec(any::<u32>(), 0..5), prop::collection::vec(".{0,4}", 0..5)),
        inner,
        any::<bool>(),
        prop_oneof![Just(Mode::Spm), Just(Mode::Bpe)],
    )
        .prop_map(|((a, b, c, d, e, s), (ids, names), inner, deep, mode)| Fixed {
            a,
            b,
            c,
            d,
            e,
            s,
            ids,
            names,
            inner,
            deep,
            mode,
        })
}

/// A tree whose inner nodes may hold a value at their own key too (`a` beside `a.b`).
#[derive(Debug, Clone)]
struct PTree(Option<Value>, BTreeMap<String, PTree>);

fn prefix_tree() -> impl Strategy<Value = BTreeMap<String, PTree>> {
    let segment = "[a-z_][a-z0-9_]{0,3}";
    let t = value().prop_map(|v| PTree(Some(v), BTreeMap::new())).prop_recursive(3, 24, 3, move |inner| {
        (proptest::option::of(value()), prop::collection::btree_map(segment, inner, 1..3))
            .prop_map(|(v, m)| PTree(v, m))
    });
    prop::collection::btree_map(segment, t, 1..5)
}

fn flatten_prefix(prefix: &str, m: &BTreeMap<String, PTree>, out: &mut BTreeMap<String, Value>) {
    for (k, PTree(v, sub)) in m {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        if let Some(v) = v {
            out.insert(key.clone(), v.clone());
        }
        flatten_prefix(&key, sub, out);
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Expert {
    dim: u32,
    gate: Option<f32>,
    #[serde(rename = "ffn.kind")]
    kind: String,
}

/// Maps of structs, a map that may be empty, and a value beside the keys under it.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Maps {
    experts: BTreeMap<String, Expert>,
    blk: HashMap<u32, Expert>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    extra: BTreeMap<String, u8>,
    template: String,
    #[serde(rename = "template.")]
    named: BTreeMap<String, String>,
}

fn expert() -> impl Strategy<Value = Expert> {
    (any::<u32>(), proptest::option::of(finite_f32()), ".{0,6}").prop_map(|(dim, gate, kind)| Expert {
        dim,
        gate,
        kind,
    })
}

fn maps() -> impl Strategy<Value = Maps> {
    let seg = "[a-z_][a-z0-9_]{0,5}";
    (
        prop::collection::btree_map(seg, expert(), 1..4),
        prop::collection::hash_map(any::<u32>(), expert(), 1..4),
        prop::collection::btree_map(seg, any::<u8>(), 0..3),
        ".{0,8}",
        prop::collection::btree_map(seg, ".{0,8}", 1..3),
    )
        .prop_map(|(experts, blk, extra, template, named)| Maps { experts, blk, extra, template, named })
}

proptest! {
    #[test]
    fn prefix_trees_round_trip(t in prefix_tree()) {
        let mut expected = BTreeMap::new();
        flatten_prefix("", &t, &mut expected);
        let bytes = to_vec(&expected).unwrap();
        let file = Gguf::from_slice(&bytes).unwrap();
        let stored: Vec<(String, Value)> =
            file.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect();
        prop_assert_eq!(&stored, &expected.clone().into_iter().collect::<Vec<_>>());
        let back: BTreeMap<String, Value> = from_slice(&bytes).unwrap();
        prop_assert_eq!(back, expected);
    }

    #[test]
    fn maps_of_structs_round_trip(m in maps()) {
        let bytes = to_vec(&m).unwrap();
        prop_assert_eq!(from_slice::<Maps>(&bytes).unwrap(), m.clone());
        let file = Gguf::from_slice(&bytes).unwrap();
        for (k, e) in &m.experts {
            prop_assert_eq!(file.get(format!("experts.{k}.dim")), Some(gguf_serde::ValueRef::U32(e.dim)));
        }
        for (k, t) in &m.named {
            prop_assert_eq!(file.get(format!("template.{k}")).and_then(|v| v.as_str()), Some(t.as_str()));
        }
        prop_assert_eq!(file.get("template").and_then(|v| v.as_str()), Some(m.template.as_str()));
        prop_assert_eq!(file.metadata().any(|kv| kv.key.starts_with("extra.")), !m.extra.is_empty());
        // An empty map that is not left out is refused, naming it.
        let empty = Maps { experts: BTreeMap::new(), ..m };
        let e = to_vec(&empty).unwrap_err();
        prop_assert_eq!(e.key(), Some("experts"));
    }

    #[test]
    fn value_trees_round_trip(t in tree()) {
        let bytes = to_vec(&t).unwrap();
        let mut expected = Vec::new();
        flatten("", &t, &mut expected);
        // The container reader (no serde) sees the keys in order with the exact values.
        let file = Gguf::from_slice(&bytes).unwrap();
        let stored: Vec<(String, Value)> =
            file.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect();
        prop_assert_eq!(&stored, &expected);
        // The deserializer gives them back exactly.
        let back: BTreeMap<String, Value> = from_slice(&bytes).unwrap();
        let expected_map: BTreeMap<String, Value> = expected.into_iter().collect();
        prop_assert_eq!(back, expected_map);
    }

    #[test]
    fn values_round_trip(v in value()) {
        prop_assert_eq!(&gguf_serde::from_value::<Value>(v.clone()).unwrap(), &v);
        prop_assert_eq!(&gguf_serde::to_value(&v).unwrap(), &v);
    }

    #[test]
    fn fixed_structs_round_trip(v in fixed()) {
        let bytes = to_vec(&v).unwrap();
        prop_assert_eq!(from_slice::<Fixed>(&bytes).unwrap(), v.clone());
        let file = Gguf::from_slice(&bytes).unwrap();
        prop_assert_eq!(file.get("inner.t").unwrap().type_name(), "array<u8>");
        prop_assert_eq!(file.get("x.y.z").unwrap().as_bool(), Some(v.deep));
        prop_assert_eq!(file.get("e").is_some(), v.e.is_some());
    }
}
