//! `gguf export` against gguf-py and Python's `safetensors` (`tests/py/check_export.py`): every
//! tensor's bytes are gguf-py's (its data, or `gguf.quants.dequantize`, then its F16/BF16
//! quantization for `--dtype f16`/`bf16`), shapes canonical, the file opened and read by
//! `safetensors`; `gguf.metadata` is the metadata as gguf-py reads it (`tests/py/dump.py`);
//! `--exclude` leaves tensors out; `gguf import` of an export of a float model gives the same bytes.

use std::path::Path;

use gguf_serde::Gguf;
use gguf_tests::{model, python, run_py, temp_dir};
use serde_json::Value as Json;

use super::{gguf, s, small_path};

/// Exports `input` with `args`, checks the result with gguf-py; returns the checked names.
fn export_and_check(py: &Path, input: &Path, out: &Path, dtype: &str, exclude: &[&str]) -> Vec<String> {
    let mut args = vec!["export", s(input), s(out), "--dtype", dtype, "-q"];
    for e in exclude {
        args.extend(["--exclude", e]);
    }
    let o = gguf(&args);
    assert!(o.status.success(), "gguf {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let mut py_args = vec![s(input), s(out), dtype];
    py_args.extend(exclude);
    let r = run_py(py, "check_export.py", &py_args);
    assert_eq!(r["problems"], serde_json::json!([]), "{} --dtype {dtype}", input.display());
    // The metadata as gguf-py reads it (arrays of arrays, which it does not decode, aside).
    let ours: Json = serde_json::from_str(r["metadata"]["gguf.metadata"].as_str().expect("gguf.metadata")).unwrap();
    let theirs = run_py(py, "dump.py", &[s(input), "--no-tensor-hash"]);
    let (ours, theirs) = (ours.as_array().unwrap(), theirs["metadata"].as_array().unwrap());
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!((&o["key"], &o["type"]), (&t["key"], &t["type"]));
        if !t["value"].is_null() {
            assert_eq!(o["value"], t["value"], "key {}", t["key"]);
        }
    }
    assert_eq!(r["metadata"]["gguf.version"], serde_json::json!(Gguf::open(input).unwrap().version().to_string()));
    r["checked"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_owned()).collect()
}

#[test]
fn small_gguf_at_every_dtype_is_gguf_py_s_values() {
    let Some(py) = python() else { return };
    let dir = temp_dir("export-small");
    let names: Vec<String> = Gguf::open(small_path()).unwrap().tensors().map(|t| t.name.to_string()).collect();
    for dtype in ["keep", "f32", "f16", "bf16"] {
        let out = dir.join(format!("{dtype}.safetensors"));
        assert_eq!(export_and_check(&py, &small_path(), &out, dtype, &[]), names);
    }
    let out = dir.join("ex.safetensors");
    let checked = export_and_check(&py, &small_path(), &out, "keep", &[&names[0]]);
    assert_eq!(checked, names[1..]);
}

#[test]
fn model_cuts_are_gguf_py_s_dequantization() {
    let Some(py) = python() else { return };
    let dir = temp_dir("export-models");
    for (name, dtype) in [("gemma-3-270m-q4_k_m.gguf", "keep"), ("SmolLM2-135M-Instruct.Q4_1.gguf", "bf16")] {
        let Some(src) = model(name) else { return };
        let cut = dir.join(name);
        gguf_tests::cut_layers(&src, &cut, 2);
        let types: std::collections::BTreeSet<String> =
            Gguf::open(&cut).unwrap().tensors().map(|t| t.dtype.name().to_owned()).collect();
        let out = dir.join(format!("{name}.safetensors"));
        let checked = export_and_check(&py, &cut, &out, dtype, &["token_embd.weight"]);
        assert_eq!(checked.len(), Gguf::open(&cut).unwrap().tensor_count() - 1, "{name} ({types:?})");
    }
}

#[test]
fn import_of_an_export_of_a_float_model_is_the_same_file() {
    let dir = temp_dir("export-import");
    let f32_model = dir.join("f32.gguf");
    let o = gguf(&["dequantize", s(&small_path()), s(&f32_model)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let st = dir.join("m.safetensors");
    let back = dir.join("back.gguf");
    assert!(gguf(&["export", s(&f32_model), s(&st)]).status.success());
    let o = gguf(&["import", s(&st), s(&back)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&f32_model).unwrap());
    // An existing output is refused without --force.
    let o = gguf(&["export", s(&f32_model), s(&st)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"), "{}", String::from_utf8_lossy(&o.stderr));
}
