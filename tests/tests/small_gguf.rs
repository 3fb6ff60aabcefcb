//! The spec's test vector `tests/data/small.gguf` (`examples/src/small.rs` makes it): the
//! checked-in file equals the generator's output; its layout is the one the spec's rules give
//! (walked by hand over the raw bytes, not through our reader) with the spec example's numbers;
//! every tensor's canonical facts equal the values computed by hand; its Q8_0 and BF16 tensors
//! are gguf-py's quantization of their sources; and gguf-py reads the same.

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
    assert_eq!(f.get("general.architecture"), Some(ValueRef::String("llama".into())));
    assert_eq!(f.get("test.answer"), Some(ValueRef::U32(42)));
    assert_eq!(f.get("test.note"), Some(ValueRef::String("tensor-format-specs".into())));
    let got: Vec<_> =
        f.tensors().map(|t| (t.name.to_str().unwrap(), t.dtype, t.shape.to_vec(), t.data_offset, t.nbytes)).collect();
    let want = vec![
        ("w_f32", GgmlType::F32, vec![4u64, 64], 288u64, 1024u64),
        ("w_q8_0", GgmlType::Q8_0, vec![4, 64], 1312, 272),
        ("e_bf16", GgmlType::BF16, vec![6, 16], 1600, 192),
    ];
    assert_eq!(got, want);
    // Stored dims are the canonical shape reversed.
    assert_eq!(f.tensor("w_f32").unwrap().ne().dims(), &[64, 4]);
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

/// A little-endian cursor over the raw bytes, for walking the file by the spec's grammar.
struct Walk<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Walk<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn string(&mut self) -> String {
        let n = self.u64() as usize;
        String::from_utf8(self.take(n).to_vec()).unwrap()
    }
}

/// The spec (GGUF "How to read it": header | tensor infos | zero padding to ALIGNMENT | data, each
/// tensor at data_start + offset, gaps zero-padded, canonical shape = stored dimensions
/// reversed, nbytes = elements / block size × type size) applied by hand to the raw bytes, and
/// the spec example's numbers: 1,792 bytes, version 3, `general.architecture = llama`,
/// `test.answer = 42`, `test.note = tensor-format-specs`; w_f32, w_q8_0 and e_bf16 in the file,
/// s_f32 not. Our reader must report the same layout.
#[test]
fn layout_follows_the_spec() {
    let bytes = std::fs::read(workspace_root().join("tests/data/small.gguf")).unwrap();
    assert_eq!(bytes.len(), 1792, "the spec example's size");
    let mut w = Walk { b: &bytes, pos: 0 };
    assert_eq!(w.take(4), b"GGUF");
    assert_eq!(w.u32(), 3, "version");
    let (n_tensors, n_kv) = (w.u64(), w.u64());
    assert_eq!((n_tensors, n_kv), (3, 3));
    let mut kvs = Vec::new();
    for _ in 0..n_kv {
        let key = w.string();
        let value = match w.u32() {
            4 => w.u32().to_string(), // UINT32
            8 => w.string(),          // STRING
            t => panic!("{key}: value type {t} not expected in small.gguf"),
        };
        kvs.push((key, value));
    }
    let want_kvs = [("general.architecture", "llama"), ("test.answer", "42"), ("test.note", "tensor-format-specs")];
    assert_eq!(kvs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(), want_kvs);
    // No general.alignment: the default, 32.
    let alignment = 32u64;
    // (name, ggml type id, stored dims, relative offset)
    let mut infos = Vec::new();
    for _ in 0..n_tensors {
        let name = w.string();
        let n_dims = w.u32();
        let dims: Vec<u64> = (0..n_dims).map(|_| w.u64()).collect();
        let ty = w.u32();
        let offset = w.u64();
        infos.push((name, ty, dims, offset));
    }
    let end_of_infos = w.pos as u64;
    let data_start = end_of_infos.div_ceil(alignment) * alignment;
    assert!(bytes[end_of_infos as usize..data_start as usize].iter().all(|&b| b == 0), "padding is zeros");
    // ggml's type table: (id, block size, type size).
    let sizes = |ty: u32| match ty {
        0 => (1u64, 4u64), // F32
        8 => (32, 34),     // Q8_0
        30 => (1, 2),      // BF16
        t => panic!("type {t} not expected in small.gguf"),
    };
    let mut layout = Vec::new();
    let mut expected_next = 0u64;
    for (name, ty, dims, offset) in &infos {
        let (blck, ts) = sizes(*ty);
        let elems: u64 = dims.iter().product();
        let nbytes = elems / blck * ts;
        assert_eq!(*offset, expected_next, "{name}: each tensor at the next aligned offset");
        assert!(data_start + offset + nbytes <= bytes.len() as u64, "{name}: inside the file");
        let shape: Vec<u64> = dims.iter().rev().copied().collect();
        layout.push((name.clone(), *ty, shape, data_start + offset, nbytes));
        let end = offset + nbytes;
        expected_next = end.div_ceil(alignment) * alignment;
        let gap = &bytes[(data_start + end) as usize..(data_start + expected_next).min(bytes.len() as u64) as usize];
        assert!(gap.iter().all(|&b| b == 0), "{name}: the gap after it is zeros");
    }
    assert_eq!(layout.last().map(|l| l.3 + l.4), Some(bytes.len() as u64), "the last tensor ends the file");
    let names: Vec<&str> = layout.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(names, ["w_f32", "w_q8_0", "e_bf16"]);
    assert!(!names.contains(&"s_f32"), "the spec: s_f32 is not in this file");
    // The numbers this gives (the same as `canonical_facts` computes by hand).
    assert_eq!(data_start, 288);
    let by_hand: Vec<(u64, u64)> = layout.iter().map(|l| (l.3, l.4)).collect();
    assert_eq!(by_hand, [(288, 1024), (1312, 272), (1600, 192)]);
    // Our reader agrees with the walk.
    let f = Gguf::from_slice(&bytes).unwrap();
    assert_eq!(f.data_offset(), data_start);
    let ours: Vec<_> =
        f.tensors().map(|t| (t.name.to_string(), t.dtype.id(), t.shape.to_vec(), t.data_offset, t.nbytes)).collect();
    assert_eq!(ours, layout);
}

/// The Q8_0 tensor is gguf-py's `quantize` of the file's own `w_f32` values, and the BF16 tensor
/// is gguf-py's `quantize` of its source values `(i − 48) / 16` (`tests/py/small_quants.py`): the
/// reference for both, not our codec.
#[test]
fn quantized_tensors_equal_gguf_py() {
    let Some(py) = python() else { return };
    let path = workspace_root().join("tests/data/small.gguf");
    let theirs = run_py(&py, "small_quants.py", &[path.to_str().unwrap()]);
    let bytes = std::fs::read(&path).unwrap();
    let f = Gguf::from_slice(&bytes).unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert_eq!(theirs["w_f32_shape"], serde_json::json!([4, 64]), "gguf-py's view of w_f32");
    let q8 = f.tensor_data_by_name("w_q8_0").unwrap();
    assert_eq!(q8.len(), 272);
    assert_eq!(hex(q8), theirs["q8_0"].as_str().unwrap(), "w_q8_0 vs gguf.quants.quantize(w_f32, Q8_0)");
    let bf = f.tensor_data_by_name("e_bf16").unwrap();
    assert_eq!(bf.len(), 192);
    assert_eq!(hex(bf), theirs["bf16"].as_str().unwrap(), "e_bf16 vs gguf.quants.quantize(source, BF16)");
}
