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

- the whole file, byte for byte, against gguf-py's `GGUFWriter` given the expected keys (in order,
  with their types) and tensors (in order, in their output types), as convert_hf_to_gguf.py gives
  them to it;
- the tensor order: the reference's (`ModelBase.index_tensors`: files in name order, names sorted
  within a file; generated tensors first) and the key order (each class's `set_gguf_parameters`,
  with gguf-py's rule that a key written twice keeps its first place).

The other classes `make_hf_llama.py --arch` writes follow their reference classes:
`Qwen2Model` (the Llama names with q/k/v biases, no permutation, `TextModel`'s keys only),
`Qwen3Model` (plus `self_attn.{q,k}_norm` -> `attn_{q,k}_norm`), `Gemma3Model` (its four block
norms, 1 added to every `*norm.weight` in the source's working type -- F16 arithmetic for an F16
tensor, F32 otherwise --, the embedding cut to `tokenizer.json`'s vocabulary plus added tokens,
its key overrides), `Phi3MiniModel` (fused `qkv_proj` -> `attn_qkv` and `gate_up_proj` ->
`ffn_up`, `rope_factors_long`/`short` tensors first and `phi3.rope.scaling.attn_factor` before
`general.type`).

usage: check_convert.py CHECKPOINT_DIR OUT.gguf OUTTYPE LABEL [MODEL_NAME|- [METADATA.json]]
Prints a JSON summary; exits non-zero with the differences on failure.
"""

import json
import math
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
        out[name] = (a.reshape(shape).astype(np.float32), info["dtype"])
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
        part = read_safetensors(os.path.join(d, fn))
        for name in sorted(part):
            tensors[name] = part[name]
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


BLOCKS = {
    "llama": BLOCK,
    "qwen2": BLOCK,
    "qwen3": {**BLOCK, "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm"},
    "gemma3": {**BLOCK, "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
               "post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
               "post_feedforward_layernorm": "post_ffw_norm"},
    "phi3": {"self_attn.qkv_proj": "attn_qkv", "self_attn.o_proj": "attn_output", "mlp.gate_up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"},
}
ARCHS = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2",
         "Qwen3ForCausalLM": "qwen3", "Gemma3ForCausalLM": "gemma3", "Phi3ForCausalLM": "phi3"}


def map_name(hf, arch="llama"):
    base, suffix = hf.rsplit(".", 1)
    assert suffix in ("weight", "bias"), hf
    top = {k.rsplit(".", 1)[0]: v.rsplit(".", 1)[0] for k, v in TOP.items()}
    if base in top:
        return f"{top[base]}.{suffix}"
    parts = base.split(".")
    assert parts[:2] == ["model", "layers"], hf
    return f"blk.{int(parts[2])}.{BLOCKS[arch]['.'.join(parts[3:])]}.{suffix}"


def permute(w, n_head, n_head_kv):
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def bf16_round(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def general_keys(ckpt, expected, model_name=None, override=None, outtype="f32"):
    """The `general.*` keys the reference writes after `general.type`, made by gguf-py's own
    code as `ModelBase.prepare_metadata` calls it: `Metadata.load` on the folder (no model card
    here) with the total parameter count, the folder's name when no name is found, gguf-py's
    `size_label`, then `Metadata.set_gguf_meta_model` on a writer whose keys are read back.
    `model_name` is the reference's `--model-name`, `override` its `--metadata` file. A README.md in
    the folder is its model card. Also returns the default file name the reference gives
    (`gguf.naming_convention`, as `ModelBase.prepare` calls it), without `.gguf`."""
    import gguf
    from pathlib import Path
    shapes = {g: t.shape for g, (t, _) in expected.items()}
    total = int(sum(int(np.prod(s)) for s in shapes.values()))
    m = gguf.Metadata.load(Path(override) if override else None, Path(ckpt), model_name, total)
    if m.name is None:
        m.name = Path(ckpt).name
    if m.size_label is None and total > 0:
        m.size_label = gguf.size_label(total, total, 0, 0)
    w = gguf.GGUFWriter(None, "x")
    m.set_gguf_meta_model(w)
    out = []
    for k, v in w.kv_data[0].items():
        val = v.value
        if v.type == GGUFValueType.ARRAY:
            val = list(val)
        elif v.type == GGUFValueType.FLOAT32:
            # the writer keeps the Python float; the file holds it rounded to f32
            val = float(np.float32(val))
        out.append((k, (v.type, val)))
    output_type = {"f32": "F32", "f16": "F16", "bf16": "BF16", "q8_0": "Q8_0"}[outtype]
    name = gguf.naming_convention(m.name, m.basename, m.finetune, m.version, m.size_label, output_type)
    return [kv for kv in out if kv[0] != "general.architecture"], name


def main():
    ckpt, path, outtype = sys.argv[1:4]
    # argv[4] (a label) is not used; argv[5], if given and not "-", is the --model-name passed to
    # the converter; argv[6], if given, the --metadata file.
    model_name = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] != "-" else None
    override = sys.argv[6] if len(sys.argv) > 6 else None
    with open(os.path.join(ckpt, "config.json")) as f:
        cfg = json.load(f)
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads")
    arch = ARCHS[cfg["architectures"][0]]
    target = {"f32": Q.F32, "f16": Q.F16, "bf16": Q.BF16, "q8_0": Q.Q8_0}[outtype]

    def qtype(g, shape):
        if len(shape) <= 1 or g.endswith("_norm.weight") or not g.endswith(".weight"):
            return Q.F32
        if target == Q.Q8_0 and shape[-1] % 32 != 0:
            return Q.F16
        return target

    expected = {}
    rope = cfg.get("rope_scaling") or {}
    if arch == "phi3" and rope.get("long_factor"):
        for kind in ("long", "short"):
            w = np.array(rope[kind + "_factor"], dtype=np.float32)
            expected[f"rope_factors_{kind}.weight"] = (w, Q.F32)
    n_vocab_real = None
    if arch == "gemma3":
        with open(os.path.join(ckpt, "tokenizer.json")) as f:
            tj = json.load(f)
        n_vocab_real = len(tj["model"]["vocab"]) + len(tj["added_tokens"])
    for hf, (w, src_dtype) in load_checkpoint(ckpt).items():
        if hf.endswith(".rotary_emb.inv_freq"):
            continue
        if arch == "llama":
            if hf.endswith(("q_proj.weight", "q_proj.bias")):
                w = permute(w, n_head, n_head)
            if hf.endswith(("k_proj.weight", "k_proj.bias")):
                w = permute(w, n_head, n_kv)
        if arch == "gemma3":
            if "embed_tokens.weight" in hf:
                w = w[:n_vocab_real]
            if hf.endswith("norm.weight"):
                if src_dtype == "F16":
                    w = (w.astype(np.float16) + np.float16(1.0)).astype(np.float32)
                else:
                    w = w + np.float32(1.0)
        g = map_name(hf, arch)
        expected[g] = (w, qtype(g, w.shape))

    r = GGUFReader(path)
    errors = []
    got_names = [t.name for t in r.tensors]
    if got_names != list(expected):
        errors.append(f"tensor names and order: got {got_names}, expected {list(expected)}")
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
    f32 = lambda x: float(np.float32(x))  # noqa: E731
    ftype = (U32, {"f32": 0, "f16": 1, "bf16": 32, "q8_0": 7}[outtype])
    a = arch
    want = [("general.architecture", (STR, arch))]
    if arch == "phi3":
        scale = cfg["max_position_embeddings"] / cfg["original_max_position_embeddings"]
        attn = math.sqrt(1 + math.log(scale) / math.log(cfg["original_max_position_embeddings"])) if scale > 1 else 1.0
        want.append(("phi3.rope.scaling.attn_factor", (F32, f32(attn))))
    general, default_name = general_keys(ckpt, expected, model_name, override, outtype)
    want += [("general.type", (STR, "model"))] + general
    if arch == "phi3":
        want += [
            ("phi3.context_length", (U32, cfg["max_position_embeddings"])),
            ("phi3.rope.scaling.original_context_length", (U32, cfg["original_max_position_embeddings"])),
            ("phi3.embedding_length", (U32, cfg["hidden_size"])),
            ("phi3.feed_forward_length", (U32, cfg["intermediate_size"])),
            ("phi3.block_count", (U32, cfg["num_hidden_layers"])),
            ("phi3.attention.head_count", (U32, n_head)),
            ("phi3.attention.head_count_kv", (U32, n_kv)),
            ("phi3.attention.layer_norm_rms_epsilon", (F32, f32(cfg["rms_norm_eps"]))),
            ("phi3.rope.dimension_count", (U32, cfg["hidden_size"] // n_head)),
            ("phi3.rope.freq_base", (F32, f32(cfg["rope_theta"]))),
            ("general.file_type", ftype),
            ("phi3.attention.sliding_window", (U32, cfg.get("sliding_window") or 0)),
        ]
    else:
        want += [
            (f"{a}.block_count", (U32, cfg["num_hidden_layers"])),
            (f"{a}.context_length", (U32, cfg["max_position_embeddings"])),
            (f"{a}.embedding_length", (U32, cfg["hidden_size"])),
            (f"{a}.feed_forward_length", (U32, cfg["intermediate_size"])),
            (f"{a}.attention.head_count", (U32, n_head)),
            (f"{a}.attention.head_count_kv", (U32, n_kv if n_kv is not None else n_head)),
            (f"{a}.rope.freq_base", (F32, f32(cfg["rope_theta"]))),
        ]
        if "rope_local_base_freq" in cfg:
            want.append((f"{a}.rope.freq_base_swa", (F32, f32(cfg["rope_local_base_freq"]))))
        want.append((f"{a}.attention.layer_norm_rms_epsilon", (F32, f32(cfg["rms_norm_eps"]))))
        if "head_dim" in cfg:
            want += [(f"{a}.attention.key_length", (U32, cfg["head_dim"])),
                     (f"{a}.attention.value_length", (U32, cfg["head_dim"]))]
        want.append(("general.file_type", ftype))
        if arch == "llama":
            want += [("llama.vocab_size", (U32, cfg["vocab_size"])),
                     ("llama.rope.dimension_count", (U32, cfg.get("head_dim") or cfg["hidden_size"] // n_head))]
        if arch == "gemma3":
            want.append(("gemma3.attention.sliding_window", (U32, cfg["sliding_window"])))
    want.append(("general.quantization_version", (U32, 2)))
    want_kv = dict(want)
    got_order = [k for k in kv]
    if got_order != [k for k, _ in want]:
        errors.append(f"key order: got {got_order}, expected {[k for k, _ in want]}")
    if set(kv) != set(want_kv):
        errors.append(f"keys: got {sorted(kv)}, expected {sorted(want_kv)}")
    for k, (typ, val) in want_kv.items():
        if k in kv and (kv[k][0] != typ or kv[k][1] != val):
            errors.append(f"{k}: got {kv[k][0].name} {kv[k][1]!r}, expected {typ.name} {val!r}")

    # The whole file as gguf-py's GGUFWriter lays it out (what convert_hf_to_gguf.py hands it:
    # the keys in order with their types, then each tensor's data in its output type):
    # byte-identical, header, alignment and padding included.
    same_bytes = None
    if not errors:
        import gguf
        ref_path = path + ".gguf-py"
        w = gguf.GGUFWriter(ref_path, arch)
        for k, (typ, val) in want:
            if k != "general.architecture":
                w.add_key_value(k, val, typ)
        for g, (t, qt) in expected.items():
            src = t.astype(np.float16) if qt == Q.F16 else t.astype(np.float32)
            data = src if qt in (Q.F32, Q.F16) else quantize(t, qt)
            w.add_tensor(g, data, raw_dtype=qt)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(ref_path, "rb") as f1, open(path, "rb") as f2:
            same_bytes = f1.read() == f2.read()
        os.remove(ref_path)
        if not same_bytes:
            errors.append("the file differs from gguf-py's GGUFWriter output of the same keys and tensors")

    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({
        "same_bytes_as_gguf_py_writer": same_bytes,
        "tensors": len(got_names),
        "types": {n: t.tensor_type.name for n, t in zip(got_names, r.tensors)},
        "keys": len(kv),
        "q8_0_max_err": max(max_err.values()) if max_err else None,
        "default_file_name": default_name + ".gguf",
    }))


if __name__ == "__main__":
    main()
