#!/usr/bin/env bash
# Open a GGUF file and walk every string of `tokenizer.ggml.tokens`, with ggml's reader and ours,
# one process per reader, in one run on the same machine state (BENCHMARKS.md, "Metadata walk vs
# ggml"):
#   ggml                   gguf_init_from_file (no_alloc) + gguf_get_arr_str for each token
#                          (tests/harness/ggml_read.c --bench-tokens, against the llama.cpp of
#                          scripts/build-llama.sh)
#   tokens-strings         Gguf::open + ValueRef::as_array + ArrayRef::strings
#   tokens-serde-borrowed  Gguf::open + Gguf::deserialize_metadata into { tokens: Vec<&str> }
#   tokens-serde-owned     the same into { tokens: Vec<String> }
# (bench-compare/src/main.rs). Every iteration sums the token lengths; the sums must agree.
# Prints the machine, the load average before and after, and a table of median and minimum time
# per iteration with the ratio ours/ggml.
# Usage: scripts/bench-tokens.sh [FILE] [ITERATIONS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
file=${1:-models/gemma-3-270m-q4_k_m.gguf}
n=${2:-20}
[ -f "$file" ] || scripts/fetch-gemma.sh >/dev/null
harness=$(scripts/build-harness.sh)
cargo build --release --quiet --manifest-path bench-compare/Cargo.toml
cat "$file" > /dev/null   # page cache warm for every reader

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(uname -sr)"
echo "file: $file ($(stat -c %s "$file") bytes), $n iterations after one warm-up"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$harness/ggml_read" --bench-tokens "$file" "$n" >> "$out"
for r in tokens-strings tokens-serde-borrowed tokens-serde-owned; do
  bench-compare/target/release/bench-compare "$r" "$file" "$n" >> "$out"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
# ggml line:  ggml median M ms min m ms peak RSS R MiB tokens T bytes B
# ours lines: NAME median M ms  min m ms  peak RSS R MiB  (token bytes B)
awk '
  $1 == "ggml" { gm = $3; gn = $6; bytes["ggml"] = $15; rss["ggml"] = $10; order[++k] = "ggml"; med["ggml"] = $3; mn["ggml"] = $6; next }
  { name = $1; med[name] = $3; mn[name] = $6; rss[name] = $10; b = $14; sub(/\)/, "", b); bytes[name] = b; order[++k] = name }
  END {
    printf "| reader | median ms | min ms | median ours/ggml | min ours/ggml | peak RSS MiB |\n"
    printf "|---|---:|---:|---:|---:|---:|\n"
    bad = 0
    for (i = 1; i <= k; i++) {
      r = order[i]
      if (bytes[r] != bytes["ggml"]) { bad = 1; printf "token bytes differ: %s %s, ggml %s\n", r, bytes[r], bytes["ggml"] > "/dev/stderr" }
      printf "| %s | %.2f | %.2f | %.3f | %.3f | %s |\n", r, med[r], mn[r], med[r] / gm, mn[r] / gn, rss[r]
    }
    printf "token bytes summed by every reader: %s\n", bytes["ggml"]
    exit bad
  }' "$out"
