#!/usr/bin/env bash
# Runs one fuzz target until it stops finding new coverage: stops when libFuzzer's `cov:` count
# has not grown for QUIET seconds, or after MAX seconds. Prints the last status line.
# Usage: fuzz/plateau.sh TARGET [MAX=900] [QUIET=240]   (from anywhere; logs in fuzz/logs/)
# Needs cargo-fuzz and a nightly toolchain (or RUSTC_BOOTSTRAP=1 with stable: see README.md).
# SEEDS: the folders read besides corpus/TARGET (default `seeds`; e.g. "seeds corpus/open").
# The `differential` target is built with `--features ggml` (it links ggml: see README.md).
set -euo pipefail
cd "$(dirname "$0")"
t=$1 max=${2:-900} quiet=${3:-240}
mkdir -p "corpus/$t" "artifacts/$t" logs
log="logs/$t.log"
toolchain=${FUZZ_TOOLCHAIN:-+nightly}
# shellcheck disable=SC2086
# Optimized, with debug assertions and overflow checks (`-a`), as scripts/fuzz-smoke.sh builds.
features=()
if [ "$t" = differential ]; then features=(--features ggml); fi
cargo $toolchain fuzz build -O -a "${features[@]}" "$t" 2>/dev/null
# The fuzzer binary itself (what `cargo fuzz run` would start), so $! is its process id.
# shellcheck disable=SC2086
"target/x86_64-unknown-linux-gnu/release/$t" "corpus/$t" ${SEEDS:-seeds} -dict=gguf.dict -artifact_prefix="artifacts/$t/" \
  -max_total_time="$max" -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 >"$log" 2>&1 &
pid=$!
start=$(date +%s) last_cov=0 last_change=$start
while kill -0 "$pid" 2>/dev/null; do
  sleep 10
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  now=$(date +%s)
  if [ -n "$cov" ] && [ "$cov" != "$last_cov" ]; then last_cov=$cov last_change=$now; fi
  if [ $((now - last_change)) -ge "$quiet" ]; then
    # SIGINT: libFuzzer prints its final stats and exits.
    kill -INT "$pid"
    break
  fi
done
wait "$pid" || true
echo "$t: $(grep -E '^#[0-9]+' "$log" | tail -1)"
echo "$t: ran $(( $(date +%s) - start )) s; last new cov after $((last_change - start)) s"
grep -E 'stat::number_of_executed_units|stat::peak_rss|Done|SUMMARY|panicked' "$log" || true
