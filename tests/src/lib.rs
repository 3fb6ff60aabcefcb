//! Support for the workspace's integration and interoperability tests (this crate's `tests/`, and
//! `gguf-cli/tests`): finding the Python oracle (gguf-py), the real models and llama.cpp, running
//! the Python scripts in `tests/py/`, describing a file as JSON in the same shape as
//! `tests/py/dump.py` and `gguf inspect --json`, temporary folders that remove themselves, a
//! deadline for work that could hang, and the typed metadata structs of the serde tests
//! ([`metadata_structs`], from the support crate). The rule of where a test goes is in `tests/README.md`.
//!
//! Environment:
//! - `GGUF_PYTHON`: the Python interpreter with PyPI `gguf` installed; default
//!   `<workspace>/.venv/bin/python` (which `scripts/setup.sh` creates).
//! - `GGUF_MODELS`: the folder of real models; default `<workspace>/models` (made by
//!   `scripts/setup.sh`, which runs `scripts/fetch-gemma.sh` and `scripts/fetch-corpus.sh`).
//! - `GGUF_LLAMA_CPP_DIR`: a llama.cpp build (its `build/bin/llama-quantize`, `libllama.so`, ...);
//!   default the cache folder the llama.cpp build script fills ([`LLAMA_CPP_CACHE`] under
//!   `$HOME/.cache/gguf-serde`). The C harnesses of `tests/harness/` are compiled against it
//!   ([`llama_run_harness`]).
//! - `GGUF_SKIP_PYTHON=1`, `GGUF_SKIP_MODELS=1`: the tests that need Python or models [`skip`].
//!
//! A missing interpreter, model or llama.cpp build fails the test, except that `GGUF_SKIP_*` (or,
//! for llama.cpp, no build at all) makes it [`skip`]: return early after printing a `SKIPPED:`
//! line that `scripts/test.sh` counts. Under `CI` (and in `scripts/test.sh`, which sets it) a skip
//! is a failure.

/// The hermetic tests' byte builder, seed corpus, counting allocator (installed in every binary
/// that links this crate), allocation bound, range server, [`skip`] and deadlines: the support
/// crate that gguf-serde's own tests use too.
pub use gguf_test_support as support;
pub use gguf_test_support::metadata_structs;
pub use gguf_test_support::{output_with_deadline, skip, test_tmp_root, with_deadline};

pub mod convert_refs;
pub mod ggml_read;
pub mod py_cache;

gguf_test_support::count_allocations!();

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use gguf_serde::container::Source;
use gguf_serde::{Array, Gguf, GgufWriter, Value, ValueRef, WriteOptions};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// The Python interpreter with gguf-py, or `None` (after [`skip`]) if `GGUF_SKIP_PYTHON=1`.
/// Panics (fails the test) if it is missing otherwise.
pub fn python() -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_PYTHON").as_deref() == Ok("1") {
        skip("GGUF_SKIP_PYTHON=1, gguf-py comparison not run");
        return None;
    }
    let p =
        std::env::var_os("GGUF_PYTHON").map(PathBuf::from).unwrap_or_else(|| workspace_root().join(".venv/bin/python"));
    assert!(
        p.exists(),
        "no Python with gguf-py at {} (run scripts/setup.sh, or set GGUF_PYTHON / GGUF_SKIP_PYTHON=1)",
        p.display()
    );
    Some(p)
}

/// Runs `tests/py/<script>` with `args`; returns its stdout parsed as JSON.
pub fn run_py(python: &Path, script: &str, args: &[&str]) -> Json {
    serde_json::from_str(&run_py_text(python, script, args)).expect("JSON from python")
}

/// The path of a real model under the models folder (`name` may have a subfolder, e.g.
/// `vocab/ggml-vocab-gpt-2.gguf`), or `None` (after [`skip`]) if `GGUF_SKIP_MODELS=1`. Fails
/// the test if the model is missing otherwise.
pub fn model(name: &str) -> Option<PathBuf> {
    if std::env::var("GGUF_SKIP_MODELS").as_deref() == Ok("1") {
        skip(&format!("GGUF_SKIP_MODELS=1, {name} not tested"));
        return None;
    }
    let p = models_dir().join(name);
    assert!(
        p.exists(),
        "model {} missing: run scripts/setup.sh (or set GGUF_MODELS / GGUF_SKIP_MODELS=1)",
        p.display()
    );
    Some(p)
}

/// The shards `PREFIX-*-of-*.gguf` in `dir`, sorted by name (the
/// outputs of `--keep-split` and `llama-gguf-split`).
pub fn shards_of(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&format!("{prefix}-")) && n.contains("-of-") && n.ends_with(".gguf"))
        .collect();
    v.sort();
    v
}

/// Writes `src` cut to its first `n` layers to `out`: the `blk.N.` tensors with `N < n` and the
/// others, every key as it is but `{arch}.block_count` = `n` (llama.cpp takes such a file like
/// the whole model). Panics on an I/O or format error (test setup).
pub fn cut_layers(src: &Path, out: &Path, n: u32) {
    let f = Gguf::open(src).unwrap();
    let keep = |t: &str| match t.strip_prefix("blk.").and_then(|r| r.split('.').next()) {
        Some(layer) => layer.parse::<u32>().unwrap() < n,
        None => true,
    };
    let mut w = GgufWriter::create_with_options(out, WriteOptions::like(&f)).unwrap();
    for kv in f.metadata() {
        if kv.key.ends_with(".block_count") {
            w.add_value(kv.key.to_str().unwrap(), &Value::U32(n)).unwrap();
        } else {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
    }
    let tensors: Vec<_> = f.tensors().filter(|t| keep(t.name.to_str().unwrap())).collect();
    for t in &tensors {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in &tensors {
        w.write_tensor_data(f.tensor_data(t).unwrap()).unwrap();
    }
    w.commit().unwrap();
}

/// The folder of real models: `GGUF_MODELS`, else `<workspace>/models`.
pub fn models_dir() -> PathBuf {
    std::env::var_os("GGUF_MODELS").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("models"))
}

/// The folder name, under `$HOME/.cache/gguf-serde`, of the llama.cpp build the tests use.
pub const LLAMA_CPP_CACHE: &str = "llama.cpp-832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e";

/// llama.cpp's `llama-quantize`: `$GGUF_LLAMA_CPP_DIR/build/bin/llama-quantize`, else the one
/// in the cache folder [`LLAMA_CPP_CACHE`]. `None` (after [`skip`]) if it is not there.
pub fn llama_quantize() -> Option<PathBuf> {
    llama_tool("llama-quantize")
}

/// A program of the llama.cpp build (`llama-quantize`, `llama-gguf-split`, ...), found as
/// [`llama_quantize`] finds `llama-quantize`.
pub fn llama_tool(name: &str) -> Option<PathBuf> {
    let p = llama_cpp_dir().join("build/bin").join(name);
    if p.is_file() {
        return Some(p);
    }
    skip(&format!("no {name} at {} (build llama.cpp: scripts/build-llama.sh, or set GGUF_LLAMA_CPP_DIR)", p.display()));
    None
}

/// The llama.cpp build the tests use: `GGUF_LLAMA_CPP_DIR`, else [`LLAMA_CPP_CACHE`] under
/// `$HOME/.cache/gguf-serde` (it may not exist).
pub fn llama_cpp_dir() -> PathBuf {
    std::env::var_os("GGUF_LLAMA_CPP_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/gguf-serde").join(LLAMA_CPP_CACHE)
    })
}

/// The `llama_run` harness (`tests/harness/llama_run.c`: libllama loads a model, evaluates a
/// prompt and greedy-generates), compiled by `scripts/build-harness.sh` against the build of
/// [`llama_cpp_dir`] once per test process (a no-op when it is up to date). `None` (after
/// [`skip`]) if that build has no `libllama.so`; a failing compilation fails the test.
pub fn llama_run_harness() -> Option<PathBuf> {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let dir = llama_cpp_dir();
    if !dir.join("build/bin/libllama.so").is_file() {
        skip(&format!(
            "no libllama.so in {} (build llama.cpp: scripts/build-llama.sh, or set GGUF_LLAMA_CPP_DIR)",
            dir.join("build/bin").display()
        ));
        return None;
    }
    let built = BUILT.get_or_init(|| {
        let o = Command::new(workspace_root().join("scripts/build-harness.sh"))
            .env("GGUF_LLAMA_CPP_DIR", &dir)
            .output()
            .map_err(|e| format!("running scripts/build-harness.sh: {e}"))?;
        if !o.status.success() {
            return Err(format!("scripts/build-harness.sh failed:\n{}", String::from_utf8_lossy(&o.stderr)));
        }
        let out = String::from_utf8_lossy(&o.stdout);
        Ok(PathBuf::from(out.lines().last().unwrap_or_default().trim()).join("llama_run"))
    });
    match built {
        Ok(p) => Some(p.clone()),
        Err(e) => panic!("{e}"),
    }
}

/// The `llama_tokenize` harness (`tests/harness/llama_tokenize.c`: libllama loads a vocabulary
/// once and prints the ids of many texts, as `llama-tokenize --ids --no-bos --no-parse-special`
/// prints them one text per process), compiled beside [`llama_run_harness`]'s by the same script.
/// `None` (after [`skip`]) as that one.
pub fn llama_tokenize_harness() -> Option<PathBuf> {
    Some(llama_run_harness()?.with_file_name("llama_tokenize"))
}

/// What the `llama_run` harness printed for one model (the format is in its source's header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlamaRun {
    /// The vocabulary size libllama reports.
    pub n_vocab: usize,
    /// Per decode (0: after the prompt, `i`: after the `i`-th generated token): the FNV-1a 64 hash
    /// of the logits' bytes (equal hashes: bit-identical logits) and their argmax.
    pub logits: Vec<(u64, u32)>,
    /// The largest logits after the prompt, largest first: (token id, f32 bit pattern).
    pub top: Vec<(u32, u32)>,
    /// The greedy-generated token ids, in order.
    pub generated: Vec<u32>,
}

/// Runs the `harness` ([`llama_run_harness`]) on `model` (a file, or a split model's first
/// shard) with the `prompt` token ids, generating `n_gen` tokens on 2 threads in a 64-token
/// context. Runs one at a time in this process (the machine has few cores, and a model's memory
/// is better held once). `Err` with libllama's messages (the harness's stderr) if it exits with a
/// failure, as it does when the model does not load.
pub fn llama_run(harness: &Path, model: &Path, prompt: &[u32], n_gen: usize) -> Result<LlamaRun, String> {
    llama_run_with(harness, model, None, prompt, n_gen, None)
}

/// [`llama_run`] with the harness's `--logits-out`: F32 K and V caches, flash attention off, and
/// the float logits of every position of `prompt` + generated tokens (`prompt.len() + n_gen`
/// rows of `n_vocab`, row `r` the logits after the token at position `r`), read back from a file
/// written next to `model` (and removed).
pub fn llama_run_logits(
    harness: &Path,
    model: &Path,
    prompt: &[u32],
    n_gen: usize,
) -> Result<(LlamaRun, Vec<Vec<f32>>), String> {
    llama_run_logits_lora(harness, model, None, prompt, n_gen)
}

/// [`llama_run_logits`] of `model` with the LoRA adapter `lora` applied at scale 1 (the
/// harness's `--lora`: `llama_adapter_lora_init` and `llama_set_adapters_lora`), or without one.
/// `Err` also when the adapter does not load.
pub fn llama_run_logits_lora(
    harness: &Path,
    model: &Path,
    lora: Option<&Path>,
    prompt: &[u32],
    n_gen: usize,
) -> Result<(LlamaRun, Vec<Vec<f32>>), String> {
    let mut name = model.file_name().unwrap_or_default().to_os_string();
    name.push(".logits.f32");
    let out = model.with_file_name(name);
    let run = llama_run_with(harness, model, lora, prompt, n_gen, Some(&out))?;
    let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    let rows = prompt.len() + n_gen;
    if bytes.len() != rows * run.n_vocab * 4 {
        return Err(format!("{}: {} bytes, not {rows} rows of {} f32", out.display(), bytes.len(), run.n_vocab));
    }
    let floats = support::f32s(&bytes);
    let logits = floats.chunks_exact(run.n_vocab).map(<[f32]>::to_vec).collect();
    Ok((run, logits))
}

fn llama_run_with(
    harness: &Path,
    model: &Path,
    lora: Option<&Path>,
    prompt: &[u32],
    n_gen: usize,
    logits_out: Option<&Path>,
) -> Result<LlamaRun, String> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut cmd = Command::new(harness);
    cmd.args(["--threads", "2", "--n-ctx", "64", "--gen", &n_gen.to_string(), "--top", "5"]);
    if let Some(p) = logits_out {
        cmd.arg("--logits-out").arg(p);
    }
    if let Some(p) = lora {
        cmd.arg("--lora").arg(p);
    }
    cmd.arg(model);
    cmd.args(prompt.iter().map(u32::to_string));
    let o = output_with_deadline(&mut cmd, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    if !o.status.success() {
        return Err(format!("llama_run exited with {}:\n{stderr}", o.status));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    let bad = |line: &str| format!("llama_run printed an unexpected line {line:?}; stderr:\n{stderr}");
    let num = |s: &str, line: &str| s.parse::<u32>().map_err(|_| bad(line));
    let hex = |s: &str, line: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).map_err(|_| bad(line));
    let mut run = LlamaRun { n_vocab: 0, logits: Vec::new(), top: Vec::new(), generated: Vec::new() };
    for line in stdout.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["n_vocab", n] => run.n_vocab = num(n, line)? as usize,
            ["logits", step, hash, arg] => {
                if num(step, line)? as usize != run.logits.len() {
                    return Err(bad(line));
                }
                let h = u64::from_str_radix(hash, 16).map_err(|_| bad(line))?;
                run.logits.push((h, num(arg, line)?));
            }
            ["top", rest @ ..] => {
                for pair in rest {
                    let (id, bits) = pair.split_once(':').ok_or_else(|| bad(line))?;
                    run.top.push((num(id, line)?, hex(bits, line)?));
                }
            }
            ["generated", ids @ ..] => {
                run.generated = ids.iter().map(|id| num(id, line)).collect::<Result<_, _>>()?;
            }
            _ => return Err(bad(line)),
        }
    }
    if run.n_vocab == 0 || run.logits.len() != n_gen + 1 || run.generated.len() != n_gen {
        return Err(format!("llama_run's output is incomplete:\n{stdout}\nstderr:\n{stderr}"));
    }
    Ok(run)
}

/// A fresh temporary folder `<target>/test-tmp/<name>-<pid>-<n>`, removed with everything in it
/// when the returned guard is dropped (also when the test fails). `<target>` is the target
/// directory this test binary was built into (so `CARGO_TARGET_DIR` is honoured).
pub fn temp_dir(name: &str) -> TempDir {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = test_tmp_root().join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    TempDir { root: d.clone(), path: d }
}

/// A temporary folder (or a path inside one) that removes the folder when dropped. Derefs to
/// the path.
#[derive(Debug)]
pub struct TempDir {
    root: PathBuf,
    path: PathBuf,
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// How long a program of the tests ([`run_tool`]) may run before the test fails as a hang (a
/// watchdog, not a speed check).
pub const TOOL_HANG: Duration = Duration::from_secs(600);

/// Runs the program `tool` (llama.cpp's `llama-quantize`, `llama-gguf-split`, …) with `args`, its
/// output captured; fails the test if it cannot start or has not exited after [`TOOL_HANG`].
pub fn run_tool(tool: &Path, args: &[&str]) -> Output {
    output_with_deadline(Command::new(tool).args(args), TOOL_HANG)
}

/// `p` as a command-line argument. Panics (fails the test) if it is not UTF-8.
pub fn path_arg(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The hex sha256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A float as JSON: the number exactly, or the strings "nan"/"inf"/"-inf".
fn float_json(x: f64) -> Json {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// Matches a `&ValueRef` or `&Value` (the same variants), giving the JSON of a scalar, and
/// `$other` for an array bound to `$a`.
macro_rules! value_to_json {
    ($v:expr, $E:ident, $a:ident => $other:expr) => {
        match $v {
            $E::U8(x) => json!(x),
            $E::I8(x) => json!(x),
            $E::U16(x) => json!(x),
            $E::I16(x) => json!(x),
            $E::U32(x) => json!(x),
            $E::I32(x) => json!(x),
            $E::U64(x) => json!(x),
            $E::I64(x) => json!(x),
            $E::F32(x) => float_json(f64::from(*x)),
            $E::F64(x) => float_json(*x),
            $E::Bool(x) => json!(x),
            $E::String(s) => json!(s),
            $E::Array($a) => $other,
        }
    };
}

/// A metadata value as JSON: numbers exactly (f32 widened to f64), non-finite floats as the
/// strings "nan"/"inf"/"-inf", arrays as lists.
pub fn value_json(v: &ValueRef<'_>) -> Json {
    value_to_json!(v, ValueRef, a => Json::Array(a.iter().map(|x| value_json(&x)).collect()))
}

/// The GGUF type name of an owned value, as [`ValueRef::type_name`] gives it (`u32`,
/// `array<string>`, `array<array<i32>>`).
pub fn owned_type_name(v: &Value) -> String {
    fn array(a: &Array) -> String {
        match a {
            Array::Array(inner) => {
                inner.first().map_or_else(|| "array<array>".to_owned(), |i| format!("array<{}>", array(i)))
            }
            a => format!("array<{}>", a.elem_type().name()),
        }
    }
    match v {
        Value::Array(a) => array(a),
        v => v.value_type().name().to_owned(),
    }
}

/// An owned metadata value as JSON, in the same form as [`value_json`].
pub fn owned_value_json(v: &Value) -> Json {
    fn list<T>(v: &[T], f: impl Fn(&T) -> Json) -> Json {
        Json::Array(v.iter().map(f).collect())
    }
    fn array(a: &Array) -> Json {
        match a {
            // Integers, booleans and strings as serde_json writes a list of them.
            Array::U8(v) => json!(v),
            Array::I8(v) => json!(v),
            Array::U16(v) => json!(v),
            Array::I16(v) => json!(v),
            Array::U32(v) => json!(v),
            Array::I32(v) => json!(v),
            Array::U64(v) => json!(v),
            Array::I64(v) => json!(v),
            Array::Bool(v) => json!(v),
            Array::String(v) => json!(v),
            Array::F32(v) => list(v, |&x| float_json(x.into())),
            Array::F64(v) => list(v, |&x| float_json(x)),
            Array::Array(v) => list(v, array),
        }
    }
    value_to_json!(v, Value, a => array(a))
}

/// Writes `f` back through [`GgufWriter`] with [`WriteOptions::like`]: every key in order (through
/// owned [`Value`]s when `owned`, else the borrowed values), every tensor in order with its stored
/// dims and data.
pub fn rewrite<S: Source>(f: &Gguf<S>, owned: bool) -> Vec<u8> {
    let mut w = GgufWriter::with_options(Vec::with_capacity(f.file_len() as usize), WriteOptions::like(f)).unwrap();
    for kv in f.metadata() {
        if owned {
            w.add_value(kv.key.to_str().unwrap(), &kv.value.to_owned_value()).unwrap();
        } else {
            w.add_kv_ref(kv.key, kv.value).unwrap();
        }
    }
    for t in f.tensors() {
        w.add_tensor_ne(t.name, t.dtype, t.ne().dims()).unwrap();
    }
    for t in f.tensors() {
        w.write_tensor_data(f.tensor_data(&t).expect("tensor data")).unwrap();
    }
    w.finish().unwrap()
}

/// Describes a file in the JSON shape of `tests/py/dump.py` (tensor data hashed when held).
pub fn describe<S: Source>(f: &Gguf<S>, hash: bool) -> Json {
    let metadata: Vec<Json> = f
        .metadata()
        .map(|kv| json!({"key": kv.key, "type": kv.value.type_name(), "value": value_json(&kv.value)}))
        .collect();
    let tensors: Vec<Json> = f
        .tensors()
        .map(|t| {
            let mut j = json!({
                "name": t.name, "dtype": t.dtype.name(), "shape": &*t.shape,
                "data_offset": t.data_offset, "nbytes": t.nbytes,
            });
            if hash {
                j["sha256"] = json!(sha256(f.tensor_data(&t).expect("tensor data")));
            }
            j
        })
        .collect();
    json!({
        "version": f.version(), "endianness": f.endian().name(), "alignment": f.alignment(),
        "data_offset": f.data_offset(), "metadata": metadata, "tensors": tensors,
    })
}

/// Asserts two descriptions are equal, field by field with readable messages. Keys absent from
/// `expected` are not compared (an expectation may leave out data offsets); a `null` metadata
/// value in `expected` (gguf-py cannot decode arrays of arrays) compares the type only.
pub fn assert_same(ours: &Json, expected: &Json) {
    for field in ["version", "endianness", "alignment", "data_offset"] {
        if let Some(e) = expected.get(field) {
            assert_eq!(&ours[field], e, "{field}");
        }
    }
    let (om, em) = (ours["metadata"].as_array().expect("metadata"), expected["metadata"].as_array().expect("metadata"));
    assert_eq!(om.len(), em.len(), "number of keys");
    for (o, e) in om.iter().zip(em) {
        assert_eq!(o["key"], e["key"], "key order");
        let key = e["key"].as_str().unwrap_or_default();
        assert_eq!(o["type"], e["type"], "type of {key}");
        if !e["value"].is_null() {
            assert!(
                o["value"] == e["value"],
                "value of {key}: ours {} expected {}",
                short(&o["value"]),
                short(&e["value"])
            );
        }
    }
    let (ot, et) = (ours["tensors"].as_array().expect("tensors"), expected["tensors"].as_array().expect("tensors"));
    assert_eq!(ot.len(), et.len(), "number of tensors");
    for (o, e) in ot.iter().zip(et) {
        let name = e["name"].as_str().unwrap_or_default();
        for (k, v) in e.as_object().expect("tensor object") {
            assert_eq!(&o[k], v, "{k} of tensor {name}");
        }
    }
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        format!("{}... ({} chars)", &s[..200], s.len())
    } else {
        s
    }
}

/// Runs `tests/py/<script>` with `args` and returns its stdout; fails the test if it fails.
pub fn run_py_text(python: &Path, script: &str, args: &[&str]) -> String {
    let script = workspace_root().join("tests/py").join(script);
    let out = Command::new(python).arg(&script).args(args).output().expect("running python");
    assert!(out.status.success(), "{} failed:\n{}", script.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// How `tests/py/make_hf_llama.py` lays out a tiny random Llama checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HfLayout {
    /// Two shards and `model.safetensors.index.json`, with `lm_head.weight`.
    Sharded,
    /// One `model.safetensors`, tied embeddings (no `lm_head.weight`).
    TiedSingle,
}

/// Writes a tiny random Llama checkpoint in Hugging Face's layout into a fresh [`temp_dir`] with
/// `tests/py/make_hf_llama.py` (numpy + the `safetensors` package), and returns the checkpoint
/// folder in it (removed with the temporary folder when dropped); `None` when Python is skipped.
pub fn make_hf_llama(name: &str, layout: HfLayout, seed: u64) -> Option<TempDir> {
    make_hf_checkpoint(name, "llama", layout, seed)
}

/// As [`make_hf_llama`], for the class `make_hf_llama.py --arch ARCH` writes (`llama`,
/// `qwen2`, `qwen3`, `gemma3`, `phi3`); the checkpoint folder is named `tiny-ARCH-hf`
/// (`tiny-llama-hf` for Llama).
pub fn make_hf_checkpoint(name: &str, arch: &str, layout: HfLayout, seed: u64) -> Option<TempDir> {
    make_hf_checkpoint_with(name, arch, layout, seed, &[])
}

/// As [`make_hf_checkpoint`], with more options of `make_hf_llama.py` (`--f8`).
pub fn make_hf_checkpoint_with(name: &str, arch: &str, layout: HfLayout, seed: u64, extra: &[&str]) -> Option<TempDir> {
    let py = python()?;
    let mut dir = temp_dir(name);
    let ckpt = dir.join(format!("tiny-{arch}-hf"));
    let (ckpt_s, seed_s) = (ckpt.to_string_lossy().into_owned(), seed.to_string());
    let mut args = vec![ckpt_s.as_str(), "--seed", seed_s.as_str(), "--arch", arch];
    args.extend(extra);
    if layout == HfLayout::TiedSingle {
        args.extend(["--tied", "--single"]);
    }
    run_py_text(&py, "make_hf_llama.py", &args);
    dir.path = ckpt;
    Some(dir)
}
