"""Checks a GGUF file converted from a Hugging Face Llama checkpoint, independently of the
converter: reads the checkpoint with numpy (the safetensors layout parsed here: u64 header length,
JSON header, data), applies llama.cpp's documented conversion itself (`convert_hf_to_gguf.py`,
class `LlamaModel`: the tensor name map, `permute` of the Q and K rows by
`reshape(n_head, 2, rows // n_head // 2, cols).swapaxes(1, 2).reshape(rows, cols)` with the query
head count for Q and the key/value head count for K, F32 for 1-D and `*_norm.weight`, the output
type elsewhere, F16 when a Q8_0 row is not whole blocks of 32), reads the GGUF file with gguf-py's
`GGUFReader`, and compares:

- the tensor names (exactly the expected set; no `output.weight` when the embeddings are tied),
  canonical shapes and ggml types;
- the values: F32 exactly; F16 exactly numpy's round-to-nearest-even `astype(float16)`; BF16
  exactly the round-to-nearest-even of the f32 bits; Q8_0 byte-identical to
  `gguf.quants.quantize(expected, Q8_0)`, and dequantized with `gguf.quants.dequantize` within
  half a quantization step of the expected values;
- the metadata keys, their GGUF value types and values (from `config.json`).

usage: check_convert.py CHECKPOINT_DIR OUT.gguf OUTTYPE NAME
Prints a JSON summary; exits non-zero with the differences on failure.
"""

import json
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFReader, GGUFValueType
from gguf.quants import dequantize, quantize


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    data = raw[8 + n :]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        buf = data[start:end]
        shape = info["shape"]
        if info["dtype"] == "F32":
            a = np.frombuffer(buf, dtype="<f4")
        elif info["dtype"] == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise SystemExit(f"{name}: unexpected dtype {info['dtype']}")
        out[name] = a.reshape(shape).astype(np.float32)
    return out


def load_checkpoint(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = sorted(x for x in os.listdir(d) if x.endswith(".safetensors"))
    tensors = {}
    for fn in files:
        tensors.update(read_safetensors(os.path.join(d, fn)))
    return tensors


# Hugging Face name -> GGUF name, as gguf-py's tensor_mapping.py maps them for MODEL_ARCH.LLAMA.
TOP = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
BLOCK = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
}


def map_name(hf):
    if hf in TOP:
        return TOP[hf]
    parts = hf.split(".")
    assert parts[:2] == ["model", "layers"] and parts[-1] == "weight", hf
    return f"blk.{int(parts[2])}.{BLOCK['.'.join(parts[3:-1])]}.weight"


def permute(w, n_head, n_head_kv):
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def bf16_round(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def main():
    ckpt, path, outtype, name = sys.argv[1:5]
    with open(os.path.join(ckpt, "config.json")) as f:
        cfg = json.load(f)
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads")
    target = {"f32": Q.F32, "f16": Q.F16, "bf16": Q.BF16, "q8_0": Q.Q8_0}[outtype]

    expected = {}
    for hf, w in load_checkpoint(ckpt).items():
        if hf.endswith(".rotary_emb.inv_freq"):
            continue
        if hf.endswith("q_proj.weight"):
            w = permute(w, n_head, n_head)
        if hf.endswith("k_proj.weight"):
            w = permute(w, n_head, n_kv)
        g = map_name(hf)
        if w.ndim <= 1 or g.endswith("_norm.weight"):
            t = Q.F32
        elif target == Q.Q8_0 and w.shape[-1] % 32 != 0:
            t = Q.F16
        else:
            t = target
        expected[g] = (w, t)

    r = GGUFReader(path)
    errors = []
    got_names = [t.name for t in r.tensors]
    if sorted(got_names) != sorted(expected):
        errors.append(f"tensor names: got {sorted(got_names)}, expected {sorted(expected)}")
    max_err = {}
    for t in r.tensors:
        if t.name not in expected:
            continue
        w, want_type = expected[t.name]
        shape = [int(d) for d in reversed(t.shape)]  # gguf-py gives ne (fastest first)
        if shape != list(w.shape):
            errors.append(f"{t.name}: shape {shape}, expected {list(w.shape)}")
            continue
        if t.tensor_type != want_type:
            errors.append(f"{t.name}: type {t.tensor_type.name}, expected {want_type.name}")
            continue
        raw = np.asarray(t.data)
        if want_type == Q.F32:
            ok = np.array_equal(raw.reshape(w.shape).view(np.uint32), w.view(np.uint32))
        elif want_type == Q.F16:
            ok = np.array_equal(raw.reshape(w.shape).view(np.uint16), w.astype(np.float16).view(np.uint16))
        elif want_type == Q.BF16:
            mine = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(w.shape)
            ok = np.array_equal(mine.view(np.uint32), bf16_round(w).view(np.uint32))
        else:
            ref = quantize(w, Q.Q8_0)
            ok = np.array_equal(raw.reshape(ref.shape), ref)
            deq = dequantize(raw, Q.Q8_0).reshape(w.shape)
            blocks = w.reshape(-1, 32)
            step = np.abs(blocks).max(axis=1, keepdims=True) / 127.0
            err = np.abs(deq.reshape(-1, 32) - blocks)
            # half a step, plus the rounding of the scale to f16 (at most 127 * 2^-11 steps)
            if not np.all(err <= step * (0.5 + 127 * 2.0**-11) + 1e-7):
                errors.append(f"{t.name}: Q8_0 error beyond half a step")
            max_err[t.name] = float(err.max())
        if not ok:
            errors.append(f"{t.name}: {want_type.name} data differs from the expected conversion")

    kv = {}
    for f in r.fields.values():
        if f.name.startswith("GGUF."):
            continue
        kv[f.name] = (f.types[0], f.contents())
    U32, F32, STR = GGUFValueType.UINT32, GGUFValueType.FLOAT32, GGUFValueType.STRING
    want_kv = {
        "general.architecture": (STR, "llama"),
        "general.type": (STR, "model"),
        "general.name": (STR, name),
        "llama.block_count": (U32, cfg["num_hidden_layers"]),
        "llama.context_length": (U32, cfg["max_position_embeddings"]),
        "llama.embedding_length": (U32, cfg["hidden_size"]),
        "llama.feed_forward_length": (U32, cfg["intermediate_size"]),
        "llama.attention.head_count": (U32, n_head),
        "llama.attention.head_count_kv": (U32, n_kv if n_kv is not None else n_head),
        "llama.rope.freq_base": (F32, float(np.float32(cfg["rope_theta"]))),
        "llama.attention.layer_norm_rms_epsilon": (F32, float(np.float32(cfg["rms_norm_eps"]))),
        "general.file_type": (U32, {"f32": 0, "f16": 1, "bf16": 32, "q8_0": 7}[outtype]),
        "llama.vocab_size": (U32, cfg["vocab_size"]),
        "llama.rope.dimension_count": (U32, cfg["hidden_size"] // n_head),
        "general.quantization_version": (U32, 2),
    }
    if "head_dim" in cfg:
        want_kv["llama.attention.key_length"] = (U32, cfg["head_dim"])
        want_kv["llama.attention.value_length"] = (U32, cfg["head_dim"])
    if set(kv) != set(want_kv):
        errors.append(f"keys: got {sorted(kv)}, expected {sorted(want_kv)}")
    for k, (typ, val) in want_kv.items():
        if k in kv and (kv[k][0] != typ or kv[k][1] != val):
            errors.append(f"{k}: got {kv[k][0].name} {kv[k][1]!r}, expected {typ.name} {val!r}")

    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({
        "tensors": len(got_names),
        "types": {n: t.tensor_type.name for n, t in zip(got_names, r.tensors)},
        "keys": len(kv),
        "q8_0_max_err": max(max_err.values()) if max_err else None,
    }))


if __name__ == "__main__":
    main()
