//! `gguf set` and `gguf validate --ggml` with the registry of standard keys: a known key gets the
//! type llama.cpp reads (the oracles: llama.cpp's `llama-simple` loading the SmolLM2 model, and
//! gguf-py's `GGUFWriter` types as `tests/py/standard_keys.py` reports them), and a known key
//! stored with another type is reported as llama.cpp reports it.

use std::path::Path;
use std::process::Command;

use gguf_tests::{llama_tool, model, python, run_py, temp_dir};
use serde_json::Value as Json;

use super::{gguf, gguf_ok as ok, s};

/// gguf-py's reading of `key` in `path`: (type, value).
fn gguf_py_kv(py: &Path, path: &Path, key: &str) -> (String, Json) {
    let all = run_py(py, "kv_dump.py", &[s(path)]);
    let e = all.as_array().unwrap().iter().find(|e| e["key"] == key).unwrap_or_else(|| panic!("{key} not in file"));
    (e["type"].as_str().unwrap().to_owned(), e["value"].clone())
}

/// Runs llama.cpp's `llama-simple` on the model for one token: its exit status and stderr.
fn llama_loads(tool: &Path, path: &Path) -> (bool, String) {
    let out = gguf_tests::output_with_deadline(
        Command::new(tool).args(["-m", s(path), "-n", "1", "Hello"]),
        std::time::Duration::from_secs(300),
    );
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn set_gives_a_known_key_the_type_llama_cpp_reads_and_validate_reports_a_wrong_one() {
    let Some(smol) = model("SmolLM2-135M-Instruct.Q4_1.gguf") else { return };
    let Some(tool) = llama_tool("llama-simple") else { return };
    let Some(py) = python() else { return };
    let d = temp_dir("cli-standard-keys");
    let p = d.join("smol.gguf");
    std::fs::copy(&smol, &p).unwrap();
    let f = s(&p);

    // An explicit type wins over the registry: llama.cpp then refuses the file, and validate
    // --ggml names the same key and types.
    ok(&["set", f, "llama.rope.freq_base", "10000", "--type", "u32"]);
    assert_eq!(gguf_py_kv(&py, &p, "llama.rope.freq_base"), ("u32".to_owned(), Json::from(10000)));
    let (loaded, err) = llama_loads(&tool, &p);
    assert!(!loaded);
    assert!(err.contains("key llama.rope.freq_base has wrong type u32 but expected type f32"), "{err}");
    let out = gguf(&["validate", "--ggml", f]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "key llama.rope.freq_base: stored as u32, but llama.cpp expects f32 (standard key {arch}.rope.freq_base)"
        ),
        "{text}"
    );
    // Without --ggml: valid GGUF, with the same text as a warning.
    let text = ok(&["validate", f]);
    assert!(text.contains("warning: valid GGUF, but ggml's reader refuses it: key llama.rope.freq_base"), "{text}");
    let out = gguf(&["validate", "--ggml", "--json", f]);
    assert_eq!(out.status.code(), Some(1));
    let json: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["valid"], false);
    assert!(
        json[0]["ggml_refusals"][0].as_str().unwrap().contains("stored as u32, but llama.cpp expects f32"),
        "{json}"
    );

    // Without a type: the registry's (f32), whatever the file held; llama.cpp loads the file.
    ok(&["set", f, "llama.rope.freq_base", "10000"]);
    assert_eq!(gguf_py_kv(&py, &p, "llama.rope.freq_base"), ("f32".to_owned(), Json::from(10000.0)));
    let (loaded, err) = llama_loads(&tool, &p);
    assert!(loaded, "{err}");
    assert!(ok(&["validate", "--ggml", f]).contains(": OK"));

    // A value that is not an f32: refused, naming the key and the type; the file unchanged.
    let before = std::fs::read(&p).unwrap();
    let out = gguf(&["set", f, "llama.rope.freq_base", "ten thousand"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "cannot edit \"llama.rope.freq_base\": \"ten thousand\" is not a valid f32, the type of the standard key \
             {arch}.rope.freq_base"
        ),
        "{err}"
    );
    // The library states the refusal; the CLI adds the flag that lifts it.
    assert!(err.contains("(llama.cpp refuses another type); give --type to write another type anyway"), "{err}");
    assert!(std::fs::read(&p).unwrap() == before);
    // Except for general.alignment, which no --type lifts: ggml reads it as a u32 power of two.
    let out = gguf(&["set", f, "general.alignment", "-4"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("general.alignment must be a u32 power of two") && !err.contains("give --type"), "{err}");
    assert!(std::fs::read(&p).unwrap() == before);

    // A per-layer key stored as a float: llama.cpp refuses it, and so does validate --ggml.
    ok(&["set", f, "llama.attention.head_count", "9", "--type", "f32"]);
    let (loaded, err) = llama_loads(&tool, &p);
    assert!(!loaded);
    assert!(err.contains("key llama.attention.head_count has wrong type f32 but expected type u32"), "{err}");
    let text = String::from_utf8_lossy(&gguf(&["validate", "--ggml", f]).stdout).into_owned();
    assert!(
        text.contains("key llama.attention.head_count: stored as f32, but llama.cpp expects u32 or array<u32>"),
        "{text}"
    );
    // Another architecture's key is not llama.cpp's concern for this file.
    ok(&["set", f, "llama.attention.head_count", "9"]);
    ok(&["set", f, "qwen2.rope.freq_base", "5", "--type", "u32"]);
    assert!(ok(&["validate", "--ggml", f]).contains(": OK"));
}

#[test]
fn set_writes_new_standard_keys_with_gguf_py_writer_types() {
    let Some(py) = python() else { return };
    let d = temp_dir("cli-standard-new");
    let p = d.join("small.gguf");
    std::fs::copy(crate::small_path(), &p).unwrap();
    let f = s(&p);
    // The types gguf-py's GGUFWriter writes, architecture placeholder kept.
    let probe = run_py(&py, "standard_keys.py", &[s(&d)]);
    let writer: Vec<(&str, &str)> = probe["writes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["key"].as_str().unwrap(), w["type"].as_str().unwrap()))
        .collect();
    // Texts whose inferred type (without the registry) would differ: "1" and "2" would be u32,
    // "123" a u32 rather than a string.
    let cases = [
        ("tokenizer.ggml.add_sep_token", "tokenizer.ggml.add_sep_token", "1", Json::from(true)),
        ("llama.rope.scaling.factor", "{arch}.rope.scaling.factor", "2", Json::from(2.0)),
        ("general.name", "general.name", "123", Json::from("123")),
        ("general.file_type", "general.file_type", "7", Json::from(7)),
        ("llama.attention.head_count", "{arch}.attention.head_count", "8", Json::from(8)),
        ("llama.attention.layer_norm_rms_epsilon", "{arch}.attention.layer_norm_rms_epsilon", "1", Json::from(1.0)),
    ];
    for (key, template, text, value) in cases {
        ok(&["set", f, key, text]);
        let (ty, v) = gguf_py_kv(&py, &p, key);
        // For per-layer keys gguf-py writes a scalar as u32 (and lists otherwise).
        let expected = writer.iter().filter(|(k, _)| *k == template).map(|(_, t)| *t).find(|t| *t != "array").unwrap();
        assert_eq!(ty, expected, "{key}: the type gguf-py's writer gives it");
        assert_eq!(v, value, "{key}");
    }
    // An array key cannot be set from text.
    let out = gguf(&["set", f, "general.tags", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("arrays cannot be set from text"));
}
