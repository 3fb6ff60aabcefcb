"""Reference data from gguf-py (PyPI `gguf` 0.19.0) for the i-quant / FP4 / ternary codec tests.

Usage: python iq_gguf_py_reference.py OUT_DIR  (run by tests/tests/codec.rs)

For every type below it writes, with fixed seeds (numpy PCG64, seed = 1000 + ggml type id):
  NAME.deq.in   random block bytes (uniform bytes; every f16 scale is kept as drawn, so some are
                NaN/Inf/subnormal)
  NAME.deq.out  gguf.quants.dequantize of them, f32 little-endian
and for the types gguf-py can quantize:
  NAME.q.in     random f32 blocks (normal values times a per-block power of ten, plus blocks of
                zeros, of ties and of a single large value), f32 little-endian
  NAME.q.out    gguf.quants.quantize of them, block bytes
"""

import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants
from gguf.constants import GGML_QUANT_SIZES

DEQUANT = {
    "IQ2_XXS": 1024, "IQ2_XS": 1024, "IQ2_S": 1024, "IQ3_XXS": 1024, "IQ3_S": 1024,
    "IQ1_S": 1024, "IQ1_M": 1024, "IQ4_NL": 4096, "IQ4_XS": 1024, "TQ1_0": 512,
    "TQ2_0": 512, "MXFP4": 4096, "NVFP4": 2048,
}
QUANT = {"TQ1_0": 256, "TQ2_0": 256, "MXFP4": 2048}


def f32_blocks(rng: np.random.Generator, n_blocks: int, block: int) -> np.ndarray:
    x = rng.standard_normal((n_blocks, block)).astype(np.float32)
    x *= (10.0 ** rng.uniform(-4, 4, (n_blocks, 1))).astype(np.float32)
    x[0] = 0.0                                           # all zeros
    x[1] = 0.0; x[1, 5] = 3.0e38                         # one huge value
    x[2] = rng.integers(-4, 5, block).astype(np.float32) * np.float32(0.5)  # ties
    x[2, 0] = 2.0
    x[3] = rng.standard_normal(block).astype(np.float32) * np.float32(1e-40)  # subnormals
    return x


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, n_blocks in DEQUANT.items():
        qt = T[name]
        block, size = GGML_QUANT_SIZES[qt]
        rng = np.random.default_rng(1000 + int(qt))
        raw = rng.integers(0, 256, (n_blocks, size), dtype=np.uint8)
        with np.errstate(all="ignore"):
            y = quants.dequantize(raw, qt).astype(np.float32)
        assert y.shape == (n_blocks, block)
        (out / f"{name}.deq.in").write_bytes(raw.tobytes())
        (out / f"{name}.deq.out").write_bytes(y.astype("<f4").tobytes())
    for name, n_blocks in QUANT.items():
        qt = T[name]
        block, size = GGML_QUANT_SIZES[qt]
        rng = np.random.default_rng(2000 + int(qt))
        x = f32_blocks(rng, n_blocks, block)
        with np.errstate(all="ignore"):
            q = quants.quantize(x, qt)
        assert q.shape == (n_blocks, size)
        (out / f"{name}.q.in").write_bytes(x.astype("<f4").tobytes())
        (out / f"{name}.q.out").write_bytes(q.tobytes())


if __name__ == "__main__":
    main()
