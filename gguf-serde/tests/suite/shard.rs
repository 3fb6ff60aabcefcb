//! Sharded models on hand-made files: the layout `llama-gguf-split` writes (checked key by key
//! against the facts of its source), the shard plan by tensors and by size (hand-computed),
//! reading a split as one model, every error case, and byte-identical split → merge round trips.
//! The comparison with the real `llama-gguf-split` (same shards byte for byte, and the places
//! where we differ on purpose) is `tests/tests/interop/split_llama.rs`, which needs the llama.cpp build.

use std::path::{Path, PathBuf};

use gguf_serde::container::{parse_shard_path, shard_path, IfExists, ShardedGguf, TensorSource};
use gguf_serde::ops::split::{merge_file, plan_split, split_file, SplitBy, SplitOptions};
use gguf_serde::{
    Endian, Error, ErrorKind, FormatError, GgmlType, Gguf, GgufWriter, ShardError, Value, ValueRef, WriteOptions,
};

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shard").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Five tensors of 32, 128, 68 (Q8_0, 96 padded), 256 and 32 bytes; data bytes a pattern that
/// differs per tensor.
const TENSORS: [(&str, GgmlType, &[u64]); 5] = [
    ("output_norm.weight", GgmlType::F32, &[8]),
    ("token_embd.weight", GgmlType::F32, &[4, 8]),
    ("blk.0.attn_q.weight", GgmlType::Q8_0, &[2, 32]),
    ("blk.0.ffn_up.weight", GgmlType::F32, &[8, 8]),
    ("blk.0.attn_norm.weight", GgmlType::F32, &[8]),
];
const SIZES: [usize; 5] = [32, 128, 68, 256, 32];

fn tensor_bytes(i: usize) -> Vec<u8> {
    (0..SIZES[i]).map(|j| (j * 7 + i * 31 + 1) as u8).collect()
}

fn model(alignment: Option<u32>, endian: Endian) -> Vec<u8> {
    let opts = WriteOptions::new().with_endian(endian);
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("general.name", "tiny").unwrap();
    if let Some(a) = alignment {
        w.add_kv("general.alignment", a).unwrap();
    }
    w.add_kv("llama.block_count", 1u32).unwrap();
    w.add_kv("tokenizer.ggml.tokens", vec!["a", "b", "c"]).unwrap();
    w.add_kv("llama.rope.freq_base", 10000.0f32).unwrap();
    for (name, t, shape) in TENSORS {
        w.add_tensor(name, t, shape).unwrap();
    }
    for i in 0..TENSORS.len() {
        w.write_tensor_data(&tensor_bytes(i)).unwrap();
    }
    w.finish().unwrap()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}

fn keys(f: &Gguf<impl gguf_serde::container::Source>) -> Vec<(String, Value)> {
    f.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect()
}

#[test]
fn shard_names() {
    assert_eq!(shard_path("a/b", 0, 3), PathBuf::from("a/b-00001-of-00003.gguf"));
    assert_eq!(shard_path("m", 65534, 65535), PathBuf::from("m-65535-of-65535.gguf"));
    assert_eq!(parse_shard_path("a/b-00003-of-00003.gguf"), Some((PathBuf::from("a/b"), 2, 3)));
    assert_eq!(parse_shard_path("x-y-00001-of-00012.gguf"), Some((PathBuf::from("x-y"), 0, 12)));
    // `split.count` is a UINT16 (llama.cpp's LLM_KV_SPLIT_COUNT): 65535 shards at most.
    assert_eq!(parse_shard_path("m-65535-of-65535.gguf"), Some((PathBuf::from("m"), 65534, 65535)));
    assert_eq!(parse_shard_path("m-00001-of-65536.gguf"), None);
    // The path must end in the suffix, as llama.cpp's llama_split_prefix compares it: with a
    // slash after it (a folder; `Path::file_name` drops the slash) it is not a shard's.
    assert_eq!(parse_shard_path("a/m-00001-of-00002.gguf/"), None);
    assert_eq!(parse_shard_path("m-00001-of-00002.gguf/."), None);
    // A name that is not UTF-8 (Unix): its bytes before the shard suffix are the prefix.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"a/m\xff-00002-of-00003.gguf"));
        let prefix = PathBuf::from(std::ffi::OsStr::from_bytes(b"a/m\xff"));
        assert_eq!(parse_shard_path(path), Some((prefix.clone(), 1, 3)));
        assert_eq!(shard_path(&prefix, 1, 3), path);
    }
    for bad in [
        "b-00000-of-00003.gguf",
        "b-00004-of-00003.gguf",
        "b-0001-of-00003.gguf",
        "b-00001-of-00003.bin",
        "b-00001_of-00003.gguf",
        "b-0000a-of-00003.gguf",
        "b-00001-of-99999.gguf",
        "b.gguf",
    ] {
        assert_eq!(parse_shard_path(bad), None, "{bad}");
    }
}

/// The plans `llama-gguf-split`'s rule gives (its `should_split`, worked by hand here; the tool
/// itself is run in `tests/tests/interop/split_llama.rs`).
#[test]
fn plans_match_llama_gguf_split() {
    let bytes = model(None, Endian::Little);
    let f = Gguf::from_slice(&bytes).unwrap();
    let plan = |by, first| plan_split(&f, &SplitOptions::new(by).with_no_tensor_first_split(first)).unwrap();
    // Every N tensors.
    assert_eq!(plan(SplitBy::MaxTensors(2), false), vec![0..2, 2..4, 4..5]);
    assert_eq!(plan(SplitBy::MaxTensors(5), false), vec![0..5]);
    assert_eq!(plan(SplitBy::MaxTensors(1), false), vec![0..1, 1..2, 2..3, 3..4, 4..5]);
    assert_eq!(plan(SplitBy::MaxTensors(2), true), vec![0..0, 0..2, 2..4, 4..5]);
    // Sizes padded to 32: 32, 128, 96, 256, 32. A limit of 200: 32+128 = 160 fits, +96 does not;
    // 96+256 does not; 256+32 does not.
    assert_eq!(plan(SplitBy::MaxBytes(200), false), vec![0..2, 2..3, 3..4, 4..5]);
    // 288: 32+128+96 = 256 fits, +256 does not; 256+32 = 288 fits.
    assert_eq!(plan(SplitBy::MaxBytes(288), false), vec![0..3, 3..5]);
    // Smaller than any tensor: one tensor per shard, never an empty shard. Here llama-gguf-split
    // differs on purpose: its first shard would be empty, so it exits with an error instead
    // (tests/tests/interop/split_llama.rs runs the tool; gguf-cli's split docs list the differences).
    assert_eq!(plan(SplitBy::MaxBytes(1), false).len(), 5);
    assert!(matches!(
        plan_split(&f, &SplitOptions::new(SplitBy::MaxTensors(0)).with_no_tensor_first_split(false))
            .map_err(Error::into_kind),
        Err(ErrorKind::Shard(ShardError::CannotSplit { .. }))
    ));
}

/// The layout of each shard, key by key, as `llama-gguf-split` writes it.
#[test]
fn split_layout() {
    let d = dir("layout");
    let input = d.join("in.gguf");
    let original = model(Some(64), Endian::Little);
    write(&input, &original);
    let orig = Gguf::from_slice(&original).unwrap();
    let paths = split_file(&input, d.join("out"), &SplitOptions::new(SplitBy::MaxTensors(2))).unwrap();
    let names: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["out-00001-of-00003.gguf", "out-00002-of-00003.gguf", "out-00003-of-00003.gguf"]);
    let split_keys = |no: u16| {
        vec![
            ("split.no".to_owned(), Value::U16(no)),
            ("split.tensors.count".to_owned(), Value::I32(5)),
            ("split.count".to_owned(), Value::U16(3)),
        ]
    };
    let mut tensor = 0;
    for (i, p) in paths.iter().enumerate() {
        let bytes = std::fs::read(p).unwrap();
        let s = Gguf::from_slice(&bytes).unwrap();
        let mut want = if i == 0 { keys(&orig) } else { vec![] };
        want.extend(split_keys(i as u16));
        assert_eq!(keys(&s), want, "keys of shard {i}");
        // The first shard keeps the model's alignment; later shards have no general.alignment.
        assert_eq!(s.alignment(), if i == 0 { 64 } else { 32 });
        for t in s.tensors() {
            assert_eq!(t.name, TENSORS[tensor].0);
            assert_eq!(&*t.shape, TENSORS[tensor].2);
            assert_eq!(t.data_offset % u64::from(s.alignment()), 0);
            assert_eq!(s.tensor_data(&t).unwrap(), tensor_bytes(tensor), "data of {}", t.name);
            tensor += 1;
        }
    }
    assert_eq!(tensor, 5);
}

/// The paths `split_file` returns are the shard names of the prefix as given (`PREFIX-00001-of-
/// 00002.gguf`, llama.cpp's `llama_split_path`), also when the shards replace files there and the
/// folder is reached through a symbolic link (the link is not resolved: only a link at a shard's
/// own name is followed, to replace the file it points to).
#[test]
#[cfg(unix)]
fn split_paths_are_the_prefix_as_given() {
    let d = dir("through-a-link");
    let input = d.join("in.gguf");
    write(&input, &model(None, Endian::Little));
    std::fs::create_dir(d.join("real")).unwrap();
    std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
    let prefix = d.join("link").join("m");
    let want: Vec<PathBuf> = (0..3).map(|i| shard_path(&prefix, i, 3)).collect();
    assert_eq!(want[0], d.join("link/m-00001-of-00003.gguf"));
    for round in ["new", "replacing"] {
        let paths = split_file(&input, &prefix, &SplitOptions::new(SplitBy::MaxTensors(2))).unwrap();
        assert_eq!(paths, want, "{round}");
    }
    let mut names: Vec<_> =
        std::fs::read_dir(d.join("real")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["m-00001-of-00003.gguf", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"]);
}

#[test]
fn sharded_reads_as_one_model_and_merges_back_identically() {
    for (alignment, endian) in [(None, Endian::Little), (Some(64), Endian::Little), (Some(8), Endian::Big)] {
        let d = dir(&format!("roundtrip-{alignment:?}-{endian:?}"));
        let input = d.join("in.gguf");
        let original = model(alignment, endian);
        write(&input, &original);
        let orig = Gguf::from_slice(&original).unwrap();
        for (by, first) in
            [(SplitBy::MaxTensors(2), false), (SplitBy::MaxBytes(200), true), (SplitBy::MaxTensors(9), false)]
        {
            let paths =
                split_file(&input, d.join("s"), &SplitOptions::new(by).with_no_tensor_first_split(first)).unwrap();
            // Opened from any shard: one model with the original's metadata and tensors.
            for p in &paths {
                let m = ShardedGguf::open(p).unwrap();
                assert_eq!(m.shard_count(), paths.len());
                let mk: Vec<(String, Value)> =
                    m.metadata().map(|kv| (kv.key.to_string(), kv.value.to_owned_value())).collect();
                assert_eq!(mk, keys(&orig));
                assert_eq!(m.get("split.count"), None);
                assert_eq!(m.get("general.name"), Some(ValueRef::String("tiny".into())));
                assert_eq!(m.tensor_count(), 5);
                let names: Vec<&str> = m.tensors().map(|t| t.info.name.to_str().unwrap()).collect();
                assert_eq!(names, TENSORS.map(|t| t.0));
                for (i, (name, _, shape)) in TENSORS.iter().enumerate() {
                    let (info, data) = m.tensor_bytes(name).unwrap();
                    assert_eq!((&*info.shape, data), (*shape, &tensor_bytes(i)[..]));
                }
                assert!(matches!(m.tensor_bytes("nope").map_err(Error::into_kind), Err(ErrorKind::NotFound { .. })));
            }
            let merged = d.join("merged.gguf");
            merge_file(&paths[paths.len() - 1], &merged, IfExists::Replace).unwrap();
            assert!(std::fs::read(&merged).unwrap() == original, "{by:?}: merge differs from the original");
            for p in paths {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
}

#[test]
fn single_file_is_a_one_shard_model() {
    let d = dir("single");
    let p = d.join("plain.gguf");
    write(&p, &model(None, Endian::Little));
    let m = ShardedGguf::open(&p).unwrap();
    assert_eq!((m.shard_count(), m.tensor_count()), (1, 5));
    assert_eq!(m.tensor("token_embd.weight").unwrap().shard, 0);
    // The single file is a tensor source too, with the same answers.
    let bytes = model(None, Endian::Little);
    let f = Gguf::from_slice(&bytes).unwrap();
    for src in [&f as &dyn TensorSource, &m as &dyn TensorSource] {
        assert_eq!(src.tensor_count(), 5);
        let names: Vec<&str> = src.tensor_infos().map(|t| t.name.to_str().unwrap()).collect();
        assert_eq!(names, TENSORS.map(|t| t.0));
        assert_eq!(src.tensor_bytes("blk.0.ffn_up.weight").unwrap().1, tensor_bytes(3));
        assert_eq!(&*src.tensor_info("blk.0.attn_q.weight").unwrap().shape, &[2, 32]);
        assert!(matches!(
            src.tensor_bytes("x").map_err(Error::into_kind),
            Err(ErrorKind::NotFound { what: "tensor", .. })
        ));
    }
}

/// A split model's `version` is its first shard's GGUF version (the header's `uint32_t version`,
/// spec "File Structure"): 3 as written, and 2 for shards whose header says 2 (the version 2
/// layout is version 3's for little-endian files; ggml reads both).
#[test]
fn a_split_models_version_is_its_first_shards() {
    let d = dir("version");
    let p = |i: u16| shard_path(d.join("m"), i, 2);
    for version in [3u32, 2] {
        shard(&p(0), &split_kv(0, 2, 5), &[0, 1, 2]);
        shard(&p(1), &split_kv(1, 2, 5), &[3, 4]);
        for i in 0..2 {
            let mut bytes = std::fs::read(p(i)).unwrap();
            bytes[4..8].copy_from_slice(&version.to_le_bytes());
            write(&p(i), &bytes);
        }
        let m = ShardedGguf::open(p(1)).unwrap();
        assert_eq!((m.shard_count(), m.version()), (2, version));
    }
}

/// Writes a shard by hand: `keys` then the tensors `tensors` (indices into TENSORS).
fn shard(path: &Path, keys: &[(&str, Value)], tensors: &[usize]) {
    let mut w = GgufWriter::new(Vec::new());
    for (k, v) in keys {
        w.add_value(k, v).unwrap();
    }
    for &i in tensors {
        let (name, t, shape) = TENSORS[i];
        w.add_tensor(name, t, shape).unwrap();
    }
    for &i in tensors {
        w.write_tensor_data(&tensor_bytes(i)).unwrap();
    }
    write(path, &w.finish().unwrap());
}

fn split_kv(no: u16, count: u16, total: i32) -> Vec<(&'static str, Value)> {
    vec![("split.no", Value::U16(no)), ("split.count", Value::U16(count)), ("split.tensors.count", Value::I32(total))]
}

#[test]
fn errors() {
    let d = dir("errors");
    let p = |i: u16, n: u16| shard_path(d.join("m"), i, n);

    // A missing shard.
    shard(&p(0, 3), &split_kv(0, 3, 5), &[0, 1]);
    shard(&p(2, 3), &split_kv(2, 3, 5), &[4]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shard(ShardError::Missing { index: 2, count: 3, .. })), "{e:?}");
    assert_eq!(e.to_string(), format!("shard 2 of 3 is missing: {}", p(1, 3).display()));
    assert_eq!(e.shard(), Some(p(1, 3).as_path()));
    // A shard that is there but cannot be opened (a symbolic link to itself: `ELOOP`) is not
    // missing: the I/O error, naming the shard.
    std::os::unix::fs::symlink(p(1, 3), p(1, 3)).unwrap();
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(io) if io.raw_os_error() == Some(libc::ELOOP)), "{e:?}");
    assert_eq!(e.shard(), Some(p(1, 3).as_path()));
    std::fs::remove_file(p(1, 3)).unwrap();

    // A shard of another split: wrong split.count, wrong split.no, no split.no.
    shard(&p(1, 3), &split_kv(1, 4, 5), &[2, 3]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::Shard(ShardError::Mismatch { key: "split.count", expected: 3, found: Some(4), .. })
        ),
        "{e:?}"
    );
    assert_eq!(e.to_string(), format!("shard {}: split.count is 4, expected 3", p(1, 3).display()));
    assert_eq!((e.shard(), e.key()), (Some(p(1, 3).as_path()), Some("split.count")));
    shard(&p(1, 3), &split_kv(2, 3, 5), &[2, 3]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Shard(ShardError::Mismatch { key: "split.no", expected: 1, found: Some(2), .. })),
        "{e:?}"
    );
    // split.no is 0-based (llama.cpp's LLM_KV_SPLIT_NO): 3 is not a shard of 3, in the file
    // given either.
    shard(&p(2, 3), &split_kv(3, 3, 5), &[4]);
    let e = ShardedGguf::open(p(2, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Shard(ShardError::Mismatch { key: "split.no", expected: 2, found: Some(3), .. })),
        "{e:?}"
    );
    shard(&p(2, 3), &split_kv(2, 3, 5), &[4]);
    shard(&p(1, 3), &[("split.count", Value::U16(3))], &[2, 3]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shard(ShardError::Mismatch { key: "split.no", found: None, .. })), "{e:?}");
    assert!(e.to_string().ends_with("split.no is missing or not an integer, expected 1"), "{e}");

    // Now complete and valid, from every shard.
    shard(&p(1, 3), &split_kv(1, 3, 5), &[2, 3]);
    for i in 0..3 {
        assert_eq!(ShardedGguf::open(p(i, 3)).unwrap().tensor_count(), 5);
    }

    // split.tensors.count that does not match, in the first shard or a later one.
    shard(&p(0, 3), &split_kv(0, 3, 6), &[0, 1]);
    let e = ShardedGguf::open(p(1, 3)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shard(ShardError::TensorCount { declared: 6, found: 5, .. })), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("shard {}: split.tensors.count is 6, but the shards hold 5 tensors", p(0, 3).display())
    );
    shard(&p(0, 3), &split_kv(0, 3, 5), &[0, 1]);
    shard(&p(2, 3), &split_kv(2, 3, 4), &[4]);
    assert!(matches!(
        ShardedGguf::open(p(0, 3)).map_err(Error::into_kind),
        Err(ErrorKind::Shard(ShardError::TensorCount { declared: 4, .. }))
    ));
    // Missing in the first shard (llama.cpp requires it there).
    shard(&p(0, 3), &[("split.no", Value::U16(0)), ("split.count", Value::U16(3))], &[0, 1]);
    shard(&p(2, 3), &split_kv(2, 3, 5), &[4]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Shard(ShardError::Mismatch { key: "split.tensors.count", found: None, .. })),
        "{e:?}"
    );

    // A tensor in two shards.
    shard(&p(0, 3), &split_kv(0, 3, 5), &[0, 1]);
    shard(&p(2, 3), &split_kv(2, 3, 5), &[1]);
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Shard(ShardError::TensorInTwoShards { name, .. }) if name == "token_embd.weight"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("tensor \"token_embd.weight\" is in two shards: {} and {}", p(0, 3).display(), p(2, 3).display())
    );

    // An invalid shard: the error names it.
    write(&p(2, 3), b"GGUF\x03\x00\x00\x00");
    let e = ShardedGguf::open(p(0, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::Truncated { .. })) && e.shard() == Some(p(2, 3).as_path()),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!("shard {}: file truncated: header at offset 8 needs 8 bytes, only 0 remain", p(2, 3).display())
    );
    assert_eq!(e.offset(), Some(8));
    // Opened itself, it is named too: its name says it is shard 3 of 3 (its keys cannot be read).
    let e = ShardedGguf::open(p(2, 3)).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::Format(FormatError::Truncated { .. })) && e.shard() == Some(p(2, 3).as_path()),
        "{e:?}"
    );
    // A file whose name makes it the one shard of a split of 1 is a whole model: its error is
    // the one `Gguf::open` gives, not a shard's.
    let one = p(0, 1);
    write(&one, b"GGUF\x03\x00\x00\x00");
    let e = ShardedGguf::open(&one).unwrap_err();
    assert_eq!((e.shard(), e.to_string()), (None, Gguf::open(&one).unwrap_err().to_string()));

    // A big-endian shard among little-endian ones.
    {
        let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::new().with_endian(Endian::Big)).unwrap();
        for (k, v) in split_kv(2, 3, 5) {
            w.add_value(k, &v).unwrap();
        }
        w.add_tensor(TENSORS[4].0, TENSORS[4].1, TENSORS[4].2).unwrap();
        w.write_tensor_data(&tensor_bytes(4)).unwrap();
        write(&p(2, 3), &w.finish().unwrap());
        let e = ShardedGguf::open(p(0, 3)).unwrap_err();
        assert_eq!(e.to_string(), format!("shard {}: big-endian, unlike the first shard", p(2, 3).display()));
    }

    // A shard whose name does not follow the pattern, or disagrees with its keys.
    let odd = d.join("renamed.gguf");
    shard(&odd, &split_kv(0, 3, 5), &[0, 1]);
    let e = ShardedGguf::open(&odd).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Shard(ShardError::BadName { index: 1, count: 3, .. })), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("{}: not a shard file name (expected PREFIX-00001-of-00003.gguf)", odd.display())
    );
    let wrong = shard_path(d.join("w"), 1, 3);
    shard(&wrong, &split_kv(0, 3, 5), &[0, 1]);
    assert!(matches!(
        ShardedGguf::open(&wrong).map_err(Error::into_kind),
        Err(ErrorKind::Shard(ShardError::BadName { .. }))
    ));

    // split.count 0 (what llama-gguf-split --merge leaves) or 1: a single file.
    let merged = d.join("merged.gguf");
    shard(&merged, &split_kv(0, 0, 2), &[0, 1]);
    assert_eq!(ShardedGguf::open(&merged).unwrap().tensor_count(), 2);

    // Merging is refused for a file llama-gguf-split --merge refuses (gguf-split.cpp: "input file
    // does not contain split.count metadata", "... a valid split count 0"), writing nothing.
    let plain = d.join("plain.gguf");
    shard(&plain, &[], &[0, 1]);
    let out = d.join("out.gguf");
    for (input, why) in [(&plain, "it has no split.count"), (&merged, "its split.count is 0")] {
        let e = merge_file(input, &out, IfExists::Replace).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Shard(ShardError::CannotMerge { .. })), "{e:?}");
        assert!(e.to_string().starts_with("cannot merge: ") && e.to_string().contains(why), "{e}");
        assert!(!out.exists());
    }
}
