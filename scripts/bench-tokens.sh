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
#   tokens-string-array    the same into { tokens: gguf_serde::StringArray }
#   tokenizer-serde-borrowed  the same into { tokens: Vec<&str>, scores: Vec<f32>,
#                          token_type: Vec<i32> } (`tokenizer.ggml.scores`, `.token_type` too)
#   tokenizer-serde-owned  the same with tokens: Vec<String>
#   tokenizer-string-array the same with tokens: gguf_serde::StringArray
#   ...+mimalloc           tokens-serde-owned, tokens-string-array and tokenizer-serde-owned
#                          with mimalloc as the global allocator (bench-compare --features mimalloc)
# (bench-compare/src/main.rs). Every iteration sums the token lengths; the sums must agree.
# Prints the machine, the load average before and after, and a table of median and minimum wall
# time per iteration with the ratio ours/ggml, and of the median CPU time per iteration (user and
# system time of the reader's process, CLOCK_PROCESS_CPUTIME_ID) with its ratio: on a machine
# that other jobs share, wall time includes the waits for a core, CPU time does not.
# The readers take turns: ROUNDS rounds (default 5), each running every reader once for ITERATIONS
# iterations, so that a change of the machine's load during the run falls on all of them; the table
# gives the median of the per-round medians and the minimum of the minimums.
# Usage: scripts/bench-tokens.sh [FILE] [ITERATIONS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
file=${1:-models/gemma-3-270m-q4_k_m.gguf}
n=${2:-20}
rounds=${3:-5}
[ -f "$file" ] || scripts/fetch-gemma.sh >/dev/null
# The load of other jobs, before this script's own builds raise it.
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
harness=$(scripts/build-harness.sh)
cargo build --release --quiet --manifest-path bench-compare/Cargo.toml
# The same readers with mimalloc as the global allocator (how much of the owned walk is malloc's).
cargo build --release --quiet --manifest-path bench-compare/Cargo.toml --features mimalloc \
  --target-dir bench-compare/target-mimalloc
cat "$file" > /dev/null   # page cache warm for every reader

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(uname -sr)"
echo "file: $file ($(stat -c %s "$file") bytes), $rounds rounds of $n iterations after one warm-up"
echo "load average at the start: $load_start; before the readers: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$rounds"); do
  "$harness/ggml_read" --bench-tokens "$file" "$n" >> "$out"
  for r in tokens-strings tokens-serde-borrowed tokens-serde-owned tokens-string-array \
    tokenizer-serde-borrowed tokenizer-serde-owned tokenizer-string-array; do
    bench-compare/target/release/bench-compare "$r" "$file" "$n" >> "$out"
  done
  for r in tokens-serde-owned tokens-string-array tokenizer-serde-owned; do
    bench-compare/target-mimalloc/release/bench-compare "$r" "$file" "$n" >> "$out"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
# ggml line:  ggml median M ms min m ms peak RSS R MiB tokens T bytes B cpu median C ms
# ours lines: NAME median M ms  min m ms  peak RSS R MiB  (token bytes B)  cpu median C ms
awk '
  function seen(r) { if (!(r in cnt)) order[++k] = r }
  function add(r, m, lo, mem, b, c) {
    seen(r); meds[r, ++cnt[r]] = m; cpus[r, cnt[r]] = c
    if (!(r in mn) || lo < mn[r]) mn[r] = lo
    if (!(r in rss) || mem > rss[r]) rss[r] = mem
    if ((r in bytes) && bytes[r] != b) bytes[r] = "varies"; else bytes[r] = b
  }
  # The median of the per-round values v[r, 1..] of reader r (insertion sort: a handful of rounds).
  function median(v, r,   i, j, n, t, a) {
    n = cnt[r]; for (i = 1; i <= n; i++) a[i] = v[r, i]
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $1 == "ggml" { add("ggml", $3, $6, $10, $15, $18); next }
  { b = $14; sub(/\)/, "", b); add($1, $3, $6, $10, b, $17) }
  END {
    for (i = 1; i <= k; i++) { med[order[i]] = median(meds, order[i]); cpu[order[i]] = median(cpus, order[i]) }
    gm = med["ggml"]; gn = mn["ggml"]; gc = cpu["ggml"]
    printf "| reader | median ms | min ms | median ours/ggml | min ours/ggml | CPU median ms | CPU ours/ggml | peak RSS MiB |\n"
    printf "|---|---:|---:|---:|---:|---:|---:|---:|\n"
    bad = 0
    for (i = 1; i <= k; i++) {
      r = order[i]
      if (bytes[r] != bytes["ggml"]) { bad = 1; printf "token bytes differ: %s %s, ggml %s\n", r, bytes[r], bytes["ggml"] > "/dev/stderr" }
      printf "| %s | %.2f | %.2f | %.3f | %.3f | %.2f | %.3f | %s |\n", r, med[r], mn[r], med[r] / gm, mn[r] / gn, cpu[r], cpu[r] / gc, rss[r]
    }
    printf "token bytes summed by every reader: %s\n", bytes["ggml"]
    exit bad
  }' "$out"
