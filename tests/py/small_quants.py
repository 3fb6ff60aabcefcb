"""gguf-py's quantization of small.gguf's sources, as JSON on stdout (for tests/tests/small_gguf.rs).

Usage: python small_quants.py FILE

Reads FILE with gguf-py's GGUFReader and quantizes, with `gguf.quants.quantize`:
  - the values of its F32 tensor `w_f32` (as stored) to Q8_0;
  - the BF16 source of `e_bf16`, the values (i - 48) / 16 for i in 0..96 (exact in bf16,
    canonical shape [6, 16]), to BF16.
Output: {"q8_0": hex, "bf16": hex, "w_f32_shape": [...]} (bytes little-endian; the shape canonical,
outermost first, as numpy sees the tensor).
"""
import json
import sys

import numpy as np
from gguf import GGUFReader
from gguf.constants import GGMLQuantizationType as T
from gguf.quants import quantize


def main() -> None:
    reader = GGUFReader(sys.argv[1])
    w = next(t for t in reader.tensors if t.name == "w_f32")
    x = np.asarray(w.data, dtype=np.float32)
    e = ((np.arange(96, dtype=np.float32) - 48.0) / 16.0).reshape(6, 16)
    out = {
        "q8_0": quantize(x, T.Q8_0).tobytes().hex(),
        "bf16": quantize(e, T.BF16).tobytes().hex(),
        "w_f32_shape": list(x.shape),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
