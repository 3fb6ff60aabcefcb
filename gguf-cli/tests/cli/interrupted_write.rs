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

/// Starts `gguf quantize`, waits for its temporary file to appear, sends `signal`, and checks the
/// exit status and that only the input is left.
fn interrupt(dir: &Path, input: &Path, signal: &str, code: i32) {
    let out = dir.join("out.gguf");
    let mut child = super::gguf_command()
        .args(["quantize", "-q", input.to_str().unwrap(), out.to_str().unwrap(), "Q4_K_M"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if names(dir).iter().any(|n| n.ends_with(".tmp")) {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "gguf quantize ended before its temporary file was seen");
        assert!(start.elapsed() < Duration::from_secs(120), "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(2));
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
    interrupt(&dir, &input, "TERM", 143);
    interrupt(&dir, &input, "INT", 130);
    interrupt(&dir, &input, "HUP", 129);
    let _ = std::fs::remove_dir_all(&dir);
}
