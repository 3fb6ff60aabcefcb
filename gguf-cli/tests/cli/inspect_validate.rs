//! `gguf inspect` and `gguf validate` as a user runs them.

use gguf_tests::{assert_same, python, run_py, temp_dir};

use super::gguf;

#[test]
fn inspect_json_equals_gguf_py() {
    let Some(py) = python() else { return };
    let dir = temp_dir("cli_inspect_json");
    for (name, args) in
        [("le.gguf", vec![]), ("be.gguf", vec!["--big-endian"]), ("a64.gguf", vec!["--alignment", "64"])]
    {
        let path = dir.join(name);
        let mut all = vec![path.to_str().unwrap()];
        all.extend(args);
        run_py(&py, "write_sample.py", &all);
        let out = gguf(&["inspect", "--json", "--full", path.to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let ours: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let theirs = run_py(&py, "dump.py", &[path.to_str().unwrap(), "--no-tensor-hash"]);
        assert_same(&ours, &theirs);
    }
}

#[test]
fn inspect_text_shows_header_keys_and_tensors() {
    let path = crate::small_path();
    let out = gguf(&["inspect", path.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for want in ["version:      3", "endianness:   little", "alignment:    32", "data offset:  288"] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let words = |start: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.trim_start().starts_with(start)).unwrap_or_default();
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(words("test.answer"), ["test.answer", "u32", "42"]);
    assert_eq!(words("test.note"), ["test.note", "string", "\"tensor-format-specs\""]);
    assert_eq!(words("w_q8_0"), ["w_q8_0", "Q8_0", "[4,", "64]", "1312", "272"]);
}

#[test]
fn validate_exit_codes_and_errors() {
    let good = crate::small_path();
    let dir = temp_dir("cli_validate");
    let bad = dir.join("cut.gguf");
    std::fs::write(&bad, &std::fs::read(&good).unwrap()[..200]).unwrap();

    let out = gguf(&["validate", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("small.gguf: OK (version 3, 3 keys, 3 tensors)"));

    let out = gguf(&["validate", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "cut.gguf: INVALID: tensor name at offset 189 claims 6 bytes, more than the 3 bytes left can hold"
        ),
        "{text}"
    );
}
