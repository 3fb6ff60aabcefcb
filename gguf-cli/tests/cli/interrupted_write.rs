//! SIGTERM, SIGINT or SIGHUP during a write: the command removes its temporary file and exits
//! 143, 130 or 129 (128 + the signal), leaving the folder as it was.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gguf_serde::{GgmlType, GgufWriter};
use gguf_tests::support::file_names as names;
use gguf_tests::temp_dir;

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

/// Starts `gguf quantize INPUT OUT Q4_K_M` (with `extra` arguments and the environment `env`),
/// writing in `dir`.
fn start_quantize(input: &Path, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    super::gguf_command()
        .args(["quantize", "-q"])
        .args(extra)
        .args([input.to_str().unwrap(), out.to_str().unwrap(), "Q4_K_M"])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether process `pid` has a file open in `dir` that has no name (an `O_TMPFILE` file: its
/// `/proc/PID/fd` link reads `DIR/#INODE (deleted)`).
fn has_unnamed_file_in(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().filter_map(|e| std::fs::read_link(e.path()).ok()).any(|t| {
        let t = t.to_string_lossy().into_owned();
        t.starts_with(&format!("{}/", dir.display())) && t.ends_with(" (deleted)")
    })
}

/// Waits until `child` (writing in `dir`) has its output file open: a named temporary file in
/// `dir`, or an unnamed one.
fn wait_for_output_file(child: &mut std::process::Child, dir: &Path) {
    let start = Instant::now();
    loop {
        if names(dir).iter().any(|n| n.ends_with(".tmp")) || has_unnamed_file_in(child.id(), dir) {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "gguf quantize ended before its output file was seen");
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
