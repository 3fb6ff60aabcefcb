//! Splitting and merging against llama.cpp's own `llama-gguf-split` (from the llama.cpp build
//! of `scripts/build-llama.sh`): the same input split by both tools under the same
//! `--split-max-tensors` / `--split-max-size` limit gives the same shards byte for byte, each tool
//! merges the other's shards, and every place where we differ on purpose is asserted here (and
//! listed in the `gguf split` / `gguf merge` docs, `gguf-cli/src/split.rs`):
//!
//! 1. A tensor larger than `--split-max-size` at the start: `llama-gguf-split` exits with
//!    "one of splits have 0 tensors" (its first shard would be empty); we give that tensor a shard
//!    of its own, as the tool itself does for a large tensor anywhere else.
//! 2. Merging: `llama-gguf-split --merge` keeps the first shard's split keys (`split.no = 0`,
//!    `split.tensors.count`, `split.count = 0`, in that order after the other keys); we drop
//!    them, so a split file merges back to the original byte for byte.
//! 3. Sizes: `llama-gguf-split` takes only `N` with `M` or `G` (powers of 1000); `gguf split` also
//!    takes bytes, `K`, and `Ki`/`Mi`/`Gi`. The same `M`/`G` limit gives the same shards.

use std::path::{Path, PathBuf};

use gguf_serde::container::{shard_path, IfExists, Source};
use gguf_serde::ops::split::{merge_file, split_file, SplitBy, SplitOptions};
use gguf_serde::{GgmlType, Gguf, GgufWriter, ValueRef, WriteOptions};
use gguf_tests::{llama_tool, model, path_arg as s, run_tool as run, temp_dir, workspace_root};

/// The tool's arguments for a split: `--split-max-tensors N` or `--split-max-size N{M,G}`.
fn tool_args(by: SplitBy) -> Vec<String> {
    match by {
        SplitBy::MaxTensors(n) => vec!["--split-max-tensors".into(), n.to_string()],
        SplitBy::MaxBytes(b) if b % 1_000_000_000 == 0 => {
            vec!["--split-max-size".into(), format!("{}G", b / 1_000_000_000)]
        }
        SplitBy::MaxBytes(b) => {
            assert_eq!(b % 1_000_000, 0, "llama-gguf-split takes M or G only");
            vec!["--split-max-size".into(), format!("{}M", b / 1_000_000)]
        }
        other => panic!("no llama-gguf-split option for {other:?}"),
    }
}

/// Splits `input` with both tools (prefixes `dir/llama` and `dir/ours`), asserts the shards are
/// the same bytes, and returns the shard paths (llama's, ours).
fn split_both(tool: &Path, input: &Path, dir: &Path, opts: SplitOptions, tag: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let lp = dir.join(format!("{tag}-llama"));
    let mut args: Vec<String> = vec!["--split".into()];
    args.extend(tool_args(opts.by));
    if opts.no_tensor_first_split {
        args.push("--no-tensor-first-split".into());
    }
    args.push(s(input).into());
    args.push(s(&lp).into());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(tool, &a);
    assert!(out.status.success(), "llama-gguf-split {a:?}: {}", String::from_utf8_lossy(&out.stderr));
    let ours = split_file(input, dir.join(format!("{tag}-ours")), &opts).unwrap();
    let n = ours.len() as u16;
    let theirs: Vec<PathBuf> = (0..n).map(|i| shard_path(&lp, i, n)).collect();
    for p in &theirs {
        assert!(
            p.is_file(),
            "{tag}: llama-gguf-split made a different number of shards than our {n} ({} missing)",
            p.display()
        );
    }
    assert!(
        !shard_path(&lp, 0, n + 1).exists() && !shard_path(&lp, n, n + 1).exists(),
        "{tag}: more shards from llama"
    );
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        let (tb, ob) = (std::fs::read(t).unwrap(), std::fs::read(o).unwrap());
        assert_eq!(tb.len(), ob.len(), "{tag}: shard {} of {n}: length", i + 1);
        if let Some(at) = tb.iter().zip(&ob).position(|(x, y)| x != y) {
            panic!("{tag}: shard {} of {n} differs from llama-gguf-split's at byte {at}", i + 1);
        }
    }
    (theirs, ours)
}

/// What `llama-gguf-split --merge` writes for `input` (difference 2 of the module docs): the input
/// with `split.no = 0`, `split.tensors.count`, `split.count = 0` after its keys.
fn llama_merged<S: Source>(input: &Gguf<S>) -> Vec<u8> {
    let mut w = GgufWriter::with_options(Vec::new(), WriteOptions::like(input)).unwrap();
    for kv in input.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    w.add_kv("split.no", 0u16).unwrap();
    w.add_kv("split.tensors.count", input.tensor_count() as i32).unwrap();
    w.add_kv("split.count", 0u16).unwrap();
    for t in input.tensors() {
        w.add_tensor(t.name, t.dtype, &t.shape).unwrap();
    }
    for t in input.tensors() {
        w.write_tensor_data(input.tensor_data(&t).unwrap()).unwrap();
    }
    w.finish().unwrap()
}

/// Merges both sets of shards with both tools and checks the four results.
fn merge_both(tool: &Path, input: &Path, dir: &Path, theirs: &[PathBuf], ours: &[PathBuf], tag: &str) {
    let original = std::fs::read(input).unwrap();
    let expected_llama = llama_merged(&Gguf::open(input).unwrap());
    for (shards, whose) in [(theirs, "llama's"), (ours, "our")] {
        // Ours: the original, byte for byte.
        let out = dir.join(format!("{tag}-merged-by-us-from-{}.gguf", whose.trim_end_matches("'s")));
        merge_file(&shards[0], &out, IfExists::Replace).unwrap();
        assert!(std::fs::read(&out).unwrap() == original, "{tag}: our merge of {whose} shards is not the input");
        std::fs::remove_file(&out).unwrap();
        // The tool's: the original plus its split keys.
        let out = dir.join(format!("{tag}-merged-by-llama-from-{}.gguf", whose.trim_end_matches("'s")));
        let r = run(tool, &["--merge", s(&shards[0]), s(&out)]);
        assert!(r.status.success(), "llama-gguf-split --merge: {}", String::from_utf8_lossy(&r.stderr));
        let got = std::fs::read(&out).unwrap();
        assert!(
            got == expected_llama,
            "{tag}: llama-gguf-split's merge of {whose} shards is not the input plus split keys"
        );
        // And it does say so in its keys.
        let m = Gguf::from_slice(&got).unwrap();
        assert_eq!(m.get("split.count"), Some(ValueRef::U16(0)));
        std::fs::remove_file(&out).unwrap();
    }
}

fn cleanup(paths: &[PathBuf]) {
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn small_gguf_splits_and_merges_as_llama_gguf_split() {
    let Some(tool) = llama_tool("llama-gguf-split") else { return };
    let input = workspace_root().join("tests/data/small.gguf");
    let dir = temp_dir("split-llama-small");
    let cases = [
        (SplitBy::MaxTensors(1), false, 3),
        (SplitBy::MaxTensors(2), false, 2),
        (SplitBy::MaxTensors(128), false, 1),
        (SplitBy::MaxTensors(1), true, 4),
        (SplitBy::MaxBytes(1_000_000), false, 1),
        (SplitBy::MaxBytes(1_000_000), true, 2),
    ];
    for (i, (by, first, count)) in cases.into_iter().enumerate() {
        let tag = format!("c{i}");
        let (theirs, ours) =
            split_both(&tool, &input, &dir, SplitOptions::new(by).with_no_tensor_first_split(first), &tag);
        assert_eq!(ours.len(), count, "{tag}: {by:?}");
        merge_both(&tool, &input, &dir, &theirs, &ours, &tag);
        cleanup(&theirs);
        cleanup(&ours);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gemma_splits_and_merges_as_llama_gguf_split() {
    let Some(tool) = llama_tool("llama-gguf-split") else { return };
    let Some(input) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let dir = temp_dir("split-llama-gemma");
    // 236 tensors; the token embedding (~170 MB) is the second tensor.
    let cases = [
        (SplitBy::MaxTensors(128), false),
        (SplitBy::MaxTensors(100), true),
        (SplitBy::MaxBytes(100_000_000), false),
        (SplitBy::MaxBytes(20_000_000), true),
    ];
    for (i, (by, first)) in cases.into_iter().enumerate() {
        let tag = format!("g{i}");
        let (theirs, ours) =
            split_both(&tool, &input, &dir, SplitOptions::new(by).with_no_tensor_first_split(first), &tag);
        assert!(ours.len() >= 2, "{tag}: {by:?} gave {} shard(s)", ours.len());
        // Merging 250 MB four ways is slow: once per limit kind.
        if i % 2 == 0 {
            merge_both(&tool, &input, &dir, &theirs, &ours, &tag);
        }
        cleanup(&theirs);
        cleanup(&ours);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file of F32 tensors with these element counts.
fn file_of(path: &Path, sizes: &[usize]) {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    for (i, &n) in sizes.iter().enumerate() {
        w.add_tensor(&format!("t{i}"), GgmlType::F32, &[n as u64]).unwrap();
    }
    for (i, &n) in sizes.iter().enumerate() {
        let v: Vec<u8> = (0..n).flat_map(|j| ((i * 31 + j) as f32).to_le_bytes()).collect();
        w.write_tensor_data(&v).unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

/// Differences 1 and 3 of the module docs, and the tensor larger than the limit that both tools
/// put in a shard of its own.
#[test]
fn tensors_larger_than_the_limit() {
    let Some(tool) = llama_tool("llama-gguf-split") else { return };
    let dir = temp_dir("split-llama-large");
    let opts = SplitOptions::new(SplitBy::MaxBytes(1_000_000)).with_no_tensor_first_split(false);
    // A 2 MB tensor in the middle: both give it a shard of its own.
    let middle = dir.join("middle.gguf");
    file_of(&middle, &[1000, 500_000, 1000, 1000]);
    let (theirs, ours) = split_both(&tool, &middle, &dir, opts, "middle");
    assert_eq!(ours.len(), 3);
    cleanup(&theirs);
    cleanup(&ours);
    // First: the tool refuses; we give it a shard of its own.
    let first = dir.join("first.gguf");
    file_of(&first, &[500_000, 1000]);
    let lp = dir.join("first-llama");
    let r = run(&tool, &["--split", "--split-max-size", "1M", s(&first), s(&lp)]);
    assert!(!r.status.success(), "llama-gguf-split accepted a first tensor over the limit");
    let msg = String::from_utf8_lossy(&r.stderr);
    assert!(msg.contains("one of splits have 0 tensors"), "{msg}");
    let ours = split_file(&first, dir.join("first-ours"), &opts).unwrap();
    assert_eq!(ours.len(), 2);
    let shard0 = Gguf::open(&ours[0]).unwrap();
    assert_eq!(shard0.tensors().map(|t| t.name).collect::<Vec<_>>(), ["t0"]);
    // Sizes: the tool takes only M and G.
    for size in ["2K", "1000", "1Mi"] {
        let r = run(&tool, &["--split", "--split-max-size", size, "--dry-run", s(&middle), s(&lp)]);
        assert!(!r.status.success(), "llama-gguf-split accepted --split-max-size {size}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// BOOL bytes other than 0 and 1 (`support::odd_bools`: 0x02, and 0xff and 0x80 in an array):
/// `llama-gguf-split` copies the pairs through `gguf_set_kv`, so ggml's reader takes them as true
/// and its writer writes 1. Our shards are the same bytes as its shards, and both merges give
/// the input with those bytes as 1 (llama's with its split keys after them).
#[test]
fn bool_bytes_other_than_0_and_1_are_written_as_llama_gguf_split_writes_them() {
    use gguf_tests::support::{odd_bools, ODD_BOOL_ARRAY_AT, ODD_BOOL_SCALAR_AT};
    let Some(tool) = llama_tool("llama-gguf-split") else { return };
    let dir = temp_dir("split-llama-odd-bools");
    let input = dir.join("odd.gguf");
    std::fs::write(&input, odd_bools()).unwrap();
    let (theirs, ours) = split_both(&tool, &input, &dir, SplitOptions::new(SplitBy::MaxTensors(1)), "b");
    assert_eq!(ours.len(), 2);
    // The input as ggml's writer writes it: merging either tool's shards gives it back.
    let normalized = dir.join("normalized.gguf");
    let mut b = odd_bools();
    for at in [ODD_BOOL_SCALAR_AT, ODD_BOOL_ARRAY_AT, ODD_BOOL_ARRAY_AT + 1] {
        b[at as usize] = 1;
    }
    std::fs::write(&normalized, &b).unwrap();
    merge_both(&tool, &normalized, &dir, &theirs, &ours, "b");
    let _ = std::fs::remove_dir_all(&dir);
}
