#!/usr/bin/env bash
# `gguf hash` beside llama.cpp's `llama-gguf-hash` on one file, page cache warm: wall time of each
# for the default (XXH64) and for `--all --uuid` (XXH64, SHA-1, SHA-256 per tensor and for the
# model, and the UUID), ITERATIONS runs each, alternating; prints the median and minimum of each,
# and checks that both print the same lines (BENCHMARKS.md, "Hashing a model").
# Usage: scripts/bench-hash.sh [FILE] [ITERATIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
file=${1:-models/gemma-3-270m-q4_k_m.gguf}
n=${2:-5}
[ -f "$file" ] || scripts/fetch-gemma.sh >/dev/null
cargo build --release --quiet -p gguf-cli
dir=$(scripts/build-llama.sh llama-gguf-hash | tail -1)
ours=target/release/gguf
theirs=$dir/build/bin/llama-gguf-hash
cat "$file" > /dev/null
echo "file: $file ($(stat -c %s "$file") bytes), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for args in "" "--all --uuid"; do
  # shellcheck disable=SC2086
  cmp <("$ours" hash $args "$file") <("$theirs" $args "$file") || { echo "outputs differ for '$args'"; exit 1; }
  t_ours=() t_theirs=()
  for _ in $(seq "$n"); do
    # shellcheck disable=SC2086
    s=$(date +%s%N); "$ours" hash $args "$file" > /dev/null; e=$(date +%s%N)
    t_ours+=("$((e - s))")
    # shellcheck disable=SC2086
    s=$(date +%s%N); "$theirs" $args "$file" > /dev/null; e=$(date +%s%N)
    t_theirs+=("$((e - s))")
  done
  stats() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "median %.3f s, min %.3f s", a[int((NR+1)/2)] / 1e9, a[1] / 1e9}'; }
  echo "args '${args:-(default: --xxh64)}': gguf hash $(stats "${t_ours[@]}"); llama-gguf-hash $(stats "${t_theirs[@]}")"
done
