//! A file whose BOOL bytes are not all 0 or 1 (`gguf_tests::support::odd_bools`: a scalar stored
//! as 0x02, an array as `[0x01, 0x00, 0xff, 0x80]`): the spec forbids them, ggml's
//! `gguf_init_from_file` reads any non-zero byte as true (the `ggml_read` harness of the
//! llama.cpp build, the oracle), and so does every command. `validate` warns, naming each key and
//! the offset of its first such byte, with and without `--ggml`; `set`, `split` + `merge` and
//! `quantize` write the bools back as 0 or 1, as ggml's writer does (`tests/tests/interop/
//! split_llama.rs` compares with `llama-gguf-split`'s shards), which ggml reads the same.

use std::path::Path;

use gguf_serde::{Array, Gguf, Value};
use gguf_tests::ggml_read::{assert_ggml_reads_as_we_do, ggml_kv_line, ggml_read_dump};
use gguf_tests::support::{odd_bools, ODD_BOOL_ARRAY_AT, ODD_BOOL_SCALAR_AT};
use gguf_tests::{llama_run_harness, temp_dir};

use super::{gguf, gguf_ok, rewrite_with_every_command, s};

/// [`odd_bools`] with each stored byte other than 0 and 1 replaced by 1: what ggml's writer
/// writes for those values (`gguf_writer::write(const bool &)`: `val ? 1 : 0`).
fn as_ggml_writes_it() -> Vec<u8> {
    let mut b = odd_bools();
    for at in [ODD_BOOL_SCALAR_AT, ODD_BOOL_ARRAY_AT, ODD_BOOL_ARRAY_AT + 1] {
        assert!(b[at as usize] > 1);
        b[at as usize] = 1;
    }
    b
}

/// ggml's lines for the bool keys of a file.
fn bool_lines(harness: &Path, file: &Path) -> Vec<String> {
    ggml_read_dump(harness, file).into_iter().filter(|l| l.starts_with("kv test.")).collect()
}

#[test]
fn inspect_shows_true_and_validate_warns_with_key_and_offset() {
    let dir = temp_dir("odd-bools-inspect");
    let f = dir.join("odd.gguf");
    std::fs::write(&f, odd_bools()).unwrap();
    let json: serde_json::Value = serde_json::from_str(&gguf_ok(&["inspect", "--json", s(&f)])).unwrap();
    let m = &json["metadata"];
    assert_eq!((m[1]["key"].as_str(), m[1]["value"].as_bool()), (Some("test.flag"), Some(true)));
    assert_eq!(m[2]["value"], serde_json::json!([true, false, true, true]));
    assert_eq!((m[3]["value"].as_bool(), m[4]["value"].as_bool()), (Some(false), Some(true)));
    let scalar = format!("key test.flag: bool byte 0x02 at offset {ODD_BOOL_SCALAR_AT} is neither 0 nor 1");
    let array =
        format!("key test.flags: 2 bool bytes are neither 0 nor 1, the first 0xff at offset {ODD_BOOL_ARRAY_AT}");
    for args in [vec!["validate"], vec!["validate", "--ggml"]] {
        let o = gguf(&[&args[..], &[s(&f)]].concat());
        let out = String::from_utf8(o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}");
        let warnings: Vec<&str> = out.lines().filter(|l| l.contains(": warning: ")).collect();
        assert_eq!(warnings.len(), 2, "{args:?}: {out}");
        assert!(warnings[0].contains(&scalar) && warnings[1].contains(&array), "{args:?}: {out}");
        assert!(warnings.iter().all(|w| w.contains("ggml and llama.cpp read any other byte as true")), "{out}");
    }
    let json: serde_json::Value = serde_json::from_str(&gguf_ok(&["validate", "--ggml", "--json", s(&f)])).unwrap();
    assert_eq!(json[0]["valid"], true);
    assert_eq!(json[0]["warnings"].as_array().unwrap().len(), 2);
    // The file ggml's writer would write: no warning.
    let g = dir.join("ggml.gguf");
    std::fs::write(&g, as_ggml_writes_it()).unwrap();
    assert!(!gguf_ok(&["validate", s(&g)]).contains("warning"));
    // The same values: `diff` finds no difference.
    assert_eq!(gguf(&["diff", s(&f), s(&g)]).status.code(), Some(0));
}

#[test]
fn ggml_reads_what_set_split_merge_and_quantize_write() {
    let Some(harness) = llama_run_harness() else { return };
    let dir = temp_dir("odd-bools-ops");
    let src = dir.join("odd.gguf");
    std::fs::write(&src, odd_bools()).unwrap();
    // ggml accepts the file and reads it as we do: true for 0x02, 0xff and 0x80.
    assert_ggml_reads_as_we_do(&harness, &src);
    let want = bool_lines(&harness, &src);
    let flags = Value::Array(Array::Bool(vec![true, false, true, true]));
    assert_eq!(
        want,
        [
            ggml_kv_line("test.flag", &Value::Bool(true)),
            ggml_kv_line("test.flags", &flags),
            ggml_kv_line("test.off", &Value::Bool(false)),
            ggml_kv_line("test.on", &Value::Bool(true)),
        ]
    );

    let out = rewrite_with_every_command(&src, &dir);
    assert!(
        std::fs::read(&out.merged).unwrap() == as_ggml_writes_it(),
        "merge gives the file with its bools as 0 or 1"
    );
    for out in [&out.edited, &out.merged, &out.quantized, &out.shards[0]] {
        assert_ggml_reads_as_we_do(&harness, out);
        assert_eq!(bool_lines(&harness, out), want, "{}", out.display());
        let f = Gguf::open(out).unwrap();
        assert!(
            f.metadata().all(|kv| kv.odd_bool_bytes().is_none()),
            "{}: a bool byte other than 0 and 1",
            out.display()
        );
    }
}
