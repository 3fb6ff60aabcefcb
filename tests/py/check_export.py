"""Check a safetensors file written by `gguf export` against gguf-py and Python's `safetensors`.

Usage: python check_export.py FILE.gguf OUT.safetensors DTYPE [EXCLUDED_NAME...]

DTYPE is the `--dtype` given to `gguf export` (keep, f32, f16, bf16). Python's `safetensors`
opens the file (its header and offset checks) and reads every tensor it can give as numpy (all but
BF16); each tensor's bytes must equal what gguf-py makes of the GGUF tensor: its data for plain
types, `gguf.quants.dequantize` for quantized ones, then `gguf.quants.quantize` to F16 or BF16
(or numpy's cast to F32) for the conversions `--dtype` asks for. Shapes must be canonical (gguf-py's
stored dims reversed). Prints JSON: {"checked": [NAME], "problems": [TEXT], "metadata": {...}}, the
`__metadata__` as the file has it.
"""
import json
import struct
import sys

import numpy as np
from gguf import GGUFReader, GGMLQuantizationType as T
from gguf.quants import dequantize, quantize
from safetensors import safe_open

gguf_path, st_path, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
excluded = set(sys.argv[4:])

with open(st_path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    base = 8 + n
    blob = f.read()

problems = []
if n % 8 != 0:
    problems.append(f"header length {n} is not a multiple of 8")
PLAIN = {T.F32: "F32", T.F16: "F16", T.BF16: "BF16", T.F64: "F64", T.I8: "I8", T.I16: "I16", T.I32: "I32", T.I64: "I64"}
INTS = {T.I8, T.I16, T.I32, T.I64}
NP = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64}

with safe_open(st_path, framework="numpy") as st:
    names_in_st = set(st.keys())
    reader = GGUFReader(gguf_path)
    checked = []
    for t in reader.tensors:
        if t.name in excluded:
            if t.name in names_in_st:
                problems.append(f"{t.name}: excluded but written")
            continue
        if t.name not in header:
            problems.append(f"{t.name}: missing")
            continue
        h = header[t.name]
        shape = [int(d) for d in reversed(t.shape.tolist())]
        if h["shape"] != shape:
            problems.append(f"{t.name}: shape {h['shape']} != {shape}")
        # gguf-py's values of the tensor.
        if t.tensor_type in PLAIN and (dtype == "keep" or t.tensor_type in INTS):
            want_type, want = PLAIN[t.tensor_type], np.ascontiguousarray(t.data).tobytes()
        else:
            values = dequantize(t.data, t.tensor_type).astype(np.float32)
            if dtype in ("keep", "f32"):
                want_type, want = "F32", values.tobytes()
            elif dtype == "f16":
                want_type, want = "F16", quantize(values, T.F16).tobytes()
            else:
                want_type, want = "BF16", quantize(values, T.BF16).tobytes()
        if h["dtype"] != want_type:
            problems.append(f"{t.name}: dtype {h['dtype']} != {want_type}")
        a, b = h["data_offsets"]
        if blob[a:b] != want:
            problems.append(f"{t.name}: data differs from gguf-py's")
        if want_type != "BF16":
            got = st.get_tensor(t.name)
            if list(got.shape) != shape or got.dtype != NP[want_type] or got.tobytes() != want:
                problems.append(f"{t.name}: safetensors' numpy tensor differs")
        elif a % 2 != 0:
            problems.append(f"{t.name}: misaligned")
        checked.append(t.name)
    extra = names_in_st - {t.name for t in reader.tensors}
    if extra:
        problems.append(f"tensors not in the GGUF file: {sorted(extra)}")
    metadata = st.metadata()

print(json.dumps({"checked": checked, "problems": problems, "metadata": metadata}))
