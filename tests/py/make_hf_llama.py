"""Writes a tiny random Llama checkpoint in the layout Hugging Face `transformers` writes with
`save_pretrained` for `LlamaForCausalLM`: `config.json`, the weights as safetensors (through the
`safetensors` package's serializer, with `{"format": "pt"}` metadata), and when sharded,
`model-0000i-of-0000n.safetensors` files plus `model.safetensors.index.json`
(`metadata.total_size`, `weight_map`).

Sizes: hidden 64, 4 query heads and 2 key/value heads (head width 16), 2 layers, feed-forward 80
(so `down_proj` rows are 80 long: not whole Q8_0 blocks), vocabulary 48. Source types: most
weights BF16 (rounded to nearest even from random f32), the norms and `v_proj` F32, `lm_head`
F16. `rotary_emb.inv_freq` buffers are included (converters skip them).

With `--arch`, the same sizes in the layout of another class, as `transformers` names its
tensors: `qwen2` (Qwen2ForCausalLM: biases on q/k/v), `qwen3` (Qwen3ForCausalLM: per-head
`q_norm`/`k_norm`, no biases), `gemma3` (Gemma3ForCausalLM: four norms per block and the head
norms, one of them F16, tied embeddings, and a `tokenizer.json` of 40 + 2 tokens so the
embedding's rows beyond 42 are dropped), `phi3` (Phi3ForCausalLM: fused `qkv_proj` and
`gate_up_proj`, `longrope` scaling with long and short factors).

usage: make_hf_llama.py OUT_DIR [--tied] [--single] [--seed N] [--arch A] [--f8] [--sizes HIDDEN,HEADS,KV_HEADS,LAYERS,FF,VOCAB]
(`--sizes` makes a larger model of the same layout, e.g. to watch the converter's memory.)
"""

import argparse
import json
import os

import numpy as np
from safetensors import TensorSpec, serialize_file

HIDDEN, HEADS, KV_HEADS, LAYERS, FF, VOCAB = 64, 4, 2, 2, 80, 48
HEAD = HIDDEN // HEADS


def bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even), as little-endian uint16."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype("<u2")


def specs(tensors):
    """The serializer's input: what `safetensors.torch` gives it for torch tensors."""
    return {
        n: TensorSpec(dtype=d, shape=list(a.shape), data_ptr=a.ctypes.data, data_len=a.nbytes)
        for n, (d, a) in tensors.items()
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tied", action="store_true", help="tie_word_embeddings: no lm_head")
    ap.add_argument("--single", action="store_true", help="one model.safetensors, no index")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", help="HIDDEN,HEADS,KV_HEADS,LAYERS,FF,VOCAB")
    ap.add_argument("--f8", action="store_true",
                    help="layer 0's down_proj as F8_E4M3 bytes with a weight_scale_inv, as FP8 checkpoints store it")
    ap.add_argument("--arch", default="llama", choices=["llama", "qwen2", "qwen3", "gemma3", "phi3"])
    a = ap.parse_args()
    global HIDDEN, HEADS, KV_HEADS, LAYERS, FF, VOCAB, HEAD
    if a.sizes:
        HIDDEN, HEADS, KV_HEADS, LAYERS, FF, VOCAB = (int(x) for x in a.sizes.split(","))
        HEAD = HIDDEN // HEADS
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)

    def rand(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    # name -> (dtype name as safetensors.torch names it, little-endian array of the stored bits)
    tensors = {}

    def put(name, dtype, x):
        if dtype == "float8_e4m3fn":
            data = np.ascontiguousarray(np.full(x.shape, 0x38, dtype=np.uint8))  # 1.0 in E4M3
        elif dtype == "bfloat16":
            data = bf16_bits(x)
        elif dtype == "float16":
            data = np.ascontiguousarray(x.astype("<f2"))
        else:
            data = np.ascontiguousarray(x.astype("<f4"))
        tensors[name] = (dtype, data)

    arch = a.arch
    if arch == "gemma3":
        a.tied = True
    put("model.embed_tokens.weight", "bfloat16", rand(VOCAB, HIDDEN))
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        put(p + "input_layernorm.weight", "float32", 1.0 + rand(HIDDEN) * 0.1)
        if arch == "phi3":
            put(p + "self_attn.qkv_proj.weight", "bfloat16", rand((HEADS + 2 * KV_HEADS) * HEAD, HIDDEN))
        else:
            put(p + "self_attn.q_proj.weight", "bfloat16", rand(HEADS * HEAD, HIDDEN))
            put(p + "self_attn.k_proj.weight", "bfloat16", rand(KV_HEADS * HEAD, HIDDEN))
            put(p + "self_attn.v_proj.weight", "float32", rand(KV_HEADS * HEAD, HIDDEN))
        if arch == "qwen2":
            put(p + "self_attn.q_proj.bias", "bfloat16", rand(HEADS * HEAD))
            put(p + "self_attn.k_proj.bias", "bfloat16", rand(KV_HEADS * HEAD))
            put(p + "self_attn.v_proj.bias", "float32", rand(KV_HEADS * HEAD))
        if arch in ("qwen3", "gemma3"):
            put(p + "self_attn.q_norm.weight", "float16" if arch == "gemma3" else "bfloat16", rand(HEAD) * 0.1)
            put(p + "self_attn.k_norm.weight", "bfloat16", rand(HEAD) * 0.1)
        put(p + "self_attn.o_proj.weight", "bfloat16", rand(HIDDEN, HEADS * HEAD))
        put(p + "post_attention_layernorm.weight", "float32", 1.0 + rand(HIDDEN) * 0.1)
        if arch == "gemma3":
            put(p + "pre_feedforward_layernorm.weight", "bfloat16", rand(HIDDEN) * 0.1)
            put(p + "post_feedforward_layernorm.weight", "float32", rand(HIDDEN) * 0.1)
        if arch == "phi3":
            put(p + "mlp.gate_up_proj.weight", "bfloat16", rand(2 * FF, HIDDEN))
        else:
            put(p + "mlp.gate_proj.weight", "bfloat16", rand(FF, HIDDEN))
            put(p + "mlp.up_proj.weight", "bfloat16", rand(FF, HIDDEN))
        if a.f8 and i == 0:
            put(p + "mlp.down_proj.weight", "float8_e4m3fn", rand(HIDDEN, FF))
            put(p + "mlp.down_proj.weight_scale_inv", "float32", np.ones((1, 1), dtype=np.float32))
        else:
            put(p + "mlp.down_proj.weight", "bfloat16", rand(HIDDEN, FF))
        if arch == "llama":
            inv = 1.0 / (10000.0 ** (np.arange(0, HEAD, 2, dtype=np.float32) / HEAD))
            put(p + "self_attn.rotary_emb.inv_freq", "float32", inv.astype(np.float32))
    put("model.norm.weight", "float32", 1.0 + rand(HIDDEN) * 0.1)
    if not a.tied:
        put("lm_head.weight", "float16", rand(VOCAB, HIDDEN))

    config = {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": HEAD,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": FF,
        "max_position_embeddings": 256,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "tie_word_embeddings": a.tied,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.46.0",
        "use_cache": True,
        "vocab_size": VOCAB,
    }
    if arch == "qwen2":
        del config["head_dim"], config["mlp_bias"], config["pretraining_tp"], config["attention_bias"]
        config.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2", rms_norm_eps=1e-06,
                      rope_theta=1000000.0, sliding_window=None, use_sliding_window=False, max_window_layers=2)
    elif arch == "qwen3":
        del config["mlp_bias"], config["pretraining_tp"]
        config.update(architectures=["Qwen3ForCausalLM"], model_type="qwen3", rms_norm_eps=1e-06,
                      rope_theta=1000000.0, sliding_window=None, use_sliding_window=False, max_window_layers=2)
    elif arch == "gemma3":
        del config["mlp_bias"], config["pretraining_tp"]
        config.update(architectures=["Gemma3ForCausalLM"], model_type="gemma3_text", rms_norm_eps=1e-06,
                      rope_theta=1000000.0, rope_local_base_freq=10000.0, sliding_window=16,
                      sliding_window_pattern=6, query_pre_attn_scalar=16, final_logit_softcapping=None,
                      attn_logit_softcapping=None, hidden_activation="gelu_pytorch_tanh")
        vocab = {f"t{i}": i for i in range(40)}
        added = [{"id": 40 + j, "content": f"<x{j}>", "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for j in range(2)]
        with open(os.path.join(a.out, "tokenizer.json"), "w") as f:
            json.dump({"version": "1.0", "added_tokens": added, "model": {"type": "BPE", "vocab": vocab, "merges": []}}, f)
    elif arch == "phi3":
        del config["head_dim"], config["mlp_bias"], config["pretraining_tp"], config["attention_bias"]
        n = HEAD // 2
        config.update(architectures=["Phi3ForCausalLM"], model_type="phi3", original_max_position_embeddings=64,
                      sliding_window=128, rope_scaling={
                          "type": "longrope",
                          "long_factor": [round(1.0 + 0.25 * k, 4) for k in range(n)],
                          "short_factor": [round(1.0 + 0.01 * k, 4) for k in range(n)],
                      })
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")

    meta = {"format": "pt"}
    if a.single:
        serialize_file(specs(tensors), os.path.join(a.out, "model.safetensors"), metadata=meta)
        return
    # Two shards, split in name order as save_pretrained splits by size; the index maps each name.
    names = list(tensors)
    half = len(names) // 2
    parts = [names[:half], names[half:]]
    weight_map = {}
    total = 0
    for k, part in enumerate(parts):
        fname = f"model-{k + 1:05d}-of-{len(parts):05d}.safetensors"
        serialize_file(specs({n: tensors[n] for n in part}), os.path.join(a.out, fname), metadata=meta)
        for n in part:
            weight_map[n] = fname
            total += tensors[n][1].nbytes
    index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
