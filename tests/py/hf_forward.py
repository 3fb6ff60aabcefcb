"""An independent forward pass of a Hugging Face checkpoint, in numpy and float64.

Usage: python tests/py/hf_forward.py [--out FILE] [--last] [--ggml-gelu] CHECKPOINT_DIR ID...

Reads CHECKPOINT_DIR/config.json and its safetensors (model.safetensors, or the shards that
model.safetensors.index.json lists) with numpy alone (a safetensors file is an 8-byte
little-endian header length, a JSON header, then the raw data; BF16 becomes float32 by shifting
its 16 bits up), runs the causal language model on the token ids ID... (positions 0, 1, ...,
one sequence, no cache) and writes the logits of every position (or, with --last, of the last):
by default as text, one line per position, the n_vocab values in "%.9g"; with --out FILE as raw
little-endian float64, positions times n_vocab, and nothing on stdout. Every operation is in
float64 from the stored weights, so it is a reference for a float32 run of the same weights.
--ggml-gelu replaces Gemma's exact tanh GELU by ggml's CPU one (ggml-cpu/vec.h, GGML_GELU_FP16,
defined unconditionally): the input rounded to F16, its GELU computed in float32 and rounded to
F16 (no llama.cpp setting avoids that table; tests/interop/convert_runs.rs compares both ways).

The oracle of tests/interop/convert_runs.rs, which checks llama.cpp's logits for the converted
checkpoints against it (float32 logits within 1e-4). torch is not available there, so it could not
be checked against transformers' own forward; where llama.cpp disagreed, transformers' modeling
code decided (it agrees with llama.cpp to about 1e-7 on every architecture below).

Imports neither gguf-serde's code nor llama.cpp's, nor torch: the models are written out here as
transformers 5 defines them (transformers/models/*/modeling_*.py and modeling_rope_utils.py):
  llama (LlamaForCausalLM, Llama 2 and Llama 3 with "llama3" rope scaling), mistral
    (MistralForCausalLM), qwen2 (Qwen2ForCausalLM: q/k/v biases), qwen3 (Qwen3ForCausalLM: q/k
    RMSNorm per head before RoPE), phi3 (Phi3ForCausalLM: fused qkv_proj and gate_up_proj, gate
    first; "longrope" scaling: the short factors while the sequence fits in
    original_max_position_embeddings, cos/sin times sqrt(1 + ln(s) / ln(original)) with s =
    max_position_embeddings / original_max_position_embeddings), gemma3_text (Gemma3ForCausalLM:
    RMSNorm x * (1 + w), embeddings times sqrt(hidden_size), q/k norms, post-attention,
    pre- and post-feed-forward norms, GeGLU with the tanh GELU, attention scale
    query_pre_attn_scalar^-0.5, "sliding_attention" layers with rope_local_base_freq and a
    causal window of sliding_window positions, "full_attention" layers with rope_theta, final
    logit soft-capping when set).
Common to all: pre-norm decoder layers, RMSNorm x / sqrt(mean(x^2) + eps) * w, RoPE with
transformers' rotate_half convention on the checkpoint's q/k layout (inv_freq =
theta^(-2i/head_dim)), grouped-query attention (each key/value head serves
num_attention_heads / num_key_value_heads query heads), causal softmax attention scaled by
head_dim^-0.5, SwiGLU MLP down(silu(gate(x)) * up(x)), final RMSNorm, lm_head (the embedding
matrix when tie_word_embeddings).
"""

import json
import math
import os
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "bf16"}


def read_safetensors(path):
    """{name: float64 array} of one safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        a, b = spec["data_offsets"]
        raw = data[a:b]
        dt = DTYPES[spec["dtype"]]
        if dt == "bf16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=dt)
        out[name] = arr.astype(np.float64).reshape(spec["shape"])
    return out


def load_weights(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    w = {}
    for name in files:
        w.update(read_safetensors(os.path.join(d, name)))
    return w


def rms_norm(x, w, eps, offset=0.0):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (offset + w)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def default_inv_freq(theta, dim):
    return 1.0 / theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def llama3_inv_freq(inv_freq, rs):
    """modeling_rope_utils._compute_llama3_parameters."""
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv_freq
    out = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return np.where(medium, smoothed, out)


def rope_tables(cfg, theta, head_dim, positions, scaling):
    """cos, sin of shape (positions, head_dim), attention factor applied."""
    inv_freq = default_inv_freq(theta, head_dim)
    attention = 1.0
    rs = scaling or {}
    kind = rs.get("rope_type", rs.get("type"))
    if kind in (None, "default"):
        pass
    elif kind == "llama3":
        inv_freq = llama3_inv_freq(inv_freq, rs)
    elif kind == "longrope":
        original = cfg.get("original_max_position_embeddings") or rs["original_max_position_embeddings"]
        factor = rs.get("factor") or cfg["max_position_embeddings"] / original
        attention = rs.get("attention_factor")
        if attention is None:
            attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
        seq_len = int(positions.max()) + 1
        ext = np.array(rs["long_factor"] if seq_len > original else rs["short_factor"], dtype=np.float64)
        inv_freq = 1.0 / (ext * theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    else:
        raise SystemExit(f"hf_forward.py: rope scaling {kind!r} not implemented")
    freqs = np.outer(positions.astype(np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb) * attention, np.sin(emb) * attention


def attention(q, k, v, cos, sin, scale, window=None):
    """q: (T, nh, hd), k, v: (T, nkv, hd); RoPE, causal (and windowed) softmax attention."""
    q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
    k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
    T, nh, hd = q.shape
    rep = nh // k.shape[1]
    k = np.repeat(k, rep, axis=1)
    v = np.repeat(v, rep, axis=1)
    scores = np.einsum("qhd,khd->hqk", q, k) * scale
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    allowed = j <= i
    if window is not None:
        allowed &= (i - j) < window
    scores = np.where(allowed[None], scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    out = np.einsum("hqk,khd->qhd", p, v)
    return out.reshape(T, nh * hd)


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def gelu_ggml_f16(x):
    """ggml's CPU GELU (ggml-cpu/vec.h with GGML_GELU_FP16, which it defines unconditionally):
    x <= -10 gives 0, x >= 10 gives x, otherwise x is rounded to F16 and looked up in a table of
    the tanh GELU of every F16 value, computed in float32 and stored as F16."""
    h = x.astype(np.float16).astype(np.float32)
    c = np.float32(math.sqrt(2.0 / math.pi))
    g = np.float32(0.5) * h * (np.float32(1.0) + np.tanh(c * h * (np.float32(1.0) + np.float32(0.044715) * h * h)))
    g = g.astype(np.float16).astype(np.float64)
    return np.where(x <= -10.0, 0.0, np.where(x >= 10.0, x, g))


def forward(d, ids, ggml_gelu=False):
    with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    w = load_weights(d)
    mt = cfg["model_type"]
    if mt not in ("llama", "mistral", "qwen2", "qwen3", "phi3", "gemma3_text"):
        raise SystemExit(f"hf_forward.py: model_type {mt!r} not implemented")
    gemma = mt == "gemma3_text"
    H = cfg["hidden_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    eps = cfg["rms_norm_eps"]
    off = 1.0 if gemma else 0.0
    ids = np.asarray(ids, dtype=np.int64)
    T = len(ids)
    pos = np.arange(T)
    emb = w["model.embed_tokens.weight"]
    x = emb[ids]
    if gemma:
        x = x * math.sqrt(H)  # sqrt(hidden_size), as bf16 in transformers: exact for 64
    scale = (cfg["query_pre_attn_scalar"] if gemma else hd) ** -0.5
    rope_global = rope_tables(cfg, cfg.get("rope_theta", 10000.0), hd, pos, cfg.get("rope_scaling"))
    rope_local = rope_tables(cfg, cfg["rope_local_base_freq"], hd, pos, None) if gemma else None
    for li in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{li}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps, off)
        if mt == "phi3":
            qkv = h @ w[p + "self_attn.qkv_proj.weight"].T
            q, k, v = np.split(qkv, [nh * hd, nh * hd + nkv * hd], axis=-1)
        else:
            q = h @ w[p + "self_attn.q_proj.weight"].T
            k = h @ w[p + "self_attn.k_proj.weight"].T
            v = h @ w[p + "self_attn.v_proj.weight"].T
            if p + "self_attn.q_proj.bias" in w:
                q = q + w[p + "self_attn.q_proj.bias"]
                k = k + w[p + "self_attn.k_proj.bias"]
                v = v + w[p + "self_attn.v_proj.bias"]
        q, k, v = q.reshape(T, nh, hd), k.reshape(T, nkv, hd), v.reshape(T, nkv, hd)
        if p + "self_attn.q_norm.weight" in w:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps, off)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps, off)
        window = None
        cos, sin = rope_global
        if gemma and cfg["layer_types"][li] == "sliding_attention":
            cos, sin = rope_local
            window = cfg["sliding_window"]
        a = attention(q, k, v, cos, sin, scale, window) @ w[p + "self_attn.o_proj.weight"].T
        if gemma:
            a = rms_norm(a, w[p + "post_attention_layernorm.weight"], eps, off)
            x = x + a
            h = rms_norm(x, w[p + "pre_feedforward_layernorm.weight"], eps, off)
        else:
            x = x + a
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps, off)
        if mt == "phi3":
            gate, up = np.split(h @ w[p + "mlp.gate_up_proj.weight"].T, 2, axis=-1)
        else:
            gate = h @ w[p + "mlp.gate_proj.weight"].T
            up = h @ w[p + "mlp.up_proj.weight"].T
        act = (gelu_ggml_f16(gate) if ggml_gelu else gelu_tanh(gate)) if gemma else silu(gate)
        m = (act * up) @ w[p + "mlp.down_proj.weight"].T
        if gemma:
            m = rms_norm(m, w[p + "post_feedforward_layernorm.weight"], eps, off)
        x = x + m
    x = rms_norm(x, w["model.norm.weight"], eps, off)
    head = emb if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    logits = x @ head.T
    cap = cfg.get("final_logit_softcapping")
    if cap:
        logits = np.tanh(logits / cap) * cap
    return logits


def main(argv):
    out, last, ggml_gelu = None, False, False
    while argv and argv[0].startswith("--"):
        if argv[0] == "--out" and len(argv) > 1:
            out, argv = argv[1], argv[2:]
        elif argv[0] == "--last":
            last, argv = True, argv[1:]
        elif argv[0] == "--ggml-gelu":
            ggml_gelu, argv = True, argv[1:]
        else:
            raise SystemExit(__doc__)
    if len(argv) < 2:
        raise SystemExit(__doc__)
    logits = forward(argv[0], [int(t) for t in argv[1:]], ggml_gelu)
    if last:
        logits = logits[-1:]
    if out is not None:
        np.ascontiguousarray(logits, dtype="<f8").tofile(out)
        return
    for row in logits:
        sys.stdout.write(" ".join("%.9g" % v for v in row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
