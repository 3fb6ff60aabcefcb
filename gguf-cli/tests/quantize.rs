//! `gguf quantize` and `gguf dequantize`: converted tensors equal gguf-py's dequantize-then-
//! quantize of the input (gguf.quants), kept tensors are byte-identical, metadata is kept with
//! general.file_type updated.

use std::process::Command;

use gguf_serde::{GgmlType, Gguf, ValueRef};
use gguf_tests::{model, python, run_py, temp_dir, workspace_root};
use serde_json::Value as Json;

fn gguf(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gguf")).args(args).output().expect("running gguf")
}

fn names(j: &Json, k: &str) -> Vec<String> {
    j[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn quantize_small_to_q4_0_equals_gguf_py() {
    let input = workspace_root().join("tests/data/small.gguf");
    let out = temp_dir("quantize_small").join("q4_0.gguf");
    let o = gguf(&["quantize", "-q", input.to_str().unwrap(), out.to_str().unwrap(), "--type", "Q4_0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let types: Vec<_> = f.tensors().map(|t| (t.name, t.dtype)).collect();
    // e_bf16's rows (16) are not whole Q4_0 blocks (32): kept.
    assert_eq!(types, [("w_f32", GgmlType::Q4_0), ("w_q8_0", GgmlType::Q4_0), ("e_bf16", GgmlType::BF16)]);
    assert_eq!(f.get("general.file_type"), Some(ValueRef::U32(2)));
    assert_eq!(f.get("test.note"), Some(ValueRef::String("tensor-format-specs")));
    let Some(py) = python() else { return };
    let r = run_py(&py, "requant_check.py", &[input.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(names(&r, "checked"), ["w_f32", "w_q8_0"]);
    assert_eq!(names(&r, "same"), ["e_bf16"]);
    assert!(names(&r, "mismatched").is_empty(), "{r}");
}

#[test]
fn exclude_and_dequantize() {
    let input = workspace_root().join("tests/data/small.gguf");
    let dir = temp_dir("dequantize_small");
    let out = dir.join("f32.gguf");
    let o = gguf(&["dequantize", "-q", input.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let f = Gguf::open(&out).unwrap();
    let types: Vec<_> = f.tensors().map(|t| t.dtype).collect();
    assert_eq!(types, [GgmlType::F32, GgmlType::F32, GgmlType::F32]);
    // e_bf16 holds (i - 48) / 16, exact in bf16 and f32.
    let e = f.tensor_data_by_name("e_bf16").unwrap();
    let want: Vec<u8> = (0..96).flat_map(|i| ((i as f32 - 48.0) / 16.0).to_le_bytes()).collect();
    assert_eq!(e, &want[..]);

    let out2 = dir.join("excl.gguf");
    let o =
        gguf(&["quantize", "-q", input.to_str().unwrap(), out2.to_str().unwrap(), "-t", "Q8_0", "--exclude", "w_*32"]);
    assert!(o.status.success());
    let f = Gguf::open(&out2).unwrap();
    assert_eq!(f.tensor("w_f32").unwrap().dtype, GgmlType::F32);
    assert_eq!(f.get("general.file_type"), Some(ValueRef::U32(7)));
    // w_q8_0 is already Q8_0: copied, byte for byte.
    let orig = Gguf::open(&input).unwrap();
    assert_eq!(f.tensor_data_by_name("w_q8_0").unwrap(), orig.tensor_data_by_name("w_q8_0").unwrap());

    let o = gguf(&["dequantize", input.to_str().unwrap(), out2.to_str().unwrap(), "-t", "Q4_0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("dequantize converts to F32, F16 or BF16, not Q4_0"));
}

#[test]
fn quantize_gemma_to_q8_0() {
    let Some(path) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let out = temp_dir("quantize_gemma").join("q8_0.gguf");
    let o = gguf(&["quantize", "-q", path.to_str().unwrap(), out.to_str().unwrap(), "--type", "Q8_0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (Gguf::open(&path).unwrap(), Gguf::open(&out).unwrap());
    assert_eq!(b.kv_count(), 33);
    assert_eq!(b.get("general.file_type"), Some(ValueRef::U32(7)));
    for (x, y) in a.tensors().zip(b.tensors()) {
        assert_eq!((x.name, &*x.shape), (y.name, &*y.shape));
        let want = if x.shape.len() >= 2 { GgmlType::Q8_0 } else { x.dtype };
        assert_eq!(y.dtype, want, "{}", x.name);
    }
    // One tensor of each source type against gguf-py (checking all 117 takes gguf-py ~45 s).
    let Some(py) = python() else { return };
    let check = ["blk.0.attn_k.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight", "output_norm.weight"];
    let mut args = vec![path.to_str().unwrap(), out.to_str().unwrap()];
    args.extend(check);
    let r = run_py(&py, "requant_check.py", &args);
    assert_eq!(names(&r, "checked"), ["blk.0.attn_k.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight"]);
    assert_eq!(names(&r, "same"), ["output_norm.weight"]);
}
