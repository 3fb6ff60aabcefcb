//! `gguf hash` against llama.cpp's `llama-gguf-hash` (the `llama-gguf-hash` target of the
//! llama.cpp build of `scripts/build-llama.sh`): the same standard output byte for byte for the
//! same arguments (every kind, `--no-layer`, `--uuid`) on `tests/data/small.gguf` and the models;
//! each tool checks the other's manifest (`-c`); a changed tensor gives both tools the same
//! `Mismatch` lines; a split model gives the lines `llama-gguf-hash` prints for each shard, shard
//! after shard.
//!
//! Names that are not UTF-8 (a tensor name, the file's own name, a manifest's name) are printed as
//! their bytes, as llama-gguf-hash prints them: the same output byte for byte, and each tool checks
//! the other's manifest.
//!
//! Where we differ on purpose (the `gguf hash` help says so): a tensor the manifest lists that the
//! file lacks is printed `-  Missing` and fails the check (llama-gguf-hash prints nothing for it);
//! `--uuid` is checked against the manifest's `uuid` line (llama-gguf-hash looks for it under
//! `sha256` and never finds it); exit status 1 for every failed check (llama-gguf-hash uses 1 to 5).

use std::path::Path;
use std::process::Output;

use gguf_serde::{Gguf, GgufWriter, WriteOptions};
use gguf_tests::{llama_tool, model, run_tool, temp_dir};

use super::{gguf_command, s, small_path};

/// Runs `program args` in `dir` (so that both tools see the same relative file names).
fn run_in(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(program);
    cmd.current_dir(dir).args(args);
    gguf_tests::output_with_deadline(&mut cmd, gguf_tests::TOOL_HANG)
}

/// `gguf hash ARGS` in `dir`.
fn ours_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = gguf_command();
    cmd.current_dir(dir).arg("hash").args(args);
    gguf_tests::output_with_deadline(&mut cmd, gguf_tests::TOOL_HANG)
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// Both tools' standard output for `args` (the file last) in `dir`, asserted equal; returns it.
fn same_output(tool: &Path, dir: &Path, args: &[&str]) -> String {
    let theirs = run_in(dir, tool, args);
    assert!(theirs.status.success(), "llama-gguf-hash {args:?}: {}", String::from_utf8_lossy(&theirs.stderr));
    let ours = ours_in(dir, args);
    assert!(ours.status.success(), "gguf hash {args:?}: {}", String::from_utf8_lossy(&ours.stderr));
    assert_eq!(text(&ours), text(&theirs), "gguf hash {args:?} vs llama-gguf-hash");
    text(&ours)
}

/// A copy of `src` named `name` in `dir` (a link would do, but a copy lets a test change it).
fn copy_into(src: &Path, dir: &Path, name: &str) {
    std::fs::copy(src, dir.join(name)).unwrap();
}

#[test]
fn same_lines_as_llama_gguf_hash_on_small_gguf() {
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let dir = temp_dir("hash-small");
    copy_into(&small_path(), &dir, "small.gguf");
    for args in [
        &["small.gguf"][..],
        &["--xxh64", "small.gguf"],
        &["--sha1", "small.gguf"],
        &["--sha256", "small.gguf"],
        &["--all", "small.gguf"],
        &["--uuid", "small.gguf"],
        &["--all", "--uuid", "small.gguf"],
        &["--sha256", "--uuid", "--no-layer", "small.gguf"],
        &["--all", "--no-layer", "small.gguf"],
    ] {
        same_output(&tool, &dir, args);
    }
}

#[test]
fn same_lines_as_llama_gguf_hash_on_models() {
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let (Some(smol), Some(gemma)) = (model("SmolLM2-135M-Instruct.Q4_1.gguf"), model("gemma-3-270m-q4_k_m.gguf"))
    else {
        return;
    };
    let dir = temp_dir("hash-models");
    let smol_dir = smol.parent().unwrap();
    same_output(&tool, smol_dir, &["--all", "--uuid", s(&smol)]);
    // Relative names, as a user types them.
    let gemma_dir = gemma.parent().unwrap();
    let out = same_output(&tool, gemma_dir, &["--xxh64", "--uuid", "gemma-3-270m-q4_k_m.gguf"]);
    assert_eq!(out.lines().count(), Gguf::open(&gemma).unwrap().tensor_count() + 2);
    drop(dir);
}

#[test]
fn manifests_check_both_ways_and_a_changed_tensor_is_named_by_both() {
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let dir = temp_dir("hash-check");
    copy_into(&small_path(), &dir, "small.gguf");
    for kinds in [&["--all"][..], &["--xxh64"], &["--sha256"]] {
        let mut args = kinds.to_vec();
        args.push("small.gguf");
        let theirs = run_in(&dir, &tool, &args);
        std::fs::write(dir.join("theirs.txt"), &theirs.stdout).unwrap();
        let ours = ours_in(&dir, &args);
        std::fs::write(dir.join("ours.txt"), &ours.stdout).unwrap();
        // Each checks the other's manifest, with the same output.
        for manifest in ["theirs.txt", "ours.txt"] {
            let a = ["--check", manifest, "small.gguf"];
            let (t, o) = (run_in(&dir, &tool, &a), ours_in(&dir, &a));
            assert_eq!(t.status.code(), Some(0), "llama-gguf-hash -c {manifest}: {}", text(&t));
            assert_eq!(o.status.code(), Some(0), "gguf hash -c {manifest}: {}", text(&o));
            assert_eq!(text(&o), text(&t), "-c {manifest} {kinds:?}");
            assert!(text(&o).ends_with(&format!("\nVerification results for {manifest} - Success\n")));
        }
    }

    // One byte of the last tensor's data changed: both print the same Mismatch lines; exit 1.
    let f = Gguf::open(dir.join("small.gguf")).unwrap();
    let last = f.tensors().last().expect("small.gguf has tensors");
    assert!(last.nbytes > 0);
    let (at, name) = (last.data_offset as usize, last.name.to_string());
    drop(f);
    let mut bytes = std::fs::read(dir.join("small.gguf")).unwrap();
    bytes[at] ^= 0x40;
    std::fs::write(dir.join("small.gguf"), bytes).unwrap();
    let a = ["--check", "theirs.txt", "small.gguf"];
    let (t, o) = (run_in(&dir, &tool, &a), ours_in(&dir, &a));
    assert_eq!(t.status.code(), Some(1));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o), text(&t));
    assert!(text(&o).lines().any(|l| l.contains(&format!("small.gguf:{name}  -  Mismatch"))), "{}", text(&o));
}

#[test]
fn a_tensor_missing_from_the_file_fails_the_check_and_is_named() {
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let dir = temp_dir("hash-missing");
    copy_into(&small_path(), &dir, "small.gguf");
    let theirs = run_in(&dir, &tool, &["--sha256", "small.gguf"]);
    std::fs::write(dir.join("m.txt"), &theirs.stdout).unwrap();
    // The same file without its first tensor.
    let f = Gguf::open(dir.join("small.gguf")).unwrap();
    let tensors: Vec<_> = f.tensors().collect();
    let dropped = tensors[0].name.to_string();
    let cut = dir.join("cut.gguf");
    let mut w = GgufWriter::create_with_options(&cut, WriteOptions::like(&f)).unwrap();
    for kv in f.metadata() {
        w.add_kv_ref(kv.key, kv.value).unwrap();
    }
    for t in &tensors[1..] {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in &tensors[1..] {
        w.write_tensor_data(f.tensor_data(t).unwrap()).unwrap();
    }
    w.commit().unwrap();
    drop(f);
    std::fs::rename(&cut, dir.join("small.gguf")).unwrap();
    let o = ours_in(&dir, &["-c", "m.txt", "small.gguf"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.lines().any(|l| l.ends_with(&format!("small.gguf:{dropped}  -  Missing"))), "{out}");
    // Every line the file still has is llama-gguf-hash's: the tensors Ok, the model Mismatch.
    let t = run_in(&dir, &tool, &["--check", "m.txt", "small.gguf"]);
    let their_text = text(&t);
    for l in their_text.lines().filter(|l| l.contains("  -  ")) {
        assert!(out.lines().any(|m| m == l), "llama-gguf-hash's line {l:?} missing from ours:\n{out}");
    }
}

#[test]
fn a_split_model_gives_each_shards_lines_in_turn() {
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let Some(split) = llama_tool("llama-gguf-split") else { return };
    let Some(smol) = model("SmolLM2-135M-Instruct.Q4_1.gguf") else { return };
    let dir = temp_dir("hash-split");
    let o = run_tool(&split, &["--split", "--split-max-tensors", "100", s(&smol), s(&dir.join("smol"))]);
    assert!(o.status.success(), "llama-gguf-split: {}", String::from_utf8_lossy(&o.stderr));
    let shards = gguf_tests::shards_of(&dir, "smol");
    assert!(shards.len() >= 3, "{shards:?}");
    let mut expected = String::new();
    for shard in &shards {
        let t = run_in(&dir, &tool, &["--sha1", "--uuid", shard]);
        assert!(t.status.success());
        expected.push_str(&text(&t));
    }
    // Any shard names the model.
    for given in [&shards[0], &shards[1]] {
        let o = ours_in(&dir, &["--sha1", "--uuid", given]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(text(&o), expected);
    }
    // The concatenated manifest checks.
    std::fs::write(dir.join("m.txt"), &expected).unwrap();
    let o = ours_in(&dir, &["-c", "m.txt", &shards[0]]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `tests`'s file whose tensor name `w.\xc3(` is not UTF-8, under a file name that is not UTF-8
/// either (`odd\xe9.gguf`): both tools print the same bytes (the names as they are, not escaped),
/// and each checks the other's manifest with the same output.
#[test]
#[cfg(unix)]
fn names_not_utf8_are_printed_as_llama_gguf_hash_prints_them() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let dir = temp_dir("hash-not-utf8");
    let file = OsStr::from_bytes(b"odd\xe9.gguf");
    std::fs::write(dir.join(file), gguf_tests::support::not_utf8()).unwrap();
    let run = |program: Option<&Path>, args: &[&OsStr]| -> Output {
        let mut cmd = match program {
            Some(p) => std::process::Command::new(p),
            None => {
                let mut c = gguf_command();
                c.arg("hash");
                c
            }
        };
        cmd.current_dir(&*dir).args(args);
        gguf_tests::output_with_deadline(&mut cmd, gguf_tests::TOOL_HANG)
    };
    let os = |a: &'static str| OsStr::new(a);
    for kinds in [&["--all"][..], &["--sha256", "--uuid"], &["--xxh64", "--no-layer"]] {
        let mut args: Vec<&OsStr> = kinds.iter().map(|k| os(k)).collect();
        args.push(file);
        let (theirs, ours) = (run(Some(&tool), &args), run(None, &args));
        assert!(theirs.status.success(), "llama-gguf-hash {kinds:?}: {}", String::from_utf8_lossy(&theirs.stderr));
        assert!(ours.status.success(), "gguf hash {kinds:?}: {}", String::from_utf8_lossy(&ours.stderr));
        assert!(ours.stdout == theirs.stdout, "{kinds:?}:\nours   {:?}\ntheirs {:?}", ours.stdout, theirs.stdout);
        if !kinds.contains(&"--no-layer") {
            let needle = b"odd\xe9.gguf:w.\xc3(\n";
            assert!(ours.stdout.windows(needle.len()).any(|w| w == needle), "{:?}", ours.stdout);
        }
    }
    // Each tool checks the manifest of the other (the same: the outputs above are equal).
    std::fs::write(dir.join("m.txt"), run(None, &[os("--all"), file]).stdout).unwrap();
    let a = [os("--check"), os("m.txt"), file];
    let (t, o) = (run(Some(&tool), &a), run(None, &a));
    assert_eq!(t.status.code(), Some(0), "{}", String::from_utf8_lossy(&t.stdout));
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(o.stdout == t.stdout, "ours   {:?}\ntheirs {:?}", o.stdout, t.stdout);
    assert!(o.stdout.ends_with(b"\nVerification results for m.txt - Success\n"));
}

/// Tensor names holding a space, a tab or a newline: both tools print the same manifest, and
/// each passes `--check` of it; ours reads each such name whole and checks its hash (`Ok`), where
/// `llama-gguf-hash -c` reads a name up to its first white space and reports the tensor
/// `Not Found`, which its check lets pass. The output of `--check` reads as a manifest too.
#[test]
fn names_with_white_space_check_against_both_tools_manifests() {
    use gguf_serde::{GgmlType, GgufStr};
    let Some(tool) = llama_tool("llama-gguf-hash") else { return };
    let dir = temp_dir("hash-white-space");
    let names: [&[u8]; 4] = [b"a b", b"t\tc", b"n\nl.weight", b"plain"];
    let mut w = GgufWriter::create(dir.join("ws.gguf")).unwrap();
    for n in names {
        w.add_tensor_ne(GgufStr::from_bytes(n), GgmlType::F32, &[4]).unwrap();
    }
    for (i, _) in names.iter().enumerate() {
        let data: Vec<u8> = (0..4).flat_map(|j| ((i * 4 + j) as f32).to_le_bytes()).collect();
        w.write_tensor_data(&data).unwrap();
    }
    w.commit().unwrap();
    let theirs = run_in(&dir, &tool, &["--all", "ws.gguf"]);
    let ours = ours_in(&dir, &["--all", "ws.gguf"]);
    assert!(theirs.status.success() && ours.status.success(), "{theirs:?}\n{ours:?}");
    assert!(ours.stdout == theirs.stdout, "ours   {:?}\ntheirs {:?}", ours.stdout, theirs.stdout);
    std::fs::write(dir.join("m.txt"), &ours.stdout).unwrap();
    let t = run_in(&dir, &tool, &["--check", "m.txt", "ws.gguf"]);
    assert_eq!(t.status.code(), Some(0), "{}", String::from_utf8_lossy(&t.stdout));
    let o = ours_in(&dir, &["--check", "m.txt", "ws.gguf"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    // Every tensor and the model: Ok, each name whole.
    for n in ["a b", "t\tc", "n\nl.weight", "plain"] {
        assert!(out.contains(&format!("  ws.gguf:{n}  -  Ok\n")), "{n:?}:\n{out}");
    }
    assert_eq!(out.matches("  -  Ok\n").count(), 5, "{out}");
    assert!(out.ends_with("\nVerification results for m.txt - Success\n"), "{out}");
    // llama-gguf-hash: the names it cannot read whole are Not Found, and it passes.
    let theirs = String::from_utf8_lossy(&t.stdout);
    assert!(theirs.contains("  ws.gguf:a b  -  Not Found\n") && theirs.ends_with(" - Success\n"), "{theirs}");
    // `--check`'s output, checked against again.
    std::fs::write(dir.join("checked.txt"), &o.stdout).unwrap();
    let again = ours_in(&dir, &["--check", "checked.txt", "ws.gguf"]);
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stdout));
}
