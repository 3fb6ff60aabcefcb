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

pub mod llama {
    //! llama-2-tiny-random-style metadata: the same shape as the Gemma struct, written for llama.
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct LlamaMetadata<S> {
        pub general: General,
        #[serde(rename = "{arch}")]
        pub hparams: Hparams,
        pub tokenizer: Tokenizer<S>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct General {
        pub architecture: String,
        pub name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub file_type: Option<u32>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Hparams {
        pub context_length: u32,
        pub embedding_length: u32,
        pub block_count: u32,
        pub feed_forward_length: u32,
        pub rope: Rope,
        pub attention: Attention,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Rope {
        pub dimension_count: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub freq_base: Option<f32>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Attention {
        pub head_count: u32,
        pub head_count_kv: u32,
        pub layer_norm_rms_epsilon: f32,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Tokenizer<S> {
        pub ggml: Ggml<S>,
    }

    #[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
    pub struct Ggml<S> {
        pub model: String,
        pub tokens: Vec<S>,
        pub scores: Vec<f32>,
        pub token_type: Vec<i32>,
        pub bos_token_id: u32,
        pub eos_token_id: u32,
        pub unknown_token_id: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        pub padding_token_id: Option<u32>,
        pub add_bos_token: bool,
        pub add_eos_token: bool,
    }

    /// The values `tests/py/write_llama.py` writes.
    pub fn tiny() -> LlamaMetadata<String> {
        LlamaMetadata {
            general: General { architecture: "llama".into(), name: "tiny-random-llama".into(), file_type: Some(1) },
            hparams: Hparams {
                context_length: 2048,
                embedding_length: 16,
                block_count: 2,
                feed_forward_length: 64,
                rope: Rope { dimension_count: 4, freq_base: Some(10000.0) },
                attention: Attention { head_count: 4, head_count_kv: 2, layer_norm_rms_epsilon: 1e-6 },
            },
            tokenizer: Tokenizer {
                ggml: Ggml {
                    model: "llama".into(),
                    tokens: ["<unk>", "<s>", "</s>", "▁a", "▁b", "é", "<0x0A>", ""].map(String::from).to_vec(),
                    scores: vec![0.0, 0.0, 0.0, -1.5, -2.25, -3.0, -4.0, -5.5],
                    token_type: vec![2, 3, 3, 1, 1, 1, 6, 5],
                    bos_token_id: 1,
                    eos_token_id: 2,
                    unknown_token_id: 0,
                    padding_token_id: None,
                    add_bos_token: true,
                    add_eos_token: false,
                },
            },
        }
    }
}
