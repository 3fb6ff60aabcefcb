#!/usr/bin/env bash
# A short run of every fuzz target (fuzz/, cargo-fuzz + libFuzzer): keeps them compiling and
# running. Each target starts from the committed seed corpus (fuzz/seeds) and runs RUNS inputs
# (default 2000); any crash fails the script. Long runs: fuzz/README.md.
#
# Built optimized (`-O`) with debug assertions and overflow checks on (`-a`: cargo-fuzz adds
# `-Cdebug-assertions -Coverflow-checks`), so wrapping arithmetic on a hostile file panics here
# instead of passing unnoticed as it would in a plain release build.
#
# Needs cargo-fuzz 0.13.2 (`cargo_fuzz` below) and a nightly compiler for the sanitizer flags: the
# `nightly` toolchain if rustup has one, else the stable one with RUSTC_BOOTSTRAP=1 (which unlocks
# nightly flags on stable; only for this build). cargo-fuzz is the one on PATH when it is that
# version; else it is installed once per machine outside the clone, as the llama.cpp build is
# (scripts/build-llama.sh), in ${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}/cargo-fuzz-<version>
# (`cargo install --locked --root`), so a clean clone does not compile it again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
runs=${RUNS:-2000}
cargo_fuzz=0.13.2
if [ "$(cargo fuzz --version 2>/dev/null | head -1)" != "cargo-fuzz $cargo_fuzz" ]; then
  bin=${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}/cargo-fuzz-$cargo_fuzz
  if [ ! -x "$bin/bin/cargo-fuzz" ]; then
    # Installed into a scratch folder, renamed into place whole: an interrupted install leaves
    # nothing that looks like a finished one.
    rm -rf "$bin.tmp"
    cargo install cargo-fuzz --version "=$cargo_fuzz" --locked --root "$bin.tmp"
    rm -rf "$bin"
    mv "$bin.tmp" "$bin"
  fi
  export PATH="$bin/bin:$PATH"
fi
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  build() { cargo +nightly fuzz build -O -a "$@"; }
else
  build() { RUSTC_BOOTSTRAP=1 cargo fuzz build -O -a "$@"; }
fi
# The `differential` target links ggml's reader (the llama.cpp build in GGUF_LLAMA_CPP_DIR, which
# scripts/test.sh exports): built (`--features ggml`) and run only when that is set.
if [ -n "${GGUF_LLAMA_CPP_DIR:-}" ]; then
  build --features ggml
  targets=$(cargo fuzz list)
else
  build
  targets=$(cargo fuzz list | grep -vx differential)
  echo "differential: skipped (GGUF_LLAMA_CPP_DIR is not set; see fuzz/README.md)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in $targets; do
  mkdir -p "$tmp/$t" "artifacts/$t"
  # New inputs go to the temporary folder (the first one); the seeds are only read. A crashing
  # input is kept in fuzz/artifacts/<target>/ (git-ignored).
  if ! "${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/$t" "$tmp/$t" seeds -dict=gguf.dict -runs="$runs" \
    -artifact_prefix="artifacts/$t/" -rss_limit_mb=2048 -timeout=10 >"$tmp/$t.log" 2>&1; then
    tail -40 "$tmp/$t.log" >&2
    echo "fuzz target $t failed; the input is in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  echo "$t: $(grep -E '^#[0-9]+' "$tmp/$t.log" | tail -1)"
done
