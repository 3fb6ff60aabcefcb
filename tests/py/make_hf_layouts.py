"""Record how transformers itself saves tiny models of each new architecture: tests/data/hf-layouts/CASE.json.

Usage: python make_hf_layouts.py OUT_DIR [CASE...]      (`--list` prints the case names)

NEEDS TORCH (run with scripts/make-convert-refs.sh's .venv-ref); not run by CI. For each case,
the transformers config class of the family is built with small dimensions (hidden 64, 2 or 4
layers, 4 heads, 2 KV heads, feed-forward 176; MoE: 4 experts, 2 used, expert widths 64 or 96),
every other field at transformers' default except the family's distinctive features, set as in
the released models (Gemma 2's soft-capping and sliding window, SmolLM3's layers without RoPE,
Granite's four multipliers, Qwen2-MoE's shared expert, ...), and the token ids and vocabulary size
of the tokenizer `make_convert_inputs.py` gives the case. `AutoModelForCausalLM.from_config` makes
the model in bfloat16 and `save_pretrained` writes it, as a checkpoint on the Hub is written.

The layout records what was written, not the random weights:
  {"class", "transformers", "torch",
   "files": {"config.json": TEXT, "generation_config.json": TEXT},   exactly as written
   "saved_files": [every file name save_pretrained wrote, sorted],
   "safetensors": [{"file", "metadata": the header's __metadata__,
                    "tensors": [{"name", "dtype", "shape"}] in the order of their data}],
   "index": the text of model.safetensors.index.json, or null when not sharded}
`make_convert_inputs.py` (numpy only) rebuilds a checkpoint from it with seeded values.
"""
import json
import os
import struct
import sys
import tempfile

# name -> (config class, config fields). Vocabulary sizes and token ids are those of the
# tokenizer make_convert_inputs.py builds for the case (its LAYOUT_CASES).
SMALL = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
         "intermediate_size": 176}
CASES = {
    # Mixtral: llama.cpp's SentencePiece vocabulary (Mistral's), experts in the MLP's width
    "tiny-Mixtral-Instruct": ("MixtralConfig", {**SMALL, "vocab_size": 32000, "bos_token_id": 1, "eos_token_id": 2,
                                                "num_local_experts": 4, "num_experts_per_tok": 2}),
    # Qwen1.5-MoE / Qwen2-MoE: Qwen2's BPE vocabulary, routed experts of 64 and a shared expert of 96
    # with its sigmoid gate
    "tiny-Qwen2-MoE": ("Qwen2MoeConfig", {**SMALL, "vocab_size": 151936, "bos_token_id": 151643,
                                          "eos_token_id": 151643, "num_experts": 4, "num_experts_per_tok": 2,
                                          "moe_intermediate_size": 64, "shared_expert_intermediate_size": 96}),
    # Qwen3-MoE: Qwen2's BPE vocabulary, q/k norms, top-k weights renormalised as released
    "tiny-Qwen3-MoE": ("Qwen3MoeConfig", {**SMALL, "vocab_size": 151936, "bos_token_id": 151643,
                                          "eos_token_id": 151645, "head_dim": 16, "num_experts": 4,
                                          "num_experts_per_tok": 2, "moe_intermediate_size": 64,
                                          "norm_topk_prob": True}),
    # OLMo 2: GPT-2's BPE vocabulary (50,257 tokens) in the default padded vocab_size 50,304,
    # post-norms and q/k norms over the whole projection
    "tiny-OLMo-2": ("Olmo2Config", {**SMALL, "vocab_size": 50304, "pad_token_id": 50256, "eos_token_id": 50256}),
    # Gemma 2: Gemma 3's SentencePiece vocabulary; attention and final soft-capping at the
    # defaults (50, 30), alternating sliding (window 6: shorter than the logits test's 12
    # positions) and full layers, query scale 1/sqrt(head_dim) as the released 2B/9B
    "tiny-gemma-2": ("Gemma2Config", {**SMALL, "vocab_size": 262144, "head_dim": 16, "query_pre_attn_scalar": 16,
                                      "sliding_window": 6}),
    # SmolLM3: Llama 3's BPE vocabulary; 4 layers so the default no_rope_layer_interval (4)
    # leaves layer 3 without RoPE
    "tiny-SmolLM3": ("SmolLM3Config", {**SMALL, "num_hidden_layers": 4, "vocab_size": 128256}),
    # Granite 3: the refact BPE vocabulary (StarCoder's family, as Granite's), the multipliers of
    # granite-3.0-2b-instruct, tied embeddings
    "tiny-granite-3": ("GraniteConfig", {**SMALL, "vocab_size": 49216, "bos_token_id": 0, "eos_token_id": 0,
                                         "pad_token_id": 0, "tie_word_embeddings": True,
                                         "embedding_multiplier": 12.0, "residual_multiplier": 0.22,
                                         "attention_multiplier": 0.015625, "logits_scaling": 8.0}),
    # GLM-4-0414: Qwen2's BPE vocabulary with <|user|> (which llama.cpp's converter looks up) in
    # a padding slot; fused gate_up_proj, attention biases, half-rotary heads (the default)
    "tiny-GLM-4": ("Glm4Config", {**SMALL, "vocab_size": 151936, "head_dim": 16, "pad_token_id": 151643,
                                  "eos_token_id": [151643, 151646]}),
    # DeepSeek-V3: GPT-2's BPE vocabulary (llama.cpp's deepseek-llm one, rebuilt, is not
    # recognised by the converter's pre-tokenizer check); multi-head latent attention with both
    # low-rank projections, the first layer dense, then 4 routed experts of 64 in 2 groups (1
    # chosen) with sigmoid scores and a shared expert
    # OLMoE: not a built-in architecture; examples/src/olmoe.rs converts it with the public API.
    # GPT-2's BPE vocabulary in OLMo's padded size, experts of 64, q/k norms over the projections
    "tiny-OLMoE": ("OlmoeConfig", {**SMALL, "intermediate_size": 64, "vocab_size": 50304, "pad_token_id": 50256,
                                   "eos_token_id": 50256, "num_experts": 4, "num_experts_per_tok": 2}),
    "tiny-DeepSeek-V3": ("DeepseekV3Config", {**SMALL, "vocab_size": 50257, "bos_token_id": 50256,
                                              "eos_token_id": 50256, "num_key_value_heads": 4, "q_lora_rank": 48, "kv_lora_rank": 32,
                                              "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16,
                                              "first_k_dense_replace": 1, "n_routed_experts": 4,
                                              "num_experts_per_tok": 2, "n_group": 2, "topk_group": 1,
                                              "moe_intermediate_size": 64, "n_shared_experts": 1}),
    # DeepSeek-V2-Lite: the same converter class as V3 (llama.cpp's DeepseekV2Model); the query
    # without its low-rank projection (q_lora_rank null), 2 shared experts, softmax routing
    # without groups, and V2-Lite's YaRN RoPE parameters (factor 40, mscale 0.707); V2-Lite's 27
    # layers, as llama.cpp knows a model without q_lora_rank by its layer count (26 or 27)
    "tiny-DeepSeek-V2-Lite": ("DeepseekV2Config", {**SMALL, "num_hidden_layers": 27, "vocab_size": 50257, "bos_token_id": 50256,
                                                   "eos_token_id": 50256, "num_key_value_heads": 4, "q_lora_rank": None,
                                                   "kv_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
                                                   "v_head_dim": 16, "first_k_dense_replace": 1, "n_routed_experts": 4,
                                                   "num_experts_per_tok": 2, "moe_intermediate_size": 64,
                                                   "n_shared_experts": 2, "rope_parameters": {
                                                       "rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0,
                                                       "original_max_position_embeddings": 4096, "beta_fast": 32.0,
                                                       "beta_slow": 1.0, "mscale": 0.707, "mscale_all_dim": 0.707}}),
    # gpt-oss: GPT-2's BPE vocabulary; fused expert tensors as transformers stores them (bfloat16,
    # not the released MXFP4), expert width 96, attention sinks and biases, alternating sliding
    # (window 6: shorter than the logits test's 12 positions) and full layers, YaRN RoPE (default)
    "tiny-gpt-oss": ("GptOssConfig", {**SMALL, "intermediate_size": 96, "vocab_size": 50257, "head_dim": 16,
                                      "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 6,
                                      "eos_token_id": 50256, "pad_token_id": 50256}),
}
DEEPSEEK_V3 = CASES["tiny-DeepSeek-V3"][1]
QWEN3 = {**SMALL, "vocab_size": 151936, "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 16}

# Pre-quantized FP8 checkpoints: name -> (config class, config fields, FP8 format, weight_block_size).
# The model is made and saved as above (bfloat16), then every 2-D weight of the decoder layers but
# the norms and the MoE router is quantized as DeepSeek quantizes its releases (DeepSeek-V3's
# `inference/kernel.py` `weight_quant`, whose inverse its `weight_dequant` is): per block of
# weight_block_size (rows, columns) of the weight, scale = max |x| / (the format's largest value),
# the weight stored as x / scale rounded to the format (torch's float8 cast: nearest, ties to
# even) and the scale as `{name}_scale_inv` (float32, one per block, the edge blocks covering what
# is left); config.json gets DeepSeek's quantization_config with the block size. Block sizes are
# small and do not divide the tiny dimensions, so that the edge blocks are partial.
FP8_CASES = {
    # DeepSeek-V3 as published (e4m3), with its YaRN RoPE parameters (factor 40, mscale 1)
    "tiny-DeepSeek-V3-FP8": ("DeepseekV3Config", {**DEEPSEEK_V3, "rope_parameters": {
        "rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "original_max_position_embeddings": 4096,
        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0}}, "e4m3", [24, 40]),
    # a dense Qwen3 in the other FP8 format, e5m2
    "tiny-Qwen3-FP8": ("Qwen3Config", QWEN3, "e5m2", [32, 48]),
}


def fp8_quantize(d, fmt, block):
    """Quantizes the checkpoint saved in `d` in place (see FP8_CASES)."""
    import torch
    from safetensors.torch import load_file, save_file

    dtype = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[fmt]
    fmax = torch.finfo(dtype).max
    br, bc = block
    for name in sorted(os.listdir(d)):
        if not name.endswith(".safetensors"):
            continue
        path = os.path.join(d, name)
        meta, _ = safetensors_header(path)
        tensors = load_file(path)
        out = {}
        for k, x in tensors.items():
            quantized = (k.startswith("model.layers.") and k.endswith(".weight") and x.dim() == 2
                         and "norm" not in k and not k.endswith("mlp.gate.weight"))
            if not quantized:
                out[k] = x
                continue
            r, c = x.shape
            sr, sc = -(-r // br), -(-c // bc)
            pad = torch.zeros(sr * br, sc * bc, dtype=torch.float32)
            pad[:r, :c] = x.float()
            blocks = pad.view(sr, br, sc, bc)
            scale = blocks.abs().amax(dim=(1, 3)) / fmax
            scale = torch.where(scale > 0, scale, torch.ones_like(scale))
            q = (blocks / scale[:, None, :, None]).view(sr * br, sc * bc)[:r, :c]
            out[k] = q.to(dtype).contiguous()
            out[k + "_scale_inv"] = scale.contiguous()
        save_file(out, path, metadata=meta)
    path = os.path.join(d, "config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["quantization_config"] = {"activation_scheme": "dynamic", "fmt": fmt, "quant_method": "fp8",
                                  "weight_block_size": list(block)}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def safetensors_header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    meta = header.pop("__metadata__", None)
    ordered = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    return meta, [{"name": k, "dtype": v["dtype"], "shape": v["shape"]} for k, v in ordered]


def layout(case):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    fp8 = None
    if case in FP8_CASES:
        cls_name, fields, *fp8 = FP8_CASES[case]
    else:
        cls_name, fields = CASES[case]
    cfg = getattr(transformers, cls_name)(**fields)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d)
        if fp8:
            fp8_quantize(d, *fp8)
        names = sorted(os.listdir(d))
        files = {}
        for name in ("config.json", "generation_config.json"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                files[name] = f.read()
        index = None
        if "model.safetensors.index.json" in names:
            with open(os.path.join(d, "model.safetensors.index.json"), encoding="utf-8") as f:
                index = f.read()
        shards = []
        for name in names:
            if name.endswith(".safetensors"):
                meta, tensors = safetensors_header(os.path.join(d, name))
                shards.append({"file": name, "metadata": meta, "tensors": tensors})
    return {"class": type(model).__name__, "transformers": transformers.__version__,
            "torch": torch.__version__.split("+")[0], "files": files, "saved_files": names,
            "safetensors": shards, "index": index}


def main():
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join([*CASES, *FP8_CASES]))
        return
    if not args:
        sys.exit("usage: make_hf_layouts.py OUT_DIR [CASE...] | --list")
    out, cases = args[0], args[1:] or [*CASES, *FP8_CASES]
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    for case in cases:
        if case not in CASES and case not in FP8_CASES:
            sys.exit(f"unknown case {case!r}; known: {', '.join([*CASES, *FP8_CASES])}")
        doc = layout(case)
        with open(os.path.join(out, f"{case}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        n = sum(len(s["tensors"]) for s in doc["safetensors"])
        print(f"{case}: {doc['class']}, {n} tensors in {len(doc['safetensors'])} file(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
