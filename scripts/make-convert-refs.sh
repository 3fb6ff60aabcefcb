#!/usr/bin/env bash
# Makes the converter references: tests/data/convert-refs.json.
#
# NEEDS TORCH; NOT RUN BY CI. llama.cpp's convert_hf_to_gguf.py (from the vendored llama.cpp of
# scripts/build-llama.sh, with the gguf-py beside it, which that script imports itself) is the
# reference for `gguf convert`. It needs torch, so this script keeps a venv of its own,
# .venv-ref/ (git-ignored): torch from PyPI (with its CUDA libraries, about 5.6 GB installed; the
# wheel alone does not import without them), numpy, safetensors, sentencepiece, protobuf and the
# same transformers/tokenizers as .venv, pinned below. Made on first use, reused after.
#
# Steps, for every case of tests/py/make_convert_inputs.py (one tiny seeded checkpoint per
# architecture with a real tokenizer; the inputs are made with .venv, exactly as the test
# `convert_refs` remakes them without torch):
#   1. make the checkpoint in models/convert-refs/CASE/ (git-ignored, as all of models/)
#   2. run convert_hf_to_gguf.py on it with --outtype f32, f16, bf16, q8_0 and auto into
#      models/convert-refs/out/CASE.OUTTYPE.gguf
#   3. describe inputs and outputs with tests/py/convert_refs_manifest.py
#      and, for a pre-quantized FP8 case (config.json with quantization_config), once more with
#      --outtype f16 --fp8-as-q8 into CASE.f16-fp8-as-q8.gguf (the manifest's "f16-fp8-as-q8")
#   4. for a case made from a transformers layout (tests/data/hf-layouts/CASE.json), run
#      transformers itself on the checkpoint (tests/py/transformers_logits.py: float32, greedy
#      generation of $N_GEN tokens after the prompt $PROMPT, then every position's logits,
#      summarised), the logits oracle of tests/tests/interop/convert_runs.rs for those families;
#      for an FP8 case, on its float32 twin (tests/py/dequantize_fp8.py: transformers runs FP8
#      on the CPU only as bfloat16 and only with whole blocks)
# and writes tests/data/convert-refs.json:
#   {"reference": {"llama_cpp_sdist_sha256", "torch", "transformers"},
#    "cases": {CASE: {"inputs": {FILE: sha256},
#                     "outputs": {OUTTYPE (and "f16-fp8-as-q8"): <convert_refs_manifest.py gguf description>},
#                     "transformers_logits": <transformers_logits.py output> (layout cases only)}}}
#
# The layouts themselves are remade (also with torch) by
#   .venv-ref/bin/python tests/py/make_hf_layouts.py tests/data/hf-layouts [CASE...]
# after which this script must be run on the cases whose layout changed.
#
# Usage: scripts/make-convert-refs.sh [CASE...]    (no case: all; named cases are replaced in
#        the manifest, the others kept)
# Needs: scripts/setup.sh done (.venv, models/), network access to PyPI for the first run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
src=$(scripts/build-llama.sh --src-only | tail -1)/src
sdist_sha=$(basename "$(dirname "$src")" | sed 's/^llama\.cpp-//')
pins=("torch==2.15.0" "numpy==2.4.6" "safetensors==0.8.0" "sentencepiece==0.2.3" "protobuf==7.36.2"
      "transformers==5.24.0" "tokenizers==0.23.3" "jinja2==3.1.6" "pyyaml==6.0.4" "requests==2.34.2")
if [ ! -x .venv-ref/bin/python ]; then
  python3 -m venv .venv-ref
fi
if ! .venv-ref/bin/python -c 'import torch, numpy, safetensors, sentencepiece, transformers, google.protobuf' 2>/dev/null \
   || [ "$(.venv-ref/bin/python -m pip show torch 2>/dev/null | sed -n 's/^Version: //p')" != "2.15.0" ]; then
  start=$(date +%s)
  .venv-ref/bin/python -m pip install --quiet --disable-pip-version-check "${pins[@]}"
  echo "reference venv: installed in $(( $(date +%s) - start )) s" >&2
fi

# The prompt and the number of generated tokens of the logits oracle (layout cases)
PROMPT=(1 100 2000 300 4000 50 600 7000)
N_GEN=4
work=models/convert-refs
mkdir -p "$work/out"
if [ $# -gt 0 ]; then cases=("$@"); else mapfile -t cases < <(.venv/bin/python tests/py/make_convert_inputs.py --list); fi
manifest=tests/data/convert-refs.json
parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT
for case in "${cases[@]}"; do
  start=$(date +%s)
  .venv/bin/python tests/py/make_convert_inputs.py models "$work" "$case"
  .venv/bin/python tests/py/convert_refs_manifest.py inputs "$work/$case" > "$parts/$case.inputs.json"
  for outtype in f32 f16 bf16 q8_0 auto; do
    out="$work/out/$case.$outtype.gguf"
    rm -f "$out"
    .venv-ref/bin/python "$src/convert_hf_to_gguf.py" "$work/$case" --outtype "$outtype" --outfile "$out" \
      > "$work/out/$case.$outtype.log" 2>&1 || { echo "convert_hf_to_gguf.py failed: $case $outtype (log: $work/out/$case.$outtype.log)" >&2; tail -20 "$work/out/$case.$outtype.log" >&2; exit 1; }
    .venv/bin/python tests/py/convert_refs_manifest.py gguf "$out" > "$parts/$case.$outtype.json"
  done
  logits_dir="$work/$case"
  if grep -q '"quantization_config"' "$work/$case/config.json"; then
    out="$work/out/$case.f16-fp8-as-q8.gguf"
    rm -f "$out"
    .venv-ref/bin/python "$src/convert_hf_to_gguf.py" "$work/$case" --outtype f16 --fp8-as-q8 --outfile "$out" \
      > "$work/out/$case.f16-fp8-as-q8.log" 2>&1 || { echo "convert_hf_to_gguf.py failed: $case --fp8-as-q8" >&2; exit 1; }
    .venv/bin/python tests/py/convert_refs_manifest.py gguf "$out" > "$parts/$case.f16-fp8-as-q8.json"
    logits_dir="$work/$case-f32-twin"
    rm -rf "$logits_dir"
    .venv/bin/python tests/py/dequantize_fp8.py "$work/$case" "$logits_dir"
  fi
  if [ -f "tests/data/hf-layouts/$case.json" ]; then
    TRANSFORMERS_VERBOSITY=error .venv-ref/bin/python tests/py/transformers_logits.py "$logits_dir" "$N_GEN" "${PROMPT[@]}" \
      > "$parts/$case.logits.json"
  fi
  echo "$case: $(( $(date +%s) - start )) s" >&2
done
torch_version=$(.venv-ref/bin/python -m pip show torch | sed -n 's/^Version: //p')
tf_version=$(.venv-ref/bin/python -m pip show transformers | sed -n 's/^Version: //p')
.venv/bin/python tests/py/write_refs_manifest.py "$manifest" "$parts" "$sdist_sha" "$torch_version" "$tf_version" \
  f32,f16,bf16,q8_0,auto "${cases[@]}"
echo "wrote $manifest" >&2
