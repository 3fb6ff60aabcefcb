//! `gguf inspect --memory` on extreme and hostile values: `--ctx` is llama.cpp's `n_ctx` (a
//! `uint32_t`, 0 meaning the training context `{arch}.context_length`), a size that does not fit
//! in 64 bits is an error naming the key, and a huge `block_count` costs no more than the file
//! stores. Expected sizes follow llama.cpp's KV cache (`llama_kv_cache`: per layer,
//! `n_head_kv × n_embd_head_k` F16 values (2 bytes) per cell for K, `n_embd_head_v` for V, the
//! context padded to a multiple of 256 cells).

use std::path::{Path, PathBuf};
use std::time::Duration;

use gguf_serde::{GgmlType, GgufWriter};
use gguf_tests::temp_dir;
use serde_json::Value as Json;

use super::{gguf, gguf_command, s};

/// The most a hostile file may keep `inspect --memory` busy (a watchdog: the answer takes
/// milliseconds; the per-layer loop this guards against took 35 s for 4e9 layers).
const BOUNDED: Duration = Duration::from_secs(20);

/// A llama file in `dir` with `block_count` (as a U64), `context_length`, an embedding of 64
/// values in 4 heads (head size 16), `head_count_kv` (a U32, or one U32 per listed layer) and one
/// F32 tensor of 4 values (16 bytes).
fn model(
    dir: &Path,
    name: &str,
    block_count: u64,
    context_length: u64,
    head_count_kv: Result<u32, Vec<u32>>,
) -> PathBuf {
    let path = dir.join(name);
    let mut w = GgufWriter::create(&path).unwrap();
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_kv("llama.block_count", block_count).unwrap();
    w.add_kv("llama.context_length", context_length).unwrap();
    w.add_kv("llama.embedding_length", 64u32).unwrap();
    w.add_kv("llama.attention.head_count", 4u32).unwrap();
    match head_count_kv {
        Ok(n) => w.add_kv("llama.attention.head_count_kv", n).unwrap(),
        Err(per_layer) => w.add_kv("llama.attention.head_count_kv", per_layer).unwrap(),
    }
    w.add_tensor_ne("token_embd.weight", GgmlType::F32, &[4, 1]).unwrap();
    w.write_tensor_data(&[0u8; 16]).unwrap();
    w.commit().unwrap();
    path
}

/// `gguf inspect --json --memory ARGS FILE` under the [`BOUNDED`] watchdog.
fn memory(file: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = gguf_command();
    cmd.args(["inspect", "--json", "--memory"]).args(args).arg(file);
    gguf_tests::output_with_deadline(&mut cmd, BOUNDED)
}

fn json(out: &std::process::Output) -> Json {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Json>(&out.stdout).unwrap()["memory"].clone()
}

#[test]
fn ctx_is_llama_cpp_s_u32_and_0_is_the_training_context() {
    let dir = temp_dir("cli_memory_ctx");
    let f = model(&dir, "m.gguf", 2, 1000, Ok(2));
    // Above u32::MAX: a usage error (status 2) naming the option, nothing on standard output.
    for ctx in ["4294967296", "18446744073709551615"] {
        let out = memory(&f, &["--ctx", ctx]);
        assert_eq!(out.status.code(), Some(2), "--ctx {ctx}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--ctx"), "--ctx {ctx}");
        assert!(out.stdout.is_empty());
    }
    // 0 and no --ctx: llama.cpp's n_ctx_train, 1000 tokens, padded to 1024 cells.
    for args in [&["--ctx", "0"][..], &[][..]] {
        let m = json(&memory(&f, args));
        assert_eq!(m["ctx"], 1000, "{args:?}");
        assert_eq!(m["cells"], 1024, "{args:?}");
        // 2 layers × 2 KV heads × 16 values × 1024 cells × 2 bytes, for K and for V.
        assert_eq!(m["k_bytes"], 2 * 2 * 16 * 1024 * 2, "{args:?}");
        assert_eq!(m["kv_bytes"], 2 * 2 * 2 * 16 * 1024 * 2, "{args:?}");
    }
    // u32::MAX tokens: 2^32 cells.
    let m = json(&memory(&f, &["--ctx", "4294967295"]));
    assert_eq!(m["cells"], 1u64 << 32);
    assert_eq!(m["k_bytes"], 2u64 * 2 * 16 * (1 << 32) * 2);
}

#[test]
fn a_size_beyond_64_bits_is_an_error_naming_the_key() {
    let dir = temp_dir("cli_memory_overflow");
    // A training context of u64::MAX tokens: no number of cells fits.
    let f = model(&dir, "ctx.gguf", 1, u64::MAX, Ok(4));
    let out = memory(&f, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("context") && err.contains("larger than"), "{err}");
    assert!(out.stdout.is_empty(), "no wrapped number is printed");
    // A head count whose KV cache does not fit.
    let f = model(&dir, "heads.gguf", 1, 256, Ok(u32::MAX));
    let out = memory(&f, &["--ctx", "4294967295"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("llama.attention.head_count_kv = 4294967295"), "{err}");
}

#[test]
fn a_huge_block_count_is_answered_in_bounded_time() {
    let dir = temp_dir("cli_memory_layers");
    // 4e9 layers of 2 KV heads: the closed form, 4e9 × 2 × 16 × 256 × 2 bytes for K.
    let f = model(&dir, "4e9.gguf", 4_000_000_000, 256, Ok(2));
    let m = json(&memory(&f, &["--ctx", "256"]));
    assert_eq!(m["layers"], 4_000_000_000u64);
    assert_eq!(m["k_bytes"], 4_000_000_000u64 * 2 * 16 * 256 * 2);
    // Three listed layers (1, 2 and 4 KV heads), the rest with `head_count` (4) as llama.cpp's
    // default for a missing entry.
    let f = model(&dir, "listed.gguf", 4_000_000_000, 256, Err(vec![1, 2, 4]));
    let m = json(&memory(&f, &["--ctx", "256"]));
    assert_eq!(m["k_bytes"], (1 + 2 + 4 + (4_000_000_000u64 - 3) * 4) * 16 * 256 * 2);
    // u64::MAX layers: refused as a size beyond 64 bits, naming block_count, not a hang.
    let f = model(&dir, "max.gguf", u64::MAX, 256, Ok(2));
    let out = memory(&f, &["--ctx", "256"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("llama.block_count = {}", u64::MAX)), "{err}");
}

/// Errors a new user met (issue #29): a missing file is an I/O error said once, a plain file is
/// not called a shard, the magic found is printed as the expected one is.
#[test]
fn error_messages_of_missing_and_foreign_files() {
    let dir = temp_dir("cli_memory_errors");
    let missing = dir.join("nope.safetensors");
    let out = gguf(&["import", s(&missing), s(&dir.join("x.gguf"))]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("opening {}", missing.display())), "{err}");
    assert!(!err.contains("not a valid safetensors"), "{err}");
    // The OS error (ENOENT's text, as std::io::Error gives it) once.
    let os_text = std::fs::File::open(&missing).unwrap_err().to_string();
    assert_eq!(err.matches(&os_text).count(), 1, "{err}");
    let nope = dir.join("nope.gguf");
    for args in [&["show", s(&nope), "x"][..], &["hash", s(&nope)][..], &["export", s(&nope), s(&dir.join("o.st"))][..]]
    {
        let err = String::from_utf8_lossy(&gguf(args).stderr).into_owned();
        assert!(err.contains(&format!("opening {}", nope.display())), "{args:?}: {err}");
        assert!(!err.contains("shard"), "{args:?}: {err}");
        assert_eq!(err.matches(&os_text).count(), 1, "{args:?}: {err}");
    }
    let foreign = dir.join("foreign.gguf");
    std::fs::write(&foreign, b"gb|r and more").unwrap();
    let err = String::from_utf8_lossy(&gguf(&["show", s(&foreign), "x"]).stderr).into_owned();
    // "gb|r" is 67 62 7c 72 in ASCII.
    assert!(err.contains(r#"magic at offset 0 is "gb|r" (67 62 7c 72), expected "GGUF" (47 47 55 46)"#), "{err}");
    assert!(!err.contains("shard"), "{err}");
}
