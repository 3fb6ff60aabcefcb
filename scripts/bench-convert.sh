#!/usr/bin/env bash
# `gguf convert` beside llama.cpp's convert_hf_to_gguf.py on one large checkpoint.
#
# NEEDS TORCH (the reference venv of scripts/make-convert-refs.sh, .venv-ref/); NOT RUN BY CI.
#
# 1. Makes once, in models/bench-convert/Llama-bench-1.1B/ (git-ignored, as all of models/), a
#    seeded LlamaForCausalLM checkpoint of 1.14 GB of BF16 (tests/py/make_bench_convert.py:
#    hidden 2048, 32 heads / 4 key/value heads, feed-forward 5632, vocabulary 32,000, 10 layers,
#    three safetensors shards and their index, the real SentencePiece tokenizer and chat template
#    of the tiny-Llama-2-chat-hf test case).
# 2. For each --outtype (f16 and q8_0 by default), runs target/release/gguf convert and then
#    convert_hf_to_gguf.py (the vendored llama.cpp of scripts/build-llama.sh, which imports the
#    gguf-py beside it) on it, one after the other, each under tests/py/measure_run.py: wall time,
#    CPU time (user + system; CPU / wall is the average number of cores busy), peak RSS (the
#    kernel's ru_maxrss), the largest RssAnon and RssFile seen by sampling /proc/PID/status every
#    0.1 s, and the most threads seen.
# 3. Compares the two outputs' sha256 (the script fails if they differ) and prints one table with
#    the ratios reference / ours, plus the load average before and after.
#
# Usage: scripts/bench-convert.sh [OUTTYPE...]        (default: f16 q8_0)
# Env: BENCH_CONVERT_LAYERS (default 10: changing it remakes the checkpoint);
#      BENCH_CONVERT_OUT, the folder of the outputs (default models/bench-convert/out; e.g.
#      /dev/shm/bench-convert to leave the disk out: `gguf convert` fsyncs its output before
#      renaming it into place, convert_hf_to_gguf.py leaves it in the page cache);
#      BENCH_CONVERT_KEEP=1 keeps the outputs (otherwise each pair is removed once compared:
#      2 × 1.1 GB for f16).
# Disk: 1.14 GB for the checkpoint, up to 2.3 GB of outputs at once (f16), and the 5.6 GB of
# .venv-ref/. It builds target/release/gguf first (cargo build --release -p gguf-cli).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
outtypes=("$@")
[ ${#outtypes[@]} -gt 0 ] || outtypes=(f16 q8_0)
layers=${BENCH_CONVERT_LAYERS:-10}
[ -x .venv-ref/bin/python ] || { echo "no .venv-ref: run scripts/make-convert-refs.sh once first" >&2; exit 1; }
src=$(scripts/build-llama.sh --src-only | tail -1)/src
cargo build --release --quiet -p gguf-cli
gguf=target/release/gguf

work=models/bench-convert
model=$work/Llama-bench-1.1B
stamp=$model/.bench-layers
if [ "$(cat "$stamp" 2>/dev/null)" != "$layers" ]; then
  start=$(date +%s)
  .venv/bin/python tests/py/make_bench_convert.py models "$model" --layers "$layers"
  echo "$layers" > "$stamp"
  echo "checkpoint made in $(( $(date +%s) - start )) s" >&2
fi
out=${BENCH_CONVERT_OUT:-$work/out}
mkdir -p "$out"
bytes=$(cat "$model"/model-*.safetensors | wc -c)
# page cache warm for both: read the shards once
cat "$model"/model-*.safetensors > /dev/null

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for t in "${outtypes[@]}"; do
  for tool in ours reference; do
    o="$out/$tool.$t.gguf"
    rm -f "$o"
    if [ "$tool" = ours ]; then
      cmd=("$gguf" convert "$model" --outtype "$t" -o "$o")
    else
      cmd=(.venv-ref/bin/python "$src/convert_hf_to_gguf.py" "$model" --outtype "$t" --outfile "$o")
    fi
    echo "$t $tool ..." >&2
    m=$(.venv/bin/python tests/py/measure_run.py "${cmd[@]}")
    sha=$(sha256sum "$o" | cut -d' ' -f1)
    echo "$t $tool $(stat -c %s "$o") $sha $m" >> "$results"
    echo "  $m" >&2
  done
  [ "${BENCH_CONVERT_KEEP:-}" = 1 ] || rm -f "$out/ours.$t.gguf" "$out/reference.$t.gguf"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

status=0
.venv/bin/python - "$results" "$bytes" "$layers" "$load_before" "$load_after" "$(nproc)" <<'PY' || status=$?
import json, os, sys
path, nbytes, layers, before, after, cpus = sys.argv[1:]
rows = {}
for line in open(path):
    t, tool, size, sha, m = line.split(" ", 4)
    rows[(t, tool)] = dict(json.loads(m), size=int(size), sha=sha)
print(f"output folder {os.environ.get('BENCH_CONVERT_OUT') or 'models/bench-convert/out'}; checkpoint: {int(nbytes):,} bytes of BF16 safetensors (Llama, hidden 2048, ff 5632, vocab 32000, "
      f"{layers} layers); {cpus} CPUs; load average {before} before, {after} after")
print("| outtype | tool | wall s | CPU s | cores busy | threads | peak RSS MiB | RssAnon MiB | RssFile MiB | output bytes |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
ok = True
types = list(dict.fromkeys(t for t, _ in rows))
for t in types:
    for tool in ("ours", "reference"):
        r = rows[(t, tool)]
        name = "`gguf convert`" if tool == "ours" else "convert_hf_to_gguf.py"
        print(f"| {t} | {name} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['cpu_s'] / max(r['wall_s'], 1e-9):.2f} | "
              f"{r['threads']} | {r['maxrss_mib']:.0f} | {r['rss_anon_mib']:.0f} | {r['rss_file_mib']:.0f} | {r['size']:,} |")
print()
print("| outtype | wall reference/ours | CPU reference/ours | peak RSS reference/ours | RssAnon reference/ours | sha256 |")
print("|---|---:|---:|---:|---:|---|")
for t in types:
    a, b = rows[(t, "ours")], rows[(t, "reference")]
    same = a["sha"] == b["sha"] and a["size"] == b["size"]
    ok &= same
    print(f"| {t} | {b['wall_s'] / a['wall_s']:.1f}× | {b['cpu_s'] / max(a['cpu_s'], 1e-9):.1f}× | "
          f"{b['maxrss_mib'] / a['maxrss_mib']:.1f}× | {b['rss_anon_mib'] / max(a['rss_anon_mib'], 0.1):.0f}× | "
          f"{'identical ' + a['sha'][:16] if same else 'DIFFER'} |")
if any(r["exit"] for r in rows.values()):
    ok = False
sys.exit(0 if ok else 1)
PY
exit $status
