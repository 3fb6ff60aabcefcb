//! `gguf quantize --keep-split` against llama.cpp's `llama-quantize --keep-split`: a cut of
//! SmolLM2 (its first 4 layers) split by `llama-gguf-split` into 3 shards (with tensors in the
//! first shard, and with `--no-tensor-first-split`), quantized by both tools at Q8_0 and Q4_K_M:
//! the same shard names, every shard byte-identical (sha256); without `--keep-split` the split
//! input gives both tools the same single file. With `--imatrix` (a tiny mixture-of-experts model
//! and `llama-imatrix`'s matrix) the shards are llama-quantize's too. Also: an unsplit input gives
//! both tools the one shard `OUT-00001-of-00001.gguf`; a shard other than the first is refused by
//! both; the default output name; an existing shard is refused without `--force` (llama-quantize
//! replaces it) and nothing is written; `--dry-run` shows the shards and writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use gguf_serde::container::shard_path;
use gguf_serde::Gguf;
use gguf_tests::{llama_quantize, llama_tool, model, sha256, shards_of, temp_dir};

use super::{gguf, s};

/// SmolLM2 (Q4_1) cut to its first 4 layers (`llama.block_count` = 4), in `dir`.
fn smollm2_cut(dir: &Path) -> Option<PathBuf> {
    let src = model("SmolLM2-135M-Instruct.Q4_1.gguf")?;
    let out = dir.join("smollm2-4.gguf");
    gguf_tests::cut_layers(&src, &out, 4);
    Some(out)
}

/// Runs `tool args`, asserting success.
fn run_ok(tool: &Path, args: &[&str]) {
    let o = gguf_tests::run_tool(tool, args);
    assert!(o.status.success(), "{} {args:?}: {}", tool.display(), String::from_utf8_lossy(&o.stderr));
}

/// `llama-quantize --keep-split` and `gguf quantize --keep-split` on the split `input` (its first
/// shard) at `ftype`, outputs `dir/{tag}-llama.gguf` and `dir/{tag}-ours.gguf`: the same shard
/// names (but the prefix) and bytes. Returns the number of shards.
fn same_shards(lq: &Path, dir: &Path, input: &Path, ftype: &str, tag: &str) -> usize {
    same_shards_with(lq, dir, input, ftype, tag, &[])
}

/// [`same_shards`] with the options `extra` given to both tools (e.g. `--imatrix FILE`).
fn same_shards_with(lq: &Path, dir: &Path, input: &Path, ftype: &str, tag: &str, extra: &[&str]) -> usize {
    let (theirs, ours) = (dir.join(format!("{tag}-llama.gguf")), dir.join(format!("{tag}-ours.gguf")));
    let args = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = ["--allow-requantize", "--keep-split"].iter().map(|a| a.to_string()).collect();
        v.extend(extra.iter().map(|a| a.to_string()));
        v.extend([s(input), s(out), ftype, "2"].iter().map(|a| a.to_string()));
        v
    };
    let theirs_args = args(&theirs);
    run_ok(lq, &theirs_args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut ours_args = vec!["quantize".to_owned(), "-q".to_owned()];
    ours_args.extend(args(&ours));
    let o = gguf(&ours_args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
    let (a, b) = (shards_of(dir, &format!("{tag}-llama")), shards_of(dir, &format!("{tag}-ours")));
    assert!(!a.is_empty(), "{tag}: llama-quantize wrote no shard");
    let strip = |v: &[String], p: &str| -> Vec<String> { v.iter().map(|n| n.replacen(p, "", 1)).collect() };
    assert_eq!(strip(&a, &format!("{tag}-llama")), strip(&b, &format!("{tag}-ours")), "{tag}: shard names");
    // What we print: the shard paths, then the totals.
    let stdout = String::from_utf8_lossy(&o.stdout);
    for n in &b {
        assert!(stdout.contains(n.as_str()), "{tag}: {n} not named in\n{stdout}");
    }
    for (x, y) in a.iter().zip(&b) {
        let (hx, hy) = (sha256(&std::fs::read(dir.join(x)).unwrap()), sha256(&std::fs::read(dir.join(y)).unwrap()));
        assert_eq!(hx, hy, "{tag}: {y} differs from llama-quantize's {x}");
    }
    // Neither tool writes OUT itself.
    assert!(!theirs.exists() && !ours.exists(), "{tag}: a file named OUT");
    a.len()
}

#[test]
fn keep_split_shards_are_llama_quantizes() {
    let Some(lq) = llama_quantize() else { return };
    let Some(split) = llama_tool("llama-gguf-split") else { return };
    let dir = temp_dir("keep_split");
    let Some(cut) = smollm2_cut(&dir) else { return };
    // 4 layers of 9 tensors and 3 others: 15 tensors per shard make 3 shards.
    let prefix = dir.join("in");
    run_ok(&split, &["--split", "--split-max-tensors", "15", s(&cut), s(&prefix)]);
    // --no-tensor-first-split: the first shard holds the metadata only.
    let empty_first = dir.join("nf");
    run_ok(&split, &["--split", "--split-max-tensors", "20", "--no-tensor-first-split", s(&cut), s(&empty_first)]);
    for ftype in ["Q8_0", "Q4_K_M"] {
        let n = same_shards(&lq, &dir, &shard_path(&prefix, 0, 3), ftype, &format!("split-{ftype}"));
        assert_eq!(n, 3);
    }
    let n = same_shards(&lq, &dir, &shard_path(&empty_first, 0, 3), "Q4_K_M", "nofirst-Q4_K_M");
    assert_eq!(n, 3);
    let first = Gguf::open(dir.join("nofirst-Q4_K_M-ours-00001-of-00003.gguf")).unwrap();
    assert_eq!(first.tensor_count(), 0);
    // Without --keep-split a split input is read whole into one file, as llama-quantize does.
    let (theirs, ours) = (dir.join("merged-llama.gguf"), dir.join("merged-ours.gguf"));
    let first = shard_path(&prefix, 0, 3);
    run_ok(&lq, &["--allow-requantize", s(&first), s(&theirs), "Q4_K_M", "2"]);
    let o = gguf(&["quantize", "-q", s(&first), s(&ours), "Q4_K_M", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(sha256(&std::fs::read(&theirs).unwrap()), sha256(&std::fs::read(&ours).unwrap()), "merged");
    // An unsplit input: one shard named -00001-of-00001, as llama-quantize names it.
    assert_eq!(same_shards(&lq, &dir, &cut, "Q8_0", "unsplit-Q8_0"), 1);
    assert!(dir.join("unsplit-Q8_0-ours-00001-of-00001.gguf").is_file());
}

/// `--keep-split` with `--imatrix`: a tiny mixture-of-experts model (`tests/py/make_moe.py`, 8
/// experts, whose expert tensors take one importance slice per expert) split into 3 shards, an
/// importance matrix made by `llama-imatrix` (GGUF and legacy `.dat`), quantized by both tools:
/// every shard byte-identical.
#[test]
fn keep_split_with_an_importance_matrix_gives_llama_quantizes_shards() {
    let Some(lq) = llama_quantize() else { return };
    let Some(split) = llama_tool("llama-gguf-split") else { return };
    let Some(imatrix) = llama_tool("llama-imatrix") else { return };
    let Some(py) = gguf_tests::python() else { return };
    let dir = temp_dir("keep_split_imatrix");
    let model = dir.join("moe.gguf");
    gguf_tests::run_py_text(&py, "make_moe.py", &[s(&model)]);
    let text = dir.join("text.txt");
    let words = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "rivers", "and", "cities"];
    let text_s: Vec<&str> = (0..300).map(|i| words[(i * 7) % words.len()]).collect();
    std::fs::write(&text, text_s.join(" ") + "\n").unwrap();
    let mut ims = Vec::new();
    for fmt in ["gguf", "dat"] {
        let im = dir.join(format!("imatrix.{fmt}"));
        let (t, m) = (s(&text), s(&model));
        let args = ["-m", m, "-f", t, "-o", s(&im), "--output-format", fmt, "-c", "64", "--chunks", "2", "-t", "2"];
        run_ok(&imatrix, &args);
        ims.push(im);
    }
    // 33 tensors, at most 12 per shard: 3 shards.
    let prefix = dir.join("in");
    run_ok(&split, &["--split", "--split-max-tensors", "12", s(&model), s(&prefix)]);
    let first = shard_path(&prefix, 0, 3);
    for (im, ftype) in [(&ims[0], "Q4_K_M"), (&ims[0], "IQ2_XXS"), (&ims[1], "IQ4_XS")] {
        let tag = format!("im-{ftype}");
        assert_eq!(same_shards_with(&lq, &dir, &first, ftype, &tag, &["--imatrix", s(im)]), 3);
    }
}

#[test]
fn keep_split_refusals_names_and_dry_run() {
    let Some(lq) = llama_quantize() else { return };
    let Some(split) = llama_tool("llama-gguf-split") else { return };
    let dir = temp_dir("keep_split_errors");
    let Some(cut) = smollm2_cut(&dir) else { return };
    let prefix = dir.join("in");
    run_ok(&split, &["--split", "--split-max-tensors", "15", s(&cut), s(&prefix)]);
    let (first, second) = (shard_path(&prefix, 0, 3), shard_path(&prefix, 1, 3));

    // A shard other than the first: llama-quantize refuses it, and so do we, writing nothing.
    let o = Command::new(&lq).args(["--keep-split", s(&second), s(&dir.join("x.gguf")), "Q8_0"]).output().unwrap();
    assert!(!o.status.success(), "llama-quantize took the second shard");
    assert!(String::from_utf8_lossy(&o.stderr).contains("illegal split file idx: 1"));
    let o = gguf(&["quantize", "-q", "--keep-split", s(&second), s(&dir.join("y.gguf")), "Q8_0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("illegal split file idx: 1") && err.contains("in-00001-of-00003.gguf"), "{err}");
    assert!(shards_of(&dir, "y").is_empty());

    // The default output (no OUT): IN's folder/ggml-model-TYPE-NNNNN-of-NNNNN.gguf, as
    // llama-quantize names it. --dry-run shows those shards and writes nothing.
    let o = gguf(&["quantize", "--dry-run", "--keep-split", s(&first), "Q8_0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("--keep-split: 3 shards"), "{text}");
    for i in 0..3 {
        let p = shard_path(dir.join("ggml-model-Q8_0"), i, 3);
        assert!(text.contains(s(&p)), "{} not in\n{text}", p.display());
        assert!(!p.exists());
    }
    run_ok(&lq, &["--allow-requantize", "--keep-split", s(&first), "Q8_0", "2"]);
    let theirs = shards_of(&dir, "ggml-model-Q8_0");
    assert_eq!(theirs.len(), 3, "{theirs:?}");
    let before: Vec<Vec<u8>> = theirs.iter().map(|n| std::fs::read(dir.join(n)).unwrap()).collect();
    // Those shards exist now: refused without --force (llama-quantize would replace them), and
    // nothing is written or left behind.
    let o = gguf(&["quantize", "-q", "--keep-split", s(&first), "Q8_0"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("ggml-model-Q8_0-00001-of-00003.gguf exists (use --force to replace it)"), "{err}");
    // Only the second shard exists: still refused, no other shard made.
    let out = dir.join("out.gguf");
    std::fs::write(shard_path(dir.join("out"), 1, 3), b"keep me").unwrap();
    let o = gguf(&["quantize", "-q", "--keep-split", s(&first), s(&out), "Q8_0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("out-00002-of-00003.gguf exists"));
    assert_eq!(shards_of(&dir, "out"), ["out-00002-of-00003.gguf"]);
    assert_eq!(std::fs::read(shard_path(dir.join("out"), 1, 3)).unwrap(), b"keep me");
    // With --force the default shards are replaced by the same bytes as llama-quantize's.
    let o = gguf(&["quantize", "-q", "--force", "--keep-split", s(&first), "Q8_0", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (n, b) in theirs.iter().zip(&before) {
        assert_eq!(sha256(&std::fs::read(dir.join(n)).unwrap()), sha256(b), "{n}");
    }
    // No temporary file is left beside the shards.
    let stray: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".gguf-tmp-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}
