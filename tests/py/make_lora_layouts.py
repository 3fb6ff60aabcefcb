"""Record how `peft` saves a LoRA adapter of each tiny base checkpoint: tests/data/lora-layouts/CASE.json.

Usage: python make_lora_layouts.py MODELS_DIR OUT_DIR [CASE...]    (`--list` prints the case names)

NEEDS TORCH AND PEFT (run with scripts/make-convert-refs.sh's .venv-ref, `pip install peft`); not
run by CI. For each case, the base checkpoint is made by make_convert_inputs.py (numpy, into a
temporary folder), loaded with transformers' AutoModelForCausalLM in float32, wrapped by
`peft.get_peft_model` with the case's `LoraConfig` (rank, alpha, target modules) and saved with
`save_pretrained`, as a fine-tune's adapter is published. An adapter kept in bfloat16 is cast
before saving (`model.to(torch.bfloat16)`), as a bfloat16 training run saves it.

The layout records what was written, not the weights (peft starts lora_B at zero):
  {"base": the make_convert_inputs.py case, "peft", "transformers", "torch",
   "files": {"adapter_config.json": TEXT, "README.md": TEXT},   exactly as written
   "saved_files": [every file name save_pretrained wrote, sorted],
   "safetensors": {"metadata": the header's __metadata__,
                   "tensors": [{"name", "dtype", "shape"}] in the order of their data}}
make_lora_inputs.py (numpy only) rebuilds the adapter from it with seeded values.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
# case -> (base case of make_convert_inputs.py, LoraConfig fields, saved dtype)
CASES = {
    # Llama 2: every linear layer, the token embeddings and the output head (untied), rank 8
    "lora-Llama-2-chat": ("tiny-Llama-2-chat-hf", {"r": 8, "lora_alpha": 16,
                                                    "target_modules": ALL_LINEAR + ["embed_tokens", "lm_head"]},
                          "float32"),
    # Qwen2: q and v only (peft's default for the family), rank 16
    "lora-Qwen2-Instruct": ("tiny-Qwen2-Instruct", {"r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj"]},
                            "float32"),
    # Qwen3: every linear layer, rank 32 (whole Q8_0 blocks in lora_b), saved in bfloat16
    "lora-Qwen3": ("tiny-Qwen3", {"r": 32, "lora_alpha": 16, "target_modules": ALL_LINEAR}, "bfloat16"),
    # Mixtral: the attention projections (the experts are one fused parameter in memory)
    "lora-Mixtral-Instruct": ("tiny-Mixtral-Instruct", {"r": 8, "lora_alpha": 8,
                                                         "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]},
                              "float32"),
    # Phi-3: its fused projections (qkv_proj and gate_up_proj, split by the converter) and the
    # others, rank 8
    "lora-Phi-3-mini": ("tiny-Phi-3-mini-128k-instruct", {"r": 8, "lora_alpha": 16,
                                                          "target_modules": ["qkv_proj", "o_proj", "gate_up_proj",
                                                                             "down_proj"]},
                        "float32"),
    # Gemma 2: every linear layer, rank 4
    "lora-gemma-2": ("tiny-gemma-2", {"r": 4, "lora_alpha": 8, "target_modules": ALL_LINEAR}, "float32"),
    # Qwen2 with its lm_head adapted, over a base whose lm_head is the tied token embedding (no
    # lm_head.weight in the checkpoint): peft saves lm_head's pair and its copy of the weight
    # (`lm_head.base_layer.weight`); convert_lora_to_gguf.py converts it, llama.cpp refuses to load
    # the result (the base GGUF has no output.weight), and `gguf convert` refuses it
    "lora-Qwen2-tied-lm_head": ("tiny-Qwen2-Instruct", {"r": 8, "lora_alpha": 16,
                                                        "target_modules": ["q_proj", "v_proj", "lm_head"]},
                                "float32"),
}


# Derived without torch: an adapter of Mixtral's experts as peft saved it with transformers 4, whose
# Mixtral had an nn.Linear per expert (`block_sparse_moe.experts.X.w1`, ...; transformers 5 fuses
# them into 3-D parameters that peft's target_modules cannot reach). Made from the recorded
# lora-Mixtral-Instruct layout: its attention pairs, and a pair of the same rank on every expert's
# w1, w2 and w3 (lora_A [r, in], lora_B [out, r]), the names in data order as safetensors orders
# tensors of one dtype (by name); "w1", "w2", "w3" added to target_modules.
DERIVED = {"lora-Mixtral-experts": "lora-Mixtral-Instruct"}


def derived_layout(out, case):
    with open(os.path.join(out, f"{DERIVED[case]}.json"), encoding="utf-8") as f:
        doc = json.load(f)
    cfg = json.loads(doc["files"]["adapter_config.json"])
    r = cfg["r"]
    tensors = list(doc["safetensors"]["tensors"])
    with open(os.path.join(HERE, "..", "data", "hf-layouts", "tiny-Mixtral-Instruct.json"), encoding="utf-8") as f:
        base = json.load(f)
    for t in (t for shard in base["safetensors"] for t in shard["tensors"]):
        if ".block_sparse_moe.experts." in t["name"]:
            stem = "base_model.model." + t["name"][: -len(".weight")]
            out_dim, in_dim = t["shape"]
            tensors.append({"name": f"{stem}.lora_A.weight", "dtype": "F32", "shape": [r, in_dim]})
            tensors.append({"name": f"{stem}.lora_B.weight", "dtype": "F32", "shape": [out_dim, r]})
    tensors.sort(key=lambda t: t["name"])
    text = doc["files"]["adapter_config.json"]
    targets = cfg["target_modules"]
    new_targets = targets + ["w1", "w2", "w3"]
    text = text.replace(json.dumps(targets, indent=2).replace("\n", "\n  "), json.dumps(new_targets, indent=2).replace("\n", "\n  "))
    if json.loads(text)["target_modules"] != new_targets:
        raise ValueError(f"{case}: could not rewrite target_modules")
    doc["files"]["adapter_config.json"] = text
    doc["safetensors"]["tensors"] = tensors
    doc["derived_from"] = DERIVED[case]
    return doc


def layout(models, case):
    import peft
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    import make_convert_inputs
    from make_hf_layouts import safetensors_header

    base, fields, dtype = CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        base_dir = make_convert_inputs.make_case(models, tmp, base)
        model = AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32)
        torch.manual_seed(0)
        model = peft.get_peft_model(model, peft.LoraConfig(**fields))
        if dtype == "bfloat16":
            model = model.to(torch.bfloat16)
        out = os.path.join(tmp, "adapter")
        model.save_pretrained(out)
        names = sorted(os.listdir(out))
        files = {}
        for name in ("adapter_config.json", "README.md"):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                files[name] = f.read()
        meta, tensors = safetensors_header(os.path.join(out, "adapter_model.safetensors"))
    # the base folder's path is in adapter_config.json and the card: name it by the case instead
    for name, text in files.items():
        files[name] = text.replace(base_dir, base)
    return {"base": base, "peft": peft.__version__, "transformers": transformers.__version__,
            "torch": torch.__version__.split("+")[0], "files": files, "saved_files": names,
            "safetensors": {"metadata": meta, "tensors": tensors}}


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join([*CASES, *DERIVED]))
        return
    if len(args) < 2:
        sys.exit("usage: make_lora_layouts.py MODELS_DIR OUT_DIR [CASE...] | --list")
    models, out, cases = args[0], args[1], args[2:] or [*CASES, *DERIVED]
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    for case in cases:
        if case not in CASES and case not in DERIVED:
            sys.exit(f"unknown case {case!r}; known: {', '.join([*CASES, *DERIVED])}")
        doc = derived_layout(out, case) if case in DERIVED else layout(models, case)
        with open(os.path.join(out, f"{case}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        n = len(doc["safetensors"]["tensors"])
        print(f"{case}: {n} tensors on {doc['base']}", file=sys.stderr)


if __name__ == "__main__":
    main()
