#!/usr/bin/env bash
# Makes the LoRA adapter converter references: tests/data/lora-refs.json.
#
# NEEDS TORCH; NOT RUN BY CI. llama.cpp's convert_lora_to_gguf.py (from the vendored llama.cpp of
# scripts/build-llama.sh, importing its own gguf-py and conversion/ package) is the reference for
# `gguf convert ADAPTER_DIR --base BASE_DIR`. It runs in the venv of scripts/make-convert-refs.sh,
# .venv-ref/ (torch, transformers; made by that script).
#
# Steps, for every case of tests/py/make_lora_inputs.py (an adapter laid out as peft saves it,
# tests/data/lora-layouts/CASE.json, on one of make_convert_inputs.py's tiny checkpoints; the
# inputs are made with .venv, exactly as the test `lora_refs` remakes them without torch):
#   1. make the adapter in $WORK/CASE/ and its base in $WORK/bases/BASE/
#   2. run convert_lora_to_gguf.py ADAPTER --base BASE with --outtype f32, f16, bf16 and q8_0 into
#      $WORK/out/CASE.OUTTYPE.gguf (its `auto` fails: it asks a LoRA pair for `dim()`)
#   3. describe inputs and outputs with tests/py/convert_refs_manifest.py
# and writes tests/data/lora-refs.json:
#   {"reference": {"llama_cpp_sdist_sha256", "torch", "transformers"},
#    "cases": {CASE: {"base": BASE, "inputs": {FILE: sha256},
#                     "outputs": {OUTTYPE: <convert_refs_manifest.py gguf description>}}}}
#
# The adapter layouts themselves are remade (with torch and peft) by
#   .venv-ref/bin/pip install peft
#   .venv-ref/bin/python tests/py/make_lora_layouts.py models tests/data/lora-layouts [CASE...]
# after which this script must be run on the cases whose layout changed.
#
# Usage: scripts/make-lora-refs.sh [CASE...]    (no case: all; named cases are replaced in the
#        manifest, the others kept). WORK (default target/lora-refs) is the scratch folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
src=$(scripts/build-llama.sh --src-only | tail -1)/src
sdist_sha=$(basename "$(dirname "$src")" | sed 's/^llama\.cpp-//')
if [ ! -x .venv-ref/bin/python ]; then
  echo "no .venv-ref: run scripts/make-convert-refs.sh first (it makes the reference venv)" >&2
  exit 1
fi
work=${WORK:-target/lora-refs}
mkdir -p "$work/out"
if [ $# -gt 0 ]; then cases=("$@"); else mapfile -t cases < <(.venv/bin/python tests/py/make_lora_inputs.py --list); fi
manifest=tests/data/lora-refs.json
parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT
for case in "${cases[@]}"; do
  start=$(date +%s)
  .venv/bin/python tests/py/make_lora_inputs.py models "$work" "$case"
  base=$(.venv/bin/python -c 'import json,sys; print(json.load(open(sys.argv[1]))["base"])' "tests/data/lora-layouts/$case.json")
  echo "$base" > "$parts/$case.base"
  .venv/bin/python tests/py/convert_refs_manifest.py inputs "$work/$case" > "$parts/$case.inputs.json"
  for outtype in f32 f16 bf16 q8_0; do
    out="$work/out/$case.$outtype.gguf"
    rm -f "$out"
    .venv-ref/bin/python "$src/convert_lora_to_gguf.py" "$work/$case" --base "$work/bases/$base" \
      --outtype "$outtype" --outfile "$out" > "$work/out/$case.$outtype.log" 2>&1 \
      || { echo "convert_lora_to_gguf.py failed: $case $outtype (log: $work/out/$case.$outtype.log)" >&2; tail -20 "$work/out/$case.$outtype.log" >&2; exit 1; }
    .venv/bin/python tests/py/convert_refs_manifest.py gguf "$out" > "$parts/$case.$outtype.json"
  done
  echo "$case: $(( $(date +%s) - start )) s" >&2
done
torch_version=$(.venv-ref/bin/python -m pip show torch | sed -n 's/^Version: //p')
tf_version=$(.venv-ref/bin/python -m pip show transformers | sed -n 's/^Version: //p')
.venv/bin/python tests/py/write_refs_manifest.py "$manifest" "$parts" "$sdist_sha" "$torch_version" "$tf_version" \
  f32,f16,bf16,q8_0 "${cases[@]}"
echo "wrote $manifest" >&2
