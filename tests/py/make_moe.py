"""Write a tiny Mixtral-style mixture-of-experts GGUF file (architecture `llama` with experts) that
llama.cpp loads and runs: F32 weights from a seeded numpy generator, and a small SentencePiece
vocabulary (the 256 byte tokens, the special tokens and a few words and letters).

Usage: python make_moe.py OUT [--layers N] [--experts N] [--used N] [--embd N] [--ff N] [--seed N]

Each layer has `blk.N.ffn_gate_inp.weight` [n_embd, n_expert] (the router) and the expert
tensors `blk.N.ffn_{gate,up}_exps.weight` [n_embd, n_ff, n_expert] and
`blk.N.ffn_down_exps.weight` [n_ff, n_embd, n_expert] (ggml's ne order), as llama.cpp's
`llama_model_llama::load_arch_tensors` creates them when `llama.expert_count` > 0. With n_embd a
multiple of 256 the K-quants apply to every tensor whose rows are n_embd long; n_ff not a
multiple of 256 makes `ffn_down_exps` take llama-quantize's fallback types.
"""
import argparse

import gguf
import numpy as np

WORDS = (
    "the quick brown fox jumps over lazy dog while a small model reads plain text about rivers "
    "mountains numbers and cities"
).split()


def vocab():
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        scores.append(0.0)
        types.append(6)
    pieces = ["\u2581" + w for w in dict.fromkeys(WORDS)]
    pieces += ["\u2581"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    for i, p in enumerate(pieces):
        tokens.append(p)
        scores.append(-1.0 - 0.01 * i)
        types.append(1)
    return tokens, scores, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--used", type=int, default=2)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n_head, n_head_kv = 4, 2
    head = a.embd // n_head
    tokens, scores, types = vocab()
    n_vocab = len(tokens)

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("tiny-moe")
    w.add_context_length(256)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_rope_dimension_count(head)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_expert_count(a.experts)
    w.add_expert_used_count(a.used)
    w.add_vocab_size(n_vocab)
    w.add_file_type(0)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    def t(name, *shape, scale=None):
        # numpy shape is ggml's ne reversed.
        fan_in = shape[-1]
        s = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        w.add_tensor(name, (rng.standard_normal(shape) * s).astype(np.float32))

    def norm(name):
        w.add_tensor(name, (1.0 + 0.1 * rng.standard_normal(a.embd)).astype(np.float32))

    t("token_embd.weight", n_vocab, a.embd, scale=1.0)
    for i in range(a.layers):
        norm(f"blk.{i}.attn_norm.weight")
        t(f"blk.{i}.attn_q.weight", n_head * head, a.embd)
        t(f"blk.{i}.attn_k.weight", n_head_kv * head, a.embd)
        t(f"blk.{i}.attn_v.weight", n_head_kv * head, a.embd)
        t(f"blk.{i}.attn_output.weight", a.embd, n_head * head)
        norm(f"blk.{i}.ffn_norm.weight")
        t(f"blk.{i}.ffn_gate_inp.weight", a.experts, a.embd)
        t(f"blk.{i}.ffn_gate_exps.weight", a.experts, a.ff, a.embd)
        t(f"blk.{i}.ffn_up_exps.weight", a.experts, a.ff, a.embd)
        t(f"blk.{i}.ffn_down_exps.weight", a.experts, a.embd, a.ff)
    norm("output_norm.weight")
    t("output.weight", n_vocab, a.embd)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
