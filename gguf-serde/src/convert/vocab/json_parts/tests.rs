//! The parts against `serde_json`'s full parse of the same document (and Python's truth value
//! of it, [`truthy`]): the same kept values, the same errors.

use std::path::Path;

use serde_json::{Map, Value as J};

use super::{parse, JsonParts};
use crate::convert::vocab::{truthy, VocabError};

/// What [`parse`] must give for `text`: the full parse's values of the kept keys.
fn expected(text: &str, keep: &[&str], model: &[&str]) -> (bool, J) {
    let full: J = serde_json::from_str(text).unwrap();
    let value = match &full {
        J::Object(o) => {
            let mut kept: Map<String, J> =
                o.iter().filter(|(k, _)| keep.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
            if let (false, Some(m)) = (model.is_empty(), o.get("model")) {
                let sub = match m {
                    J::Object(m) => J::Object(
                        m.iter()
                            .filter(|(k, _)| model.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    ),
                    _ => J::Null,
                };
                kept.insert("model".into(), sub);
            }
            J::Object(kept)
        }
        _ => J::Null,
    };
    (truthy(&full), value)
}

fn parts(text: &str, keep: &[&str], model: &[&str]) -> Result<JsonParts, VocabError> {
    parse(Path::new("tokenizer.json"), text.as_bytes(), keep, model)
}

const TOKENIZER: &str = r#"{
  "version": "1.0", "truncation": null, "padding": null,
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
    {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1]}}},
  "decoder": {"type": "ByteFallback"},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
    "vocab": {"<unk>": 0, "<s>": 1, "\u2581a": 2, "b": 3, "\u2581ab": 4, "x\"y\\z": 5, "1e400": 6},
    "merges": ["\u2581a b", ["\u2581a", "b"]], "weights": [1.5e300, -0.0, 1e-400, 12345678901234567890]}
}"#;

#[test]
fn the_kept_keys_are_the_full_parse_values() {
    let special: &[&str] = &["normalizer", "added_tokens", "post_processor"];
    let docs = [
        TOKENIZER,
        // repeated keys: the last counts, at the top and inside `model`
        r#"{"added_tokens": [1], "model": {"merges": ["a b"], "type": "A"}, "added_tokens": [2], "model": {"type": "B"}}"#,
        r#"{"model": {"merges": ["a b"]}, "model": {"merges": ["c d"], "merges": ["e f"]}}"#,
        // `model` not an object; keys of no interest only; nothing
        r#"{"model": "BPE", "normalizer": null}"#,
        r#"{"model": [1, 2], "post_processor": false}"#,
        r#"{"version": "1.0"}"#,
        "{}",
        // documents that are not objects, truthy or not
        "[]",
        "[{}]",
        "0",
        "0.0",
        "-7",
        "18446744073709551615",
        "2.5",
        r#""""#,
        r#""a""#,
        "null",
        "true",
        "false",
        " \n{\"added_tokens\": []}\n ",
    ];
    for doc in docs {
        for (keep, model) in
            [(special, &[][..]), (special, &["merges"][..]), (&[][..], &["type"][..]), (&["model"][..], &[][..])]
        {
            let got = parts(doc, keep, model).unwrap_or_else(|e| panic!("{doc}: {e}"));
            assert_eq!((got.truthy, got.value), expected(doc, keep, model), "{doc} keeping {keep:?}, model {model:?}");
        }
    }
}

#[test]
fn what_the_full_parse_refuses_is_refused() {
    let special: &[&str] = &["normalizer", "added_tokens", "post_processor"];
    for doc in [
        "",
        "{\"model\": ",
        "{\"vocab\": {\"a\": 1,}}",
        "{} {}",
        "{} x",
        "[1, 2",
        "{\"a\": tru}",
        "{'a': 1}",
        "\u{feff}{}",
        "{\"added_tokens\": \"\\ud800\"}",
        "{\"vocab\": {\"a\": 01}}",
        "{\"vocab\": \"\\x\"}",
    ] {
        assert!(serde_json::from_str::<J>(doc).is_err(), "{doc:?}: the full parse takes it");
        match parts(doc, special, &["merges"]) {
            Err(VocabError::Json { path, .. }) => assert!(path.ends_with("tokenizer.json")),
            other => panic!("{doc:?}: {other:?}"),
        }
    }
}

#[test]
fn bytes_that_are_not_utf8_are_refused_with_their_offset_even_where_skipped() {
    let mut doc = br#"{"model": {"vocab": {"ab"#.to_vec();
    let at = doc.len();
    doc.extend_from_slice(b"\xff\": 1}}, \"added_tokens\": []}");
    match parse(Path::new("tokenizer.json"), &doc, &["added_tokens"], &[]) {
        Err(VocabError::Invalid { what, .. }) => assert!(what.contains(&format!("offset {at}")), "{what}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_lone_surrogate_escape_in_a_skipped_string_is_taken_as_json_load_takes_it() {
    // Python: json.loads('{"model": {"vocab": {"\\ud800": 1}}, "added_tokens": []}') succeeds.
    let doc = r#"{"model": {"vocab": {"\ud800": 1}}, "added_tokens": []}"#;
    let got = parts(doc, &["added_tokens"], &[]).unwrap();
    assert!(got.truthy);
    assert_eq!(got.value, serde_json::json!({"added_tokens": []}));
}
