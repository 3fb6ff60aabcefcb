#!/usr/bin/env bash
# Opens and validates a GGUF file with gguf-serde (mmap and Read+Seek), ggus, candle and gguf-py,
# one process per reader, and prints median/min time and peak RSS (BENCHMARKS.md, "Opening").
# Usage: scripts/bench-open.sh [FILE] [ITERATIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
file=${1:-models/gemma-3-270m-q4_k_m.gguf}
n=${2:-50}
[ -f "$file" ] || scripts/fetch-gemma.sh >/dev/null
cargo build --release --quiet --manifest-path bench-compare/Cargo.toml
cat "$file" > /dev/null   # page cache warm for every reader
for r in gguf-serde-mmap gguf-serde-reader ggus candle; do
  bench-compare/target/release/bench-compare "$r" "$file" "$n"
done
[ -x .venv/bin/python ] || scripts/setup.sh
.venv/bin/python bench-compare/bench_gguf_py.py "$file" 3
