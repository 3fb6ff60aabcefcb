# shellcheck shell=bash
# The start both scripts/test.sh and scripts/test-nightly.sh make, sourced by them (not run on its
# own), from the repository's root: refuses the variables that make tests check less
# (GGUF_SKIP_PYTHON, GGUF_SKIP_MODELS, GGUF_CODEC_NO_SIMD, PROPTEST_CASES), sets CI (so a test that
# would return early, with no Python, model or llama.cpp build, fails instead), installs what the
# suite needs (scripts/setup.sh), exports GGUF_LLAMA_CPP_DIR (the llama.cpp build setup.sh made,
# for the tests that run llama.cpp) and compiles the C harnesses against it (tests/harness/;
# llama_run for tests/interop/llama_run.rs), so that a compile error shows before the tests (which
# run it again, a no-op). Defines `totals LOG`, which prints the totals line of the test binaries'
# output in LOG, and `suite_llama` (the last two steps, for a script that runs setup.sh itself).
for var in GGUF_SKIP_PYTHON GGUF_SKIP_MODELS GGUF_CODEC_NO_SIMD PROPTEST_CASES; do
  if [[ -n ${!var+set} ]]; then
    echo "$(basename "$0"): $var is set; it makes tests check less, unset it" >&2
    exit 1
  fi
done
export CI=true

# The compiled Rust code is kept between runs on this machine, outside the clone, as the llama.cpp
# build is (scripts/build-llama.sh): CARGO_TARGET_DIR is
# ${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}/cargo-target-KEY, KEY the start of the sha256 of
# `rustc -vV` and the two Cargo.lock files (the workspace's and fuzz/'s), so a new compiler or new
# dependency versions start from an empty folder, and the folders of other keys are removed (one
# kept per machine: about 9 GB). What it saves is the dependencies' compile (cargo keys their
# artifacts by version, features and profile, not by the clone's path); the workspace's own crates
# are compiled again in every clone (cargo compares their sources' times with the artifacts', and
# a fresh clone's are newer). It also keeps what the tests keep in <target>/test-tmp: the converter
# checkpoints (convert-cases/) and LoRA cases (lora-cases/), each keyed by the sha256 of the
# scripts and inputs that make it, and the outputs of the Python oracles (py-cache/, model-cards/:
# keyed by the sha256 of the script, its inputs' bytes and the installed packages;
# tests/src/py_cache.rs); what was made more than 7 days ago is removed here (made again when a
# test asks for it), as is what a killed test left there. A
# CARGO_TARGET_DIR already set is used as it is; GGUF_NO_BUILD_CACHE=1 keeps target/ in the clone
# (a run that compiles everything and remakes every checkpoint, as the first on a machine does).
if [[ -z ${CARGO_TARGET_DIR:-} && -z ${GGUF_NO_BUILD_CACHE:-} ]]; then
  suite_cache=${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}
  suite_key=$({ rustc -vV; cat Cargo.lock fuzz/Cargo.lock; } | sha256sum | cut -c1-16)
  export CARGO_TARGET_DIR=$suite_cache/cargo-target-$suite_key
  mkdir -p "$CARGO_TARGET_DIR"
  for old in "$suite_cache"/cargo-target-*; do
    [[ $old == "$CARGO_TARGET_DIR" ]] || rm -rf "$old"
  done
  if [[ -d $CARGO_TARGET_DIR/test-tmp ]]; then
    find "$CARGO_TARGET_DIR/test-tmp" -mindepth 1 -maxdepth 2 -mtime +7 -exec rm -rf {} + 2>/dev/null || true
  fi
fi

# scripts/setup.sh, then GGUF_LLAMA_CPP_DIR and the C harnesses. Run here when sourced, unless the
# sourcing script set `suite_setup=later` (scripts/test.sh runs setup.sh beside the lints, which
# need none of it, and calls `suite_llama` after).
suite_llama() {
  GGUF_LLAMA_CPP_DIR=$(scripts/build-llama.sh | tail -1)
  export GGUF_LLAMA_CPP_DIR
  scripts/build-harness.sh >/dev/null
}
if [[ ${suite_setup:-} != later ]]; then
  scripts/setup.sh
  suite_llama
fi

# The totals over every test binary and doc-test run in the log $1 (cargo prints one line per
# binary, and the Python tests a cargo-style one): passed, failed, skipped (a test's `SKIPPED:`
# line; it passed for libtest, so it is counted as skipped, not passed) and ignored.
totals() {
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) g += $i } }
       /SKIPPED: / { s++ }
       END { printf "%d passed, %d failed, %d skipped, %d ignored\n", p - s, f, s, g }' "$1"
}
