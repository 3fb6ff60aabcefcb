//! Tests of the `gguf` command, one binary: each runs the built tool (`CARGO_BIN_EXE_gguf`) and
//! checks its output and files, against gguf-py or the spec where a reference exists (helpers
//! from the `gguf-tests` crate; `tests/README.md` says what needs Python or models).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

mod commands;
mod convert;
mod display;
mod export;
mod hash;
mod inspect_validate;
mod interrupted_write;
mod json_and_options;
mod keep_split;
mod memory_limits;
mod not_utf8;
mod not_utf8_messages;
mod odd_bools;
mod output_errors;
mod output_policy;
mod outputs_and_odd_files;
mod quantize;
mod remote;
mod remote_split;
mod show_params;
mod standard_keys;

/// How long one run of the tool may take before the test fails as a hang (a watchdog, not a
/// speed check: the slowest run, quantizing Gemma 3 on 2 threads, takes well under a minute).
const HANG: Duration = Duration::from_secs(600);

/// Runs `gguf ARGS` with its output captured; fails the test if it has not exited after [`HANG`].
pub fn gguf(args: &[&str]) -> Output {
    gguf_tests::output_with_deadline(gguf_command().args(args), HANG)
}

/// The `gguf` command, for a test that sets its standard input or output or its environment
/// itself; [`run`] or [`wait`] it, under the watchdog.
pub fn gguf_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gguf"))
}

/// Runs `gguf ARGS` with the environment variables `env` set, as [`gguf`].
pub fn gguf_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    gguf_tests::output_with_deadline(gguf_command().args(args).envs(env.iter().copied()), HANG)
}

/// Runs `cmd` ([`gguf_command`] with the standard streams it set: a stream left unset is
/// inherited) and waits for it as [`wait`] does.
pub fn run(cmd: &mut Command) -> Output {
    wait(cmd.spawn().expect("running gguf"))
}

/// Waits for a started `gguf`, with the output of its piped streams; fails the test if it has not
/// exited after [`HANG`].
pub fn wait(child: Child) -> Output {
    gguf_tests::support::wait_with_deadline(child, HANG, "gguf")
}

/// Runs `gguf ARGS`, asserting success; returns its standard output.
pub fn gguf_ok(args: &[&str]) -> String {
    let out = gguf(args);
    assert!(out.status.success(), "gguf {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `tests/data/small.gguf`.
pub fn small_path() -> PathBuf {
    gguf_tests::workspace_root().join("tests/data/small.gguf")
}

/// `tests/data/small.gguf`, as an argument.
pub fn small() -> String {
    small_path().to_str().expect("UTF-8 path").to_owned()
}

/// `p` as an argument.
pub use gguf_tests::path_arg as s;

/// What the commands that write a file back made of `src` (a file of two tensors) in `dir`:
/// [`rewrite_with_every_command`].
pub struct Rewritten {
    /// A copy of `src` after `set general.architecture gemma`.
    pub edited: PathBuf,
    /// `split --split-max-tensors 1`: its two shards.
    pub shards: [PathBuf; 2],
    /// The first shard given to `merge`.
    pub merged: PathBuf,
    /// `quantize` to Q8_0.
    pub quantized: PathBuf,
}

/// Runs on `src` (a file of two tensors) every command that writes a file back: `set` on a
/// copy, `split` + `merge`, `quantize`; their outputs go to `dir`.
pub fn rewrite_with_every_command(src: &Path, dir: &Path) -> Rewritten {
    let edited = dir.join("edited.gguf");
    std::fs::copy(src, &edited).unwrap();
    gguf_ok(&["set", s(&edited), "general.architecture", "gemma"]);
    gguf_ok(&["split", "--split-max-tensors", "1", s(src), s(&dir.join("part"))]);
    let shards = [dir.join("part-00001-of-00002.gguf"), dir.join("part-00002-of-00002.gguf")];
    let merged = dir.join("merged.gguf");
    gguf_ok(&["merge", s(&shards[0]), s(&merged)]);
    let quantized = dir.join("q8.gguf");
    gguf_ok(&["quantize", s(src), s(&quantized), "Q8_0"]);
    Rewritten { edited, shards, merged, quantized }
}
