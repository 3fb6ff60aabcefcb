//! Support for the workspace's integration tests: finding the Python oracle (gguf-py) and the
//! real models, running the Python scripts in `tests/py/`, and describing a file as JSON in the
//! same shape as `tests/py/dump.py` and `gguf inspect --json`.
//!
//! Environment:
//! - `GGUF_PYTHON`: the Python interpreter with PyPI `gguf` installed; default
//!   `<workspace>/.venv/bin/python` (which `.ci/run` creates).
//! - `GGUF_SKIP_PYTHON=1`: tests that need Python pass without running it (say so loudly). Without
//!   it, a missing interpreter fails the test.
//! - `GGUF_MODELS`: the folder of real models; default `<workspace>/models` (made by
//!   `scripts/setup.sh`, which runs `scripts/fetch-gemma.sh` and `scripts/fetch-corpus.sh`). A
//!   missing model fails the test unless `GGUF_SKIP_MODELS=1`.
//! - `GGUF_LLAMA_CPP_DIR`: a llama.cpp build (its `build/bin/llama-quantize`); default the cache
//!   folder the llama.cpp build script fills ([`LLAMA_CPP_CACHE`] under `$HOME/.cache/gguf-serde`).
//!   A missing build skips the test, or fails it when `CI` is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf_serde::container::Source;
use gguf_serde::{Array, Gguf, GgufWriter, Value, ValueRef, WriteOptions};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The Python interpreter with gguf-py, or `None` if `GGUF_SKIP_PYTHON=1` (after printing why).
/// Panics (fails the test) if it is missing otherwise.
pub fn python() -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_PYTHON").as_deref() == Ok("1") {
        eprintln!("SKIPPED: GGUF_SKIP_PYTHON=1, gguf-py comparison not run");
        return None;
    }
    let p =
        std::env::var_os("GGUF_PYTHON").map(PathBuf::from).unwrap_or_else(|| workspace_root().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "no Python with gguf-py at {} (run .ci/run, or set GGUF_PYTHON / GGUF_SKIP_PYTHON=1)",
        p.display()
    );
    Some(p)
}

/// Runs `tests/py/<script>` with `args`; returns its stdout parsed as JSON.
pub fn run_py(python: &Path, script: &str, args: &[&str]) -> Json {
    let script = workspace_root().join("tests/py").join(script);
    let out = Command::new(python).arg(&script).args(args).output().expect("running python");
    assert!(out.status.success(), "{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON from python")
}

/// The path of a real model under the models folder (`name` may have a subfolder, e.g.
/// `vocab/ggml-vocab-gpt-2.gguf`), or `None` if `GGUF_SKIP_MODELS=1`. Fails the test if the model
/// is missing otherwise.
pub fn model(name: &str) -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_MODELS").as_deref() == Ok("1") {
        eprintln!("SKIPPED: GGUF_SKIP_MODELS=1, {name} not tested");
        return None;
    }
    let dir = std::env::var_os("GGUF_MODELS").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("models"));
    let p = dir.join(name);
    assert!(
        p.exists(),
        "model {} missing: run scripts/setup.sh (or set GGUF_MODELS / GGUF_SKIP_MODELS=1)",
        p.display()
    );
    Some(p)
}

/// The folder name, under `$HOME/.cache/gguf-serde`, of the llama.cpp build the tests use.
pub const LLAMA_CPP_CACHE: &str = "llama.cpp-832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e";

/// llama.cpp's `llama-quantize`: `$GGUF_LLAMA_CPP_DIR/build/bin/llama-quantize`, else the one
/// in the cache folder [`LLAMA_CPP_CACHE`]. `None` (after printing why) if it is not there;
/// panics (fails the test) instead when the environment has `CI` set.
pub fn llama_quantize() -> Option<PathBuf> {
    llama_tool("llama-quantize")
}

/// A program of the llama.cpp build (`llama-quantize`, `llama-gguf-split`, ...), found as
/// [`llama_quantize`] finds `llama-quantize`.
pub fn llama_tool(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("GGUF_LLAMA_CPP_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/gguf-serde").join(LLAMA_CPP_CACHE)
    });
    let p = dir.join("build/bin").join(name);
    if p.is_file() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "no {name} at {} (build llama.cpp, or set GGUF_LLAMA_CPP_DIR)",
        p.display()
    );
    eprintln!("SKIPPED: no {name} at {} (set GGUF_LLAMA_CPP_DIR)", p.display());
    None
}

/// A fresh temporary folder under the target directory (kept for inspection after a failure).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = workspace_root().join("target/test-tmp").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The hex sha256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A metadata value as JSON: numbers exactly (f32 widened to f64), non-finite floats as the
/// strings "nan"/"inf"/"-inf", arrays as lists.
pub fn value_json(v: &ValueRef<'_>) -> Json {
    fn float(x: f64) -> Json {
        if x.is_nan() {
            json!("nan")
        } else if x.is_infinite() {
            json!(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            json!(x)
        }
    }
    match *v {
        ValueRef::U8(x) => json!(x),
        ValueRef::I8(x) => json!(x),
        ValueRef::U16(x) => json!(x),
        ValueRef::I16(x) => json!(x),
        ValueRef::U32(x) => json!(x),
        ValueRef::I32(x) => json!(x),
        ValueRef::U64(x) => json!(x),
        ValueRef::I64(x) => json!(x),
        ValueRef::F32(x) => float(x.into()),
        ValueRef::F64(x) => float(x),
        ValueRef::Bool(x) => json!(x),
        ValueRef::String(s) => json!(s),
        ValueRef::Array(a) => Json::Array(a.iter().map(|x| value_json(&x)).collect()),
    }
}

/// An owned metadata value as JSON, in the same form as [`value_json`].
pub fn owned_value_json(v: &Value) -> Json {
    fn float(x: f64) -> Json {
        value_json(&ValueRef::F64(x))
    }
    fn list<T>(v: &[T], f: impl Fn(&T) -> Json) -> Json {
        Json::Array(v.iter().map(f).collect())
    }
    fn array(a: &Array) -> Json {
        match a {
            Array::U8(v) => list(v, |x| json!(x)),
            Array::I8(v) => list(v, |x| json!(x)),
            Array::U16(v) => list(v, |x| json!(x)),
            Array::I16(v) => list(v, |x| json!(x)),
            Array::U32(v) => list(v, |x| json!(x)),
            Array::I32(v) => list(v, |x| json!(x)),
            Array::U64(v) => list(v, |x| json!(x)),
            Array::I64(v) => list(v, |x| json!(x)),
            Array::F32(v) => list(v, |&x| float(x.into())),
            Array::F64(v) => list(v, |&x| float(x)),
            Array::Bool(v) => list(v, |x| json!(x)),
            Array::String(v) => list(v, |x| json!(x)),
            Array::Array(v) => list(v, array),
        }
    }
    match v {
        Value::U8(x) => json!(x),
        Value::I8(x) => json!(x),
        Value::U16(x) => json!(x),
        Value::I16(x) => json!(x),
        Value::U32(x) => json!(x),
        Value::I32(x) => json!(x),
        Value::U64(x) => json!(x),
        Value::I64(x) => json!(x),
        Value::F32(x) => float((*x).into()),
        Value::F64(x) => float(*x),
        Value::Bool(x) => json!(x),
        Value::String(s) => json!(s),
        Value::Array(a) => array(a),
    }
}

/// Writes `f` back through [`GgufWriter`] with [`WriteOptions::like`]: every key in order (through
/// owned [`Value`]s when `owned`, else the borrowed values), every tensor in order with its stored
/// dims and data.
pub fn rewrite<S: Source>(f: &Gguf<S>, owned: bool) -> Vec<u8> {
    let mut w = GgufWriter::with_options(Vec::with_capacity(f.file_len() as usize), WriteOptions::like(f)).unwrap();
    for kv in f.metadata() {
        if owned {
            w.add_value(kv.key, &kv.value.to_owned_value()).unwrap();
        } else {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
    }
    for t in f.tensors() {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in f.tensors() {
        w.write_tensor_data(f.tensor_data(&t).expect("tensor data")).unwrap();
    }
    w.finish().unwrap()
}

/// Describes a file in the JSON shape of `tests/py/dump.py` (tensor data hashed when held).
pub fn describe<S: Source>(f: &Gguf<S>, hash: bool) -> Json {
    let metadata: Vec<Json> = f
        .metadata()
        .map(|kv| json!({"key": kv.key, "type": kv.value.type_name(), "value": value_json(&kv.value)}))
        .collect();
    let tensors: Vec<Json> = f
        .tensors()
        .map(|t| {
            let mut j = json!({
                "name": t.name, "dtype": t.dtype.name(), "shape": &*t.shape,
                "data_offset": t.data_offset, "nbytes": t.nbytes,
            });
            if hash {
                j["sha256"] = json!(sha256(f.tensor_data(&t).expect("tensor data")));
            }
            j
        })
        .collect();
    json!({
        "version": f.version(), "endianness": f.endian().name(), "alignment": f.alignment(),
        "data_offset": f.data_offset(), "metadata": metadata, "tensors": tensors,
    })
}

/// Asserts two descriptions are equal, field by field with readable messages. Keys absent from
/// `expected` are not compared (an expectation may leave out data offsets); a `null` metadata
/// value in `expected` (gguf-py cannot decode arrays of arrays) compares the type only.
pub fn assert_same(ours: &Json, expected: &Json) {
    for field in ["version", "endianness", "alignment", "data_offset"] {
        if let Some(e) = expected.get(field) {
            assert_eq!(&ours[field], e, "{field}");
        }
    }
    let (om, em) = (ours["metadata"].as_array().expect("metadata"), expected["metadata"].as_array().expect("metadata"));
    assert_eq!(om.len(), em.len(), "number of keys");
    for (o, e) in om.iter().zip(em) {
        assert_eq!(o["key"], e["key"], "key order");
        let key = e["key"].as_str().unwrap_or_default();
        assert_eq!(o["type"], e["type"], "type of {key}");
        if !e["value"].is_null() {
            assert!(
                o["value"] == e["value"],
                "value of {key}: ours {} expected {}",
                short(&o["value"]),
                short(&e["value"])
            );
        }
    }
    let (ot, et) = (ours["tensors"].as_array().expect("tensors"), expected["tensors"].as_array().expect("tensors"));
    assert_eq!(ot.len(), et.len(), "number of tensors");
    for (o, e) in ot.iter().zip(et) {
        let name = e["name"].as_str().unwrap_or_default();
        for (k, v) in e.as_object().expect("tensor object") {
            assert_eq!(&o[k], v, "{k} of tensor {name}");
        }
    }
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!("{}... ({} chars)", &s[..200], s.len())
    } else {
        s
    }
}

/// Runs `tests/py/<script>` with `args` and returns its stdout; fails the test if it fails.
pub fn run_py_text(python: &Path, script: &str, args: &[&str]) -> String {
    let script = workspace_root().join("tests/py").join(script);
    let out = Command::new(python).arg(&script).args(args).output().expect("running python");
    assert!(out.status.success(), "{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// How `tests/py/make_hf_llama.py` lays out a tiny random Llama checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HfLayout {
    /// Two shards and `model.safetensors.index.json`, with `lm_head.weight`.
    Sharded,
    /// One `model.safetensors`, tied embeddings (no `lm_head.weight`).
    TiedSingle,
}

/// Writes a tiny random Llama checkpoint in Hugging Face's layout into a fresh folder
/// `target/test-tmp/<name>` with `tests/py/make_hf_llama.py` (numpy + the `safetensors`
/// package), and returns the folder; `None` when Python is skipped.
pub fn make_hf_llama(name: &str, layout: HfLayout, seed: u64) -> Option<PathBuf> {
    let py = python()?;
    let dir = temp_dir(name);
    let ckpt = dir.join("tiny-llama-hf");
    let (ckpt_s, seed_s) = (ckpt.to_string_lossy().into_owned(), seed.to_string());
    let mut args = vec![ckpt_s.as_str(), "--seed", seed_s.as_str()];
    if layout == HfLayout::TiedSingle {
        args.extend(["--tied", "--single"]);
    }
    run_py_text(&py, "make_hf_llama.py", &args);
    Some(ckpt)
}
