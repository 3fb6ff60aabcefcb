"""A large seeded Llama checkpoint for scripts/bench-convert.sh.

Usage: python make_bench_convert.py MODELS_DIR OUT_DIR [--layers N] [--shard-mb M]

The tokenizer, chat template, generation_config.json and model card are those of
make_convert_inputs.py's `tiny-Llama-2-chat-hf` case (a real SentencePiece tokenizer of 32,000
tokens rebuilt from models/vocab/ggml-vocab-llama-spm.gguf); config.json is a LlamaForCausalLM of
TinyLlama-1.1B's shape (hidden 2048, 32 heads, 4 key/value heads, feed-forward 5632, vocabulary
32,000) with N layers (default 10: 1.15 GB of BF16). The weights are BF16 drawn from numpy's PCG64
(seed 1234), written a block of rows at a time straight into safetensors shards of at most M MB
(default 400) with model.safetensors.index.json, as save_pretrained lays out a sharded checkpoint;
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
CASE = "tiny-Llama-2-chat-hf"
ROWS = 256  # rows drawn at a time


def bf16_bits(x):
    """float32 -> bfloat16 bits (round to nearest even) for finite values well below the maximum."""
    u = x.view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return u.astype("<u2")


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


def nbytes(shape):
    return 2 * int(np.prod(shape))


def write_shard(path, tensors, rng):
    """safetensors: u64 header length, JSON header (padded with spaces to 8 bytes), data."""
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, shape in tensors:
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + nbytes(shape)]}
        off += nbytes(shape)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for name, shape in tensors:
            if len(shape) == 1:
                x = 1.0 + rng.standard_normal(shape, dtype=np.float32) * 0.05
                f.write(bf16_bits(x.astype(np.float32)).tobytes())
                continue
            rows, cols = shape
            for r in range(0, rows, ROWS):
                x = rng.standard_normal((min(ROWS, rows - r), cols), dtype=np.float32)
                x *= 0.02
                f.write(bf16_bits(x).tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=10)
    ap.add_argument("--shard-mb", type=int, default=400)
    a = ap.parse_args()
    parent = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(parent, exist_ok=True)
    # the tiny case's folder, then its weights replaced
    tiny = make_convert_inputs.make_case(a.models, parent, CASE)
    if os.path.exists(a.out):
        for n in os.listdir(a.out):
            os.remove(os.path.join(a.out, n))
        os.rmdir(a.out)
    os.rename(tiny, a.out)
    os.remove(os.path.join(a.out, "model.safetensors"))
    with open(os.path.join(a.out, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg.update({"hidden_size": HIDDEN, "intermediate_size": FF, "num_hidden_layers": a.layers,
                "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "vocab_size": VOCAB,
                "max_position_embeddings": 2048})
    make_convert_inputs.dump(os.path.join(a.out, "config.json"), dict(sorted(cfg.items())))

    tensors = tensor_list(a.layers)
    limit = a.shard_mb * 1000 * 1000
    shards, cur, size = [], [], 0
    for t in tensors:
        if cur and size + nbytes(t[1]) > limit:
            shards.append(cur)
            cur, size = [], 0
        cur.append(t)
        size += nbytes(t[1])
    shards.append(cur)
    rng = np.random.Generator(np.random.PCG64(1234))
    weight_map = {}
    for i, part in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_shard(os.path.join(a.out, fname), part, rng)
        weight_map.update({n: fname for n, _ in part})
    total = sum(nbytes(s) for _, s in tensors)
    make_convert_inputs.dump(os.path.join(a.out, "model.safetensors.index.json"),
                             {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))})
    print(f"{a.out}: {len(tensors)} tensors, {total:,} bytes of BF16 in {len(shards)} shards", file=sys.stderr)


if __name__ == "__main__":
    main()
