#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (scripts/setup.sh), runs the
# lints (scripts/lint.sh), the publishing checks (scripts/package-check.sh: `cargo package` of the
# three published crates, dependency licences, gguf-serde's feature combinations, warning-free
# docs), a short run of each fuzz target (scripts/fuzz-smoke.sh), every test of the workspace
# (with overflow checks and debug assertions on) and the Python package's tests
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
# The variables refused, CI, `totals`, `suite_llama` (scripts/suite-env.sh, which scripts/test-nightly.sh
# sources too); scripts/setup.sh runs below, beside the lints.
suite_setup=later
source scripts/suite-env.sh
# Each phase prints its times when it ends ("test.sh: PHASE: W s wall, U s user + S s system
# CPU", bash's `time`), and the run its totals. On a shared machine the CPU time is the one to
# compare (tests/README.md, "Time").
phase() {
  local name=$1
  shift
  local TIMEFORMAT="test.sh: $name: %0R s wall, %0U s user + %0S s system CPU"
  time "$@"
}
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
# The phases run in four streams beside each other, so that both cores stay busy: most steps
# are a chain of one-core work (rustc's front end on gguf-serde, one test binary's last test,
# Python, downloads), and a step of one stream fills the other core's gaps.
#   - setup (the venv, the models, the llama.cpp build: a no-op when cached, see
#     scripts/build-llama.sh), in the background from the start;
#   - the checks: the lints, then the publishing checks (neither needs setup; their cargo runs
#     use the debug profile's folder, so they do not wait for the builds' locks), in the
#     background from the start, at nice 10;
#   - once llama.cpp is built, the fuzz smoke and the codec vectors, at nice 10;
#   - the build (every package's tests under `hostile`), the Python extension, then, after setup,
#     the tests.
# A background stream's output is written to its own log and printed when it ends; the run's
# status is the failure of any of them. Each phase prints its times when it ends.
status=0
phase setup scripts/setup.sh > "$log.setup" 2>&1 &
setup=$!
# The checks, in two streams: the lints and the publishing checks (neither needs setup); and, once
# the main stream has the llama.cpp build (it writes GGUF_LLAMA_CPP_DIR to $log.llama), the fuzz
# smoke (its own build, with the sanitizers) and the codec reference vectors
# (gguf-serde/tests/data/codec, regenerated from ggml byte for byte; all but exhaustive.txt, ggml
# over all 2^32 f32 inputs, about 45 s of a core, which scripts/test-nightly.sh regenerates with
# the other slow checks this script leaves to it). The checks run at a lower priority (`nice -n
# 10`): the tests wait for the build and for llama.cpp, not for them, so on a machine that
# compiles everything (the first run) the cores go to the build and to llama.cpp first, and the
# checks fill the gaps the tests leave (a test binary waiting for its last test, Python starting).
checks() {
  local s=0
  phase lint nice -n 10 scripts/lint.sh || s=1
  phase package-check nice -n 10 scripts/package-check.sh || s=1
  return $s
}
oracle_checks() {
  local s=0
  while [[ ! -s $log.llama ]]; do
    [[ ! -e $log.no-llama ]] || { echo "test.sh: no llama.cpp build: fuzz smoke and codec vectors not run" >&2; return 1; }
    kill -0 $$ 2>/dev/null || return 1 # the main stream has ended (an error)
    sleep 2
  done
  GGUF_LLAMA_CPP_DIR=$(cat "$log.llama")
  export GGUF_LLAMA_CPP_DIR
  phase fuzz-smoke nice -n 10 scripts/fuzz-smoke.sh || s=1
  phase codec-vectors nice -n 10 scripts/codec-vectors.sh --no-exhaustive || s=1
  return $s
}
checks > "$log.checks" 2>&1 &
checks=$!
oracle_checks > "$log.oracle_checks" 2>&1 &
oracle_checks=$!
# Prints a background stream's log once it ends; its failure is the run's.
finish() {
  local pid=$1 name=$2
  wait "$pid" || { echo "test.sh: $name failed" >> "$log.$name"; status=1; }
  cat "$log.$name"
}
# Every package's tests (unit tests, test binaries, doc tests), gguf-serde with every feature (the
# other packages ask for all of them), in one build under [profile.hostile] of Cargo.toml: the
# release code generation with overflow checks and debug assertions on in the workspace's own
# crates (the dependencies as in release), so that wrapping arithmetic on a malformed file fails a
# test instead of passing unnoticed as in a release build. One build, not one per package group:
# cargo resolves features over the packages a command names, and gguf-serde's dev-dependencies
# change the features of syn, clap and getrandom, so `-p gguf-serde` and `--exclude gguf-serde`
# compiled nearly every dependency twice; every `cargo test --workspace --profile hostile` below
# reuses this build, whatever targets it selects (tests/README.md, "Running").
# Compiled first (`--no-run`), so that the phase times say what is compiling and what is testing
# (the doc tests are still compiled as they run); `--timings` writes each crate's compile time to
# cargo-timings/cargo-timing.html in the target folder (the machine's build cache: scripts/suite-env.sh).
cargo_build() { cargo test --workspace --profile hostile --no-run --timings 2>&1 | tee "$log"; }
# The two test binaries that run the `gguf` binary, llama.cpp and the Python oracles over whole
# models (most of the tests' time), and the others: every other test target of the workspace,
# read from `cargo metadata` so a new one is not left out.
heavy=(--test cli --test interop)
other_tests() {
  cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
heavy = set(sys.argv[1:])
names = {t["name"] for p in json.load(sys.stdin)["packages"] for t in p["targets"] if "test" in t["kind"]}
print(" ".join(f"--test {n}" for n in sorted(names - heavy)))' cli interop
}
built=no
python_built=no
if phase cargo-build cargo_build; then
  built=yes
  # The Python extension (python/, maturin), built after the cargo build (under the same profile,
  # it shares the dependencies whose features match) and tested with the others below.
  if phase python-build scripts/python-test.sh --build; then python_built=yes; else status=1; fi
else
  status=1
fi
finish "$setup" setup
# GGUF_LLAMA_CPP_DIR (the llama.cpp build setup.sh made, for the tests that run llama.cpp) and
# the C harnesses against it, compiled here so that a compile error shows before the tests.
if suite_llama; then echo "$GGUF_LLAMA_CPP_DIR" > "$log.llama"; else touch "$log.no-llama"; status=1; fi
# The test runs go beside each other: the two heavy binaries, the other tests (the unit tests and
# every other test binary, then the doc tests) and pytest. One after another, each left a core idle
# at its end (a binary waits for its last, longest test). The heavy binaries print as they run; the
# other two streams are written to their own logs, printed when they end. A failing binary does not
# stop the run: the totals are printed, then the status is the failure.
hostile_tests() {
  local s=0
  # shellcheck disable=SC2046 # other_tests prints options, split on purpose
  cargo test --workspace --profile hostile --no-fail-fast --lib --bins $(other_tests) || s=1
  cargo test --workspace --profile hostile --no-fail-fast --doc || s=1
  return $s
}
python_tests() {
  if [[ $python_built != yes ]]; then echo "python-test: not run, the extension did not build" >&2; return 1; fi
  scripts/python-test.sh --test
}
cargo_tests() {
  local s=0 hostile python
  (phase other-tests hostile_tests > "$log.hostile" 2>&1) &
  hostile=$!
  (phase python-test python_tests > "$log.python" 2>&1) &
  python=$!
  phase heavy-tests cargo test --workspace --profile hostile --no-fail-fast "${heavy[@]}" 2>&1 | tee -a "$log" || s=1
  wait "$hostile" || s=1
  cat "$log.hostile" && cat "$log.hostile" >> "$log"
  wait "$python" || s=1
  cat "$log.python" && cat "$log.python" >> "$log"
  return $s
}
if [[ $built == yes && -s $log.llama ]]; then
  phase tests cargo_tests || status=1
fi
finish "$checks" checks
finish "$oracle_checks" oracle_checks
totals "$log"
# The totals: this shell's children, all waited for by now (`times`' second line).
times > "$log"
echo "test.sh: total: $SECONDS s wall, $(awk 'NR == 2 { print $1 " user + " $2 " system CPU" }' "$log")" >&2
exit $status
