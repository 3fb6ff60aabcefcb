//! Opens and validates a GGUF file with several readers, in one process per reader so that peak
//! memory (VmHWM) is the reader's own. Usage: `bench-compare READER FILE [ITERATIONS]` with READER
//! one of `gguf-serde-mmap`, `gguf-serde-reader`, `ggus`, `candle` (scripts/bench-open.sh), or one
//! of the token walks of scripts/bench-tokens.sh, each an open of the file (`Gguf::open`) and a
//! walk of every string of `tokenizer.ggml.tokens`, summing their lengths:
//! `tokens-strings` (`ValueRef::as_array` + `ArrayRef::strings`), `tokens-serde-borrowed`
//! (`Gguf::deserialize_metadata` into a struct with `Vec<&str>`), `tokens-serde-owned` (the same
//! with `Vec<String>`), `tokens-string-array` (the same with `gguf_serde::StringArray`),
//! `tokenizer-serde-borrowed` (tokens, `tokenizer.ggml.scores` and `tokenizer.ggml.token_type`
//! together into `Vec<&str>`, `Vec<f32>`, `Vec<i32>`), `tokenizer-serde-owned` (the same with
//! `Vec<String>`), `tokenizer-string-array` (the same with `gguf_serde::StringArray`). Prints the
//! median and minimum wall time of one iteration (file already in the page cache), the process's
//! peak RSS, and the median CPU time of one iteration (user and system time of the process,
//! `CLOCK_PROCESS_CPUTIME_ID`: what other processes on a shared machine do not add to). Built
//! with `--features mimalloc`, mimalloc is the global allocator and the reader's name is printed
//! with `+mimalloc`.

use std::time::{Duration, Instant};

/// With `--features mimalloc`, every allocation goes through mimalloc instead of the system's
/// (glibc's) allocator; the reader names printed get a `+mimalloc` suffix.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ALLOCATOR_SUFFIX: &str = if cfg!(feature = "mimalloc") { "+mimalloc" } else { "" };

/// CPU time used by this process so far (user and system), in seconds.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

/// The token list as a borrowed serde struct.
#[derive(serde::Deserialize)]
struct TokensBorrowed<'a> {
    #[serde(borrow, rename = "tokenizer.ggml.tokens")]
    tokens: Vec<&'a str>,
}

/// The token list as an owned serde struct.
#[derive(serde::Deserialize)]
struct TokensOwned {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: Vec<String>,
}

/// The token list as a `StringArray` (one buffer for all the strings).
#[derive(serde::Deserialize)]
struct TokensStringArray {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: gguf_serde::StringArray,
}

/// The token list with its scores and token types, borrowed (plain serde derive, plain `Vec`s).
#[derive(serde::Deserialize)]
struct TokenizerBorrowed<'a> {
    #[serde(borrow, rename = "tokenizer.ggml.tokens")]
    tokens: Vec<&'a str>,
    #[serde(rename = "tokenizer.ggml.scores")]
    scores: Vec<f32>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i32>,
}

/// The token list with its scores and token types, owned (plain serde derive, plain `Vec`s).
#[derive(serde::Deserialize)]
struct TokenizerOwned {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: Vec<String>,
    #[serde(rename = "tokenizer.ggml.scores")]
    scores: Vec<f32>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i32>,
}

/// The token list as a `StringArray` with its scores and token types (plain `Vec`s).
#[derive(serde::Deserialize)]
struct TokenizerStringArray {
    #[serde(rename = "tokenizer.ggml.tokens")]
    tokens: gguf_serde::StringArray,
    #[serde(rename = "tokenizer.ggml.scores")]
    scores: Vec<f32>,
    #[serde(rename = "tokenizer.ggml.token_type")]
    token_type: Vec<i32>,
}

/// The summed token bytes (what every reader reports, the walk ggml's reader is timed with); the
/// scores and token types are only checked for their length and kept from being optimized away.
fn tokenizer_sum<S: AsRef<str>>(tokens: &[S], scores: &[f32], token_type: &[i32]) -> usize {
    assert_eq!((scores.len(), token_type.len()), (tokens.len(), tokens.len()));
    std::hint::black_box((scores, token_type));
    tokens.iter().map(|s| s.as_ref().len()).sum()
}

const TOKENS: &str = "tokenizer.ggml.tokens";

fn open_once(reader: &str, path: &str) -> usize {
    match reader {
        "tokens-strings" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let tokens = f.get(TOKENS).and_then(|v| v.as_array()).expect("a tokenizer.ggml.tokens array");
            tokens.strings().expect("strings").map(|s| s.len()).sum()
        }
        "tokens-serde-borrowed" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokensBorrowed<'_> = f.deserialize_metadata().expect("deserialize");
            t.tokens.iter().map(|s| s.len()).sum()
        }
        "tokens-serde-owned" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokensOwned = f.deserialize_metadata().expect("deserialize");
            t.tokens.iter().map(String::len).sum()
        }
        "tokens-string-array" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokensStringArray = f.deserialize_metadata().expect("deserialize");
            t.tokens.iter().map(str::len).sum()
        }
        "tokenizer-serde-borrowed" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokenizerBorrowed<'_> = f.deserialize_metadata().expect("deserialize");
            tokenizer_sum(&t.tokens, &t.scores, &t.token_type)
        }
        "tokenizer-serde-owned" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokenizerOwned = f.deserialize_metadata().expect("deserialize");
            tokenizer_sum(&t.tokens, &t.scores, &t.token_type)
        }
        "tokenizer-string-array" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            let t: TokenizerStringArray = f.deserialize_metadata().expect("deserialize");
            assert_eq!((t.scores.len(), t.token_type.len()), (t.tokens.len(), t.tokens.len()));
            std::hint::black_box((&t.scores, &t.token_type));
            t.tokens.iter().map(str::len).sum()
        }
        "gguf-serde-mmap" => {
            let f = gguf_serde::Gguf::open(path).expect("open");
            f.tensor_count() + f.kv_count()
        }
        "gguf-serde-reader" => {
            let f = gguf_serde::Gguf::from_reader(std::io::BufReader::new(std::fs::File::open(path).expect("file")))
                .expect("open");
            f.tensor_count() + f.kv_count()
        }
        "ggus" => {
            let file = std::fs::File::open(path).expect("file");
            // SAFETY: read-only mapping of a file nobody changes during the benchmark.
            let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
            let g = ggus::GGuf::new(&map).expect("ggus");
            g.tensors.len() + g.meta_kvs.len()
        }
        "candle" => {
            let mut file = std::fs::File::open(path).expect("file");
            let c = candle_core::quantized::gguf_file::Content::read(&mut file).expect("candle");
            c.tensor_infos.len() + c.metadata.len()
        }
        other => panic!("unknown reader {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (reader, path) = (args[1].as_str(), args[2].as_str());
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let check = open_once(reader, path); // warm-up (page cache, allocator)
    let (mut times, mut cpu): (Vec<Duration>, Vec<f64>) = (0..n)
        .map(|_| {
            let (t, c0) = (Instant::now(), cpu_seconds());
            let c = open_once(reader, path);
            let (e, ce) = (t.elapsed(), cpu_seconds() - c0);
            assert_eq!(c, check);
            (e, ce)
        })
        .unzip();
    times.sort();
    cpu.sort_by(f64::total_cmp);
    let name = format!("{reader}{ALLOCATOR_SUFFIX}");
    println!(
        "{name:18} median {:8.2} ms  min {:8.2} ms  peak RSS {:6.1} MiB  ({} {check})  cpu median {:8.2} ms",
        times[n / 2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        peak_rss_kib() as f64 / 1024.0,
        if reader.starts_with("tokens-") || reader.starts_with("tokenizer-") { "token bytes" } else { "tensors+keys" },
        cpu[n / 2] * 1e3
    );
}
