//! The spec's test vector `tests/data/small.gguf` (`examples/src/small.rs` makes it): the
//! checked-in file equals the generator's output, every tensor's canonical facts equal the
//! values computed by hand from the layout, and gguf-py reads the same.

use gguf_serde::{GgmlType, Gguf, ValueRef};
use gguf_tests::{assert_same, describe, python, run_py, workspace_root};

#[test]
fn checked_in_file_equals_the_generator() {
    let on_disk = std::fs::read(workspace_root().join("tests/data/small.gguf")).unwrap();
    assert_eq!(
        on_disk,
        gguf_examples::small::build().unwrap(),
        "run: cargo run -p gguf-examples --bin make-small-gguf"
    );
}

/// Offsets by hand: header 24 B; keys 45 + 27 + 48 → 144; tensor infos 45 + 46 + 46 → 281;
/// data section at 288 (next multiple of 32). w_f32: 4·64·4 = 1024 B at 288; w_q8_0: 4 rows ×
/// 2 blocks × 34 = 272 B at 288 + 1024 = 1312; e_bf16: 96·2 = 192 B at 288 + 1312 (1024 + 272
/// padded to 1312) = 1600; file ends at 1792.
#[test]
fn canonical_facts() {
    let bytes = std::fs::read(workspace_root().join("tests/data/small.gguf")).unwrap();
    assert_eq!(bytes.len(), 1792);
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.version(), 3);
    assert_eq!(f.data_offset(), 288);
    assert_eq!(f.get("general.architecture"), Some(ValueRef::String("llama")));
    assert_eq!(f.get("test.answer"), Some(ValueRef::U32(42)));
    assert_eq!(f.get("test.note"), Some(ValueRef::String("tensor-format-specs")));
    let got: Vec<_> = f.tensors().map(|t| (t.name, t.dtype, t.shape.to_vec(), t.data_offset, t.nbytes)).collect();
    let want = vec![
        ("w_f32", GgmlType::F32, vec![4u64, 64], 288u64, 1024u64),
        ("w_q8_0", GgmlType::Q8_0, vec![4, 64], 1312, 272),
        ("e_bf16", GgmlType::BF16, vec![6, 16], 1600, 192),
    ];
    assert_eq!(got, want);
    // Stored dims are the canonical shape reversed.
    assert_eq!(&*f.tensor("w_f32").unwrap().ne(), &[64, 4]);
    // w_f32's bytes are its values, little-endian.
    let data = f.tensor_data_by_name("w_f32").unwrap();
    let first = f32::from_le_bytes(data[4..8].try_into().unwrap());
    assert_eq!(first, 0.37f32.sin());
}

#[test]
fn gguf_py_reads_the_same() {
    let Some(py) = python() else { return };
    let path = workspace_root().join("tests/data/small.gguf");
    let theirs = run_py(&py, "dump.py", &[path.to_str().unwrap()]);
    let bytes = std::fs::read(&path).unwrap();
    assert_same(&describe(&Gguf::from_slice(&bytes).unwrap(), true), &theirs);
}
