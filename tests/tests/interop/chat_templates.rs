//! llama.cpp's named chat templates on a real file: the command-r vocabulary has
//! `tokenizer.chat_template` beside `tokenizer.chat_template.tool_use` and `.rag` (a key that
//! is also the prefix of other keys). One serde struct reads the template and the named
//! templates, compared with what gguf-py reads, and writes them back as the same keys.

use std::collections::BTreeMap;

use gguf_serde::{Gguf, Value};
use gguf_tests::{model, py_cache, python};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Templates<'a> {
    #[serde(borrow, rename = "tokenizer.chat_template")]
    default: &'a str,
    #[serde(borrow, rename = "tokenizer.chat_template.")]
    named: BTreeMap<String, &'a str>,
    #[serde(borrow, rename = "tokenizer.chat_templates")]
    names: Vec<&'a str>,
}

#[test]
fn command_r_templates_read_and_write_through_serde() {
    let Some(path) = model("vocab/ggml-vocab-command-r.gguf") else { return };
    let bytes = std::fs::read(&path).unwrap();
    let t: Templates<'_> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(t.names, ["tool_use", "rag"]);
    assert_eq!(t.named.keys().map(String::as_str).collect::<Vec<_>>(), ["rag", "tool_use"]);
    if let Some(py) = python() {
        // The vocabulary has no tensors: the same run (kept, [`gguf_tests::py_cache`]) as corpus.rs's.
        let dump = py_cache::run_py_cached(&py, "dump.py", &[path.to_str().unwrap()], &[&path]);
        let py_str = |key: &str| -> String {
            let kv = dump["metadata"].as_array().unwrap().iter().find(|kv| kv["key"] == key).unwrap();
            kv["value"].as_str().unwrap().to_owned()
        };
        assert_eq!(t.default, py_str("tokenizer.chat_template"));
        for (name, text) in &t.named {
            assert_eq!(*text, py_str(&format!("tokenizer.chat_template.{name}")), "{name}");
        }
    }
    // Written back: the same keys with the same values as in the file.
    let out = gguf_serde::to_vec(&t).unwrap();
    let file = Gguf::from_slice(&bytes).unwrap();
    let written = Gguf::from_slice(&out).unwrap();
    let keys: Vec<&str> = written.metadata().map(|kv| kv.key.to_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "tokenizer.chat_template",
            "tokenizer.chat_template.rag",
            "tokenizer.chat_template.tool_use",
            "tokenizer.chat_templates"
        ]
    );
    for k in keys {
        let a: Option<Value> = file.get(k).map(|v| v.to_owned_value());
        assert_eq!(written.get(k).map(|v| v.to_owned_value()), a, "{k}");
    }
}
