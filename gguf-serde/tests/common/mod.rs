//! Shared by the serde tests: finding gguf-py and the real models, running the Python scripts in
//! `tests/py/`, and the typed metadata structs of the Gemma 3 and llama tests.
//!
//! Environment (the workspace's conventions):
//! - `GGUF_PYTHON`: the interpreter with PyPI `gguf`; default `<workspace>/.venv/bin/python`.
//!   `GGUF_SKIP_PYTHON=1` skips (loudly) the tests that need it; otherwise a missing one fails.
//! - `GGUF_MODELS`: the folder of real models; default `<workspace>/models`. `GGUF_SKIP_MODELS=1`
//!   skips (loudly); otherwise a missing model fails.
#![allow(dead_code)]

pub mod gemma;

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

pub fn python() -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_PYTHON").as_deref() == Ok("1") {
        eprintln!("SKIPPED: GGUF_SKIP_PYTHON=1, gguf-py comparison not run");
        return None;
    }
    let p =
        std::env::var_os("GGUF_PYTHON").map(PathBuf::from).unwrap_or_else(|| workspace_root().join(".venv/bin/python"));
    assert!(p.exists(), "no Python with gguf-py at {} (set GGUF_PYTHON, or GGUF_SKIP_PYTHON=1)", p.display());
    Some(p)
}

pub fn model(name: &str) -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_MODELS").as_deref() == Ok("1") {
        eprintln!("SKIPPED: GGUF_SKIP_MODELS=1, {name} not tested");
        return None;
    }
    let dir = std::env::var_os("GGUF_MODELS").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("models"));
    let p = dir.join(name);
    assert!(
        p.exists(),
        "model {} missing: run scripts/fetch-gemma.sh (or set GGUF_MODELS / GGUF_SKIP_MODELS=1)",
        p.display()
    );
    Some(p)
}

/// Runs `gguf-serde/tests/py/<script>` with `args`; returns its stdout as JSON.
pub fn run_py(python: &Path, script: &str, args: &[&str]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py").join(script);
    let out = Command::new(python).arg(&script).args(args).output().expect("running python");
    assert!(out.status.success(), "{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON from python")
}

/// A fresh temporary folder under the target directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = workspace_root().join("target/test-tmp/serde").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A metadata value as JSON in the shape of `tests/py/kv_dump.py`: numbers exactly (f32 widened
/// to f64), arrays as lists.
pub fn value_json(v: &gguf_serde::Value) -> serde_json::Value {
    serde_json::to_value(v).expect("value to JSON")
}

/// The GGUF type name of a value (`u32`, `array<string>`, `array<array<i32>>`).
pub fn type_name(v: &gguf_serde::Value) -> String {
    match v {
        gguf_serde::Value::Array(a) => array_type_name(a),
        v => v.value_type().name().to_owned(),
    }
}

fn array_type_name(a: &gguf_serde::Array) -> String {
    match a {
        gguf_serde::Array::Array(inner) => match inner.first() {
            Some(i) => format!("array<{}>", array_type_name(i)),
            None => "array<array>".to_owned(),
        },
        a => format!("array<{}>", a.elem_type().name()),
    }
}
