#!/usr/bin/env bash
# The slow checks that scripts/test.sh leaves out, for a nightly-style run (tests/README.md,
# "Running"): each is a larger matrix of a rule that scripts/test.sh already checks on at least
# one case, so a failure here is a case that the per-commit suite's cases did not reach.
#
#   1. scripts/codec-vectors.sh with exhaustive.txt: ggml's hashes over all 2^32 f32 inputs
#      regenerated and compared with the committed file (scripts/test.sh passes --no-exhaustive;
#      the other vectors it regenerates in full).
#   2. The ignored tests (`#[ignore = "..."]`, each names why) of the workspace, in release:
#      gguf-serde's every-f32-value F16/BF16 check against exhaustive.txt (test.sh: the sampled
#      vectors and all 65,536 F16 inputs), and the Gemma 3 and whole-SmolLM2 comparisons with
#      llama-quantize of tests/interop/quantize_llama.rs (test.sh: SmolLM2's plans at every file
#      type, its files on its first 4 layers), and the matrices moved out of scripts/test.sh (tests/README.md,
#      "Moved to the nightly run": each keeps one case of each rule there), such as the remaking of
#      every converter case's inputs (test.sh: one case of each kind).
#   3. The Python package's tests marked `nightly` (scripts/python-test.sh --nightly): gguf-py
#      against our reader over the 16 corpus vocabularies test.sh leaves out (it reads 6 files).
#
# Usage: scripts/test-nightly.sh        (after scripts/setup.sh, which scripts/test.sh runs)
# Environment as scripts/test.sh: CI is set (a skip fails), GGUF_LLAMA_CPP_DIR is the build of
# scripts/build-llama.sh. Prints the totals line of scripts/test.sh. Not timed as a whole yet: the
# whole-SmolLM2 IQ test alone takes about 25 minutes on 2 cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# The start scripts/test.sh makes too: the variables refused, CI, scripts/setup.sh,
# GGUF_LLAMA_CPP_DIR, the C harnesses, `totals`.
source scripts/suite-env.sh
status=0
scripts/codec-vectors.sh || status=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --release --tests --no-fail-fast -- --ignored 2>&1 | tee "$log" || status=1
scripts/python-test.sh --nightly 2>&1 | tee -a "$log" || status=1
totals "$log"
exit $status
