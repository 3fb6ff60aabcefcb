//! A file whose key, token string, string value and tensor name are not UTF-8
//! (`gguf_tests::support::not_utf8`): ggml's `gguf_init_from_file` reads it (the `ggml_read`
//! harness of the llama.cpp build, the oracle), and so does every command; `set`, `split` +
//! `merge` and `quantize` write those bytes back as they were, which ggml's reading of each output
//! shows line for line against its reading of the input.

use std::path::Path;

use gguf_tests::ggml_read::{assert_ggml_reads_as_we_do, ggml_read_dump};
use gguf_tests::support::not_utf8;
use gguf_tests::{llama_run_harness, temp_dir};

use super::{gguf, gguf_ok, rewrite_with_every_command, s};

/// ggml's lines for the keys and tensors that hold bytes that are not UTF-8 (the token array by its
/// hash), tensor lines without their offset (a quantized file orders its tensors by name).
fn odd_lines(harness: &Path, file: &Path) -> Vec<String> {
    ggml_read_dump(harness, file)
        .into_iter()
        .filter(|l| l.contains("\\x") || l.starts_with("kv tokenizer.ggml.tokens "))
        .map(|l| {
            let mut w: Vec<&str> = l.split(' ').collect();
            if w.first() == Some(&"tensor") && w.len() > 5 {
                w.remove(w.len() - 3);
            }
            w.join(" ")
        })
        .collect()
}

#[test]
fn inspect_shows_escapes_and_validate_warns() {
    let dir = temp_dir("not-utf8-inspect");
    let f = dir.join("odd.gguf");
    std::fs::write(&f, not_utf8()).unwrap();
    let text = gguf_ok(&["inspect", s(&f)]);
    // Rust's `escape_debug` of the valid part, `\xNN` for each byte that is not UTF-8.
    for want in [r#""test.k\xffey""#, r#"["a", "\xe2\x96", "▁b"]"#, r#""caf\xe9""#, r#""w.\xc3(""#] {
        assert!(text.contains(want), "{want} not in:\n{text}");
    }
    let json: serde_json::Value = serde_json::from_str(&gguf_ok(&["inspect", "--json", s(&f)])).unwrap();
    assert_eq!(json["metadata"][1]["key"], r"test.k\xffey");
    assert_eq!(json["metadata"][3]["value"], r"caf\xe9");
    assert_eq!(json["tensors"][0]["name"], r"w.\xc3(");
    for args in [vec!["validate"], vec!["validate", "--ggml"]] {
        let o = gguf(&[&args[..], &[s(&f)]].concat());
        let out = String::from_utf8(o.stdout).unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}");
        assert_eq!(out.lines().filter(|l| l.contains("not valid UTF-8")).count(), 4, "{args:?}: {out}");
    }
    // `show` finds the tensor by the name as inspect shows it.
    assert!(gguf_ok(&["show", s(&f), r"w.\xc3(", "--rows", "0"]).contains(r"tensor:    w.\xc3("));
    // `diff` names the key escaped.
    let g = dir.join("other.gguf");
    std::fs::write(&g, not_utf8().into_iter().map(|b| if b == 7 { 8 } else { b }).collect::<Vec<_>>()).unwrap();
    let o = gguf(&["diff", s(&f), s(&g)]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(r"key test.k\xffey: u32 = 7 -> u32 = 8"), "{o:?}");
}

#[test]
fn ggml_reads_what_set_split_merge_and_quantize_write() {
    let Some(harness) = llama_run_harness() else { return };
    let dir = temp_dir("not-utf8-ops");
    let src = dir.join("odd.gguf");
    std::fs::write(&src, not_utf8()).unwrap();
    // ggml accepts the file and reads it as we do.
    assert_ggml_reads_as_we_do(&harness, &src);
    let want = odd_lines(&harness, &src);
    assert_eq!(want.len(), 4, "{want:?}");

    let out = rewrite_with_every_command(&src, &dir);
    assert_eq!(std::fs::read(&out.merged).unwrap(), not_utf8(), "merge gives back the file split");
    for out in [&out.edited, &out.merged, &out.quantized] {
        assert_ggml_reads_as_we_do(&harness, out);
        assert_eq!(odd_lines(&harness, out), want, "{}", out.display());
    }
    // The shards: the key and the token in the first, each tensor name in its shard.
    let shards: Vec<String> = out.shards.iter().flat_map(|p| odd_lines(&harness, p)).collect();
    assert_eq!(shards, want);
}
