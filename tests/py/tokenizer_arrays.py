"""The tokenizer arrays of a GGUF file as gguf-py (PyPI `gguf`) reads them, exactly, as JSON;
optionally also writes them into a big-endian file with gguf-py's writer.

Usage: python tokenizer_arrays.py FILE [BIG_ENDIAN_OUT]

Output: {"tokens": [str], "scores": [u32], "token_type": [i32]}: the strings of
`tokenizer.ggml.tokens`, the bit patterns of the f32 values of `tokenizer.ggml.scores` (as
unsigned integers, so that every value, NaN included, compares exactly) and the values of
`tokenizer.ggml.token_type`, each read through gguf-py's `GGUFReader` (which byte-swaps a
big-endian file's numbers).

With BIG_ENDIAN_OUT, gguf-py's `GGUFWriter` (endianess BIG) writes those three arrays, with
`general.architecture` of FILE, into a file with no tensors: a big-endian file whose values are
gguf-py's reading of FILE.
"""
import json
import sys

import numpy as np

import gguf


def array_parts(field):
    return [field.parts[i] for i in field.data]


def main():
    r = gguf.GGUFReader(sys.argv[1])
    tokens = [bytes(p).decode("utf-8") for p in array_parts(r.fields["tokenizer.ggml.tokens"])]
    scores = np.concatenate(array_parts(r.fields["tokenizer.ggml.scores"])).astype("<f4")
    token_type = np.concatenate(array_parts(r.fields["tokenizer.ggml.token_type"])).astype("<i4")
    if len(sys.argv) > 2:
        arch = bytes(r.fields["general.architecture"].parts[-1]).decode("utf-8")
        w = gguf.GGUFWriter(sys.argv[2], arch, endianess=gguf.GGUFEndian.BIG)
        w.add_token_list(tokens)
        w.add_token_scores([float(x) for x in scores])
        w.add_token_types([int(x) for x in token_type])
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
    json.dump({
        "tokens": tokens,
        "scores": scores.view("<u4").tolist(),
        "token_type": token_type.tolist(),
    }, sys.stdout)


if __name__ == "__main__":
    main()
