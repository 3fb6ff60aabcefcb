//! `diff` across byte orders and `--json`, `inspect --json` (long arrays left out, `--full`,
//! `--stored-order`, standard input), `validate --json`, `set --dry-run`, `completions`,
//! `dequantize --threads`. Expected values are stated by hand from the files the tests write.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use gguf_serde::codec::swap_blocks;
use gguf_serde::{Endian, GgmlType, GgufWriter, Value, WriteOptions};
use gguf_tests::{python, temp_dir};
use serde_json::{json, Value as Json};

use super::{gguf, gguf_command, run, s, wait};

fn stdout_json(o: &Output) -> Json {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// The tensors of [`model`]: name, type, canonical shape, data (little-endian).
fn tensors() -> Vec<(&'static str, GgmlType, Vec<u64>, Vec<u8>)> {
    let bytes = |n: usize, k: usize| (0..n).map(|i| (i * 37 + k * 11 + 5) as u8).collect::<Vec<u8>>();
    vec![
        ("f32", GgmlType::F32, vec![2, 3, 8], bytes(2 * 3 * 8 * 4, 1)),
        ("f16", GgmlType::F16, vec![4, 32], bytes(4 * 32 * 2, 2)),
        ("q8", GgmlType::Q8_0, vec![2, 64], bytes(2 * 2 * 34, 3)),
        ("q4k", GgmlType::Q4_K, vec![1, 256], bytes(144, 4)),
        ("q6k", GgmlType::Q6_K, vec![1, 256], bytes(210, 5)),
    ]
}

/// A model with scalars, short and long arrays and five tensors, in byte order `endian`: the
/// tensor data is given little-endian and swapped field by field for big-endian, as
/// gguf-py's gguf_convert_endian does. `tweak` changes one array item and one tensor byte.
// Field by field: WriteOptions is to become #[non_exhaustive] (no struct literal outside the crate).
#[allow(clippy::field_reassign_with_default)]
fn model(path: &Path, endian: Endian, tweak: bool) {
    let mut opts = WriteOptions::default();
    opts.endian = endian;
    let mut w = GgufWriter::with_options(Vec::new(), opts).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("a.u32", 7u32).unwrap();
    w.add_kv("a.f64", -0.5f64).unwrap();
    let mut floats: Vec<f32> = (0..40).map(|i| i as f32 * 0.25).collect();
    if tweak {
        floats[39] = 1.0;
    }
    w.add_kv("a.floats", floats).unwrap();
    w.add_kv("a.u64s", vec![1u64, 1 << 40, 3]).unwrap();
    let words: Vec<String> = (0..17).map(|i| format!("w{i}")).collect();
    w.add_value("a.words17", &Value::from(words.iter().map(String::as_str).collect::<Vec<_>>())).unwrap();
    w.add_kv("a.words16", words[..16].iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    for (name, dtype, shape, _) in tensors() {
        w.add_tensor(name, dtype, &shape).unwrap();
    }
    for (name, dtype, _, mut data) in tensors() {
        if tweak && name == "q8" {
            data[5] ^= 1;
        }
        if endian == Endian::Big {
            swap_blocks(dtype, &mut data);
        }
        w.write_tensor_data(&data).unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

#[test]
fn a_big_endian_file_and_its_little_endian_copy_do_not_differ() {
    let dir = temp_dir("cli_diff_endian");
    let (le, be, be2) = (dir.join("le.gguf"), dir.join("be.gguf"), dir.join("be2.gguf"));
    model(&le, Endian::Little, false);
    model(&be, Endian::Big, false);
    model(&be2, Endian::Big, true);
    let o = gguf(&["diff", s(&le), s(&be)]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());

    let o = gguf(&["diff", s(&le), s(&be2)]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("~ key a.floats: array<f32> = ["), "{text}");
    assert_eq!(lines[1], "~ tensor q8: data differs");
    assert_eq!(lines[2], "2 differences");

    let o = gguf(&["diff", "--json", s(&le), s(&be2)]);
    assert_eq!(o.status.code(), Some(1));
    let j = stdout_json(&o);
    assert_eq!(j["differences"], 2);
    let changes = j["changes"].as_array().unwrap();
    assert_eq!(changes[0]["change"], "~");
    assert_eq!(changes[0]["what"], "key");
    assert_eq!(changes[0]["name"], "a.floats");
    assert!(changes[0]["a"].as_str().unwrap().contains("(length 40)"));
    assert_eq!(changes[1], json!({"change": "~", "what": "tensor data", "name": "q8"}));

    let o = gguf(&["diff", "--json", s(&le), s(&be)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout_json(&o), json!({"differences": 0, "changes": []}));

    // Trouble is 2, whatever the differences.
    let o = gguf(&["diff", s(&le), s(&dir.join("missing.gguf"))]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn inspect_json_leaves_out_long_arrays_unless_full() {
    let dir = temp_dir("cli_inspect_long_arrays");
    let p = dir.join("m.gguf");
    model(&p, Endian::Little, false);
    let words: Vec<String> = (0..17).map(|i| format!("w{i}")).collect();
    let floats: Vec<f64> = (0..40).map(|i| i as f64 * 0.25).collect();
    let key = |j: &Json, k: &str| j["metadata"].as_array().unwrap().iter().find(|e| e["key"] == k).cloned().unwrap();

    let j = stdout_json(&gguf(&["inspect", "--json", s(&p)]));
    assert_eq!(key(&j, "a.floats"), json!({"key": "a.floats", "type": "array<f32>", "length": 40}));
    assert_eq!(key(&j, "a.words17"), json!({"key": "a.words17", "type": "array<string>", "length": 17}));
    assert_eq!(key(&j, "a.words16"), json!({"key": "a.words16", "type": "array<string>", "value": words[..16]}));
    assert_eq!(key(&j, "a.u64s"), json!({"key": "a.u64s", "type": "array<u64>", "value": [1u64, 1u64 << 40, 3]}));
    assert_eq!(key(&j, "a.u32"), json!({"key": "a.u32", "type": "u32", "value": 7}));

    let j = stdout_json(&gguf(&["inspect", "--json", "--full", s(&p)]));
    assert_eq!(key(&j, "a.floats"), json!({"key": "a.floats", "type": "array<f32>", "value": floats}));
    assert_eq!(key(&j, "a.words17"), json!({"key": "a.words17", "type": "array<string>", "value": words}));
}

#[test]
fn inspect_stored_order_prints_ne_fastest_first() {
    let dir = temp_dir("cli_inspect_ne");
    let p = dir.join("m.gguf");
    model(&p, Endian::Little, false);
    let j = stdout_json(&gguf(&["inspect", "--json", s(&p)]));
    assert_eq!(
        j["tensors"][0],
        json!({"name": "f32", "dtype": "F32", "shape": [2, 3, 8], "data_offset": j["data_offset"], "nbytes": 192})
    );
    let j = stdout_json(&gguf(&["inspect", "--json", "--stored-order", s(&p)]));
    assert_eq!(
        j["tensors"][0],
        json!({"name": "f32", "dtype": "F32", "ne": [8, 3, 2], "data_offset": j["data_offset"], "nbytes": 192})
    );
    assert_eq!(j["tensors"][1]["ne"], json!([32, 4]));
    let text = String::from_utf8(gguf(&["inspect", "--stored-order", s(&p)]).stdout).unwrap();
    let row = text.lines().find(|l| l.trim_start().starts_with("q8 ")).unwrap();
    assert!(row.contains("[64, 2]"), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("name") && l.contains(" ne ")), "{text}");
}

#[test]
fn inspect_reads_standard_input() {
    let dir = temp_dir("cli_inspect_stdin");
    let p = dir.join("m.gguf");
    model(&p, Endian::Big, false);
    let want = gguf(&["inspect", "--json", "--full", s(&p)]).stdout;
    let j: Json = serde_json::from_slice(&want).unwrap();
    assert_eq!(j["endianness"], "big");
    assert_eq!(j["tensors"].as_array().unwrap().len(), 5);
    // Redirected from the file (seekable) and through a pipe.
    let redirected = run(gguf_command()
        .args(["inspect", "--json", "--full", "-"])
        .stdin(std::fs::File::open(&p).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped()));
    assert!(redirected.status.success(), "{}", String::from_utf8_lossy(&redirected.stderr));
    assert_eq!(redirected.stdout, want);
    let mut child = gguf_command()
        .args(["inspect", "--json", "--full", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(&p).unwrap()).unwrap();
    let piped = wait(child);
    assert!(piped.status.success());
    assert_eq!(piped.stdout, want);
    // A truncated file on standard input is refused.
    let bytes = std::fs::read(&p).unwrap();
    let mut child = gguf_command()
        .args(["inspect", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes[..100]).unwrap();
    let o = wait(child);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: standard input"));
}

#[test]
fn validate_json_gives_one_object_per_file() {
    let dir = temp_dir("cli_validate_json");
    let (good, bad) = (dir.join("good.gguf"), dir.join("bad.gguf"));
    model(&good, Endian::Little, false);
    let bytes = std::fs::read(&good).unwrap();
    // The last tensor (Q6_K, 210 bytes) is padded to 224: cut into its data.
    std::fs::write(&bad, &bytes[..bytes.len() - 20]).unwrap();
    let o = gguf(&["validate", "--json", s(&good), s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let j = stdout_json(&o);
    let files = j.as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        files[0],
        json!({"path": s(&good), "valid": true, "version": 3, "kv_count": 7, "tensor_count": 5, "warnings": []})
    );
    assert_eq!(files[1]["path"], s(&bad));
    assert_eq!(files[1]["valid"], false);
    assert!(!files[1]["error"].as_str().unwrap().is_empty());
    let o = gguf(&["validate", "--json", s(&good)]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn set_dry_run_prints_the_change_and_writes_nothing() {
    let dir = temp_dir("cli_set_dry_run");
    let p = dir.join("m.gguf");
    model(&p, Endian::Little, false);
    let before = std::fs::read(&p).unwrap();
    let o = gguf(&["set", "--dry-run", s(&p), "a.u32", "9"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "~ key a.u32: u32 = 7 -> u32 = 9\n");
    let o = gguf(&["set", "--dry-run", s(&p), "b.new", "x y"]);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "+ key b.new: string = \"x y\"\n");
    let o = gguf(&["set", "--dry-run", s(&p), "a.u32", "-1"]);
    assert_eq!(o.status.code(), Some(1), "a u32 cannot be -1");
    // A dry run refuses what the real run refuses, and says why: a new key with an empty
    // segment, an alignment that is not a power of two.
    for (key, value, msg) in [
        ("a..b", "1", "cannot edit \"a..b\": a segment between dots is empty"),
        ("general.alignment", "48", "cannot edit \"general.alignment\": the value is 48, not a power of two"),
    ] {
        let o = gguf(&["set", "--dry-run", s(&p), key, value]);
        assert_eq!(o.status.code(), Some(1), "{key}");
        assert!(o.stdout.is_empty(), "{key}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{err}");
        let o = gguf(&["set", s(&p), key, value]);
        assert_eq!(o.status.code(), Some(1), "{key}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(msg));
    }
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file is left");
}

/// `set` to the value a key holds (same type, same bytes) changes nothing, with or without
/// `--dry-run`: both print `= key KEY: TYPE = VALUE (unchanged)` and the file is not rewritten (its
/// inode and modification time stay), as gguf-py's `gguf_set_metadata` leaves it ("already set to
/// requested value", exit 0, nothing written). Another type, or other bytes of a float (`-0` for
/// `0`), is a change.
#[test]
fn set_to_the_value_it_holds_changes_nothing() {
    use std::os::unix::fs::MetadataExt;
    let dir = temp_dir("cli_set_unchanged");
    for endian in [Endian::Little, Endian::Big] {
        let p = dir.join(format!("m-{endian:?}.gguf"));
        model(&p, endian, false);
        let stamp = |p: &Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.ino(), m.mtime(), m.mtime_nsec(), std::fs::read(p).unwrap())
        };
        let before = stamp(&p);
        for (key, value, want) in [
            ("a.u32", "7", "= key a.u32: u32 = 7 (unchanged)\n"),
            ("a.f64", "-0.5", "= key a.f64: f64 = -0.5 (unchanged)\n"),
            ("general.architecture", "llama", "= key general.architecture: string = \"llama\" (unchanged)\n"),
        ] {
            for dry in [true, false] {
                let mut args = vec!["set", s(&p), key, value];
                args.extend(dry.then_some("--dry-run"));
                let o = gguf(&args);
                assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
                assert_eq!(String::from_utf8(o.stdout).unwrap(), want, "{args:?}");
                assert!(stamp(&p) == before, "{args:?}: the file was rewritten");
            }
        }
        // Another type, or other bytes, is a change.
        let o = gguf(&["set", "--dry-run", s(&p), "a.u32", "7", "--type", "u64"]);
        assert_eq!(String::from_utf8(o.stdout).unwrap(), "~ key a.u32: u32 = 7 -> u64 = 7\n");
        let o = gguf(&["set", s(&p), "a.f64", "0"]);
        assert!(o.status.success() && o.stdout.is_empty(), "{o:?}");
        let o = gguf(&["set", "--dry-run", s(&p), "a.f64", "-0"]);
        let said = String::from_utf8(o.stdout).unwrap();
        assert_eq!(said, "~ key a.f64: f64 = 0.0 -> f64 = -0.0\n");
    }
    // gguf-py's gguf_set_metadata leaves the file as it is for the value it holds.
    let Some(py) = python() else { return };
    let p = dir.join("py.gguf");
    model(&p, Endian::Little, false);
    let before = std::fs::metadata(&p).unwrap().mtime_nsec();
    let o = std::process::Command::new(&py)
        .args(["-m", "gguf.scripts.gguf_set_metadata", "--force", s(&p), "a.u32", "7"])
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&[o.stdout, o.stderr].concat()).into_owned();
    assert!(o.status.success() && log.contains("already set to requested value 7"), "{log}");
    assert_eq!(std::fs::metadata(&p).unwrap().mtime_nsec(), before);
}

#[test]
fn completions_for_bash_zsh_fish_powershell_and_elvish() {
    for (shell, marker) in [
        ("bash", "complete -F _gguf"),
        ("zsh", "#compdef gguf"),
        ("fish", "complete -c gguf"),
        // PowerShell's registration of a native command's completer, and elvish's.
        ("powershell", "Register-ArgumentCompleter -Native -CommandName 'gguf'"),
        ("elvish", "set edit:completion:arg-completer[gguf]"),
    ] {
        let o = gguf(&["completions", shell]);
        assert!(o.status.success());
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: no {marker:?}");
        for sub in ["inspect", "validate", "quantize", "hash", "export", "import", "show", "completions"] {
            assert!(text.contains(sub), "{shell}: no {sub}");
        }
    }
    // Each command is a completion word of its own, and its options are completed after it:
    // bash's list of subcommands and each subcommand's option list, fish's `-a` and `-l` entries.
    let bash = String::from_utf8(gguf(&["completions", "bash"]).stdout).unwrap();
    let fish = String::from_utf8(gguf(&["completions", "fish"]).stdout).unwrap();
    let top = bash.lines().find(|l| l.contains("opts=\"-h -V --help --version ")).expect("bash: top-level opts");
    for (sub, options) in [
        ("inspect", &["--json", "--memory", "--ctx", "--one-file", "--stored-order"][..]),
        ("hash", &["--xxh64", "--sha1", "--sha256", "--all", "--uuid", "--no-layer", "--check"][..]),
        ("export", &["--dtype", "--exclude", "--force"][..]),
        ("import", &["--force"][..]),
        ("show", &["--rows", "--items", "--json"][..]),
    ] {
        assert!(top.split(['"', ' ']).any(|w| w == sub), "bash: {sub} not a subcommand word: {top}");
        assert!(fish.contains(&format!("__fish_gguf_needs_command\" -f -a \"{sub}\"")), "fish: no {sub}");
        let case = bash.split(&format!("gguf__subcmd__{sub})")).nth(1).expect("bash: a case for the subcommand");
        let opts = case.lines().find(|l| l.contains("opts=")).unwrap();
        for o in options {
            assert!(opts.split(['"', ' ']).any(|w| w == *o), "bash: {sub} lacks {o}: {opts}");
            let long = o.trim_start_matches("--");
            let fish_line = format!("complete -c gguf -n \"__fish_gguf_using_subcommand {sub}\" ");
            assert!(
                fish.lines().any(|l| l.starts_with(&fish_line) && l.contains(&format!(" -l {long} "))),
                "fish: {sub} lacks {o}"
            );
        }
    }
    assert_eq!(gguf(&["completions", "powershell-7"]).status.code(), Some(2));
    // Type lists are clap's possible values: completed, listed in --help, checked.
    let bash = String::from_utf8(gguf(&["completions", "bash"]).stdout).unwrap();
    for t in ["Q4_K_M", "MXFP4_MOE", "COPY", "IQ4_XS", "BF16"] {
        assert!(bash.contains(t), "bash completion lacks {t}");
    }
    let help = String::from_utf8(gguf(&["dequantize", "--help"]).stdout).unwrap();
    assert!(help.contains("[possible values: F32, F16, BF16]"), "{help}");
    let o = gguf(&["quantize", "--dry-run", "--output-tensor-type", "Q9_9", "x.gguf", "Q8_0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("possible values"));
}

#[test]
fn short_and_long_help_differ() {
    let short = String::from_utf8(gguf(&["-h"]).stdout).unwrap();
    let long = String::from_utf8(gguf(&["--help"]).stdout).unwrap();
    assert!(long.contains("Exit status"), "{long}");
    assert!(!short.contains("Exit status"));
}

#[test]
fn dequantize_threads_do_not_change_the_output() {
    let dir = temp_dir("cli_dequantize_threads");
    let p = dir.join("m.gguf");
    model(&p, Endian::Little, false);
    let mut outs: Vec<PathBuf> = Vec::new();
    for t in ["1", "2", "3"] {
        let out = dir.join(format!("f32-{t}.gguf"));
        let o = gguf(&["dequantize", "-q", "--threads", t, s(&p), s(&out)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        outs.push(out);
    }
    let first = std::fs::read(&outs[0]).unwrap();
    let f = gguf_serde::Gguf::from_slice(&first).unwrap();
    // Q8_0's first block: d = f16 from bytes 0..2, then 32 signed bytes: value = d * q.
    let q8 = &tensors()[2].3;
    let d = half::f16::from_le_bytes([q8[0], q8[1]]).to_f32();
    let data = f.tensor_data_by_name("q8").unwrap();
    for i in 0..32 {
        let want = d * f32::from(q8[2 + i] as i8);
        let got = f32::from_le_bytes(data[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(got.to_bits(), want.to_bits(), "item {i}");
    }
    for o in &outs[1..] {
        assert_eq!(std::fs::read(o).unwrap(), first);
    }
    assert_eq!(gguf(&["dequantize", "--threads", "0", s(&p), s(&dir.join("x.gguf"))]).status.code(), Some(2));
}
