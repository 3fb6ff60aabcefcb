//! The editing and sharding commands of `gguf` on hand-made files and on the Gemma 3 270M model:
//! `split`, `merge`, `set`, `rm`, `rename`, `diff`. Every file the commands write is read back
//! by gguf-py and compared with hand-stated expectations (keys, types, values, tensor shapes and
//! data hashes).

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf_serde::{GgmlType, Gguf, GgufWriter};
use gguf_tests::{assert_same, describe, model, python, run_py, sha256, temp_dir};
use serde_json::{json, Value as Json};

use super::{gguf, gguf_ok as ok, s};

/// Tensor `i` of the hand-made model: `n` f32 values, bytes a pattern per tensor.
fn data(i: usize, n: usize) -> Vec<u8> {
    (0..n * 4).map(|j| (j * 11 + i * 29 + 3) as u8).collect()
}

/// A model of `n` F32 tensors `blk.I.w` of shape [rows, 16]; returns the file and the expected
/// gguf-py view of its tensors (name, dtype, canonical shape, sha256 of the data).
fn hand_made(dir: &Path, n: usize, rows: u64) -> (PathBuf, Vec<u8>, Vec<Json>) {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("general.name", "hand made").unwrap();
    w.add_kv("llama.context_length", 2048u32).unwrap();
    w.add_kv("llama.rope.freq_base", 10000.0f32).unwrap();
    w.add_kv("tokenizer.ggml.tokens", vec!["<s>", "</s>", "a"]).unwrap();
    let mut tensors = Vec::new();
    for i in 0..n {
        w.add_tensor(&format!("blk.{i}.w"), GgmlType::F32, &[rows, 16]).unwrap();
        tensors.push(json!({"name": format!("blk.{i}.w"), "dtype": "F32", "shape": [rows, 16],
            "sha256": sha256(&data(i, rows as usize * 16))}));
    }
    for i in 0..n {
        w.write_tensor_data(&data(i, rows as usize * 16)).unwrap();
    }
    let bytes = w.finish().unwrap();
    let p = dir.join("model.gguf");
    std::fs::write(&p, &bytes).unwrap();
    (p, bytes, tensors)
}

fn base_keys() -> Vec<Json> {
    vec![
        json!({"key": "general.architecture", "type": "string", "value": "llama"}),
        json!({"key": "general.name", "type": "string", "value": "hand made"}),
        json!({"key": "llama.context_length", "type": "u32", "value": 2048}),
        json!({"key": "llama.rope.freq_base", "type": "f32", "value": 10000.0}),
        json!({"key": "tokenizer.ggml.tokens", "type": "array<string>", "value": ["<s>", "</s>", "a"]}),
    ]
}

fn split_keys(no: u16, count: u16, total: i32) -> Vec<Json> {
    vec![
        json!({"key": "split.no", "type": "u16", "value": no}),
        json!({"key": "split.tensors.count", "type": "i32", "value": total}),
        json!({"key": "split.count", "type": "u16", "value": count}),
    ]
}

/// gguf-py's view of `path` equals `metadata` and `tensors`; so does ours.
fn gguf_py_sees(path: &Path, metadata: Vec<Json>, tensors: Vec<Json>, hash: bool) {
    let expected = json!({"metadata": metadata, "tensors": tensors});
    let ours = describe(&Gguf::open(path).unwrap(), hash);
    assert_same(&ours, &expected);
    let Some(py) = python() else { return };
    let mut args = vec![s(path)];
    if !hash {
        args.push("--no-tensor-hash");
    }
    let theirs = run_py(&py, "dump.py", &args);
    assert_same(&theirs, &expected);
    // Offsets and alignment agree too.
    assert_same(&ours, &theirs);
}

#[test]
fn split_by_tensors_and_merge_back() {
    let d = temp_dir("cli-split-tensors");
    let (input, original, tensors) = hand_made(&d, 5, 2);
    let prefix = d.join("out");
    let listed = ok(&["split", "--split-max-tensors", "2", s(&input), s(&prefix)]);
    let paths: Vec<PathBuf> = (1..=3).map(|i| d.join(format!("out-0000{i}-of-00003.gguf"))).collect();
    assert_eq!(listed, paths.iter().map(|p| format!("{}\n", p.display())).collect::<String>());
    // The first shard has the metadata and the split keys; the others the split keys only.
    for (i, p) in paths.iter().enumerate() {
        let mut keys = if i == 0 { base_keys() } else { vec![] };
        keys.extend(split_keys(i as u16, 3, 5));
        let mine: Vec<Json> = tensors.iter().skip(2 * i).take(2).cloned().collect();
        gguf_py_sees(p, keys, mine, true);
    }
    let merged = d.join("merged.gguf");
    ok(&["merge", s(&paths[1]), s(&merged)]);
    assert!(std::fs::read(&merged).unwrap() == original, "merged file differs from the original");
    // An existing output is refused without --force.
    let out = gguf(&["merge", s(&paths[0]), s(&merged)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists (use --force to replace it)"));
    ok(&["merge", "--force", s(&paths[0]), s(&merged)]);
    assert!(std::fs::read(&merged).unwrap() == original);
    // A missing shard.
    std::fs::remove_file(&paths[2]).unwrap();
    let out = gguf(&["merge", "--force", s(&paths[0]), s(&merged)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("shard 3 of 3 is missing: {}", paths[2].display())), "{err}");
}

#[test]
fn split_by_size() {
    let d = temp_dir("cli-split-size");
    // Four tensors of 16 × 16 f32 = 1024 bytes.
    let (input, original, tensors) = hand_made(&d, 4, 16);
    // 2K = 2000 bytes: one tensor per shard (1024 + 1024 > 2000). 2Ki = 2048: two per shard.
    for (size, count, per) in [("2K", 4usize, 1usize), ("2Ki", 2, 2), ("2048", 2, 2), ("1M", 1, 4)] {
        let prefix = d.join(format!("s{size}"));
        let dry = ok(&["split", "--split-max-size", size, "--dry-run", s(&input), s(&prefix)]);
        let shards = if count == 1 { "1 shard".to_owned() } else { format!("{count} shards") };
        assert!(dry.starts_with(&format!("{shards}\n")), "{dry}");
        let per_shard = if per == 1 { "1 tensor,".to_owned() } else { format!("{per} tensors,") };
        assert!(dry.lines().nth(1).unwrap().contains(&per_shard), "{dry}");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "dry run wrote files");
        let listed = ok(&["split", "--split-max-size", size, s(&input), s(&prefix)]);
        assert_eq!(listed.lines().count(), count);
        for (i, line) in listed.lines().enumerate() {
            let p = PathBuf::from(line);
            assert!(line.ends_with(&format!("-{:05}-of-{count:05}.gguf", i + 1)));
            let mut keys = if i == 0 { base_keys() } else { vec![] };
            keys.extend(split_keys(i as u16, count as u16, 4));
            let mine: Vec<Json> = tensors.iter().skip(per * i).take(per).cloned().collect();
            gguf_py_sees(&p, keys, mine, true);
        }
        let merged = d.join("merged.gguf");
        ok(&["merge", "--force", listed.lines().next().unwrap(), s(&merged)]);
        assert!(std::fs::read(&merged).unwrap() == original);
        for line in listed.lines() {
            std::fs::remove_file(line).unwrap();
        }
        std::fs::remove_file(&merged).unwrap();
    }
    // Metadata only in the first shard.
    let listed = ok(&["split", "--split-max-tensors", "3", "--no-tensor-first-split", s(&input), s(&d.join("n"))]);
    let first = PathBuf::from(listed.lines().next().unwrap());
    assert!(first.ends_with("n-00001-of-00003.gguf"));
    assert_eq!(Gguf::open(&first).unwrap().tensor_count(), 0);
    let mut keys = base_keys();
    keys.extend(split_keys(0, 3, 4));
    gguf_py_sees(&first, keys, vec![], true);
    // Bad sizes, each with its reason.
    for (bad, why) in [
        ("0", "must be positive"),
        ("12X", "is not a size"),
        ("-5M", "unexpected argument"), // clap takes it for an option
        ("99999999999G", "is too large"),
        ("99999999999999999999", "is too large"),
    ] {
        let out = gguf(&["split", "--split-max-size", bad, s(&input), s(&d.join("bad"))]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(why), "{bad}: {out:?}");
    }
    // An existing shard is not replaced without --force (as merge and quantize), and nothing
    // is written then; with --force the same shards are written again.
    let prefix = d.join("again");
    let listed = ok(&["split", "--split-max-tensors", "2", s(&input), s(&prefix)]);
    let before: Vec<Vec<u8>> = listed.lines().map(|l| std::fs::read(l).unwrap()).collect();
    std::fs::remove_file(listed.lines().nth(1).unwrap()).unwrap();
    let out = gguf(&["split", "--split-max-tensors", "2", s(&input), s(&prefix)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("again-00001-of-00002.gguf exists (use --force to replace it)"), "{err}");
    assert!(!PathBuf::from(listed.lines().nth(1).unwrap()).exists(), "a refused split wrote a shard");
    assert_eq!(ok(&["split", "--force", "--split-max-tensors", "2", s(&input), s(&prefix)]), listed);
    let after: Vec<Vec<u8>> = listed.lines().map(|l| std::fs::read(l).unwrap()).collect();
    assert!(before == after);
    // Shards of an earlier split into another count would stay beside the new ones: refused
    // without --force, named in a warning with it.
    let out = gguf(&["split", "--split-max-tensors", "1", s(&input), s(&prefix)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("again-00001-of-00002.gguf is a shard of an earlier split of the same prefix"), "{err}");
    assert!(!d.join("again-00001-of-00004.gguf").exists(), "a refused split wrote a shard");
    let out = gguf(&["split", "--force", "--split-max-tensors", "1", s(&input), s(&prefix)]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("again-00001-of-00002.gguf of an earlier split is left as it is"), "{err}");
    assert!(d.join("again-00004-of-00004.gguf").exists());
}

#[test]
fn set_rm_rename() {
    let d = temp_dir("cli-edit");
    let (p, original, tensors) = hand_made(&d, 3, 4);
    let f = s(&p);
    ok(&["set", f, "general.name", "edited"]);
    ok(&["set", f, "llama.context_length", "4096"]); // keeps u32
    ok(&["set", f, "llama.rope.freq_base", "500000"]); // keeps f32
    ok(&["set", f, "llama.new_count", "7"]); // new: u32
    ok(&["set", f, "llama.new_neg", "-7"]); // new: i32
    ok(&["set", f, "llama.new_big", "5000000000"]); // new: u64
    ok(&["set", f, "llama.new_float", "0.25"]); // new: f32
    ok(&["set", f, "llama.new_flag", "true"]); // new: bool
    ok(&["set", f, "llama.new_text", "12 monkeys"]); // new: string
    ok(&["set", f, "llama.typed", "200", "--type", "u8"]);
    ok(&["set", f, "llama.typed_f64", "-0.5", "--type", "f64"]);
    ok(&["set", f, "llama.context_length", "-1", "--type", "i64"]); // type changed in place
    ok(&["rm", f, "llama.new_neg"]);
    ok(&["rename", f, "general.architecture", "general.arch"]);
    let keys = vec![
        json!({"key": "general.arch", "type": "string", "value": "llama"}),
        json!({"key": "general.name", "type": "string", "value": "edited"}),
        json!({"key": "llama.context_length", "type": "i64", "value": -1}),
        json!({"key": "llama.rope.freq_base", "type": "f32", "value": 500000.0}),
        json!({"key": "tokenizer.ggml.tokens", "type": "array<string>", "value": ["<s>", "</s>", "a"]}),
        json!({"key": "llama.new_count", "type": "u32", "value": 7}),
        json!({"key": "llama.new_big", "type": "u64", "value": 5_000_000_000u64}),
        json!({"key": "llama.new_float", "type": "f32", "value": 0.25}),
        json!({"key": "llama.new_flag", "type": "bool", "value": true}),
        json!({"key": "llama.new_text", "type": "string", "value": "12 monkeys"}),
        json!({"key": "llama.typed", "type": "u8", "value": 200}),
        json!({"key": "llama.typed_f64", "type": "f64", "value": -0.5}),
    ];
    gguf_py_sees(&p, keys.clone(), tensors.clone(), true);

    // Alignment: re-laid out, still read by gguf-py with the same tensor data.
    ok(&["set", f, "general.alignment", "256"]);
    let g = Gguf::open(&p).unwrap();
    assert_eq!(g.alignment(), 256);
    assert!(g.tensors().all(|t| t.data_offset % 256 == 0));
    if let Some(py) = python() {
        let theirs = run_py(&py, "dump.py", &[f]);
        assert_eq!(theirs["alignment"], 256);
        let mut keys = keys;
        keys.push(json!({"key": "general.alignment", "type": "u32", "value": 256}));
        assert_same(&theirs, &json!({"metadata": keys, "tensors": tensors}));
    }

    // Errors: exit 1, the file unchanged.
    let before = std::fs::read(&p).unwrap();
    for (args, msg) in [
        (vec!["set", f, "llama.typed", "300"], "\"300\" is not a valid u8"),
        // The key and the value, no offset of the output being written (which the user never
        // sees); the dry run says the same.
        (
            vec!["set", f, "general.alignment", "48"],
            "cannot edit \"general.alignment\": the value is 48, not a power of two (ggml takes a u32 power of two)",
        ),
        (vec!["set", f, "general.alignment", "48", "--dry-run"], "the value is 48, not a power of two"),
        (vec!["set", f, "general.alignment", "0"], "cannot edit \"general.alignment\": the value is 0 ("),
        (
            vec!["set", f, "general.alignment", "64", "--type", "u64"],
            "cannot edit \"general.alignment\": the value has type u64, expected u32 (",
        ),
        (vec!["set", f, "tokenizer.ggml.tokens", "x"], "arrays cannot be set from text"),
        (vec!["rm", f, "nope"], "no such key to remove"),
        (vec!["rename", f, "general.name", "general.arch"], "that key exists"),
    ] {
        let out = gguf(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(!err.contains("output") && !err.contains("byte"), "{args:?}: {err}");
        assert!(std::fs::read(&p).unwrap() == before);
    }
    let out = gguf(&["set", f, "k", "1", "--type", "array"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = original;
}

#[test]
fn diff() {
    let d = temp_dir("cli-diff");
    let (a, bytes, _) = hand_made(&d, 3, 4);
    let b = d.join("b.gguf");
    std::fs::write(&b, &bytes).unwrap();
    let out = gguf(&["diff", s(&a), s(&b)]);
    assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), &b""[..]));

    ok(&["set", s(&b), "general.name", "other"]);
    ok(&["rm", s(&b), "llama.rope.freq_base"]);
    ok(&["set", s(&b), "general.extra", "3"]);
    // Change one tensor's data, keeping everything else.
    let g = Gguf::open(&b).unwrap();
    let off = g.tensor("blk.1.w").unwrap().data_offset as usize;
    drop(g);
    let mut changed = std::fs::read(&b).unwrap();
    changed[off + 5] ^= 1;
    std::fs::write(&b, &changed).unwrap();
    let out = gguf(&["diff", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "~ key general.name: string = \"hand made\" -> string = \"other\"\n\
         - key llama.rope.freq_base: f32 = 10000.0\n\
         + key general.extra: u32 = 3\n\
         ~ tensor blk.1.w: data differs\n\
         4 differences\n"
    );
    // Tensors added, removed, changed in type or shape.
    let c = d.join("c.gguf");
    let mut w = GgufWriter::new(Vec::new());
    for kv in Gguf::open(&a).unwrap().metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    w.add_tensor("blk.0.w", GgmlType::F32, &[4, 16]).unwrap();
    w.add_tensor("blk.1.w", GgmlType::F16, &[4, 16]).unwrap();
    w.add_tensor("blk.2.w", GgmlType::F32, &[2, 32]).unwrap();
    w.add_tensor("blk.9.w", GgmlType::F32, &[1]).unwrap();
    w.write_tensor_data(&data(0, 64)).unwrap();
    w.write_tensor_data(&[0; 128]).unwrap();
    w.write_tensor_data(&data(2, 64)).unwrap();
    w.write_tensor_data(&[0; 4]).unwrap();
    std::fs::write(&c, w.finish().unwrap()).unwrap();
    let out = gguf(&["diff", s(&a), s(&c)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "~ tensor blk.1.w: F32 [4, 16] -> F16 [4, 16]\n\
         ~ tensor blk.2.w: F32 [4, 16] -> F32 [2, 32]\n\
         + tensor blk.9.w: F32 [1]\n\
         3 differences\n"
    );
    let out = gguf(&["diff", s(&a), s(&d.join("missing.gguf"))]);
    assert_eq!(out.status.code(), Some(2));
}

const GEMMA: &str = "gemma-3-270m-q4_k_m.gguf";

#[test]
fn gemma_split_merge() {
    let Some(path) = model(GEMMA) else { return };
    let d = temp_dir("cli-gemma-split");
    let prefix = d.join("gemma");
    let listed = ok(&["split", "--split-max-size", "100M", s(&path), s(&prefix)]);
    // Sizes padded to 32, in file order: output_norm.weight (2,560 B), then token_embd.weight
    // (262,144 × 640 Q8_0 = 178,257,920 B) which does not fit with it under 100 MB, alone past
    // the limit; the remaining 234 tensors (about 68 MB) fit in a third shard.
    assert_eq!(listed.lines().count(), 3);
    let original = Gguf::open(&path).unwrap();
    let mut seen = 0;
    let want_counts = [1usize, 1, 234];
    for (i, line) in listed.lines().enumerate() {
        let shard = Gguf::open(line).unwrap();
        assert_eq!(shard.tensor_count(), want_counts[i]);
        // Every tensor's data is the original's.
        for t in shard.tensors() {
            let o = original.tensor_at(seen).unwrap();
            assert_eq!((t.name, t.dtype, t.shape), (o.name, o.dtype, o.shape));
            assert!(shard.tensor_data(&t).unwrap() == original.tensor_data(&o).unwrap(), "{}", t.name);
            seen += 1;
        }
        // gguf-py reads the shard and sees what we see (the first has the 262,144-token vocabulary).
        if let Some(py) = python() {
            let theirs = run_py(&py, "dump.py", &[line, "--no-tensor-hash"]);
            assert_same(&describe(&shard, false), &theirs);
            let n = theirs["metadata"].as_array().unwrap().len();
            assert_eq!(n, if i == 0 { 33 + 3 } else { 3 });
        }
    }
    assert_eq!(seen, 236);
    let merged = d.join("merged.gguf");
    ok(&["merge", listed.lines().next().unwrap(), s(&merged)]);
    let (a, b) = (std::fs::read(&merged).unwrap(), std::fs::read(&path).unwrap());
    assert!(a == b, "merged Gemma differs from the original");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn gemma_edit() {
    let Some(path) = model(GEMMA) else { return };
    let d = temp_dir("cli-gemma-edit");
    let p = d.join("gemma.gguf");
    std::fs::copy(&path, &p).unwrap();
    let f = s(&p);
    ok(&["set", f, "general.name", "Gemma edited"]);
    ok(&["rename", f, "general.basename", "general.base_name"]);
    ok(&["rm", f, "general.license"]);
    ok(&["set", f, "general.alignment", "64"]);
    let out = gguf(&["diff", s(&path), f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "~ key general.name: string = \"Gemma 3 270m\" -> string = \"Gemma edited\"\n\
         - key general.basename: string = \"gemma-3\"\n\
         - key general.license: string = \"gemma\"\n\
         + key general.base_name: string = \"gemma-3\"\n\
         + key general.alignment: u32 = 64\n\
         5 differences\n"
    );
    let (orig, edited) = (Gguf::open(&path).unwrap(), Gguf::open(&p).unwrap());
    assert_eq!(edited.alignment(), 64);
    assert_eq!(edited.tensor_count(), orig.tensor_count());
    for (t, u) in orig.tensors().zip(edited.tensors()) {
        assert_eq!(u.data_offset % 64, 0);
        assert!(orig.tensor_data(&t).unwrap() == edited.tensor_data(&u).unwrap(), "{}", t.name);
    }
    if let Some(py) = python() {
        let theirs = run_py(&py, "dump.py", &[f, "--no-tensor-hash"]);
        assert_same(&describe(&edited, false), &theirs);
        let mut want: Vec<Json> = describe(&orig, false)["metadata"].as_array().unwrap().clone();
        want.retain(|kv| kv["key"] != "general.license");
        for kv in &mut want {
            if kv["key"] == "general.name" {
                kv["value"] = json!("Gemma edited");
            }
            if kv["key"] == "general.basename" {
                kv["key"] = json!("general.base_name");
            }
        }
        want.push(json!({"key": "general.alignment", "type": "u32", "value": 64}));
        let mut tensors = describe(&orig, false)["tensors"].as_array().unwrap().clone();
        for t in &mut tensors {
            t.as_object_mut().unwrap().remove("data_offset");
        }
        assert_same(&theirs, &json!({"metadata": want, "tensors": tensors}));
    }
    // Undo: byte-identical to the original again.
    ok(&["rm", f, "general.alignment"]);
    ok(&["set", f, "general.name", "Gemma 3 270m"]);
    ok(&["rename", f, "general.base_name", "general.basename"]);
    let out = gguf(&["diff", s(&path), f]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "- key general.license: string = \"gemma\"\n1 difference\n");
    let _ = std::fs::remove_dir_all(&d);
}

/// `gguf set` / `gguf rm` write the same bytes as gguf-py's `gguf_new_metadata` script (the
/// reference for metadata edits) given the same change.
#[test]
fn edits_equal_gguf_new_metadata() {
    let Some(py) = python() else { return };
    let d = temp_dir("cli-new-metadata");
    let (p, _, _) = hand_made(&d, 3, 4);
    for (ours, theirs) in [
        (vec!["set", "general.name", "new name"], vec!["--general-name", "new name"]),
        (vec!["set", "general.description", "a description"], vec!["--general-description", "a description"]),
        (vec!["rm", "llama.rope.freq_base"], vec!["--remove-metadata", "llama.rope.freq_base"]),
    ] {
        let (a, b) = (d.join("ours.gguf"), d.join("theirs.gguf"));
        std::fs::copy(&p, &a).unwrap();
        let _ = std::fs::remove_file(&b);
        let mut args = vec![ours[0], s(&a)];
        args.extend(&ours[1..]);
        ok(&args);
        let out = Command::new(&py)
            .args(["-m", "gguf.scripts.gguf_new_metadata", "--force"])
            .args(&theirs)
            .args([s(&p), s(&b)])
            .output()
            .unwrap();
        assert!(out.status.success(), "gguf_new_metadata failed: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{ours:?} differs from gguf_new_metadata {theirs:?}"
        );
    }
}
