"""A tensor's values as gguf-py reads and dequantizes them, or a file's parameter count, as JSON.

Usage: python tensor_values.py FILE TENSOR[,TENSOR...] ROWS   -> {TENSOR: {"dtype", "shape",
           "elements", "min", "max", "mean", "nan", "inf", "rows"}} (the file is read once): `gguf.quants.dequantize` of the tensor, its first ROWS
           rows (innermost dimension), min/max/mean of the finite values (mean in float64), NaN
           and infinity counts; shape canonical (gguf-py's stored dims reversed)
       python tensor_values.py FILE --parameters  -> {"parameters": the sum of every tensor's
           n_elements}
"""
import json
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

reader = GGUFReader(sys.argv[1])
if sys.argv[2] == "--parameters":
    print(json.dumps({"parameters": int(sum(int(t.n_elements) for t in reader.tensors))}))
    sys.exit(0)
names, rows = sys.argv[2].split(","), int(sys.argv[3])


def describe(t):
    values = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
    shape = [int(d) for d in reversed(t.shape.tolist())]
    row_len = shape[-1] if shape else 1
    finite = values[np.isfinite(values)]
    return {
        "dtype": t.tensor_type.name,
        "shape": shape,
        "elements": int(values.size),
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
        "mean": float(np.mean(finite, dtype=np.float64)) if finite.size else None,
        "nan": int(np.isnan(values).sum()),
        "inf": int(np.isinf(values).sum()),
        "rows": [[float(v) for v in values[i * row_len:(i + 1) * row_len]]
                 for i in range(min(rows, values.size // row_len))],
    }


print(json.dumps({t.name: describe(t) for t in reader.tensors if t.name in names}))
