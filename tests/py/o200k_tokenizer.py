"""OpenAI's o200k_base vocabulary as a Hugging Face tokenizer folder, as transformers converts a
tiktoken vocabulary.

Usage: python o200k_tokenizer.py O200K_BASE_JSON OUT_DIR

O200K_BASE_JSON is npm `tiktoken`'s encoders/o200k_base.json (scripts/fetch-o200k.sh):
{"pat_str", "special_tokens", "bpe_ranks"}, the ranks in js-tiktoken's form (lines of
`MARK FIRST_RANK BASE64_TOKEN...`, the tokens taking consecutive ranks from FIRST_RANK). Writes
OUT_DIR/tokenizer.json made by transformers' own `TikTokenConverter` (byte-level BPE, merges
recovered from the ranks, `Split(pat_str)` then `ByteLevel(use_regex=False)`; the tiktoken file
reader replaced by the decoding above, the rest its code) with the special tokens at their
ranks (`<|endoftext|>` 199999, `<|endofprompt|>` 200018), and a tokenizer_config.json naming
`PreTrainedTokenizerFast` (as gpt-oss's does). This is the o200k_base BPE and split rule that
gpt-oss's o200k_harmony extends with its chat special tokens (not written here), and that
llama.cpp's converter names `gpt-4o`.
"""
import base64
import json
import os
import sys

from transformers.convert_slow_tokenizer import TikTokenConverter


def ranks_of(src):
    ranks = {}
    for line in src["bpe_ranks"].split("\n"):
        if not line:
            continue
        _, first, *tokens = line.split(" ")
        for i, t in enumerate(tokens):
            ranks[base64.b64decode(t)] = int(first) + i
    return ranks


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: o200k_tokenizer.py O200K_BASE_JSON OUT_DIR")
    with open(sys.argv[1], encoding="utf-8") as f:
        src = json.load(f)
    ranks = ranks_of(src)

    class Converter(TikTokenConverter):
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url):
            return ranks

    tok = Converter(vocab_file=sys.argv[1], pattern=src["pat_str"]).converted()
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "tokenizer.json")
    tok.save(path)
    with open(path, encoding="utf-8") as f:
        tj = json.load(f)
    tj["added_tokens"] = [
        {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         "special": True}
        for t, i in sorted(src["special_tokens"].items(), key=lambda kv: kv[1])
    ]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tj, f, ensure_ascii=False)
    cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>", "model_max_length": 131072}
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)


if __name__ == "__main__":
    main()
