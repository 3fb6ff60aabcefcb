//! Tests of the `gguf` command, one binary: each runs the built tool (`CARGO_BIN_EXE_gguf`) and
//! checks its output and files, against gguf-py or the spec where a reference exists (helpers
//! from the `gguf-tests` crate; `tests/README.md` says what needs Python or models).

use std::process::{Command, Output};
use std::time::Duration;

mod commands;
mod convert;
mod inspect_validate;
mod interrupted_write;
mod json_and_options;
mod keep_split;
mod output_errors;
mod output_policy;
mod outputs_and_odd_files;
mod quantize;
mod remote;
mod standard_keys;

/// How long one run of the tool may take before the test fails as a hang (a watchdog, not a
/// speed check: the slowest run, quantizing Gemma 3 on 2 threads, takes well under a minute).
const HANG: Duration = Duration::from_secs(600);

/// Runs `gguf ARGS` with its output captured; fails the test if it has not exited after [`HANG`].
pub fn gguf(args: &[&str]) -> Output {
    gguf_tests::output_with_deadline(Command::new(env!("CARGO_BIN_EXE_gguf")).args(args), HANG)
}
