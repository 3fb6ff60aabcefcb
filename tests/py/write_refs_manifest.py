"""Merge the parts a reference script made into its manifest (scripts/make-convert-refs.sh,
scripts/make-lora-refs.sh).

Usage: python write_refs_manifest.py MANIFEST PARTS SDIST TORCH TRANSFORMERS OUTTYPES CASE...
  OUTTYPES   comma-separated (f32,f16,bf16,q8_0[,auto])
PARTS holds, per case, CASE.inputs.json, CASE.OUTTYPE.json for each output type, and optionally
CASE.f16-fp8-as-q8.json (an output of `--outtype f16 --fp8-as-q8`, for a pre-quantized FP8
case), CASE.logits.json (-> "transformers_logits") and CASE.base (a text line -> "base"). The named cases
replace theirs in MANIFEST (made if missing), the others are kept; "reference" becomes
{"llama_cpp_sdist_sha256", "torch", "transformers"}; cases are sorted by name.
"""
import json
import os
import sys


def main():
    manifest, parts, sdist, torch_v, tf_v, outtypes, *cases = sys.argv[1:]
    doc = {"cases": {}}
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            doc = json.load(f)
    doc["reference"] = {"llama_cpp_sdist_sha256": sdist, "torch": torch_v, "transformers": tf_v}

    def load(name):
        with open(os.path.join(parts, name), encoding="utf-8") as f:
            return json.load(f)

    for case in cases:
        entry = {}
        base = os.path.join(parts, f"{case}.base")
        if os.path.exists(base):
            with open(base, encoding="utf-8") as f:
                entry["base"] = f.read().strip()
        entry["inputs"] = load(f"{case}.inputs.json")
        entry["outputs"] = {t: load(f"{case}.{t}.json") for t in outtypes.split(",")}
        if os.path.exists(os.path.join(parts, f"{case}.f16-fp8-as-q8.json")):
            entry["outputs"]["f16-fp8-as-q8"] = load(f"{case}.f16-fp8-as-q8.json")
        if os.path.exists(os.path.join(parts, f"{case}.logits.json")):
            entry["transformers_logits"] = load(f"{case}.logits.json")
        doc["cases"][case] = entry
    doc["cases"] = dict(sorted(doc["cases"].items()))
    with open(manifest, "w", encoding="utf-8") as f:
        json.dump({"reference": doc["reference"], "cases": doc["cases"]}, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
