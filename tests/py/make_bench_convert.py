"""A large seeded Llama, Mixtral, gpt-oss (MXFP4) or DeepSeek-V3 (FP8) checkpoint for
scripts/bench-convert.sh.

Usage: python make_bench_convert.py MODELS_DIR OUT_DIR [--arch llama|mixtral|gptoss|deepseek-fp8] [--layers N] [--shard-mb M]

The tokenizer, chat template, generation_config.json and model card are those of
make_convert_inputs.py's `tiny-Llama-2-chat-hf` case (a real SentencePiece tokenizer of 32,000
tokens rebuilt from models/vocab/ggml-vocab-llama-spm.gguf), whatever the architecture.

- `llama` (the default): config.json is a LlamaForCausalLM of TinyLlama-1.1B's shape (hidden
  2048, 32 heads, 4 key/value heads, feed-forward 5632, vocabulary 32,000) with N layers (default
  10: 1.14 GB of BF16).
- `mixtral`: config.json is a MixtralForCausalLM with every field transformers' MixtralConfig
  writes on save_pretrained (transformers 5.24: hidden 1024, 16 heads, 4 key/value heads,
  feed-forward 3584, 8 local experts of which 2 are used per token, vocabulary 32,000, untied
  lm_head) with N layers (default 6: 1.22 GB of BF16). Each expert is its own tensors,
  `model.layers.N.block_sparse_moe.experts.X.{w1,w2,w3}.weight` (`[3584, 1024]`, `[1024, 3584]`,
  `[3584, 1024]`), beside the router `block_sparse_moe.gate.weight` (`[8, 1024]`), as Mixtral's
  checkpoints ship them.
- `gptoss`: a GptOssForCausalLM with gpt-oss-20b's layer shape (hidden 2880, 64 heads of 64,
  8 key/value heads, 32 experts of feed-forward 2880, 4 used; vocabulary 50,257, the GPT-2
  tokenizer of make_convert_inputs.py's `tiny-gpt-oss` case, whose config.json it starts from)
  with N layers (default 2: 1.4 GB), its experts MXFP4 as OpenAI publishes gpt-oss
  (`mlp.experts.{gate_up,down}_proj_{blocks,scales}`, U8, random codes and exponents 118..121),
  everything else BF16, `quantization_config.quant_method = "mxfp4"`.
- `deepseek-fp8`: a DeepseekV3ForCausalLM stored as DeepSeek-V3 ships (`quant_method = "fp8"`,
  `fmt = "e4m3"`, `weight_block_size = [128, 128]`): every linear layer of attention and MLP
  (`q_a_proj`, `q_b_proj`, `kv_a_proj_with_mqa`, `kv_b_proj`, `o_proj`, the dense and the
  experts' `gate/up/down_proj`) F8_E4M3 with an F32 `X_scale_inv` of `[ceil(rows / 128),
  ceil(columns / 128)]` beside it; the router `mlp.gate.weight`, embeddings, lm_head and norms
  BF16, `mlp.gate.e_score_correction_bias` F32. Shape: hidden 2048, 16 heads, q_lora_rank 768,
  kv_lora_rank 512, qk_nope/qk_rope/v head widths 128/64/128, 1 dense layer of feed-forward 5632
  then MoE layers of 32 routed experts of feed-forward 1024 (4 used, 4 groups of which 2
  kept) and 1 shared expert, vocabulary 50,257 with the GPT-2 tokenizer of make_convert_inputs.py's
  `tiny-DeepSeek-V3-FP8` case (whose config.json it starts from), N layers (default 4: 1.12 GB).
  FP8 codes are random finite E4M3 codes (never the NaN codes 0x7f/0xff), scales random in
  [1e-4, 4e-4] (weights of magnitude up to about 0.18).

Tensors come in state-dict order (the embedding, then each layer's modules in their order, then
the final norm and lm_head); the weights are BF16 drawn from numpy's PCG64 (seed 1234), written a
block of rows at a time straight into safetensors shards of at most M MB (default 400), filled in
that order, with model.safetensors.index.json, as save_pretrained lays out a sharded checkpoint;
no more than one block of rows is in memory at once. The same arguments give the same bytes.
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_convert_inputs  # noqa: E402

HIDDEN, HEADS, KV_HEADS, FF, VOCAB = 2048, 32, 4, 5632, 32000
# Mixtral's shape: hidden, heads, key/value heads, feed-forward, local experts, experts per token
MOE_HIDDEN, MOE_HEADS, MOE_KV_HEADS, MOE_FF, MOE_EXPERTS, MOE_USED = 1024, 16, 4, 3584, 8, 2
# gpt-oss-20b's shape: hidden, heads, key/value heads, head width, feed-forward, experts, used
OSS_HIDDEN, OSS_HEADS, OSS_KV_HEADS, OSS_HEAD_DIM, OSS_FF, OSS_EXPERTS, OSS_USED = 2880, 64, 8, 64, 2880, 32, 4
OSS_VOCAB = 50257
# DeepSeek-V3's layout at a smaller width: hidden, heads, q/kv LoRA ranks, head widths (nope, rope,
# v), dense feed-forward, expert feed-forward, routed experts, used, groups, groups kept
DS_HIDDEN, DS_HEADS, DS_Q_RANK, DS_KV_RANK, DS_NOPE, DS_ROPE, DS_V = 2048, 16, 768, 512, 128, 64, 128
DS_FF, DS_MOE_FF, DS_EXPERTS, DS_USED, DS_GROUPS, DS_TOPK_GROUPS, DS_BLOCK = 5632, 1024, 32, 4, 4, 2, 128
DEFAULT_LAYERS = {"llama": 10, "mixtral": 6, "gptoss": 2, "deepseek-fp8": 4}
CASE = "tiny-Llama-2-chat-hf"
ROWS = 256  # rows drawn at a time


def bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even) for finite values well below the maximum."""
    u = x.view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return u.astype("<u2")


def mixtral_config(layers):
    """config.json as transformers 5.24's MixtralForCausalLM.save_pretrained writes it: every
    field of MixtralConfig (`to_json_string(use_diff=True)` keeps them all, being the class's
    own), plus `architectures` and the saved `dtype`."""
    return {
        "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
        "dtype": "bfloat16", "eos_token_id": 2, "head_dim": None, "hidden_act": "silu",
        "hidden_size": MOE_HIDDEN, "initializer_range": 0.02, "intermediate_size": MOE_FF,
        "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": MOE_HEADS,
        "num_experts_per_tok": MOE_USED, "num_hidden_layers": layers, "num_key_value_heads": MOE_KV_HEADS,
        "num_local_experts": MOE_EXPERTS, "output_router_logits": False, "pad_token_id": None,
        "rms_norm_eps": 1e-05, "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
        "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0, "sliding_window": None,
        "tie_word_embeddings": False, "transformers_version": "5.24.0", "use_cache": True,
        "vocab_size": VOCAB,
    }


def mixtral_tensor_list(layers):
    """MixtralForCausalLM's state dict (transformers 4's module order, which the hub's
    checkpoints follow): per layer the attention, the router and the experts in expert order,
    then the two norms."""
    h, hd = MOE_HIDDEN, MOE_HIDDEN // MOE_HEADS
    out = [("model.embed_tokens.weight", (VOCAB, h))]
    for i in range(layers):
        p = f"model.layers.{i}."
        out += [
            (p + "self_attn.q_proj.weight", (MOE_HEADS * hd, h)),
            (p + "self_attn.k_proj.weight", (MOE_KV_HEADS * hd, h)),
            (p + "self_attn.v_proj.weight", (MOE_KV_HEADS * hd, h)),
            (p + "self_attn.o_proj.weight", (h, MOE_HEADS * hd)),
            (p + "block_sparse_moe.gate.weight", (MOE_EXPERTS, h)),
        ]
        for x in range(MOE_EXPERTS):
            e = f"{p}block_sparse_moe.experts.{x}."
            out += [(e + "w1.weight", (MOE_FF, h)), (e + "w2.weight", (h, MOE_FF)), (e + "w3.weight", (MOE_FF, h))]
        out += [(p + "input_layernorm.weight", (h,)), (p + "post_attention_layernorm.weight", (h,))]
    out += [("model.norm.weight", (h,)), ("lm_head.weight", (VOCAB, h))]
    return out


def tensor_list(layers):
    hd = HIDDEN // HEADS
    out = [("model.embed_tokens.weight", (VOCAB, HIDDEN))]
    for i in range(layers):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", (HIDDEN,)),
            (p + "self_attn.q_proj.weight", (HEADS * hd, HIDDEN)),
            (p + "self_attn.k_proj.weight", (KV_HEADS * hd, HIDDEN)),
            (p + "self_attn.v_proj.weight", (KV_HEADS * hd, HIDDEN)),
            (p + "self_attn.o_proj.weight", (HIDDEN, HEADS * hd)),
            (p + "post_attention_layernorm.weight", (HIDDEN,)),
            (p + "mlp.gate_proj.weight", (FF, HIDDEN)),
            (p + "mlp.up_proj.weight", (FF, HIDDEN)),
            (p + "mlp.down_proj.weight", (HIDDEN, FF)),
        ]
    out += [("model.norm.weight", (HIDDEN,)), ("lm_head.weight", (VOCAB, HIDDEN))]
    return out


def gptoss_tensor_list(layers):
    """GptOssForCausalLM with MXFP4 experts, (name, shape, dtype) in name order as the published
    checkpoints' index lists them."""
    h, hd, ff, e = OSS_HIDDEN, OSS_HEAD_DIM, OSS_FF, OSS_EXPERTS
    out = [("lm_head.weight", (OSS_VOCAB, h), "BF16"), ("model.embed_tokens.weight", (OSS_VOCAB, h), "BF16")]
    for i in range(layers):
        p = f"model.layers.{i}."
        out += [
            (p + "input_layernorm.weight", (h,), "BF16"),
            (p + "mlp.experts.down_proj_bias", (e, h), "BF16"),
            (p + "mlp.experts.down_proj_blocks", (e, h, ff // 32, 16), "U8"),
            (p + "mlp.experts.down_proj_scales", (e, h, ff // 32), "U8"),
            (p + "mlp.experts.gate_up_proj_bias", (e, 2 * ff), "BF16"),
            (p + "mlp.experts.gate_up_proj_blocks", (e, 2 * ff, h // 32, 16), "U8"),
            (p + "mlp.experts.gate_up_proj_scales", (e, 2 * ff, h // 32), "U8"),
            (p + "mlp.router.bias", (e,), "BF16"),
            (p + "mlp.router.weight", (e, h), "BF16"),
            (p + "post_attention_layernorm.weight", (h,), "BF16"),
            (p + "self_attn.k_proj.bias", (OSS_KV_HEADS * hd,), "BF16"),
            (p + "self_attn.k_proj.weight", (OSS_KV_HEADS * hd, h), "BF16"),
            (p + "self_attn.o_proj.bias", (h,), "BF16"),
            (p + "self_attn.o_proj.weight", (h, OSS_HEADS * hd), "BF16"),
            (p + "self_attn.q_proj.bias", (OSS_HEADS * hd,), "BF16"),
            (p + "self_attn.q_proj.weight", (OSS_HEADS * hd, h), "BF16"),
            (p + "self_attn.sinks", (OSS_HEADS,), "BF16"),
            (p + "self_attn.v_proj.bias", (OSS_KV_HEADS * hd,), "BF16"),
            (p + "self_attn.v_proj.weight", (OSS_KV_HEADS * hd, h), "BF16"),
        ]
    out += [("model.norm.weight", (h,), "BF16")]
    return sorted(out)


def gptoss_config(cfg, layers):
    """The tiny-gpt-oss case's config.json (as transformers saves GptOssConfig) at gpt-oss-20b's
    layer shape, with `layers` layers and the quantization_config of openai/gpt-oss-20b."""
    cfg = dict(cfg)
    cfg.update({"hidden_size": OSS_HIDDEN, "intermediate_size": OSS_FF, "num_hidden_layers": layers,
                "num_attention_heads": OSS_HEADS, "num_key_value_heads": OSS_KV_HEADS, "head_dim": OSS_HEAD_DIM,
                "num_local_experts": OSS_EXPERTS, "num_experts_per_tok": OSS_USED, "vocab_size": OSS_VOCAB,
                "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * (layers // 2)
                + ["sliding_attention"] * (layers % 2),
                "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                                   "model.embed_tokens", "lm_head"],
                                        "quant_method": "mxfp4"}})
    return cfg


def deepseek_fp8_config(cfg, layers):
    """The tiny-DeepSeek-V3-FP8 case's config.json (as transformers 5.24 saves DeepseekV3Config)
    at the shape above, with `layers` layers and DeepSeek-V3's quantization_config."""
    cfg = dict(cfg)
    cfg.update({"hidden_size": DS_HIDDEN, "num_attention_heads": DS_HEADS, "num_key_value_heads": DS_HEADS,
                "q_lora_rank": DS_Q_RANK, "kv_lora_rank": DS_KV_RANK, "qk_nope_head_dim": DS_NOPE,
                "qk_rope_head_dim": DS_ROPE, "qk_head_dim": DS_NOPE + DS_ROPE, "head_dim": DS_ROPE,
                "v_head_dim": DS_V, "intermediate_size": DS_FF, "moe_intermediate_size": DS_MOE_FF,
                "n_routed_experts": DS_EXPERTS, "n_shared_experts": 1, "num_experts_per_tok": DS_USED,
                "n_group": DS_GROUPS, "topk_group": DS_TOPK_GROUPS, "first_k_dense_replace": 1,
                "num_hidden_layers": layers, "num_nextn_predict_layers": 0, "vocab_size": OSS_VOCAB,
                "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                        "weight_block_size": [DS_BLOCK, DS_BLOCK]}})
    return cfg


def deepseek_fp8_tensor_list(layers):
    """DeepseekV3ForCausalLM with FP8 linear layers, (name, shape, dtype) in name order as
    DeepSeek-V3's index lists them; each F8_E4M3 weight followed by its F32 `_scale_inv`."""
    h, heads, blk = DS_HIDDEN, DS_HEADS, DS_BLOCK
    out = [("lm_head.weight", (OSS_VOCAB, h), "BF16"), ("model.embed_tokens.weight", (OSS_VOCAB, h), "BF16"),
           ("model.norm.weight", (h,), "BF16")]

    def fp8(name, rows, cols):
        out.append((name, (rows, cols), "F8_E4M3"))
        out.append((name + "_scale_inv", (-(-rows // blk), -(-cols // blk)), "F32"))

    def mlp(p, ff):
        fp8(p + "gate_proj.weight", ff, h)
        fp8(p + "up_proj.weight", ff, h)
        fp8(p + "down_proj.weight", h, ff)

    for i in range(layers):
        p = f"model.layers.{i}."
        out += [(p + "input_layernorm.weight", (h,), "BF16"), (p + "post_attention_layernorm.weight", (h,), "BF16"),
                (p + "self_attn.q_a_layernorm.weight", (DS_Q_RANK,), "BF16"),
                (p + "self_attn.kv_a_layernorm.weight", (DS_KV_RANK,), "BF16")]
        fp8(p + "self_attn.q_a_proj.weight", DS_Q_RANK, h)
        fp8(p + "self_attn.q_b_proj.weight", heads * (DS_NOPE + DS_ROPE), DS_Q_RANK)
        fp8(p + "self_attn.kv_a_proj_with_mqa.weight", DS_KV_RANK + DS_ROPE, h)
        fp8(p + "self_attn.kv_b_proj.weight", heads * (DS_NOPE + DS_V), DS_KV_RANK)
        fp8(p + "self_attn.o_proj.weight", h, heads * DS_V)
        if i == 0:
            mlp(p + "mlp.", DS_FF)
            continue
        out += [(p + "mlp.gate.weight", (DS_EXPERTS, h), "BF16"),
                (p + "mlp.gate.e_score_correction_bias", (DS_EXPERTS,), "F32")]
        for x in range(DS_EXPERTS):
            mlp(f"{p}mlp.experts.{x}.", DS_MOE_FF)
        mlp(p + "mlp.shared_experts.", DS_MOE_FF)
    return sorted(out)


def nbytes(shape, dtype="BF16"):
    return {"U8": 1, "F8_E4M3": 1, "F32": 4}.get(dtype, 2) * int(np.prod(shape))


def write_shard(path, tensors, rng):
    """safetensors: u64 header length, JSON header (padded with spaces to 8 bytes), data.
    `tensors`: (name, shape) BF16 or (name, shape, dtype); U8 tensors are MXFP4 blocks (random
    bytes) or scales (random exponents 118..121: values of about 2^-9..2^-4); F8_E4M3 tensors
    random finite codes; F32 tensors FP8 block scales (`_scale_inv`, uniform in [1e-4, 4e-4])
    or DeepSeek's router bias (`e_score_correction_bias`, standard normal × 0.01)."""
    tensors = [t if len(t) == 3 else (*t, "BF16") for t in tensors]
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, shape, dtype in tensors:
        n = nbytes(shape, dtype)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for name, shape, dtype in tensors:
            if dtype == "U8":
                flat = int(np.prod(shape))
                step = ROWS * 65536
                for r in range(0, flat, step):
                    k = min(step, flat - r)
                    if name.endswith("_scales"):
                        f.write(rng.integers(118, 122, size=k, dtype=np.uint8).tobytes())
                    else:
                        f.write(rng.integers(0, 256, size=k, dtype=np.uint8).tobytes())
                continue
            if dtype == "F8_E4M3":
                flat = int(np.prod(shape))
                step = ROWS * 65536
                for r in range(0, flat, step):
                    # 254 finite codes: 0x00..0x7e and 0x80..0xfe
                    c = rng.integers(0, 254, size=min(step, flat - r), dtype=np.uint8)
                    f.write(np.where(c >= 127, (c - 127) | 0x80, c).astype(np.uint8).tobytes())
                continue
            if dtype == "F32":
                if name.endswith("_scale_inv"):
                    x = rng.uniform(1e-4, 4e-4, size=shape).astype("<f4")
                else:
                    x = (rng.standard_normal(shape, dtype=np.float32) * 0.01).astype("<f4")
                f.write(x.tobytes())
                continue
            if len(shape) == 1:
                x = 1.0 + rng.standard_normal(shape, dtype=np.float32) * 0.05
                f.write(bf16_bits(x.astype(np.float32)).tobytes())
                continue
            cols = shape[-1]
            rows = int(np.prod(shape[:-1]))
            for r in range(0, rows, ROWS):
                x = rng.standard_normal((min(ROWS, rows - r), cols), dtype=np.float32)
                x *= 0.02
                f.write(bf16_bits(x).tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("out")
    ap.add_argument("--arch", choices=sorted(DEFAULT_LAYERS), default="llama")
    ap.add_argument("--layers", type=int, help="default: 10 for llama, 6 for mixtral, 2 for gptoss, 4 for deepseek-fp8")
    ap.add_argument("--shard-mb", type=int, default=400)
    a = ap.parse_args()
    if a.layers is None:
        a.layers = DEFAULT_LAYERS[a.arch]
    parent = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(parent, exist_ok=True)
    # the tiny case's folder, then its weights replaced
    tiny_case = {"gptoss": "tiny-gpt-oss", "deepseek-fp8": "tiny-DeepSeek-V3-FP8"}.get(a.arch, CASE)
    tiny = make_convert_inputs.make_case(a.models, parent, tiny_case)
    if os.path.exists(a.out):
        for n in os.listdir(a.out):
            os.remove(os.path.join(a.out, n))
        os.rmdir(a.out)
    os.rename(tiny, a.out)
    os.remove(os.path.join(a.out, "model.safetensors"))
    if a.arch == "mixtral":
        cfg = mixtral_config(a.layers)
        tensors = mixtral_tensor_list(a.layers)
    elif a.arch == "gptoss":
        with open(os.path.join(a.out, "config.json"), encoding="utf-8") as f:
            cfg = gptoss_config(json.load(f), a.layers)
        tensors = gptoss_tensor_list(a.layers)
    elif a.arch == "deepseek-fp8":
        with open(os.path.join(a.out, "config.json"), encoding="utf-8") as f:
            cfg = deepseek_fp8_config(json.load(f), a.layers)
        tensors = deepseek_fp8_tensor_list(a.layers)
    else:
        with open(os.path.join(a.out, "config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        cfg.update({"hidden_size": HIDDEN, "intermediate_size": FF, "num_hidden_layers": a.layers,
                    "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB,
                    "max_position_embeddings": 2048})
        tensors = tensor_list(a.layers)
    make_convert_inputs.dump(os.path.join(a.out, "config.json"), dict(sorted(cfg.items())))

    limit = a.shard_mb * 1000 * 1000
    shards, cur, size = [], [], 0
    for t in tensors:
        if cur and size + nbytes(*t[1:]) > limit:
            shards.append(cur)
            cur, size = [], 0
        cur.append(t)
        size += nbytes(*t[1:])
    shards.append(cur)
    rng = np.random.Generator(np.random.PCG64(1234))
    weight_map = {}
    for i, part in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_shard(os.path.join(a.out, fname), part, rng)
        weight_map.update({t[0]: fname for t in part})
    total = sum(nbytes(*t[1:]) for t in tensors)
    make_convert_inputs.dump(os.path.join(a.out, "model.safetensors.index.json"),
                             {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    print(f"{a.out}: {len(tensors)} tensors, {total:,} bytes in {len(shards)} shards", file=sys.stderr)


if __name__ == "__main__":
    main()
