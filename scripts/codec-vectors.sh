#!/usr/bin/env bash
# Regenerates every codec reference vector of gguf-serde/tests/data/codec/ from ggml itself and
# compares it with the committed file: builds tests/harness/codec_vectors.c against the
# libggml-base of the llama.cpp build (GGUF_LLAMA_CPP_DIR, else scripts/build-llama.sh ggml-base),
# runs it into a temporary directory, and compares byte for byte, both ways (a committed file the
# driver no longer writes is a difference too; README.md is not generated).
#
# Usage: scripts/codec-vectors.sh [--write] [--no-exhaustive]
#   --write           replace the committed files with the regenerated ones (and remove committed
#                     files the driver no longer writes), then print what changed
#   --no-exhaustive   skip exhaustive.txt (the hashes over all 2^32 f32 values, ~45 s of one core)
# Exit status: 0 when everything is equal (or was written), 1 on any difference, 2 on usage.
#
# The driver is compiled with -ffp-contract=off and no -march (baseline x86-64: no FMA, no F16C),
# like the libggml-base that scripts/build-llama.sh builds; see the data's README for the facts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

write=0
driver_flags=()
for a in "$@"; do
  case "$a" in
    --write) write=1 ;;
    --no-exhaustive) driver_flags+=(--no-exhaustive) ;;
    *) echo "usage: scripts/codec-vectors.sh [--write] [--no-exhaustive]" >&2; exit 2 ;;
  esac
done

llama=${GGUF_LLAMA_CPP_DIR:-}
if [ -z "$llama" ] || [ ! -f "$llama/build/bin/libggml-base.so" ]; then
  llama=$(scripts/build-llama.sh ggml-base | tail -1)
fi
lib="$llama/build/bin"
src=tests/harness/codec_vectors.c
bin="$root/target/harness/codec_vectors"
mkdir -p "$root/target/harness"
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$lib/libggml-base.so" -nt "$bin" ]; then
  ${CC:-cc} -O2 -std=gnu11 -ffp-contract=off -Wall -Wextra -Werror \
    -I"$llama/src/ggml/include" -I"$llama/src/ggml/src" "$src" -o "$bin.tmp" \
    -L"$lib" -lggml-base -Wl,-rpath,"$lib" -lm
  mv "$bin.tmp" "$bin"
fi

data=gguf-serde/tests/data/codec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" "${driver_flags[@]}" "$tmp"

# Committed files that are not generated: the README (and exhaustive.txt when skipped).
skip() {
  [ "$1" = README.md ] || { [ "${#driver_flags[@]}" -gt 0 ] && [ "$1" = exhaustive.txt ]; }
}

diffs=0
for f in "$tmp"/*; do
  name=$(basename "$f")
  if [ ! -f "$data/$name" ]; then
    echo "codec-vectors: $name: generated, not committed"
    diffs=$((diffs + 1))
  elif ! cmp -s "$f" "$data/$name"; then
    echo "codec-vectors: $name: differs ($(cmp "$f" "$data/$name" 2>&1 | sed 's/.*differ: //'))"
    diffs=$((diffs + 1))
  fi
done
for f in "$data"/*; do
  name=$(basename "$f")
  skip "$name" && continue
  if [ ! -f "$tmp/$name" ]; then
    echo "codec-vectors: $name: committed, no longer generated"
    diffs=$((diffs + 1))
  fi
done

n=$(find "$tmp" -type f | wc -l)
if [ "$write" = 1 ]; then
  for f in "$data"/*; do
    name=$(basename "$f")
    skip "$name" || [ -f "$tmp/$name" ] || rm -f "$f"
  done
  cp "$tmp"/* "$data"/
  echo "codec-vectors: wrote $n files to $data ($diffs changed, added or removed)"
  exit 0
fi
if [ "$diffs" -gt 0 ]; then
  echo "codec-vectors: $diffs of $n files differ from ggml's output (scripts/codec-vectors.sh --write replaces them)" >&2
  exit 1
fi
echo "codec-vectors: all $n files equal ggml's output"
