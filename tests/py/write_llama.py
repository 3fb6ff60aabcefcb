"""Write a small llama-style GGUF file (llama-2-tiny-random's keys, a tiny vocabulary, no tensors)
with gguf-py's GGUFWriter and its typed add_* methods.

Usage: python write_llama.py OUT

The values are the ones `serde_llama.rs` expects (it has them written out by hand).
"""
import sys

import gguf


def main():
    w = gguf.GGUFWriter(sys.argv[1], "llama")
    w.add_name("tiny-random-llama")
    w.add_context_length(2048)
    w.add_embedding_length(16)
    w.add_block_count(2)
    w.add_feed_forward_length(64)
    w.add_rope_dimension_count(4)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_file_type(1)
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>", "▁a", "▁b", "é", "<0x0A>", ""])
    w.add_token_scores([0.0, 0.0, 0.0, -1.5, -2.25, -3.0, -4.0, -5.5])
    w.add_token_types([2, 3, 3, 1, 1, 1, 6, 5])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
