#!/usr/bin/env bash
# Runs llama.cpp's llama-quantize and `gguf quantize` side by side over every file type, with and
# without --pure, on Gemma 3 270M and SmolLM2-135M (each dequantized to F32 first), and prints a
# table: whether the per-tensor types agree (--dry-run of both) and whether the written files are
# byte-identical.
#
# Usage: scripts/quantize-matrix.sh [--plans-only] [TYPE...]
#        scripts/quantize-matrix.sh --speed [TYPE...]   (wall time and peak RSS, /usr/bin/time's
#        %e and %M, of both on Gemma 3 from F32, one after the other, THREADS threads each, and
#        their ratios; default every file type below; with IMATRIX=yes the matrix goes to both;
#        with REPEAT=N each tool runs N times per type, alternating, and the table gives each
#        tool's median time, its fastest, and the ratio of the medians; peak RSS is the largest)
# Environment: GGUF_LLAMA_CPP_DIR (a llama.cpp build: build/bin/llama-quantize; default: the cache
# folder the tests use), THREADS (default 2), WORK (scratch folder, default a temporary one),
# MODELS (default "gemma smollm2"), IMATRIX (with "yes", each model's importance matrix made by
# llama-imatrix on a fixed text, as the interop tests make it, is given to both tools with
# --imatrix: then the IQ1/IQ2/IQ3 file types are written; the IQ ones take minutes each).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
plans_only=0 speed=0
if [[ ${1:-} == --plans-only ]]; then plans_only=1; shift; fi
if [[ ${1:-} == --speed ]]; then speed=1; shift; fi
llama_dir=${GGUF_LLAMA_CPP_DIR:-$(ls -d "$HOME"/.cache/gguf-serde/llama.cpp-*/ 2>/dev/null | head -1)}
lq="${llama_dir%/}/build/bin/llama-quantize"
[[ -x $lq ]] || { echo "no llama-quantize at $lq (set GGUF_LLAMA_CPP_DIR)" >&2; exit 1; }
threads=${THREADS:-2}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
cargo build -q --release -p gguf-cli
gguf=target/release/gguf
types=("$@")
if [[ ${#types[@]} -eq 0 ]]; then
    types=(F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K
        IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M IQ4_NL IQ4_XS TQ1_0 TQ2_0 MXFP4_MOE Q1_0 Q2_0)
fi
declare -A src=([gemma]=models/gemma-3-270m-q4_k_m.gguf [smollm2]=models/SmolLM2-135M-Instruct.Q4_1.gguf)
for m in gemma smollm2; do
    [[ -f $work/$m-f32.gguf ]] || $gguf dequantize -q "${src[$m]}" "$work/$m-f32.gguf" >/dev/null
done
declare -A imx=([gemma]="" [smollm2]="")
if [[ ${IMATRIX:-} == yes ]]; then
    li="${llama_dir%/}/build/bin/llama-imatrix"
    words=(the quick brown fox jumps over the lazy dog while a small model reads plain text about rivers
        mountains numbers and cities)
    [[ -f $work/imatrix.txt ]] || for i in $(seq 0 399); do printf '%s ' "${words[$(((i * 7) % ${#words[@]}))]}"; done >"$work/imatrix.txt"
    for m in gemma smollm2; do
        [[ -f $work/$m.imatrix.gguf ]] || "$li" -m "${src[$m]}" -f "$work/imatrix.txt" -o "$work/$m.imatrix.gguf" \
            --output-format gguf -c 64 --chunks 2 -t "$threads" --no-ppl >/dev/null 2>&1
        imx[$m]="--imatrix $work/$m.imatrix.gguf"
    done
fi
if [[ $speed == 1 ]]; then
    # Every type of the list above unless some are named. Ratios are ours / llama-quantize's,
    # measured in the same run (compare those, not absolute times across runs).
    in=$work/gemma-f32.gguf
    opts=${imx[gemma]}
    echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; THREADS=$threads; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    repeat=${REPEAT:-1}
    # The median of the numbers on standard input (one per line), and their minimum.
    median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f\n", m, v[1] }'; }
    [[ $repeat == 1 ]] || echo "REPEAT=$repeat: times are medians (fastest in brackets), the ratio is of the medians"
    printf '| file type | gguf quantize (s) | gguf peak RSS (MiB) | llama-quantize (s) | llama-quantize peak RSS (MiB) | time ratio | RSS ratio |\n|---|---|---|---|---|---|---|\n'
    for t in "${types[@]}"; do
        : >"$work/o.times"
        : >"$work/l.times"
        ook=1 lok=1
        for ((r = 0; r < repeat; r++)); do
            rm -f "$work/l.gguf" "$work/o.gguf"
            # Unquoted $opts on purpose: "--imatrix FILE" or nothing.
            /usr/bin/time -f '%e %M' -o "$work/o.time" $gguf quantize -q $opts --threads "$threads" "$in" "$work/o.gguf" "$t" >/dev/null 2>"$work/o.log" || ook=0
            /usr/bin/time -f '%e %M' -o "$work/l.time" "$lq" $opts "$in" "$work/l.gguf" "$t" "$threads" >/dev/null 2>&1 || lok=0
            [[ $ook == 1 && $lok == 1 ]] || break
            tail -1 "$work/o.time" >>"$work/o.times"
            tail -1 "$work/l.time" >>"$work/l.times"
        done
        if [[ $ook == 0 || $lok == 0 ]]; then
            printf '| %s | %s | | %s | | | |\n' "$t" "$([[ $ook == 1 ]] && echo ok || echo refused)" "$([[ $lok == 1 ]] && echo ok || echo refused)"
            continue
        fi
        cmp -s "$work/l.gguf" "$work/o.gguf" || echo "warning: $t outputs differ" >&2
        read -r ow omin < <(cut -d' ' -f1 "$work/o.times" | median)
        read -r lw lmin < <(cut -d' ' -f1 "$work/l.times" | median)
        orss=$(cut -d' ' -f2 "$work/o.times" | sort -n | tail -1)
        lrss=$(cut -d' ' -f2 "$work/l.times" | sort -n | tail -1)
        if [[ $repeat == 1 ]]; then
            oshow=$ow lshow=$lw
        else
            oshow="$ow ($omin)" lshow="$lw ($lmin)"
        fi
        printf '| %s | %s | %d | %s | %d | %.2f | %.2f |\n' "$t" "$oshow" $((orss / 1024)) "$lshow" $((lrss / 1024)) \
            "$(echo "$ow / $lw" | bc -l)" "$(echo "$orss / $lrss" | bc -l)"
    done
    echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi
# Per-tensor "name type" lines, lower-case, in file order.
llama_plan() { "$lq" --dry-run "$@" 2>&1 | sed -n 's/^\[ *[0-9]*\/ *[0-9]*\] \([^ ]*\) .*type = *\([^ ,]*\),.*(\([^)]*\))$/\1 \3/p; s/^\[ *[0-9]*\/ *[0-9]*\] \([^ ]*\) .*type = *\([^ ,]*\), size = *[0-9.]* MiB$/\1 \2/p' | tr 'A-Z' 'a-z'; }
ours_plan() { $gguf quantize --dry-run "$@" | awk 'NR > 1 && NF >= 5 && $2 != "tensors:" && $1 != "warning:" { print $1, $4 }' | tr 'A-Z' 'a-z'; }
printf '%-8s %-10s %-5s %-10s %-28s %s\n' model type pure plan file "time ours/llama (s)"
for m in ${MODELS:-gemma smollm2}; do
    in=$work/$m-f32.gguf
    for t in "${types[@]}"; do
        for pure in "" --pure; do
            # Unquoted below on purpose: "--pure", "--imatrix FILE", both or nothing.
            opts="$pure ${imx[$m]}"
            a=$(llama_plan $opts "$in" "$t" || true)
            # stderr apart: a dry run that notes the real run would fail still prints the plan.
            b=$(ours_plan $opts "$in" "$t" 2>/dev/null || true)
            if [[ -z $a ]]; then plan="llama-fails"
            elif [[ $a == "$b" ]]; then plan="same"
            else plan="DIFF:$(diff <(echo "$a") <(echo "$b") | grep -c "^>" || true)"; fi
            file="-" times=""
            if [[ $plans_only == 0 && $plan == same ]]; then
                rm -f "$work/l.gguf" "$work/o.gguf"
                s=$(date +%s.%N)
                if $gguf quantize -q --force $opts --threads "$threads" "$in" "$work/o.gguf" "$t" >"$work/o.log" 2>&1; then ook=1; else ook=0; fi
                m1=$(date +%s.%N)
                nokernel=$(grep -o 'quantizing to [A-Z0-9_]* is not supported' "$work/o.log" | head -1 || true)
                if [[ -n $nokernel ]]; then
                    # No quantizer here: llama-quantize is not run.
                    file="ours: ${nokernel}"
                else
                    if "$lq" $opts "$in" "$work/l.gguf" "$t" "$threads" >"$work/l.log" 2>&1; then lok=1; else lok=0; fi
                    e=$(date +%s.%N)
                    times=$(printf '%.1f/%.1f' "$(echo "$m1 - $s" | bc)" "$(echo "$e - $m1" | bc)")
                    if [[ $lok == 1 && $ook == 1 ]]; then
                        if cmp -s "$work/l.gguf" "$work/o.gguf"; then file="identical"; else file="DIFFER"; fi
                    elif [[ $lok == 0 && $ook == 0 ]]; then
                        why=$(grep -o 'requires an importance matrix' "$work/o.log" | head -1 || true)
                        file="both refuse (${why:-?})"
                    elif [[ $ook == 0 ]]; then file="ours fails"
                    else file="llama fails"; fi
                fi
            fi
            printf '%-8s %-10s %-5s %-10s %-28s %s\n' "$m" "$t" "${pure:+yes}" "$plan" "$file" "$times"
        done
    done
done
