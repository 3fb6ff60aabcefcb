//! Metadata editing on hand-made files: each edit's effect on the keys, tensor data kept byte for
//! byte, alignment changes re-laying out the data, errors leaving the file untouched, and value
//! parsing and type inference.

use std::path::{Path, PathBuf};

use gguf_serde::ops::edit::{edit_file, parse_value, rewrite_file, Edit};
use gguf_serde::{Endian, Error, ErrorKind, GgmlType, Gguf, GgufWriter, Value, ValueType, WriteOptions};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("edit").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TENSORS: [(&str, GgmlType, &[u64], usize); 3] =
    [("a", GgmlType::F32, &[3, 8], 96), ("b", GgmlType::Q8_0, &[32], 34), ("c", GgmlType::F16, &[5], 10)];

fn data(i: usize) -> Vec<u8> {
    (0..TENSORS[i].3).map(|j| (j * 13 + i * 17 + 5) as u8).collect()
}

fn model(endian: Endian) -> Vec<u8> {
    let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::new().with_endian(endian)).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("general.name", "tiny").unwrap();
    w.add_kv("llama.context_length", 2048u32).unwrap();
    w.add_kv("llama.rope.scale", 0.5f32).unwrap();
    w.add_kv("tokenizer.ggml.scores", vec![1.0f32, 2.0]).unwrap();
    for (n, t, s, _) in TENSORS {
        w.add_tensor(n, t, s).unwrap();
    }
    for i in 0..3 {
        w.write_tensor_data(&data(i)).unwrap();
    }
    w.finish().unwrap()
}

fn keys(bytes: &[u8]) -> Vec<(String, Value)> {
    Gguf::from_slice(bytes).unwrap().metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect()
}

fn kv(k: &str, v: impl Into<Value>) -> (String, Value) {
    (k.to_owned(), v.into())
}

fn check_data(bytes: &[u8], alignment: u64) {
    let f = Gguf::from_slice(bytes).unwrap();
    for (i, (n, ..)) in TENSORS.iter().enumerate() {
        let t = f.tensor(n).unwrap();
        assert_eq!(t.data_offset % alignment, 0, "{n} at {}", t.data_offset);
        assert_eq!(f.tensor_data(&t).unwrap(), data(i), "data of {n}");
    }
}

fn set(k: &str, v: impl Into<Value>) -> Edit {
    Edit::Set { key: k.into(), value: v.into() }
}

#[test]
fn edits() {
    for endian in [Endian::Little, Endian::Big] {
        let d = dir(&format!("edits-{endian:?}"));
        let p = d.join("m.gguf");
        let original = model(endian);
        std::fs::write(&p, &original).unwrap();
        let orig_data_start = Gguf::from_slice(&original).unwrap().data_offset() as usize;

        // Set in place (with a new type), set a new key (appended), remove, rename.
        edit_file(&p, &[set("general.name", "renamed model"), set("llama.context_length", 4096u64)]).unwrap();
        edit_file(&p, &[set("general.new", -3i16), Edit::Remove { key: "llama.rope.scale".into() }]).unwrap();
        edit_file(&p, &[Edit::Rename { from: "general.architecture".into(), to: "general.arch".into() }]).unwrap();
        let now = std::fs::read(&p).unwrap();
        assert_eq!(
            keys(&now),
            vec![
                kv("general.arch", "llama"),
                kv("general.name", "renamed model"),
                kv("llama.context_length", 4096u64),
                kv("tokenizer.ggml.scores", vec![1.0f32, 2.0]),
                kv("general.new", -3i16),
            ]
        );
        let f = Gguf::from_slice(&now).unwrap();
        assert_eq!(f.endian(), endian);
        check_data(&now, 32);
        // The data section moved with the metadata but is the same bytes.
        assert_eq!(now[f.data_offset() as usize..], original[orig_data_start..]);

        // Back to the original keys: byte-identical to the original file.
        edit_file(
            &p,
            &[
                Edit::Rename { from: "general.arch".into(), to: "general.architecture".into() },
                set("general.name", "tiny"),
                set("llama.context_length", 2048u32),
                Edit::Remove { key: "general.new".into() },
                Edit::Remove { key: "tokenizer.ggml.scores".into() },
                set("llama.rope.scale", 0.5f32),
                set("tokenizer.ggml.scores", vec![1.0f32, 2.0]),
            ],
        )
        .unwrap();
        assert!(std::fs::read(&p).unwrap() == original, "not byte-identical after undoing the edits");
    }
}

#[test]
fn alignment_changes_relayout_the_data() {
    let d = dir("alignment");
    let p = d.join("m.gguf");
    let original = model(Endian::Little);
    std::fs::write(&p, &original).unwrap();
    for a in [64u32, 1, 4096, 8] {
        edit_file(&p, &[set("general.alignment", a)]).unwrap();
        let now = std::fs::read(&p).unwrap();
        let f = Gguf::from_slice(&now).unwrap();
        assert_eq!(f.alignment(), a);
        assert_eq!(f.data_offset() % u64::from(a), 0);
        check_data(&now, u64::from(a));
        // ggml's layout: each tensor at the running sum of the sizes padded to the alignment.
        let pad = |n: u64| n.div_ceil(u64::from(a)) * u64::from(a);
        let offs: Vec<u64> = f.tensors().map(|t| t.relative_offset).collect();
        assert_eq!(offs, vec![0, pad(96), pad(96) + pad(34)]);
        assert_eq!(f.file_len(), f.data_offset() + pad(96) + pad(34) + pad(10));
    }
    edit_file(&p, &[Edit::Remove { key: "general.alignment".into() }]).unwrap();
    assert!(std::fs::read(&p).unwrap() == original);
}

#[test]
fn bad_edits_leave_the_file_untouched() {
    let d = dir("bad");
    let p = d.join("m.gguf");
    let original = model(Endian::Little);
    std::fs::write(&p, &original).unwrap();
    let cases: Vec<(Vec<Edit>, &str)> = vec![
        (vec![Edit::Remove { key: "nope".into() }], "cannot edit \"nope\": no such key to remove"),
        (vec![Edit::Rename { from: "nope".into(), to: "x".into() }], "cannot edit \"nope\": no such key to rename"),
        (
            vec![Edit::Rename { from: "general.name".into(), to: "general.architecture".into() }],
            "cannot edit \"general.name\": cannot rename to \"general.architecture\": that key exists",
        ),
        // Refused before anything is written, naming the key and the value, no offset of the
        // output (which the user never sees).
        (
            vec![set("general.alignment", 3u32)],
            "cannot edit \"general.alignment\": the value is 3, not a power of two (ggml takes a u32 power of two)",
        ),
        (vec![set("general.alignment", 0u32)], "cannot edit \"general.alignment\": the value is 0 ("),
        (
            vec![Edit::Rename { from: "general.name".into(), to: "general.alignment".into() }],
            "cannot edit \"general.alignment\": the value has type string, expected u32 (",
        ),
        (vec![set("a..b", 1u8)], "cannot edit \"a..b\": a segment between dots is empty"),
        (vec![set("a.", 1u8)], "cannot edit \"a.\": a segment between dots is empty"),
        (
            vec![Edit::Rename { from: "general.name".into(), to: ".name".into() }],
            "cannot edit \".name\": a segment between dots is empty",
        ),
        (
            vec![set("general.alignment", 64u64)],
            "cannot edit \"general.alignment\": the value has type u64, expected u32",
        ),
        // Refused before anything is written: no offset (there is no output to point into).
        (vec![set("", 1u8)], "cannot edit \"\": a new key must be 1 to 65,535 bytes long, not 0"),
        (
            vec![Edit::Rename { from: "general.name".into(), to: Vec::new() }],
            "cannot edit \"\": a new key must be 1 to 65,535 bytes long, not 0",
        ),
    ];
    for (edits, msg) in cases {
        let e = edit_file(&p, &edits).unwrap_err();
        assert!(e.to_string().contains(msg), "{e} does not contain {msg}");
        if msg.contains("a new key must be") || msg.contains("general.alignment") {
            assert_eq!(e.offset(), None, "{e}");
        }
        if msg.contains("general.alignment") {
            assert!(!e.to_string().contains("byte") && !e.to_string().contains("output"), "{e}");
        }
        assert!(std::fs::read(&p).unwrap() == original);
    }
    // No temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("m.gguf")]);
    // Renaming a key to itself changes nothing.
    edit_file(&p, &[Edit::Rename { from: "general.name".into(), to: "general.name".into() }]).unwrap();
    assert!(std::fs::read(&p).unwrap() == original);
}

#[test]
fn rewrite_to_another_path_keeps_the_input() {
    let d = dir("other");
    let (p, q) = (d.join("in.gguf"), d.join("out.gguf"));
    let original = model(Endian::Little);
    std::fs::write(&p, &original).unwrap();
    rewrite_file(&p, &q, &[set("general.name", "x")]).unwrap();
    assert!(std::fs::read(&p).unwrap() == original);
    assert_eq!(keys(&std::fs::read(&q).unwrap())[1], kv("general.name", "x"));
}

#[cfg(unix)]
#[test]
fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir("perm");
    let p = d.join("m.gguf");
    std::fs::write(&p, model(Endian::Little)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    edit_file(&p, &[set("general.name", "x")]).unwrap();
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn value_parsing() {
    let p = |text: &str, ty: Option<&str>| parse_value("k", text, ty.map(|t| ValueType::from_name(t).unwrap()), None);
    // Inferred for a new key.
    assert_eq!(p("7", None).unwrap(), Value::U32(7));
    assert_eq!(p("4294967295", None).unwrap(), Value::U32(u32::MAX));
    assert_eq!(p("4294967296", None).unwrap(), Value::U64(1 << 32));
    assert_eq!(p("-1", None).unwrap(), Value::I32(-1));
    assert_eq!(p("-2147483649", None).unwrap(), Value::I64(-2_147_483_649));
    assert_eq!(p("0.5", None).unwrap(), Value::F32(0.5));
    assert_eq!(p("1e-6", None).unwrap(), Value::F32(1e-6));
    assert_eq!(p("true", None).unwrap(), Value::Bool(true));
    assert_eq!(p("llama", None).unwrap(), Value::String("llama".into()));
    assert_eq!(p("1.2.3", None).unwrap(), Value::String("1.2.3".into()));
    assert_eq!(p("", None).unwrap(), Value::String(String::new()));
    // Explicit types, with range checks.
    assert_eq!(p("255", Some("u8")).unwrap(), Value::U8(255));
    assert!(matches!(p("256", Some("u8")).map_err(Error::into_kind), Err(ErrorKind::Edit(_))));
    assert_eq!(p("-128", Some("i8")).unwrap(), Value::I8(-128));
    assert_eq!(p("65535", Some("u16")).unwrap(), Value::U16(65535));
    assert_eq!(p("-5", Some("i16")).unwrap(), Value::I16(-5));
    assert!(matches!(p("-1", Some("u32")).map_err(Error::into_kind), Err(ErrorKind::Edit(_))));
    assert_eq!(p("-5", Some("i64")).unwrap(), Value::I64(-5));
    assert_eq!(p("18446744073709551615", Some("u64")).unwrap(), Value::U64(u64::MAX));
    assert_eq!(p("0.1", Some("f64")).unwrap(), Value::F64(0.1));
    assert_eq!(p("0", Some("bool")).unwrap(), Value::Bool(false));
    assert_eq!(p("7", Some("string")).unwrap(), Value::String("7".into()));
    assert_eq!(p("x", Some("f32")).unwrap_err().to_string(), "cannot edit \"k\": \"x\" is not a valid f32");
    // An existing key keeps its type.
    let bytes = model(Endian::Little);
    let f = Gguf::from_slice(&bytes).unwrap();
    let ex = |k: &str, text: &str| parse_value(k, text, None, f.get(k));
    assert_eq!(ex("llama.context_length", "8").unwrap(), Value::U32(8));
    assert_eq!(ex("llama.rope.scale", "8").unwrap(), Value::F32(8.0));
    assert_eq!(ex("general.name", "8").unwrap(), Value::String("8".into()));
    assert!(matches!(ex("tokenizer.ggml.scores", "8").map_err(Error::into_kind), Err(ErrorKind::Edit(_))));
}

/// A key with an empty segment that a file already holds (the reader and `GgufWriter::add_kv`
/// keep such keys, real files may have them) can still be set, removed and renamed away; only a
/// new key of that form is refused ([`gguf_serde::EditError::EmptySegment`]).
#[test]
fn existing_keys_with_an_empty_segment_stay_editable() {
    let d = dir("empty_segment");
    let p = d.join("m.gguf");
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("x..y", 1u32).unwrap();
    w.add_kv("z.", 2u32).unwrap();
    std::fs::write(&p, w.finish().unwrap()).unwrap();
    edit_file(&p, &[set("x..y", 5u32)]).unwrap();
    assert_eq!(keys(&std::fs::read(&p).unwrap()), vec![kv("x..y", 5u32), kv("z.", 2u32)]);
    edit_file(&p, &[Edit::Rename { from: "x..y".into(), to: "x.y".into() }, Edit::Remove { key: "z.".into() }])
        .unwrap();
    assert_eq!(keys(&std::fs::read(&p).unwrap()), vec![kv("x.y", 5u32)]);
    let e = edit_file(&p, &[Edit::Rename { from: "x.y".into(), to: "x..y".into() }]).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Edit(gguf_serde::EditError::EmptySegment { key, .. }) if key == "x..y"),
        "{e:?}"
    );
    assert_eq!(e.key(), Some("x..y"));
    assert_eq!(keys(&std::fs::read(&p).unwrap()), vec![kv("x.y", 5u32)]);
}
