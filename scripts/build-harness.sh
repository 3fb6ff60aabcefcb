#!/usr/bin/env bash
# Compiles the C harnesses of tests/harness/ against the llama.cpp build of scripts/build-llama.sh
# (which it runs for the libraries it needs; the first time that builds ggml-base, about a minute).
# Usage: scripts/build-harness.sh
# Writes target/harness/ggml_read (git-ignored), linked to the cached libggml-base.so with an
# rpath, recompiled only when its source or the library is newer. Prints target/harness on stdout,
# last, so that `h=$(scripts/build-harness.sh); "$h/ggml_read" FILE` works.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
llama=$(scripts/build-llama.sh ggml-base)
out="$root/target/harness"
mkdir -p "$out"
lib="$llama/build/bin"
src=tests/harness/ggml_read.c
if [ ! -x "$out/ggml_read" ] || [ "$src" -nt "$out/ggml_read" ] || [ "$lib/libggml-base.so" -nt "$out/ggml_read" ]; then
  ${CC:-cc} -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
    -I"$llama/src/ggml/include" "$src" -o "$out/ggml_read.tmp" \
    -L"$lib" -lggml-base -Wl,-rpath,"$lib" -lm
  mv "$out/ggml_read.tmp" "$out/ggml_read"
fi
echo "$out"
