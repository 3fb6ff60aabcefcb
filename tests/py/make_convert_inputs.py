"""Tiny seeded Hugging Face checkpoints, one per architecture of the converter references, with real tokenizers.

Usage: python make_convert_inputs.py MODELS_DIR OUT_DIR [CASE...]

MODELS_DIR is the repository's models/ folder (llama.cpp's vocabularies in models/vocab/, and
models/gemma-3-270m-q4_k_m.gguf for Gemma 3's tokenizer); each case is written to OUT_DIR/CASE/
(all cases when none is named). `--list` prints the case names.

Each case is a checkpoint folder as `save_pretrained` lays it out: config.json (the fields the real
model family's config has, with small dimensions: hidden 64, 2 layers), model.safetensors (or two
shards with model.safetensors.index.json), generation_config.json, the tokenizer rebuilt from the
GGUF vocabulary by hf_tokenizer_from_gguf.py, a chat template in tokenizer_config.json (named
templates for one case) and for some cases a model card README.md with front matter. Weights are
BF16 (as the real checkpoints store them), drawn from numpy's PCG64 with a fixed seed per case.
Feed-forward widths are 176 (not a multiple of 32), so every down projection has rows that are
not whole Q8_0 blocks, while the other matrices' rows (64 or the head width) are.

Cases of LAYOUT_CASES come from how transformers itself saves the family: a layout
tests/data/hf-layouts/CASE.json, recorded with torch by make_hf_layouts.py, gives config.json and
generation_config.json (written here byte for byte as transformers wrote them) and the safetensors
files (names, dtypes, shapes, order, `__metadata__`, index when sharded), filled here with seeded
values: norm weights around 1 (around 0 for Gemma, whose norms store weight - 1), everything else
normal with standard deviation 0.02, drawn in the layout's order. A pre-quantized layout (FP8
weights `X` with `X_scale_inv` beside them, `quantization_config.weight_block_size`) gets such
values for `X` too, quantized here with numpy as make_hf_layouts.py quantizes with torch
(fp8_blocks: block scales, the nearest FP8 value, ties to even); its scales draw no values.

A layout file may instead name the case it is derived from (`derived_from`) and how
(`derivation`): `mxfp4-experts` is the base case with its experts quantized to MXFP4 as OpenAI
publishes gpt-oss (mxfp4_experts below), made here, without torch, from the base case's values.

The output is byte-for-byte the same on every run and machine with the pinned packages
(scripts/setup.sh): tests/data/convert-refs.json records the sha256 of every file, and the test
`convert_refs` regenerates them and compares. Needs numpy, safetensors and what
hf_tokenizer_from_gguf.py needs; no torch.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np
from safetensors import TensorSpec, serialize_file

HERE = os.path.dirname(os.path.abspath(__file__))

LLAMA2_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set system = messages[0]['content'] %}"
    "{% set messages = messages[1:] %}{% endif %}"
    "{% for message in messages %}{% if message['role'] == 'user' %}"
    "{% if loop.first and system is defined %}{{ bos_token + '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' + message['content'].strip() + ' [/INST]' }}"
    "{% else %}{{ bos_token + '[INST] ' + message['content'].strip() + ' [/INST]' }}{% endif %}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'].strip() + ' ' + eos_token }}{% endif %}{% endfor %}"
)
LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)
MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}"
)
MISTRAL_TOOL_TEMPLATE = (
    "{{ bos_token }}{% if tools %}{{ '[AVAILABLE_TOOLS] ' + (tools | tojson) + '[/AVAILABLE_TOOLS]' }}{% endif %}"
    "{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'tool' %}{{ '[TOOL_RESULTS] ' + message['content'] + '[/TOOL_RESULTS]' }}"
    "{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}"
)
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)
PHI3_TEMPLATE = (
    "{% for message in messages %}{{ '<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>' + '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' + '\\n' }}{% else %}{{ eos_token }}{% endif %}"
)

H, LAYERS, FF = 64, 2, 176

# name, architecture, vocabulary source (relative to MODELS_DIR), seed
CASES = {
    "tiny-Llama-2-chat-hf": ("llama2", "vocab/ggml-vocab-llama-spm.gguf", 11),
    "tiny-Llama-3.2-Instruct": ("llama3", "vocab/ggml-vocab-llama-bpe.gguf", 12),
    "tiny-Mistral-Instruct-v0.1": ("mistral", "vocab/ggml-vocab-llama-spm.gguf", 13),
    "tiny-Qwen2-Instruct": ("qwen2", "vocab/ggml-vocab-qwen2.gguf", 14),
    "tiny-Qwen3": ("qwen3", "vocab/ggml-vocab-qwen2.gguf", 15),
    "tiny-gemma-3-it": ("gemma3", "gemma-3-270m-q4_k_m.gguf", 16),
    "tiny-Phi-3-mini-128k-instruct": ("phi3", "vocab/ggml-vocab-phi-3.gguf", 17),
}

# Checkpoints laid out as transformers saves them (tests/data/hf-layouts/CASE.json):
# vocabulary source (relative to MODELS_DIR), seed, chat template, tokenizer edit
LAYOUT_CASES = {
    "tiny-Mixtral-Instruct": ("vocab/ggml-vocab-llama-spm.gguf", 21, "mistral", None),
    "tiny-Qwen2-MoE": ("vocab/ggml-vocab-qwen2.gguf", 22, "chatml", None),
    "tiny-Qwen3-MoE": ("vocab/ggml-vocab-qwen2.gguf", 23, "chatml", None),
    "tiny-OLMo-2": ("vocab/ggml-vocab-gpt-2.gguf", 24, None, None),
    "tiny-gemma-2": ("gemma-3-270m-q4_k_m.gguf", 25, "gemma", None),
    # SmolLM3's tokenizer is Llama 3's
    "tiny-SmolLM3": ("vocab/ggml-vocab-llama-bpe.gguf", 26, "chatml", "llama3"),
    "tiny-granite-3": ("vocab/ggml-vocab-refact.gguf", 27, None, None),
    # llama.cpp's GLM-4 vocabulary code looks up <|endoftext|> and <|user|> among the added
    # tokens; Qwen2's vocabulary has the first, the second takes its first padding slot
    "tiny-GLM-4": ("vocab/ggml-vocab-qwen2.gguf", 28, None, "glm4"),
    "tiny-OLMoE": ("vocab/ggml-vocab-gpt-2.gguf", 31, None, None),
    "tiny-DeepSeek-V3": ("vocab/ggml-vocab-gpt-2.gguf", 29, None, None),
    "tiny-gpt-oss": ("vocab/ggml-vocab-gpt-2.gguf", 30, None, None),
    "tiny-DeepSeek-V2-Lite": ("vocab/ggml-vocab-gpt-2.gguf", 34, None, None),
    # pre-quantized FP8 (make_hf_layouts.py's FP8_CASES; values quantized here by fp8_blocks)
    "tiny-DeepSeek-V3-FP8": ("vocab/ggml-vocab-gpt-2.gguf", 32, None, None),
    "tiny-Qwen3-FP8": ("vocab/ggml-vocab-qwen2.gguf", 33, "chatml", None),
}
# Cases made from another case (their tests/data/hf-layouts/CASE.json names the base case and the
# derivation, see the module docs)
DERIVED_CASES = ["tiny-gpt-oss-mxfp4"]
LAYOUTS = os.path.join(HERE, "..", "data", "hf-layouts")

CARDS = {
    "llama2": (
        "---\nlanguage:\n- en\nlicense: llama2\npipeline_tag: text-generation\ntags:\n- facebook\n- meta\n"
        "- pytorch\n- llama\n- llama-2\nbase_model: meta-llama/Llama-2-7b-hf\n---\n"
        "# Tiny Llama 2 chat\n\nRandom weights in the layout of Llama 2 chat, for converter tests.\n"
    ),
    "qwen2": (
        "---\nlicense: apache-2.0\nlicense_link: https://huggingface.co/Qwen/Qwen2-0.5B-Instruct/blob/main/LICENSE\n"
        "language:\n- en\npipeline_tag: text-generation\ntags:\n- chat\nbase_model:\n- Qwen/Qwen2-0.5B\n"
        "datasets:\n- HuggingFaceH4/ultrachat_200k\n---\n# Tiny Qwen2 Instruct\n\nRandom weights.\n"
    ),
    "gemma3": (
        "---\nlicense: gemma\nlibrary_name: transformers\npipeline_tag: text-generation\n"
        "base_model: google/gemma-3-270m\ntags:\n- gemma3\n- gemma\n- google\n---\n# Tiny Gemma 3 it\n"
    ),
}


def bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even), as little-endian uint16."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype("<u2")


SAFETENSORS_DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "U8": "uint8",
                      "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}

# (exponent bits, mantissa bits, largest finite code) of the FP8 formats, as torch defines
# float8_e4m3fn (no infinities; 0x7f is NaN) and float8_e5m2 (IEEE-like; 0x7c is infinity)
FP8_FORMATS = {"F8_E4M3": (4, 3, 0x7E), "F8_E5M2": (5, 2, 0x7B)}


def fp8_values(dtype):
    """The non-negative finite values of an FP8 format, by code (ascending)."""
    e_bits, m_bits, top = FP8_FORMATS[dtype]
    bias = 2 ** (e_bits - 1) - 1
    codes = np.arange(top + 1)
    e, m = codes >> m_bits, (codes & ((1 << m_bits) - 1)) / 2.0 ** m_bits
    return np.where(e == 0, m * 2.0 ** (1 - bias), (1 + m) * 2.0 ** (e - bias))


def to_fp8(x, dtype):
    """float32 values -> FP8 codes (uint8): the nearest finite value, ties to the even code (as
    torch's float8 cast rounds within the format's range; beyond it, the largest value)."""
    vals = fp8_values(dtype)
    a = np.minimum(np.abs(x).astype(np.float64), vals[-1])
    i = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    lo, hi = a - vals[i - 1], vals[i] - a
    code = np.where((lo > hi) | ((lo == hi) & (i % 2 == 0)), i, i - 1)
    return (code | (np.signbit(x) << 7)).astype(np.uint8)


def fp8_blocks(x, dtype, block):
    """A 2-D float32 weight quantized as DeepSeek quantizes its releases (make_hf_layouts.py's
    FP8_CASES): per block of `block` = (rows, columns), scale = max |x| / the format's largest
    value (1 for a block of zeros), codes of x / scale. Returns (codes, float32 scales)."""
    (r, c), (br, bc) = x.shape, block
    sr, sc = -(-r // br), -(-c // bc)
    pad = np.zeros((sr * br, sc * bc), dtype=np.float32)
    pad[:r, :c] = x
    blocks = pad.reshape(sr, br, sc, bc)
    scale = (np.abs(blocks).max(axis=(1, 3)) / np.float32(fp8_values(dtype)[-1])).astype(np.float32)
    scale = np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)
    q = (blocks / scale[:, None, :, None]).astype(np.float32).reshape(sr * br, sc * bc)[:r, :c]
    return to_fp8(q, dtype), scale


def write_safetensors(path, tensors, dtypes=None, metadata=None):
    """Writes `tensors` (name -> little-endian array of the stored bits); dtypes by name,
    safetensors' spelling (BF16 when not given)."""
    specs = {
        n: TensorSpec(dtype=SAFETENSORS_DTYPES[(dtypes or {}).get(n, "BF16")], shape=list(a.shape),
                      data_ptr=a.ctypes.data, data_len=a.nbytes)
        for n, a in tensors.items()
    }
    serialize_file(specs, path, metadata={"format": "pt"} if metadata is None else metadata)


def dump(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def config_for(arch, vocab, tok_cfg):
    """config.json of the real model family, at small sizes."""
    def tid(name):
        tok = tok_cfg.get(name)
        ids = tok_cfg["_ids"]
        return ids.get(tok) if tok is not None else None

    common = {
        "hidden_size": H, "intermediate_size": FF, "num_hidden_layers": LAYERS, "vocab_size": vocab,
        "torch_dtype": "bfloat16", "transformers_version": "4.57.1", "bos_token_id": tid("bos_token"),
        "eos_token_id": tid("eos_token"),
    }
    if arch == "llama2":
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 4096,
                "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None, "attention_bias": False,
                "tie_word_embeddings": False, "initializer_range": 0.02, "pretraining_tp": 1,
                "use_cache": True, **common}
    if arch == "llama3":
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
                "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                 "original_max_position_embeddings": 8192, "rope_type": "llama3"},
                "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": True,
                "initializer_range": 0.02, "pretraining_tp": 1, "use_cache": True,
                **common, "eos_token_id": [128001, 128008, 128009]}
    if arch == "mistral":
        return {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 1, "max_position_embeddings": 32768,
                "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "sliding_window": 4096,
                "tie_word_embeddings": False, "initializer_range": 0.02, "use_cache": True, **common}
    if arch == "qwen2":
        return {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 32768,
                "max_window_layers": 24, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                "sliding_window": 32768, "use_sliding_window": False, "tie_word_embeddings": True,
                "initializer_range": 0.02, "use_cache": True, "attention_dropout": 0.0, **common,
                "bos_token_id": 151643, "eos_token_id": 151645}
    if arch == "qwen3":
        return {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                "max_position_embeddings": 40960, "max_window_layers": 28, "rms_norm_eps": 1e-6,
                "rope_theta": 1000000.0, "rope_scaling": None, "sliding_window": None,
                "use_sliding_window": False, "attention_bias": False, "tie_word_embeddings": True,
                "initializer_range": 0.02, "use_cache": True, "attention_dropout": 0.0, **common,
                "bos_token_id": 151643, "eos_token_id": 151645}
    if arch == "gemma3":
        return {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                "hidden_activation": "gelu_pytorch_tanh", "num_attention_heads": 4, "num_key_value_heads": 1,
                "head_dim": 32, "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
                "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": None,
                "query_pre_attn_scalar": 32, "sliding_window": 512, "_sliding_window_pattern": 6,
                "layer_types": ["sliding_attention", "full_attention"], "attn_logit_softcapping": None,
                "final_logit_softcapping": None, "attention_bias": False, "use_bidirectional_attention": False,
                "tie_word_embeddings": True, "initializer_range": 0.02, "use_cache": True, **common,
                "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 1}
    if arch == "phi3":
        half = (H // 4) // 2
        return {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_act": "silu",
                "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 131072,
                "original_max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                "rope_scaling": {"type": "longrope",
                                 "long_factor": [round(1.0 + 0.25 * i * i, 4) for i in range(half)],
                                 "short_factor": [round(1.0 + 0.01 * i, 4) for i in range(half)]},
                "sliding_window": 262144, "embd_pdrop": 0.0, "resid_pdrop": 0.0, "attention_dropout": 0.0,
                "tie_word_embeddings": False, "initializer_range": 0.02, "use_cache": True, **common,
                "pad_token_id": 32000, "eos_token_id": 32000}
    raise ValueError(arch)


def weights(arch, cfg, rng):
    """The checkpoint's tensors in Hugging Face names, as bf16 bit arrays, canonical shapes."""
    V, heads, kv = cfg["vocab_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // heads
    out = {}

    def mat(name, *shape):
        out[name] = bf16_bits(rng.standard_normal(shape, dtype=np.float32) * 0.02)

    def norm(name, n, around=1.0):
        out[name] = bf16_bits(around + rng.standard_normal((n,), dtype=np.float32) * 0.05)

    mat("model.embed_tokens.weight", V, H)
    # Gemma's norms store (weight - 1): their values sit around zero
    norm_center = 0.0 if arch == "gemma3" else 1.0
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        norm(p + "input_layernorm.weight", H, norm_center)
        norm(p + "post_attention_layernorm.weight", H, norm_center)
        if arch == "phi3":
            mat(p + "self_attn.qkv_proj.weight", heads * hd + 2 * kv * hd, H)
            mat(p + "self_attn.o_proj.weight", H, heads * hd)
            mat(p + "mlp.gate_up_proj.weight", 2 * FF, H)
            mat(p + "mlp.down_proj.weight", H, FF)
            continue
        mat(p + "self_attn.q_proj.weight", heads * hd, H)
        mat(p + "self_attn.k_proj.weight", kv * hd, H)
        mat(p + "self_attn.v_proj.weight", kv * hd, H)
        mat(p + "self_attn.o_proj.weight", H, heads * hd)
        if arch == "qwen2":
            mat(p + "self_attn.q_proj.bias", heads * hd)
            mat(p + "self_attn.k_proj.bias", kv * hd)
            mat(p + "self_attn.v_proj.bias", kv * hd)
        if arch in ("qwen3", "gemma3"):
            norm(p + "self_attn.q_norm.weight", hd, norm_center)
            norm(p + "self_attn.k_norm.weight", hd, norm_center)
        if arch == "gemma3":
            norm(p + "pre_feedforward_layernorm.weight", H, norm_center)
            norm(p + "post_feedforward_layernorm.weight", H, norm_center)
        mat(p + "mlp.gate_proj.weight", FF, H)
        mat(p + "mlp.up_proj.weight", FF, H)
        mat(p + "mlp.down_proj.weight", H, FF)
    norm("model.norm.weight", H, norm_center)
    if not cfg["tie_word_embeddings"]:
        mat("lm_head.weight", V, H)
    return out


def llama3_tokenizer(d, tj):
    """Llama 3's tokenizer.json (`tj`, rewritten in folder `d`) from the one rebuilt from llama-bpe."""
    # Llama 3's tokenizer.json matches a whole word in the vocabulary before merging
    # (`ignore_merges`), which a GGUF does not record
    tj["model"]["ignore_merges"] = True
    # and it starts every text with <|begin_of_text|>, which the converter's check text
    # encoding includes
    bos = "<|begin_of_text|>"
    tj["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos: {"id": bos, "ids": [128000], "tokens": [bos]}},
    }
    dump(os.path.join(d, "tokenizer.json"), tj)


def rename_added_token(d, tj, tok_cfg, old, new):
    """Renames the added token `old` to `new` (a special token) in tokenizer.json (`tj`) and
    tokenizer_config.json (`tok_cfg`) of folder `d`; writes tokenizer.json."""
    vocab = tj["model"]["vocab"]
    i = vocab.pop(old)
    vocab[new] = i
    for t in tj["added_tokens"]:
        if t["content"] == old:
            t.update(content=new, special=True)
    tok_cfg["added_tokens_decoder"][str(i)].update(content=new, special=True)
    dump(os.path.join(d, "tokenizer.json"), tj)


def layout_value(name, n_elems, gemma, rng):
    """Seeded float32 values for a tensor of a layout case, by its role (see the module docs)."""
    if name.endswith("norm.weight"):
        return (0.0 if gemma else 1.0) + rng.standard_normal((n_elems,), dtype=np.float32) * 0.05
    return rng.standard_normal((n_elems,), dtype=np.float32) * 0.02


def stored_bits(values, dtype):
    """float32 values -> the little-endian array safetensors stores for `dtype` (BF16, F16, F32)."""
    if dtype == "BF16":
        return bf16_bits(values)
    if dtype == "F16":
        return values.astype("<f2")
    if dtype == "F32":
        return values.astype("<f4")
    raise ValueError(f"dtype {dtype} not supported for a layout tensor")


def check_data_order(path, names, case):
    """safetensors orders the data itself (by dtype, then name): it must be the layout's order."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    order = [k for k, _ in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])]
    if order != names:
        raise ValueError(f"{case}: {os.path.basename(path)}: tensor order differs from the layout's")


def make_layout_case(models, d, case):
    """Writes case `case` of LAYOUT_CASES into folder `d` (emptied before)."""
    vocab_src, seed, template, tok_edit = LAYOUT_CASES[case]
    with open(os.path.join(LAYOUTS, f"{case}.json"), encoding="utf-8") as f:
        layout = json.load(f)
    subprocess.run([sys.executable, os.path.join(HERE, "hf_tokenizer_from_gguf.py"),
                    os.path.join(models, vocab_src), d], check=True)
    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    with open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8") as f:
        tok_cfg = json.load(f)
    if tok_edit == "llama3":
        llama3_tokenizer(d, tj)
    elif tok_edit == "glm4":
        rename_added_token(d, tj, tok_cfg, "[PAD151646]", "<|user|>")
    if template is not None:
        tok_cfg["chat_template"] = {"mistral": MISTRAL_TEMPLATE, "chatml": CHATML_TEMPLATE,
                                    "gemma": GEMMA_TEMPLATE}[template]
    dump(os.path.join(d, "tokenizer_config.json"), tok_cfg)

    for name, text in layout["files"].items():
        with open(os.path.join(d, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    cfg = json.loads(layout["files"]["config.json"])
    n_tokens = len(tj["model"]["vocab"])
    if cfg["vocab_size"] < n_tokens:
        raise ValueError(f"{case}: vocab_size {cfg['vocab_size']} < the tokenizer's {n_tokens} tokens")
    gemma = cfg["model_type"].startswith("gemma")
    rng = np.random.Generator(np.random.PCG64(seed))
    block = (cfg.get("quantization_config") or {}).get("weight_block_size")
    for shard in layout["safetensors"]:
        tensors, dtypes, values = {}, {}, {}
        specs = {t["name"]: t for t in shard["tensors"]}
        for t in shard["tensors"]:
            dtypes[t["name"]] = t["dtype"]
            if t["name"].endswith("_scale_inv"):
                continue  # made with its weight
            n = int(np.prod(t["shape"], dtype=np.int64))
            values[t["name"]] = layout_value(t["name"], n, gemma, rng).reshape(t["shape"])
        for name, x in values.items():
            dtype = specs[name]["dtype"]
            if dtype not in FP8_FORMATS:
                tensors[name] = stored_bits(x, dtype)
                continue
            codes, scale = fp8_blocks(x, dtype, block)
            spec = specs[name + "_scale_inv"]
            if list(scale.shape) != spec["shape"]:
                raise ValueError(f"{case}: {name}: scales of shape {list(scale.shape)}, the layout has {spec['shape']}")
            tensors[name] = codes
            tensors[name + "_scale_inv"] = stored_bits(scale, spec["dtype"])
        path = os.path.join(d, shard["file"])
        write_safetensors(path, tensors, dtypes, shard["metadata"])
        check_data_order(path, [t["name"] for t in shard["tensors"]], case)
    if layout["index"] is not None:
        with open(os.path.join(d, "model.safetensors.index.json"), "w", encoding="utf-8", newline="") as f:
            f.write(layout["index"])
    return d


# E2M1 (FP4) values by code, as transformers' mxfp4 integration (FP4_VALUES) and OCP MX define them
FP4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                       -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float32)


def mxfp4_quantize(w):
    """w: float32 [..., rows, cols] (cols a multiple of 32) -> (blocks uint8 [..., rows, cols/32, 16],
    scales uint8 [..., rows, cols/32]) in the layout OpenAI publishes gpt-oss in (what
    transformers' `convert_moe_packed_tensors` reads): per block of 32 values an E8M0 exponent
    (bias 127) and 32 E2M1 codes, two per byte, element 2i in byte i's low nibble and 2i+1 in its
    high nibble. The exponent is OCP MX's: floor(log2(amax)) - 2 (E2M1's largest exponent), so
    amax / 2^e lies in [4, 8); each value gets the code nearest value / 2^e (the lowest code on a
    tie; beyond 6 it is 6)."""
    *lead, rows, cols = w.shape
    x = w.astype(np.float32).reshape(*lead, rows, cols // 32, 32)
    amax = np.abs(x).max(axis=-1)
    e = np.where(amax > 0, np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - 2, -127).astype(np.int32)
    e = np.clip(e, -127, 127)
    scaled = x / np.ldexp(np.float32(1.0), e)[..., None]
    codes = np.abs(scaled[..., None] - FP4_VALUES).argmin(axis=-1).astype(np.uint8)
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    return blocks, (e + 127).astype(np.uint8)


def read_safetensors_f32(path):
    """name -> (dtype, float32 values) of a safetensors file of BF16/F16/F32 tensors; and its names in
    file order."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        raw = data[a:b]
        if t["dtype"] == "BF16":
            v = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif t["dtype"] == "F16":
            v = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        else:
            v = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        out[name] = (t["dtype"], v.reshape(t["shape"]))
    return out


def mxfp4_experts(d):
    """Rewrites the gpt-oss checkpoint in `d` as OpenAI publishes gpt-oss: each layer's
    `mlp.experts.gate_up_proj` ([n_expert, n_embd, 2 * n_ff], input-major as transformers keeps
    it) and `mlp.experts.down_proj` ([n_expert, n_ff, n_embd]) become `*_blocks` and `*_scales`
    (U8, [n_expert, out, in / 32, 16] and [n_expert, out, in / 32]: the transposed matrices,
    output-major, quantized by mxfp4_quantize); every other tensor is kept as it is. config.json
    gets the `quantization_config` of openai/gpt-oss-20b (quant_method "mxfp4")."""
    path = os.path.join(d, "model.safetensors")
    tensors = read_safetensors_f32(path)
    out, dtypes = {}, {}
    for name, (dtype, v) in tensors.items():
        if name.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj")):
            blocks, scales = mxfp4_quantize(np.swapaxes(v, -1, -2))
            out[name + "_blocks"], dtypes[name + "_blocks"] = np.ascontiguousarray(blocks), "U8"
            out[name + "_scales"], dtypes[name + "_scales"] = np.ascontiguousarray(scales), "U8"
        else:
            out[name], dtypes[name] = stored_bits(v.reshape(-1), dtype).reshape(v.shape), dtype
    out = dict(sorted(out.items()))
    os.remove(path)
    write_safetensors(path, out, dtypes)
    cfg_path = os.path.join(d, "config.json")
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["quantization_config"] = {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens",
                                   "lm_head"],
        "quant_method": "mxfp4",
    }
    dump(cfg_path, dict(sorted(cfg.items())))


DERIVATIONS = {"mxfp4-experts": mxfp4_experts}


def derived_layout(case):
    """(base case, derivation) when the layout of `case` is derived from another's, else None."""
    p = os.path.join(LAYOUTS, f"{case}.json")
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8") as f:
        layout = json.load(f)
    if "derived_from" not in layout:
        return None
    return layout["derived_from"], layout["derivation"]


def make_case(models, out_root, case):
    d = os.path.join(out_root, case)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    derived = derived_layout(case)
    if derived is not None:
        base, how = derived
        make_layout_case(models, d, base)
        DERIVATIONS[how](d)
        return d
    if case in LAYOUT_CASES:
        return make_layout_case(models, d, case)
    arch, vocab_src, seed = CASES[case]
    subprocess.run([sys.executable, os.path.join(HERE, "hf_tokenizer_from_gguf.py"),
                    os.path.join(models, vocab_src), d], check=True)
    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    if arch == "llama3":
        llama3_tokenizer(d, tj)
    ids = dict(tj["model"]["vocab"])
    ids.update({t["content"]: t["id"] for t in tj["added_tokens"]})
    with open(os.path.join(d, "tokenizer_config.json"), encoding="utf-8") as f:
        tok_cfg = json.load(f)
    template = {"llama2": LLAMA2_TEMPLATE, "llama3": LLAMA3_TEMPLATE, "qwen2": CHATML_TEMPLATE,
                "qwen3": CHATML_TEMPLATE, "gemma3": GEMMA_TEMPLATE, "phi3": PHI3_TEMPLATE}.get(arch)
    if arch == "mistral":
        # named templates, as tokenizer_config.json lists them: llama.cpp writes the default as
        # tokenizer.chat_template and the others as tokenizer.chat_template.NAME
        tok_cfg["chat_template"] = [{"name": "default", "template": MISTRAL_TEMPLATE},
                                    {"name": "tool_use", "template": MISTRAL_TOOL_TEMPLATE}]
    else:
        tok_cfg["chat_template"] = template
    dump(os.path.join(d, "tokenizer_config.json"), tok_cfg)

    cfg = config_for(arch, len(tj["model"]["vocab"]) if arch != "gemma3" else 262144, dict(tok_cfg, _ids=ids))
    # the real configs' vocab sizes: the GGUF vocabularies' lengths (Qwen2's and Phi-3's padded)
    cfg["vocab_size"] = {"llama2": 32000, "mistral": 32000, "llama3": 128256, "qwen2": 151936,
                         "qwen3": 151936, "gemma3": 262144, "phi3": 32064}[arch]
    cfg = dict(sorted(cfg.items()))
    dump(os.path.join(d, "config.json"), cfg)
    gen = {"_from_model_config": True, "bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"],
           "transformers_version": "4.57.1"}
    if arch in ("llama3", "qwen2", "qwen3", "gemma3"):
        gen.update({"do_sample": True, "temperature": 0.6, "top_p": 0.9})
    dump(os.path.join(d, "generation_config.json"), gen)
    if arch in CARDS:
        with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as f:
            f.write(CARDS[arch])

    rng = np.random.Generator(np.random.PCG64(seed))
    tensors = weights(arch, cfg, rng)
    if arch == "llama3":
        # two shards and their index, as save_pretrained splits a larger checkpoint
        names = list(tensors)
        first = {n: tensors[n] for n in names if n == "model.embed_tokens.weight"}
        second = {n: tensors[n] for n in names if n not in first}
        shards = [("model-00001-of-00002.safetensors", first), ("model-00002-of-00002.safetensors", second)]
        weight_map = {}
        for fname, part in shards:
            write_safetensors(os.path.join(d, fname), part)
            weight_map.update({n: fname for n in part})
        total = sum(a.nbytes for a in tensors.values())
        dump(os.path.join(d, "model.safetensors.index.json"),
             {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    else:
        write_safetensors(os.path.join(d, "model.safetensors"), tensors)
    return d


def main():
    args = sys.argv[1:]
    known = list(CASES) + list(LAYOUT_CASES) + DERIVED_CASES
    if args == ["--list"]:
        print("\n".join(known))
        return
    if len(args) < 2:
        sys.exit("usage: make_convert_inputs.py MODELS_DIR OUT_DIR [CASE...] | --list")
    models, out, cases = args[0], args[1], args[2:] or known
    for case in cases:
        if case not in known:
            sys.exit(f"unknown case {case!r}; known: {', '.join(known)}")
        make_case(models, out, case)


if __name__ == "__main__":
    main()
