//! SIGTERM, SIGINT or SIGHUP during a write: the command removes its temporary file and exits
//! 143, 130 or 129 (128 + the signal), leaving the folder as it was. SIGKILL during a write
//! (`quantize`, a split `convert`) leaves nothing where the files have no name (`O_TMPFILE`). A
//! file that appears at an output while the command writes it (`quantize`, `split`, `merge`,
//! `quantize --keep-split`) is kept without `--force`, none of the command's files left beside
//! it, and replaced with it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gguf_serde::{GgmlType, GgufWriter};
use gguf_tests::support::file_names as names;
use gguf_tests::{temp_dir, HfLayout};

/// An F32 model of 48 tensors of 1024 × 1024 (192 MiB), written by the library: big enough that
/// quantizing it takes a while.
fn big_model(dir: &Path) -> PathBuf {
    let p = dir.join("big.gguf");
    let f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    let mut w = GgufWriter::new(f);
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.block_count", 48u32).unwrap();
    for i in 0..48 {
        w.add_tensor(&format!("blk.{i}.ffn_up.weight"), GgmlType::F32, &[1024, 1024]).unwrap();
    }
    let row: Vec<u8> = (0..1024u32).flat_map(|j| ((j % 97) as f32 * 0.01 - 0.4).to_le_bytes()).collect();
    for _ in 0..48 {
        let mut t = w.tensor_data_writer().unwrap();
        for _ in 0..1024 {
            t.write(&row).unwrap();
        }
        t.finish().unwrap();
    }
    w.finish().unwrap().flush().unwrap();
    p
}

/// Starts `gguf ARGS` with the environment `env`, its standard error piped.
fn start(args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    super::gguf_command()
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts `gguf quantize INPUT OUT Q4_K_M` (with `extra` arguments and the environment `env`),
/// writing in `dir`.
fn start_quantize(input: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    let mut args = vec!["quantize", "-q"];
    args.extend(extra);
    args.extend([input.to_str().unwrap(), out.to_str().unwrap(), "Q4_K_M"]);
    start(&args, env)
}

/// How many files process `pid` has open in `dir` that have no name (`O_TMPFILE` files: their
/// `/proc/PID/fd` links read `DIR/#INODE (deleted)`).
fn unnamed_files_in(pid: u32, dir: &Path) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    fds.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|t| {
            let t = t.to_string_lossy().into_owned();
            t.starts_with(&format!("{}/", dir.display())) && t.ends_with(" (deleted)")
        })
        .count()
}

/// Waits until `child` (writing in `dir`) has its output file open: a named temporary file in
/// `dir`, or an unnamed one.
fn wait_for_output_file(child: &mut std::process::Child, dir: &Path) {
    wait_for_output_files(child, dir, 1);
}

/// Waits until `child` (writing in `dir`) has `n` output files open (named temporary files in
/// `dir` and unnamed ones).
fn wait_for_output_files(child: &mut std::process::Child, dir: &Path, n: usize) {
    let start = Instant::now();
    loop {
        if names(dir).iter().filter(|n| n.ends_with(".tmp")).count() + unnamed_files_in(child.id(), dir) >= n {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "gguf ended before its output file was seen");
        assert!(start.elapsed() < Duration::from_secs(120), "no output file appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Starts `gguf quantize` (with the environment `env`), waits for its output file, sends
/// `signal`, and checks the exit status and that only the input is left.
fn interrupt(dir: &Path, input: &Path, signal: &str, code: i32, env: &[(&str, &str)]) {
    let out = dir.join("out.gguf");
    let mut child = start_quantize(input, &out, &[], env);
    wait_for_output_file(&mut child, dir);
    if !env.is_empty() {
        assert!(names(dir).iter().any(|n| n.ends_with(".tmp")), "no named temporary file with {env:?}");
    }
    let kill = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let o = super::wait(child);
    assert_eq!(o.status.code(), Some(code), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(names(dir), ["big.gguf"], "the folder holds more than the original file");
}

#[test]
fn an_interrupted_quantize_removes_its_temporary_file() {
    let dir = temp_dir("cli_interrupted_write");
    let input = big_model(&dir);
    interrupt(&dir, &input, "TERM", 143, &[]);
    interrupt(&dir, &input, "INT", 130, &[]);
    interrupt(&dir, &input, "HUP", 129, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The named temporary file (`GGUF_NO_TMPFILE`, as on a file system without `O_TMPFILE`): seen
/// in the folder, and removed on SIGINT and SIGTERM.
#[test]
fn an_interrupted_quantize_removes_its_named_temporary_file() {
    let dir = temp_dir("cli_interrupted_write_named");
    let input = big_model(&dir);
    interrupt(&dir, &input, "INT", 130, &[("GGUF_NO_TMPFILE", "1")]);
    interrupt(&dir, &input, "TERM", 143, &[("GGUF_NO_TMPFILE", "1")]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGKILL (as a crash or a power loss) cannot be handled: where the file system has `O_TMPFILE`
/// the file being written has no name until it is complete, so nothing is left in the folder.
#[test]
#[cfg(target_os = "linux")]
fn a_killed_quantize_leaves_nothing() {
    let dir = temp_dir("cli_killed_write");
    let input = big_model(&dir);
    let out = dir.join("out.gguf");
    let mut child = start_quantize(&input, &out, &[], &[]);
    wait_for_output_file(&mut child, &dir);
    // some of the output written
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    let o = super::wait(child);
    assert_eq!(o.status.code(), None, "not killed: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(names(&dir), ["big.gguf"], "the killed write left a file");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `precious` to `out` while `gguf quantize` (with `extra` arguments, environment `env`)
/// writes it; returns the command's output.
fn race(input: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let dir = out.parent().unwrap();
    let mut child = start_quantize(input, out, extra, env);
    wait_for_output_file(&mut child, dir);
    std::fs::write(out, "precious").unwrap();
    super::wait(child)
}

/// A file that appears at the output while `quantize` writes it is not replaced without
/// `--force` (the same error as a file that was there before), on both the unnamed and the named
/// temporary file's path; with `--force` it is.
#[test]
fn a_file_created_during_the_write_is_replaced_only_with_force() {
    let dir = temp_dir("cli_race_write");
    let input = big_model(&dir);
    let out = dir.join("race.gguf");
    for env in [&[][..], &[("GGUF_NO_TMPFILE", "1")][..]] {
        let o = race(&input, &out, &[], env);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{env:?}: {err}");
        assert!(err.contains(&format!("{} exists (use --force to replace it)", out.display())), "{env:?}: {err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"precious", "{env:?}");
        let mut left = names(&dir);
        left.sort();
        assert_eq!(left, ["big.gguf", "race.gguf"], "{env:?}");
        std::fs::remove_file(&out).unwrap();

        let o = race(&input, &out, &["--force"], env);
        assert!(o.status.success(), "{env:?}: {}", String::from_utf8_lossy(&o.stderr));
        // a GGUF file that llama.cpp's format reads: its magic
        assert_eq!(std::fs::read(&out).unwrap().get(..4), Some(&b"GGUF"[..]), "{env:?}");
        let mut left = names(&dir);
        left.sort();
        assert_eq!(left, ["big.gguf", "race.gguf"], "{env:?}");
        std::fs::remove_file(&out).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `gguf ARGS` (environment `env`, writing in `dir`) and writes `precious` to `victim` once
/// the command has `n` output files open; returns the command's output.
fn race_at(args: &[&str], dir: &Path, (victim, n): (&Path, usize), env: &[(&str, &str)]) -> std::process::Output {
    let mut child = start(args, env);
    wait_for_output_files(&mut child, dir, n);
    std::fs::write(victim, "precious").unwrap();
    super::wait(child)
}

/// [`race_at`] without `--force`, then with it: without, the command fails as for a file that was
/// there before, `victim` is kept, and the folder is as it was but for `victim` (no file of the
/// set written, not even those renamed into place before `victim`'s turn); with it, the command
/// succeeds and `victim` is its file. Returns the folder's listing after the second run.
fn kept_then_replaced(args: &[&str], dir: &Path, (victim, n): (&Path, usize), env: &[(&str, &str)]) -> Vec<String> {
    let before = names(dir);
    let o = race_at(args, dir, (victim, n), env);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?} {env:?}: {err}");
    assert!(
        err.contains(&format!("{} exists (use --force to replace it)", victim.display())),
        "{args:?} {env:?}: {err}"
    );
    assert_eq!(std::fs::read(victim).unwrap(), b"precious", "{args:?} {env:?}");
    let mut want = before.clone();
    want.push(victim.file_name().unwrap().to_string_lossy().into_owned());
    want.sort();
    assert_eq!(names(dir), want, "{args:?} {env:?}: a file of the command's is left");
    std::fs::remove_file(victim).unwrap();

    let forced = [args, &["--force"]].concat();
    let o = race_at(&forced, dir, (victim, n), env);
    assert!(o.status.success(), "{forced:?} {env:?}: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(victim).unwrap().get(..4), Some(&b"GGUF"[..]), "{forced:?} {env:?}");
    let after = names(dir);
    assert!(after.iter().all(|n| !n.ends_with(".tmp")), "{forced:?} {env:?}: {after:?}");
    after
}

/// `split`, `merge` and `quantize --keep-split` keep a file that appears at one of their outputs
/// while they write unless `--force`, as `quantize` does for its one file: the second shard of a
/// split, made once that shard's temporary file is open (so that the first shard is renamed into
/// place, then removed again when the second is refused), the merged file; with the unnamed and
/// the named temporary files.
#[test]
fn a_shard_or_merged_file_created_during_the_write_is_replaced_only_with_force() {
    let dir = temp_dir("cli_race_shards");
    let input = big_model(&dir);
    let (d, i) = (dir.to_str().unwrap(), input.to_str().unwrap());
    let part = format!("{d}/part");
    let second = dir.join("part-00002-of-00006.gguf");
    for env in [&[][..], &[("GGUF_NO_TMPFILE", "1")][..]] {
        let split = ["split", "--split-max-tensors", "8", i, &part];
        let listed = kept_then_replaced(&split, &dir, (&second, 2), env);
        let shards: Vec<String> = (1..=6).map(|n| format!("part-{n:05}-of-00006.gguf")).collect();
        assert_eq!(listed, [&["big.gguf".to_owned()][..], &shards].concat(), "{env:?}");

        let first = dir.join("part-00001-of-00006.gguf");
        let merged = dir.join("merged.gguf");
        kept_then_replaced(&["merge", first.to_str().unwrap(), merged.to_str().unwrap()], &dir, (&merged, 1), env);
        // the split merges back to the file split (the shards are whole)
        assert!(std::fs::read(&merged).unwrap() == std::fs::read(&input).unwrap(), "{env:?}");
        std::fs::remove_file(&merged).unwrap();
        if env.is_empty() {
            // --keep-split: one output shard per input shard
            let q = format!("{d}/q");
            let args = ["quantize", "-q", "--keep-split", first.to_str().unwrap(), &q, "Q4_K_M"];
            let listed = kept_then_replaced(&args, &dir, (&dir.join("q-00002-of-00006.gguf"), 2), env);
            assert_eq!(listed.iter().filter(|n| n.starts_with("q-")).count(), 6, "{listed:?}");
            for n in 1..=6 {
                std::fs::remove_file(dir.join(format!("q-{n:05}-of-00006.gguf"))).unwrap();
            }
        }
        for s in shards {
            std::fs::remove_file(dir.join(s)).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGKILL during `convert --split-max-size`, once a shard is complete and the next one is being
/// written: the shards are written straight from the conversion and kept without a name until all
/// are complete (`O_TMPFILE`), so nothing is left beside the checkpoint (no shard, no unsplit
/// file, no temporary).
#[test]
#[cfg(target_os = "linux")]
fn a_killed_split_conversion_leaves_nothing() {
    // About 110 M parameters: a conversion that lasts long enough to be killed in the middle.
    let sizes = ["--sizes", "1024,8,4,4,2816,32000"];
    let Some(ckpt) = gguf_tests::make_hf_checkpoint_with("cli_killed_convert", "llama", HfLayout::Sharded, 36, &sizes)
    else {
        return;
    };
    let dir = ckpt.parent().unwrap();
    let before = names(dir);
    let out = dir.join("killed.gguf");
    let args = ["convert", ckpt.to_str().unwrap(), "-q", "--no-vocab", "--outtype", "q8_0"];
    let mut child = start(&[&args[..], &["--split-max-size", "20M", "-o", out.to_str().unwrap()]].concat(), &[]);
    let started = Instant::now();
    // a shard complete (sealed, still without a name) and the next one open
    while unnamed_files_in(child.id(), dir) < 2 {
        assert!(child.try_wait().unwrap().is_none(), "gguf convert ended before its second shard was seen");
        assert!(started.elapsed() < Duration::from_secs(300), "no second shard appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    let o = super::wait(child);
    assert_eq!(o.status.code(), None, "not killed: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(names(dir), before, "the killed conversion left a file");
}
