"""Rebuild the LoRA adapter test inputs without torch or peft, and merge an adapter into its base.

Usage:
  python make_lora_inputs.py MODELS_DIR OUT_DIR [CASE...]   -> OUT_DIR/CASE/ (the adapter) and
                                                              OUT_DIR/bases/BASE/ (its base checkpoint)
  python make_lora_inputs.py --list                          -> the case names (converted ones)
  python make_lora_inputs.py --list-refused                  -> the refused cases, each with the
                                                              AdapterError variant expected
  python make_lora_inputs.py merge BASE_DIR ADAPTER_DIR OUT_DIR [BASE_DIR ADAPTER_DIR OUT_DIR...]

An adapter is rebuilt from its layout, tests/data/lora-layouts/CASE.json (what peft's
save_pretrained wrote, recorded by make_lora_layouts.py): adapter_config.json and README.md byte
for byte, and adapter_model.safetensors with the layout's tensor names, dtypes, shapes, order and
__metadata__, its values seeded (lora_A and lora_B standard normal times 0.05, drawn in the
layout's order, so that the adapter changes the logits; the `base_layer` copies peft saves of
adapted embeddings standard normal times 0.02). The base checkpoint is make_convert_inputs.py's
case of the layout's "base".

`merge` writes the base checkpoint with the adapter merged, as peft's `merge_and_unload` merges it,
in float64 then stored as F32: W + (lora_alpha / r) * B @ A for a linear layer (A: [r, in],
B: [out, r]), and E + (lora_alpha / r) * (B @ A).T for adapted embeddings (lora_embedding_A:
[r, vocab], lora_embedding_B: [dim, r]). Every other file is copied; every tensor of the merged
checkpoint is stored as F32 (the merged values are not BF16 values).
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import make_convert_inputs  # noqa: E402
from make_convert_inputs import check_data_order, stored_bits, write_safetensors  # noqa: E402

LAYOUTS = os.path.join(HERE, "..", "data", "lora-layouts")
# seeds by case (any fixed value; distinct from the base checkpoints')
SEEDS = {"lora-Llama-2-chat": 41, "lora-Qwen2-Instruct": 42, "lora-Qwen3": 43, "lora-Mixtral-Instruct": 44,
         "lora-gemma-2": 45, "lora-Phi-3-mini": 46,
         "lora-Mixtral-experts": 47, "lora-Qwen2-tied-lm_head": 48}


# Cases `gguf convert` refuses (the test `lora_refusals`), by the AdapterError variant it
# returns; convert_lora_to_gguf.py converts them, but llama.cpp refuses to load its output, so they
# are left out of `--list` and of tests/data/lora-refs.json.
REFUSED = {"lora-Qwen2-tied-lm_head": "TiedOutput"}


def cases():
    return sorted(n[:-5] for n in os.listdir(LAYOUTS) if n.endswith(".json"))


def lora_value(name, n_elems, rng):
    scale = 0.02 if ".base_layer." in name else 0.05
    return rng.standard_normal((n_elems,), dtype=np.float32) * scale


def make_adapter(models, out_root, case):
    with open(os.path.join(LAYOUTS, f"{case}.json"), encoding="utf-8") as f:
        layout = json.load(f)
    base_root = os.path.join(out_root, "bases")
    os.makedirs(base_root, exist_ok=True)
    base = make_convert_inputs.make_case(models, base_root, layout["base"])
    d = os.path.join(out_root, case)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    for name, text in layout["files"].items():
        with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    rng = np.random.Generator(np.random.PCG64(SEEDS[case]))
    st = layout["safetensors"]
    tensors, dtypes = {}, {}
    for t in st["tensors"]:
        n = int(np.prod(t["shape"], dtype=np.int64))
        tensors[t["name"]] = stored_bits(lora_value(t["name"], n, rng).reshape(t["shape"]), t["dtype"])
        dtypes[t["name"]] = t["dtype"]
    path = os.path.join(d, "adapter_model.safetensors")
    write_safetensors(path, tensors, dtypes, st["metadata"])
    check_data_order(path, [t["name"] for t in st["tensors"]], case)
    if sorted(os.listdir(d)) != layout["saved_files"]:
        raise ValueError(f"{case}: files {sorted(os.listdir(d))} differ from the layout's {layout['saved_files']}")
    return d, base


def read_safetensors(path):
    """name -> float64 array, and the names in data order."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    out = {}
    for name, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        a, b = v["data_offsets"]
        raw = data[a:b]
        if v["dtype"] == "BF16":
            x = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif v["dtype"] == "F16":
            x = np.frombuffer(raw, dtype="<f2")
        elif v["dtype"] == "F32":
            x = np.frombuffer(raw, dtype="<f4")
        else:
            raise ValueError(f"{path}: {name}: dtype {v['dtype']}")
        out[name] = x.astype(np.float64).reshape(v["shape"])
    return out


def merge(base_dir, adapter_dir, out_dir):
    with open(os.path.join(adapter_dir, "adapter_config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    scale = cfg["lora_alpha"] / cfg["r"]
    lora = read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors"))
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, name))
    weight_files = []
    for name in sorted(os.listdir(base_dir)):
        if name.endswith(".safetensors"):
            weight_files.append(name)
        else:
            shutil.copy(os.path.join(base_dir, name), os.path.join(out_dir, name))
    used = set()
    for wf in weight_files:
        tensors = read_safetensors(os.path.join(base_dir, wf))
        for name, w in tensors.items():
            stem = "base_model.model." + name[: -len(".weight")]
            if f"{stem}.lora_A.weight" in lora:
                a, b = lora[f"{stem}.lora_A.weight"], lora[f"{stem}.lora_B.weight"]
                tensors[name] = w + scale * (b @ a)
                used |= {f"{stem}.lora_A.weight", f"{stem}.lora_B.weight"}
            elif f"{stem}.lora_embedding_A" in lora:
                a, b = lora[f"{stem}.lora_embedding_A"], lora[f"{stem}.lora_embedding_B"]
                tensors[name] = w + scale * (b @ a).T
                used |= {f"{stem}.lora_embedding_A", f"{stem}.lora_embedding_B"}
        arrays = {n: np.ascontiguousarray(t, dtype="<f4") for n, t in tensors.items()}
        write_safetensors(os.path.join(out_dir, wf), arrays, {n: "F32" for n in arrays}, {"format": "pt"})
    left = sorted(n for n in lora if n not in used and ".base_layer." not in n)
    if left:
        raise ValueError(f"adapter tensors without a base tensor: {left}")
    # the base's index still maps every tensor to its file (sizes differ, names do not)
    return out_dir


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join(c for c in cases() if c not in REFUSED))
        return
    if args == ["--list-refused"]:
        print("\n".join(f"{c} {v}" for c, v in sorted(REFUSED.items())))
        return
    if args[:1] == ["merge"] and len(args) >= 4 and (len(args) - 1) % 3 == 0:
        for i in range(1, len(args), 3):
            merge(*args[i:i + 3])
        return
    if len(args) < 2:
        sys.exit("usage: make_lora_inputs.py MODELS_DIR OUT_DIR [CASE...] | --list | --list-refused"
                 " | merge BASE ADAPTER OUT [BASE ADAPTER OUT...]")
    models, out, wanted = args[0], args[1], args[2:] or [c for c in cases() if c not in REFUSED]
    for case in wanted:
        if case not in cases():
            sys.exit(f"unknown case {case!r}; known: {', '.join(cases())}")
        make_adapter(models, out, case)


if __name__ == "__main__":
    main()
