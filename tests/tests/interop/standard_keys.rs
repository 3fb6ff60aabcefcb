//! The registry of standard keys (`gguf_serde::format::keys`) against gguf-py 0.19.0, and the
//! typed `general.*` / tokenizer structs (`gguf_serde::metadata::standard`) on the Gemma 3 model.
//!
//! `tests/py/standard_keys.py` lists gguf-py's `constants.Keys` and runs every `GGUFWriter.add_*`
//! method that writes metadata, reading each file back with gguf-py's reader: the registry must
//! name exactly those keys, with the same templates and gguf-py names, and give each key gguf-py
//! writes the type gguf-py wrote.

use std::collections::{BTreeMap, BTreeSet};

use gguf_serde::format::keys::{self, KeySpec, KeyType, TypeReference, STANDARD_KEYS};
use gguf_serde::metadata::standard::StandardMetadata;
use gguf_serde::{Gguf, MetadataOptions, ValueType};
use gguf_tests::{model, owned_type_name, owned_value_json, py_cache, python, temp_dir};
use serde_json::Value as Json;

fn gguf_py_keys() -> Option<Json> {
    let py = python()?;
    // The argument is an empty scratch folder and the output names no path: the run is kept per
    // script and packages ([`gguf_tests::py_cache`]), once for the three tests that read it.
    let dir = temp_dir("standard-keys");
    Some(py_cache::run_py_cached(&py, "standard_keys.py", &[dir.to_str().unwrap()], &[&dir]))
}

fn entry(template: &str) -> &'static KeySpec {
    STANDARD_KEYS.iter().find(|s| s.key == template).unwrap_or_else(|| panic!("{template} is not in the registry"))
}

#[test]
fn registry_has_every_gguf_py_key_with_its_template_and_name() {
    let Some(py) = gguf_py_keys() else { return };
    let theirs: BTreeSet<(String, String)> = py["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["key"].as_str().unwrap().to_owned(),
                format!("{}.{}", k["class"].as_str().unwrap(), k["name"].as_str().unwrap()),
            )
        })
        .collect();
    assert_eq!(theirs.len(), py["keys"].as_array().unwrap().len(), "gguf-py defines a key twice");
    let ours: BTreeSet<(String, String)> =
        STANDARD_KEYS.iter().map(|s| (s.key.to_owned(), s.gguf_py.to_owned())).collect();
    assert_eq!(ours.len(), STANDARD_KEYS.len(), "the registry repeats an entry");
    let missing: Vec<_> = theirs.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&theirs).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing from the registry: {missing:?}; not in gguf-py: {extra:?}"
    );
    assert_eq!(STANDARD_KEYS.len(), 269);
}

#[test]
fn registry_types_are_what_gguf_py_writes() {
    let Some(py) = gguf_py_keys() else { return };
    let name = |t: &str| ValueType::from_name(t).unwrap_or_else(|| panic!("type {t}"));
    // Every (key, type) gguf-py's writer gave, and the methods that wrote each key.
    let mut written: BTreeMap<String, Vec<(ValueType, Option<ValueType>)>> = BTreeMap::new();
    let mut methods: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for w in py["writes"].as_array().unwrap() {
        let key = w["key"].as_str().unwrap().to_owned();
        let ty = name(w["type"].as_str().unwrap());
        let elem = w["element"].as_str().map(name);
        written.entry(key.clone()).or_default().push((ty, elem));
        methods.entry(key).or_default().insert(w["method"].as_str().unwrap().to_owned());
    }
    assert!(written.len() >= 245, "gguf-py wrote only {} keys", written.len());
    for (key, types) in &written {
        let spec = entry(key);
        assert_eq!(spec.reference, TypeReference::GgufPyWriter, "{key}: gguf-py writes it");
        for &(ty, elem) in types {
            let exact = match spec.ty {
                KeyType::Scalar(t) => ty == t && elem.is_none(),
                KeyType::Array(t) => ty == ValueType::Array && elem == Some(t),
                // A scalar of the type, or one per layer (gguf-py writes integer lists as i32,
                // and the sliding-window pattern as bools).
                KeyType::PerLayer(t) => {
                    ty == t
                        || (ty == ValueType::Array
                            && (elem == Some(t)
                                || (t == ValueType::U32 && matches!(elem, Some(ValueType::I32 | ValueType::Bool)))))
                }
                other => panic!("{key}: key type {other} is new to this test"),
            };
            assert!(exact, "{key}: gguf-py writes {ty} {elem:?}, the registry says {}", spec.ty);
            assert!(spec.ty.accepts(ty, elem), "{key}: the registry refuses what gguf-py writes");
        }
        // The source names the writer methods.
        for m in &methods[key] {
            assert!(spec.source.contains(m.as_str()), "{key}: source {:?} does not name {m}", spec.source);
        }
    }
    // Every entry that says gguf-py writes it is one gguf-py wrote.
    for s in STANDARD_KEYS.iter().filter(|s| s.reference == TypeReference::GgufPyWriter) {
        assert!(written.contains_key(s.key), "{}: marked as written by gguf-py, which did not write it", s.key);
    }
    // The per-layer keys: exactly those gguf-py writes both as a scalar and as a list, or only as a
    // list of numbers, plus those llama.cpp reads with get_key_or_arr (expert_used_count,
    // expert_feed_forward_length).
    let per_layer: BTreeSet<&str> =
        STANDARD_KEYS.iter().filter(|s| matches!(s.ty, KeyType::PerLayer(_))).map(|s| s.key).collect();
    let both: BTreeSet<&str> = written
        .iter()
        .filter(|(_, t)| {
            t.iter().any(|(ty, _)| *ty == ValueType::Array) && t.iter().any(|(ty, _)| *ty != ValueType::Array)
        })
        .map(|(k, _)| k.as_str())
        .collect();
    assert!(both.is_subset(&per_layer), "{both:?} not all per-layer");
}

#[test]
fn lookup_resolves_the_keys_gguf_py_writes_for_an_architecture() {
    // gguf-py's writer for architecture "qwen2" fills `{arch}`; each concrete key resolves to its
    // template with the architecture.
    let Some(py) = gguf_py_keys() else { return };
    for k in py["keys"].as_array().unwrap() {
        let template = k["key"].as_str().unwrap();
        let concrete = template
            .replace("{arch}", "qwen2")
            .replace("{id}", "3")
            .replace("{name}", "tool_use")
            .replace("{dense}", "dense_2");
        let m = keys::lookup(&concrete).unwrap_or_else(|| panic!("{concrete} not found"));
        assert_eq!(m.spec.key, template, "{concrete}");
        assert_eq!(m.arch, template.contains("{arch}").then_some("qwen2"), "{concrete}");
    }
}

#[test]
fn standard_structs_read_gemma_as_gguf_py_does() {
    let Some(path) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let file = Gguf::open(&path).unwrap();
    let meta: StandardMetadata<&str> = file.deserialize_metadata().unwrap();
    assert_eq!(meta.general.architecture.as_deref(), Some("gemma3"));
    assert_eq!(meta.tokenizer.tokens.as_ref().map(Vec::len), Some(262_144));
    // Also through from_slice, owned.
    let owned: StandardMetadata<String> = gguf_serde::from_slice(file.bytes()).unwrap();
    assert_eq!(owned.tokenizer.tokens.as_ref().unwrap()[..10], meta.tokenizer.tokens.as_ref().unwrap()[..10]);
    assert_eq!(owned.general, meta.general);

    let Some(py) = python() else { return };
    // Kept per file content ([`gguf_tests::py_cache`]): `serde_gemma.rs` reads the same.
    let expected = py_cache::run_py_cached(&py, "kv_dump.py", &[path.to_str().unwrap()], &[&path]);
    let expected: BTreeMap<&str, &Json> = expected
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["key"].as_str().unwrap(), e))
        .filter(|(k, _)| k.starts_with("general.") || k.starts_with("tokenizer."))
        .collect();
    assert_eq!(expected.len(), 22);
    // Every general.* and tokenizer.* key of the file is a field, with gguf-py's type and value.
    let pairs: BTreeMap<String, _> = MetadataOptions::new().to_pairs(&meta).unwrap().into_iter().collect();
    assert_eq!(pairs.keys().map(String::as_str).collect::<Vec<_>>(), expected.keys().copied().collect::<Vec<_>>());
    for (key, value) in &pairs {
        let e = expected[key.as_str()];
        assert_eq!(owned_type_name(value), e["type"].as_str().unwrap(), "type of {key}");
        assert!(owned_value_json(value) == e["value"], "value of {key} differs from gguf-py's");
    }
    // Written back with to_writer, the keys read back the same (through gguf-py again: a file
    // of only these keys).
    let dir = temp_dir("standard-gemma");
    let out = dir.join("standard.gguf");
    gguf_serde::to_writer(&meta, std::fs::File::create(&out).unwrap()).unwrap();
    let back = py_cache::run_py_cached(&py, "kv_dump.py", &[out.to_str().unwrap()], &[&out]);
    let back: BTreeMap<&str, &Json> =
        back.as_array().unwrap().iter().map(|e| (e["key"].as_str().unwrap(), e)).collect();
    assert_eq!(back, expected);
}
