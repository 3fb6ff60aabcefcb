//! Interoperability with gguf-py (PyPI `gguf`): files we write read the same in gguf-py, and
//! files gguf-py writes read the same here. The expectations come from the inputs (what was
//! written), never from our own reader.

use gguf_serde::{Array, Endian, GgmlType, Gguf, GgufWriter, Value, WriteOptions};
use gguf_tests::{assert_same, describe, python, run_py, sha256, temp_dir};
use serde_json::{json, Value as Json};

/// Deterministic bytes (xorshift), so the test needs no RNG crate.
fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn f32_json(x: f32) -> Json {
    json!(f64::from(x))
}

/// Every value type, arrays of every kind, and tensors of many types; returns the file and the
/// expected description.
fn write_ours(opts: WriteOptions, alignment: Option<u32>) -> (Vec<u8>, Json) {
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    let mut meta = vec![];
    let mut kv = |w: &mut GgufWriter<Vec<u8>>, key: &str, ty: &str, v: Value, j: Json| {
        w.add_value(key, &v).unwrap();
        meta.push(json!({"key": key, "type": ty, "value": j}));
    };
    kv(&mut w, "general.architecture", "string", "llama".into(), json!("llama"));
    if let Some(a) = alignment {
        kv(&mut w, "general.alignment", "u32", Value::U32(a), json!(a));
    }
    kv(&mut w, "t.u8", "u8", Value::U8(255), json!(255));
    kv(&mut w, "t.i8", "i8", Value::I8(-128), json!(-128));
    kv(&mut w, "t.u16", "u16", Value::U16(65535), json!(65535));
    kv(&mut w, "t.i16", "i16", Value::I16(-32768), json!(-32768));
    kv(&mut w, "t.u32", "u32", Value::U32(u32::MAX), json!(u32::MAX));
    kv(&mut w, "t.i32", "i32", Value::I32(i32::MIN), json!(i32::MIN));
    kv(&mut w, "t.f32", "f32", Value::F32(1e-6), f32_json(1e-6));
    kv(&mut w, "t.bool", "bool", Value::Bool(false), json!(false));
    kv(&mut w, "t.string", "string", "Grüße, 世界 🦀".into(), json!("Grüße, 世界 🦀"));
    kv(&mut w, "t.u64", "u64", Value::U64(u64::MAX), json!(u64::MAX));
    kv(&mut w, "t.i64", "i64", Value::I64(i64::MIN), json!(i64::MIN));
    kv(&mut w, "t.f64", "f64", Value::F64(std::f64::consts::PI), json!(std::f64::consts::PI));
    kv(&mut w, "t.a.u8", "array<u8>", vec![0u8, 7, 255].into(), json!([0, 7, 255]));
    kv(&mut w, "t.a.i8", "array<i8>", vec![-1i8, 1].into(), json!([-1, 1]));
    kv(&mut w, "t.a.u16", "array<u16>", vec![1u16, 65535].into(), json!([1, 65535]));
    kv(&mut w, "t.a.i16", "array<i16>", vec![-2i16, 2].into(), json!([-2, 2]));
    kv(&mut w, "t.a.u32", "array<u32>", vec![3u32].into(), json!([3]));
    kv(&mut w, "t.a.i32", "array<i32>", vec![-4i32, 4, 5].into(), json!([-4, 4, 5]));
    kv(&mut w, "t.a.f32", "array<f32>", vec![0.1f32, -2.5].into(), json!([f64::from(0.1f32), -2.5]));
    kv(&mut w, "t.a.bool", "array<bool>", vec![true, false].into(), json!([true, false]));
    kv(&mut w, "t.a.string", "array<string>", vec!["a", "", "ü"].into(), json!(["a", "", "ü"]));
    kv(&mut w, "t.a.u64", "array<u64>", vec![u64::MAX].into(), json!([u64::MAX]));
    kv(&mut w, "t.a.i64", "array<i64>", vec![i64::MIN, 0].into(), json!([i64::MIN, 0]));
    kv(&mut w, "t.a.f64", "array<f64>", vec![1e300f64].into(), json!([1e300]));
    kv(&mut w, "t.a.empty", "array<i32>", Value::Array(Array::I32(vec![])), json!([]));
    // gguf-py's reader does not decode arrays of arrays: only the type is compared (value null).
    let nested = Array::Array(vec![Array::I32(vec![1, 2]), Array::I32(vec![3])]);
    kv(&mut w, "t.a.nested", "array<array<i32>>", Value::Array(nested), Json::Null);

    let specs: Vec<(&str, GgmlType, Vec<u64>)> = vec![
        ("t.f32", GgmlType::F32, vec![3, 5]),
        ("t.f16", GgmlType::F16, vec![2, 3, 4]),
        ("t.bf16", GgmlType::BF16, vec![7]),
        ("t.f64", GgmlType::F64, vec![2, 1, 2, 2]),
        ("t.i8", GgmlType::I8, vec![9]),
        ("t.i16", GgmlType::I16, vec![3, 2]),
        ("t.i32", GgmlType::I32, vec![4]),
        ("t.i64", GgmlType::I64, vec![2]),
        ("t.q4_0", GgmlType::Q4_0, vec![2, 64]),
        ("t.q8_0", GgmlType::Q8_0, vec![3, 32]),
        ("t.q4_k", GgmlType::Q4_K, vec![2, 256]),
        ("t.q6_k", GgmlType::Q6_K, vec![256]),
        ("t.iq4_xs", GgmlType::IQ4_XS, vec![1, 256]),
        ("t.tq2_0", GgmlType::TQ2_0, vec![256]),
        ("t.mxfp4", GgmlType::MXFP4, vec![2, 32]),
        ("t.empty", GgmlType::F32, vec![0, 4]),
    ];
    let mut tensors = vec![];
    let mut data = vec![];
    for (i, (name, dtype, shape)) in specs.iter().enumerate() {
        w.add_tensor(*name, *dtype, shape).unwrap();
        let n = dtype.nbytes(&shape.iter().rev().copied().collect::<Vec<_>>()).unwrap() as usize;
        let b = bytes(i as u64 + 1, n);
        tensors.push(json!({"name": name, "dtype": dtype.name(), "shape": shape, "nbytes": n, "sha256": sha256(&b)}));
        data.push(b);
    }
    for b in &data {
        w.write_tensor_data(b).unwrap();
    }
    let file = w.finish().unwrap();
    let expected = json!({
        "version": opts.version,
        "endianness": opts.endian.name(),
        "alignment": alignment.unwrap_or(32),
        "metadata": meta,
        "tensors": tensors,
    });
    (file, expected)
}

fn we_write_gguf_py_reads(name: &str, opts: WriteOptions, alignment: Option<u32>) {
    let Some(py) = python() else { return };
    let (file, expected) = write_ours(opts, alignment);
    let dir = temp_dir(name);
    let path = dir.join("ours.gguf");
    std::fs::write(&path, &file).unwrap();
    let theirs = run_py(&py, "dump.py", &[path.to_str().unwrap()]);
    assert_same(&theirs, &expected);
    // The tensor offsets gguf-py computes are the ones we report.
    assert_same(&describe(&Gguf::from_slice(&file).unwrap(), true), &theirs);
}

#[test]
fn we_write_little_endian() {
    we_write_gguf_py_reads("we_write_le", WriteOptions::default(), None);
}

#[test]
fn we_write_big_endian() {
    we_write_gguf_py_reads("we_write_be", WriteOptions::new().with_endian(Endian::Big), None);
}

#[test]
fn we_write_alignment_64_and_version_2() {
    we_write_gguf_py_reads("we_write_a64", WriteOptions::new().with_version(2), Some(64));
}

#[test]
fn we_write_alignment_1() {
    we_write_gguf_py_reads("we_write_a1", WriteOptions::default(), Some(1));
}

fn gguf_py_writes_we_read(name: &str, args: &[&str]) {
    let Some(py) = python() else { return };
    let dir = temp_dir(name);
    let path = dir.join("theirs.gguf");
    let mut all = vec![path.to_str().unwrap()];
    all.extend_from_slice(args);
    let expected = run_py(&py, "write_sample.py", &all);
    let bytes = std::fs::read(&path).unwrap();
    let ours = describe(&Gguf::from_slice(&bytes).unwrap(), true);
    assert_same(&ours, &expected);
    // Offsets and sizes agree with gguf-py's own reading of its file.
    assert_same(&ours, &run_py(&py, "dump.py", &[path.to_str().unwrap()]));
    // Same through mmap and through a reader (metadata only).
    assert_same(&describe(&Gguf::open(&path).unwrap(), true), &expected);
    assert_same(
        &describe(&Gguf::from_reader(std::fs::File::open(&path).unwrap()).unwrap(), false),
        &ours_without_hash(&ours),
    );
    // The nested array gguf-py wrote, which its reader cannot decode, reads as written.
    let f = Gguf::from_slice(&bytes).unwrap();
    let nested = f.get("t.arr.nested").unwrap().to_owned_value();
    let want = Array::Array(vec![Array::I32(vec![1, 2]), Array::I32(vec![3]), Array::I32(vec![4, 5, 6])]);
    assert_eq!(nested, Value::Array(want));
}

fn ours_without_hash(j: &Json) -> Json {
    let mut j = j.clone();
    for t in j["tensors"].as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("sha256");
    }
    j
}

#[test]
fn gguf_py_writes_little_endian() {
    gguf_py_writes_we_read("py_le", &[]);
}

#[test]
fn gguf_py_writes_big_endian() {
    gguf_py_writes_we_read("py_be", &["--big-endian"]);
}

#[test]
fn gguf_py_writes_alignment_64() {
    gguf_py_writes_we_read("py_a64", &["--alignment", "64"]);
}
