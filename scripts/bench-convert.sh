#!/usr/bin/env bash
# `gguf convert` beside llama.cpp's convert_hf_to_gguf.py on one large checkpoint, dense or
# mixture-of-experts.
#
# NEEDS TORCH (the reference venv of scripts/make-convert-refs.sh, .venv-ref/); NOT RUN BY CI.
#
# 1. Makes once per architecture, in models/bench-convert/ (git-ignored, as all of models/), a
#    seeded checkpoint (tests/py/make_bench_convert.py), with the real SentencePiece tokenizer
#    and chat template of the tiny-Llama-2-chat-hf test case, in safetensors shards and their
#    index:
#    - llama (the default): Llama-bench-1.1B/, a LlamaForCausalLM of 1.14 GB of BF16 (hidden
#      2048, 32 heads / 4 key/value heads, feed-forward 5632, vocabulary 32,000, 10 layers);
#    - mixtral: Mixtral-bench-1.2B/, a MixtralForCausalLM of 1.22 GB of BF16 (hidden 1024,
#      16 heads / 4 key/value heads, 8 experts of feed-forward 3584, 2 used, vocabulary 32,000,
#      6 layers), each expert its own tensors (block_sparse_moe.experts.X.{w1,w2,w3}) as
#      Mixtral's checkpoints ship them, which both tools stack into blk.N.ffn_*_exps;
#    - gptoss: GptOss-bench-MXFP4/, a GptOssForCausalLM of 1.4 GB with gpt-oss-20b's layer shape
#      (hidden 2880, 32 experts of feed-forward 2880, 4 used, vocabulary 50,257 with the GPT-2
#      tokenizer of the tiny-gpt-oss test case, 2 layers), its experts MXFP4 as OpenAI publishes
#      gpt-oss (`*_blocks`/`*_scales`), which both tools write as ggml MXFP4 without dequantizing;
#    - deepseek-fp8: DeepSeek-bench-FP8/, a DeepseekV3ForCausalLM of 1.12 GB stored as DeepSeek-V3
#      ships (every attention and MLP linear layer F8_E4M3 with an F32 `*_scale_inv` of 128×128
#      block scales; hidden 2048, 16 heads, q/kv LoRA ranks 768/512, 1 dense layer of ff 5632 then
#      MoE layers of 32 routed experts of ff 1024, 4 used, 1 shared; vocabulary 50,257 with the
#      GPT-2 tokenizer of the tiny-DeepSeek-V3-FP8 test case; 4 layers), which both tools
#      dequantize (and stack the experts of);
#    - both: llama and mixtral, dense first, and then a comparison of our peak RSS on the MoE checkpoint
#      with the dense one's (the project's bound: within 2×).
# 2. For each --outtype (f16 and q8_0 by default), runs target/release/gguf convert and then
#    convert_hf_to_gguf.py (the vendored llama.cpp of scripts/build-llama.sh, which imports the
#    gguf-py beside it) on it, one after the other, each under tests/py/measure_run.py: wall time,
#    CPU time (user + system; CPU / wall is the average number of cores busy), peak RSS (the
#    kernel's ru_maxrss), the largest RssAnon and RssFile seen by sampling /proc/PID/status every
#    0.1 s, and the most threads seen.
#    After each run, the output is fsynced and that time recorded: the time until the output is
#    on disk is the wall time plus it. And the output folder's own write bandwidth is measured
#    once (dd of 512 MiB with conv=fdatasync), the bound of any durable write there.
#    Before each run the script waits BENCH_CONVERT_COOL seconds (default 5): on a virtual
#    machine whose free memory goes back to the host (virtio-balloon free page reporting), the
#    first write to a page freed more than about 2 s earlier faults in the hypervisor, seconds
#    per gigabyte; the wait gives every run, ours and the reference, the same cold start instead
#    of letting one inherit the pages the previous run freed. The size of that effect is measured
#    in the same run (the page-touch probe): the system time of writing 1 GiB into the output
#    folder with dd after the same wait, and again right after.
# 3. Compares the two outputs' sha256 (the script fails if they differ) and prints one table with
#    the ratios reference / ours, plus the load average before and after.
#
# Usage: scripts/bench-convert.sh [--arch llama|mixtral|gptoss|deepseek-fp8|both] [OUTTYPE...]   (default: llama; f16 q8_0)
# Env: BENCH_CONVERT_ARCH, the same as --arch (the option wins);
#      BENCH_CONVERT_LAYERS (default 10 for llama, 6 for mixtral, 2 for gptoss, 4 for deepseek-fp8: changing it remakes the
#      checkpoints it applies to, every one run);
#      BENCH_CONVERT_OUT, the folder of the outputs (default models/bench-convert/out; e.g.
#      /dev/shm/bench-convert to leave the disk out: `gguf convert` fsyncs its output before
#      renaming it into place, convert_hf_to_gguf.py leaves it in the page cache);
#      BENCH_CONVERT_COOL, the seconds to wait before each run (default 5; see 2.);
#      BENCH_CONVERT_KEEP=1 keeps the outputs (otherwise each pair is removed once compared:
#      2 × 1.1–1.2 GB for f16).
# Disk: 1.14 GB for the Llama checkpoint, 1.22 GB for the Mixtral one, up to 2.5 GB of outputs
# at once (f16), and the 5.6 GB of .venv-ref/. It builds target/release/gguf first
# (cargo build --release -p gguf-cli).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
arch=${BENCH_CONVERT_ARCH:-llama}
outtypes=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs llama, mixtral, gptoss, deepseek-fp8 or both}; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    *) outtypes+=("$1"); shift ;;
  esac
done
[ ${#outtypes[@]} -gt 0 ] || outtypes=(f16 q8_0)
case $arch in
  llama | mixtral | gptoss | deepseek-fp8) archs=("$arch") ;;
  both) archs=(llama mixtral) ;;
  *) echo "--arch: $arch is not llama, mixtral, gptoss, deepseek-fp8 or both" >&2; exit 2 ;;
esac
[ -x .venv-ref/bin/python ] || { echo "no .venv-ref: run scripts/make-convert-refs.sh once first" >&2; exit 1; }
src=$(scripts/build-llama.sh --src-only | tail -1)/src
cargo build --release --quiet -p gguf-cli
gguf=target/release/gguf

work=models/bench-convert
out=${BENCH_CONVERT_OUT:-$work/out}
mkdir -p "$out"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
cool=${BENCH_CONVERT_COOL:-5}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for a in "${archs[@]}"; do
  case $a in
    llama) model=$work/Llama-bench-1.1B; layers=${BENCH_CONVERT_LAYERS:-10} ;;
    mixtral) model=$work/Mixtral-bench-1.2B; layers=${BENCH_CONVERT_LAYERS:-6} ;;
    gptoss) model=$work/GptOss-bench-MXFP4; layers=${BENCH_CONVERT_LAYERS:-2} ;;
    deepseek-fp8) model=$work/DeepSeek-bench-FP8; layers=${BENCH_CONVERT_LAYERS:-4} ;;
  esac
  stamp=$model/.bench-layers
  if [ "$(cat "$stamp" 2>/dev/null)" != "$layers" ]; then
    start=$(date +%s)
    .venv/bin/python tests/py/make_bench_convert.py models "$model" --arch "$a" --layers "$layers"
    echo "$layers" > "$stamp"
    echo "checkpoint made in $(( $(date +%s) - start )) s" >&2
  fi
  bytes=$(cat "$model"/model-*.safetensors | wc -c)
  # page cache warm for both: read the shards once
  cat "$model"/model-*.safetensors > /dev/null
  for t in "${outtypes[@]}"; do
    for tool in ours reference; do
      o="$out/$tool.$a.$t.gguf"
      rm -f "$o"
      if [ "$tool" = ours ]; then
        cmd=("$gguf" convert "$model" --outtype "$t" -o "$o")
      else
        cmd=(.venv-ref/bin/python "$src/convert_hf_to_gguf.py" "$model" --outtype "$t" --outfile "$o")
      fi
      echo "$a $t $tool ..." >&2
      sleep "$cool"
      m=$(.venv/bin/python tests/py/measure_run.py "${cmd[@]}")
      # The time until the output is on disk: `gguf convert` has synced it before renaming it
      # into place (this fsync finds nothing to write); convert_hf_to_gguf.py leaves it in the
      # page cache, for the kernel to write back later.
      s=$(.venv/bin/python -c 'import os, sys, time
t = time.monotonic(); fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)
print(f"{time.monotonic() - t:.3f}")' "$o")
      sha=$(sha256sum "$o" | cut -d' ' -f1)
      echo "$a $layers $bytes $t $tool $(stat -c %s "$o") $sha $s $m" >> "$results"
      echo "  $m" >&2
    done
    [ "${BENCH_CONVERT_KEEP:-}" = 1 ] || rm -f "$out/ours.$a.$t.gguf" "$out/reference.$a.$t.gguf"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
# The folder's durable write bandwidth, in the same run.
disk=$(dd if=/dev/zero of="$out/.bench-dd" bs=16M count=32 conv=fdatasync 2>&1 | tail -1 | sed 's/.*copied, //')
rm -f "$out/.bench-dd"
# The page-touch probe (see 2.): system seconds of writing 1 GiB there, cold then warm.
touch_probe() {
  .venv/bin/python tests/py/measure_run.py dd if=/dev/zero of="$out/.bench-touch" bs=8M count=128 |
    .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["sys_s"])'
  rm -f "$out/.bench-touch"
}
sleep "$cool"
touch_cold=$(touch_probe)
touch_warm=$(touch_probe)

status=0
.venv/bin/python - "$results" "$load_before" "$load_after" "$(nproc)" "$disk" "$touch_cold" "$touch_warm" "$cool" <<'PY' || status=$?
import json, os, sys
path, before, after, cpus, disk, touch_cold, touch_warm, cool = sys.argv[1:]
SHAPES = {"llama": "Llama, hidden 2048, ff 5632, vocab 32000",
          "mixtral": "Mixtral, hidden 1024, 8 experts of ff 3584, 2 used, vocab 32000",
          "gptoss": "gpt-oss, hidden 2880, 32 MXFP4 experts of ff 2880, 4 used, vocab 50257",
          "deepseek-fp8": "DeepSeek-V3, hidden 2048, 128×128-block FP8, 32 experts of ff 1024, 4 used, 1 shared, vocab 50257"}
rows, ckpts = {}, {}
for line in open(path):
    arch, layers, nbytes, t, tool, size, sha, sync, m = line.split(" ", 8)
    rows[(arch, t, tool)] = dict(json.loads(m), size=int(size), sha=sha, sync_s=float(sync))
    ckpts[arch] = (int(layers), int(nbytes))
print(f"output folder {os.environ.get('BENCH_CONVERT_OUT') or 'models/bench-convert/out'}; {cpus} CPUs; "
      f"load average {before} before, {after} after; a durable write of 512 MiB there (dd conv=fdatasync): {disk}")
print(f"page-touch probe (1 GiB written by dd there, system seconds): {touch_cold} after a {cool} s wait "
      f"(each run also starts after one), {touch_warm} right after")
for arch, (layers, nbytes) in ckpts.items():
    kind = {"gptoss": "MXFP4 experts, BF16 otherwise",
            "deepseek-fp8": "F8_E4M3 linear layers with F32 block scales, BF16 otherwise"}.get(arch, "BF16")
    print(f"checkpoint {arch}: {nbytes:,} bytes of safetensors, {kind} ({SHAPES[arch]}, {layers} layers)")
print()
print("| checkpoint | outtype | tool | wall s | then fsync s | CPU s | cores busy | threads | peak RSS MiB | RssAnon MiB | RssFile MiB | output bytes |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
ok = True
keys = list(dict.fromkeys((a, t) for a, t, _ in rows))
for a, t in keys:
    for tool in ("ours", "reference"):
        r = rows[(a, t, tool)]
        name = "`gguf convert`" if tool == "ours" else "convert_hf_to_gguf.py"
        print(f"| {a} | {t} | {name} | {r['wall_s']:.1f} | {r['sync_s']:.2f} | {r['cpu_s']:.1f} | {r['cpu_s'] / max(r['wall_s'], 1e-9):.2f} | "
              f"{r['threads']} | {r['maxrss_mib']:.0f} | {r['rss_anon_mib']:.0f} | {r['rss_file_mib']:.0f} | {r['size']:,} |")
print()
print("| checkpoint | outtype | wall reference/ours | to disk (wall + fsync) reference/ours | CPU reference/ours | peak RSS reference/ours | RssAnon reference/ours | sha256 |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for a, t in keys:
    x, y = rows[(a, t, "ours")], rows[(a, t, "reference")]
    same = x["sha"] == y["sha"] and x["size"] == y["size"]
    ok &= same
    durable = (y['wall_s'] + y['sync_s']) / (x['wall_s'] + x['sync_s'])
    print(f"| {a} | {t} | {y['wall_s'] / x['wall_s']:.1f}× | {durable:.1f}× | {y['cpu_s'] / max(x['cpu_s'], 1e-9):.1f}× | "
          f"{y['maxrss_mib'] / x['maxrss_mib']:.1f}× | {y['rss_anon_mib'] / max(x['rss_anon_mib'], 0.1):.0f}× | "
          f"{'identical ' + x['sha'][:16] if same else 'DIFFER'} |")
types = [t for a, t in keys if a == "mixtral" and ("llama", t) in keys]
if types:
    print()
    print("| outtype | tool | peak RSS MiB, dense | peak RSS MiB, MoE | MoE / dense | RssAnon MiB, dense | RssAnon MiB, MoE |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for t in types:
        for tool in ("ours", "reference"):
            d, m = rows[("llama", t, tool)], rows[("mixtral", t, tool)]
            name = "`gguf convert`" if tool == "ours" else "convert_hf_to_gguf.py"
            print(f"| {t} | {name} | {d['maxrss_mib']:.0f} | {m['maxrss_mib']:.0f} | {m['maxrss_mib'] / d['maxrss_mib']:.2f}× | "
                  f"{d['rss_anon_mib']:.0f} | {m['rss_anon_mib']:.0f} |")
if any(r["exit"] for r in rows.values()):
    ok = False
sys.exit(0 if ok else 1)
PY
exit $status
