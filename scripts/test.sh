#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (scripts/setup.sh), runs the
# lints (scripts/lint.sh), the publishing checks (scripts/package-check.sh: `cargo package` of the
# three published crates, dependency licences), a short run of each fuzz target (scripts/fuzz-smoke.sh) and every test
# of the workspace (the hostile-input ones a second time with overflow checks on), then prints
# the totals of all test binaries as one line. `.ci/run` runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
# The llama.cpp build setup.sh made (a no-op now), for the tests that run llama.cpp.
GGUF_LLAMA_CPP_DIR=$(scripts/build-llama.sh llama-quantize | tail -1)
export GGUF_LLAMA_CPP_DIR
scripts/lint.sh
scripts/package-check.sh
scripts/fuzz-smoke.sh
# The codec reference vectors (gguf-serde/tests/data/codec) regenerate from ggml, byte for byte.
scripts/codec-vectors.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --release 2>&1 | tee "$log"
# The hostile-input tests again with overflow checks and debug assertions on ([profile.hostile]
# in Cargo.toml): a release build lets wrapping arithmetic on a malformed file pass unnoticed.
cargo test -p gguf-serde --profile hostile --lib --test regressions --test resources --test validation \
  --test serde_hostile --test fuzz_seeds --test roundtrip_props --test serde_proptest --test model_props \
  --test writer --test edit 2>&1 | tee -a "$log"
# The totals over every test binary and doc-test run (cargo prints one line per binary).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
