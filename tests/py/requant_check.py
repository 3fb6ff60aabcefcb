"""Checks a re-quantized file against gguf-py: for every tensor whose type differs between IN and
OUT, dequantize IN's tensor with gguf.quants and quantize it to OUT's type with gguf.quants (when
gguf-py can), and compare with OUT's bytes.

Usage: python requant_check.py IN OUT [NAME...]   (only the named tensors, if given)
Prints JSON {"checked": [names], "unsupported": [names], "mismatched": [names], "same": [names]}.
"""
import json
import sys

import numpy as np
import gguf
from gguf import quants


def main():
    a, b = gguf.GGUFReader(sys.argv[1]), gguf.GGUFReader(sys.argv[2])
    ta = {t.name: t for t in a.tensors}
    out = {"checked": [], "unsupported": [], "mismatched": [], "same": []}
    only = set(sys.argv[3:])
    for t in b.tensors:
        if only and t.name not in only:
            continue
        s = ta[t.name]
        if s.tensor_type == t.tensor_type:
            same = bytes(a.data[s.data_offset:s.data_offset + s.n_bytes]) == bytes(b.data[t.data_offset:t.data_offset + t.n_bytes])
            (out["same"] if same else out["mismatched"]).append(t.name)
            continue
        try:
            f = quants.dequantize(s.data, s.tensor_type).astype(np.float32)
            q = quants.quantize(f, t.tensor_type)
        except NotImplementedError:
            out["unsupported"].append(t.name)
            continue
        got = bytes(b.data[t.data_offset:t.data_offset + t.n_bytes])
        (out["checked"] if q.tobytes() == got else out["mismatched"]).append(t.name)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
