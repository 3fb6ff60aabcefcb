//! Output errors of every subcommand that writes to standard output: a closed pipe ends quietly
//! with success (as ripgrep does; `gguf diff` keeps its 0/1 status), a write error (`/dev/full`)
//! is exit status 2 with the error on standard error. Never a panic (exit 101).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use gguf_serde::{GgmlType, GgufWriter};
use gguf_tests::temp_dir;

use super::{gguf_command, run, small, wait};

fn s(p: &Path) -> String {
    super::s(p).to_owned()
}

/// A file with `keys` string keys and `tensors` F32 tensors `blk.I.ffn_up.weight` of shape
/// [1, 32]; `salt` changes every value.
fn many(dir: &Path, name: &str, keys: usize, tensors: usize, salt: &str) -> PathBuf {
    let mut w = GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    for i in 0..keys {
        w.add_kv(&format!("test.key.{i:05}"), format!("value {i} {salt}").as_str()).unwrap();
    }
    for i in 0..tensors {
        w.add_tensor(&format!("blk.{i}.ffn_up.weight"), GgmlType::F32, &[1, 32]).unwrap();
    }
    for _ in 0..tensors {
        w.write_tensor_data(&[0u8; 128]).unwrap();
    }
    let p = dir.join(name);
    std::fs::write(&p, w.finish().unwrap()).unwrap();
    p
}

/// Every command that writes to standard output, with the status it ends with when all goes
/// well. `dir` is fresh for each call, so the commands that write files can write there.
fn commands(dir: &Path) -> Vec<(Vec<String>, i32)> {
    let big = many(dir, "big.gguf", 3000, 1500, "a");
    let other = many(dir, "other.gguf", 3000, 1500, "b");
    let (b, o) = (s(&big), s(&other));
    let out = |n: &str| s(&dir.join(n));
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut validate = vec!["validate".to_string()];
    validate.extend(std::iter::repeat_n(b.clone(), 2000));
    let mut validate_json = validate.clone();
    validate_json.push("--json".into());
    vec![
        (v(&["inspect", &b]), 0),
        (v(&["inspect", "--stored-order", &b]), 0),
        (v(&["inspect", "--json", &b]), 0),
        (v(&["inspect", "--json", "--full", &b]), 0),
        (validate, 0),
        (validate_json, 0),
        (v(&["split", "--dry-run", "--split-max-tensors", "1", &b, &out("dry")]), 0),
        (v(&["split", "--split-max-tensors", "600", &b, &out("shard")]), 0),
        (v(&["quantize", "--dry-run", &b, "Q8_0"]), 0),
        (v(&["quantize", "-q", &b, &out("q8.gguf"), "Q8_0"]), 0),
        (v(&["dequantize", "-q", &small(), &out("f32.gguf")]), 0),
        (v(&["diff", &b, &o]), 1),
        (v(&["diff", "--json", &b, &o]), 1),
        (v(&["set", "--dry-run", &b, "test.key.00001", "x"]), 0),
        (v(&["hash", "--all", &b]), 0),
        (v(&["show", &small(), "w_q8_0", "--rows", "4"]), 0),
        (v(&["completions", "bash"]), 0),
        (v(&["completions", "zsh"]), 0),
        (v(&["completions", "fish"]), 0),
        (v(&["completions", "powershell"]), 0),
        (v(&["completions", "elvish"]), 0),
    ]
}

/// Each command's output goes to a pipe whose read end is closed before the command starts:
/// its first write fails with EPIPE.
#[test]
fn a_closed_pipe_ends_quietly_with_the_usual_status() {
    let dir = temp_dir("cli_closed_pipe");
    for (args, code) in commands(&dir) {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = run(gguf_command().args(&args).stdout(writer).stderr(Stdio::piped()));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "gguf {:?}: {err}", &args[..2]);
        assert!(err.is_empty(), "gguf {:?} wrote to stderr: {err}", &args[..2]);
    }
}

/// As `gguf ... | head -1`: one line is read, then the pipe is closed while the command is still
/// writing (each output is far larger than a pipe's buffer).
#[test]
fn closing_the_pipe_after_one_line_ends_quietly() {
    let dir = temp_dir("cli_head_1");
    for (args, code) in commands(&dir) {
        let dry = args.iter().any(|a| a == "--dry-run");
        let long = match args[0].as_str() {
            "inspect" | "validate" | "diff" => true,
            "split" | "quantize" => dry,
            _ => false,
        };
        if !long {
            // A short output: the command may finish before the pipe closes (covered above).
            continue;
        }
        let mut child = gguf_command().args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "gguf {:?} printed nothing", &args[..2]);
        let o = wait(child);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "gguf {:?}: {err}", &args[..2]);
        assert!(err.is_empty(), "gguf {:?} wrote to stderr: {err}", &args[..2]);
    }
}

/// `gguf ... > /dev/full`: every write fails with ENOSPC; exit status 2 (for `diff` too: trouble,
/// not "differences"), the error on standard error.
#[test]
fn a_write_error_is_exit_status_2() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "/dev/full is missing: this check cannot run");
        eprintln!("skipped: no /dev/full on this machine");
        return;
    };
    let dir = temp_dir("cli_dev_full");
    for (args, _) in commands(&dir) {
        let o = run(gguf_command().args(&args).stdout(full.try_clone().unwrap()).stderr(Stdio::piped()));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "gguf {:?}: {err}", &args[..2]);
        assert!(err.contains("writing to standard output"), "gguf {:?}: {err}", &args[..2]);
        assert!(!err.contains("panicked"), "gguf {:?}: {err}", &args[..2]);
    }
}
