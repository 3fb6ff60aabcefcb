#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (scripts/setup.sh), runs the
# lints (scripts/lint.sh), the publishing checks (scripts/package-check.sh: `cargo package` of the
# three published crates, dependency licences, gguf-serde's feature combinations, warning-free
# docs), a short run of each fuzz target (scripts/fuzz-smoke.sh), every test of the workspace
# (gguf-serde's own with overflow checks and debug assertions on) and the Python package's tests
# (scripts/python-test.sh), then prints
# the totals of all test binaries as one line. `.ci/run` runs exactly this.
#
# Nothing is skipped here: CI is set, so a test that would return early (no Python, no model, no
# llama.cpp build) fails instead, and the variables that make tests check less are refused. The
# totals line counts passed, failed, skipped (a test's `SKIPPED:` line: only a CPU without AVX2
# for the SIMD checks) and ignored (`#[ignore]`) tests separately; tests/README.md has the rule.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The variables refused, CI, scripts/setup.sh, GGUF_LLAMA_CPP_DIR, the C harnesses, `totals`.
source scripts/suite-env.sh
scripts/lint.sh
scripts/package-check.sh
scripts/fuzz-smoke.sh
# The codec reference vectors (gguf-serde/tests/data/codec) regenerate from ggml, byte for byte;
# all but exhaustive.txt (ggml over all 2^32 f32 inputs, about 45 s of a core), which
# scripts/test-nightly.sh regenerates with the other slow checks this script leaves to it.
scripts/codec-vectors.sh --no-exhaustive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# A failing binary does not stop the run: the totals are printed, then the status is the failure.
status=0
# Every package but gguf-serde in release; gguf-serde's own tests (its unit tests, every test
# binary of gguf-serde/tests, its doc tests) once, with every feature (as the workspace build
# unifies them: remote, convert, hash, export), under [profile.hostile] of Cargo.toml: the
# release code generation with overflow checks and debug assertions on, so that wrapping
# arithmetic on a malformed file fails a test instead of passing unnoticed as in a release build.
# (Part of them used to run twice, in release and again under hostile; the code has no
# `cfg(debug_assertions)`, so the hostile run checks all that a release run did.)
cargo test --workspace --exclude gguf-serde --release --no-fail-fast 2>&1 | tee "$log" || status=1
cargo test -p gguf-serde --profile hostile --all-features --no-fail-fast 2>&1 | tee -a "$log" || status=1
# The Python package (python/): `pip install ./python` into its own venv, then its pytest suite
# against gguf-py and llama.cpp; it prints a cargo-style `test result:` line, counted below.
scripts/python-test.sh 2>&1 | tee -a "$log" || status=1
totals "$log"
exit $status
