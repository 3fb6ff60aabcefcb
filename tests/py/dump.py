"""Describe a GGUF file as gguf-py (PyPI `gguf`) reads it, as JSON on stdout.

Usage: python dump.py FILE [--no-tensor-hash]

Output: {"version", "endianness", "alignment", "data_offset", "metadata": [{"key", "type", "value"}],
"tensors": [{"name", "dtype", "shape", "data_offset", "nbytes", "sha256"}]}, the same shape as
`gguf inspect --json`. `shape` is canonical (outermost first: gguf-py's stored dims reversed).
Non-finite floats are written as the strings "nan", "inf", "-inf". Arrays of arrays, which gguf-py's
reader does not decode, get the value null and a type built from gguf-py's type list.
"""
import hashlib
import json
import math
import sys

import gguf
from gguf.constants import GGUFValueType as VT

NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
         VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool", VT.STRING: "string", VT.ARRAY: "array",
         VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT64: "f64"}


def type_name(types):
    if not types:
        return "?"
    if types[0] == VT.ARRAY:
        if len(types) == 1:
            return "array"
        return "array<" + type_name(types[1:]) + ">"
    return NAMES[types[0]]


def fix(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, list):
        return [fix(x) for x in v]
    return v


def main():
    path = sys.argv[1]
    hashes = "--no-tensor-hash" not in sys.argv
    r = gguf.GGUFReader(path)
    out = {
        "version": int(r.fields["GGUF.version"].contents()),
        "endianness": "big" if r.endianess == gguf.GGUFEndian.BIG else "little",
        "alignment": int(r.alignment),
        # ggml's data offset: gguf-py rounds the end of the tensor infos up to the alignment even
        # when there are no tensors; ggml (gguf_get_data_offset) pads only when there are, so a
        # metadata-only file's data offset is the end of its metadata.
        "data_offset": int(r.data_offset) if r.tensors else
        max(f.offset + sum(p.nbytes for p in f.parts) for f in r.fields.values()),
        "metadata": [],
        "tensors": [],
    }
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        nested = len(f.types) > 1 and f.types[1] == VT.ARRAY
        value = None if nested else fix(f.contents())
        types = list(f.types)
        if types == [VT.ARRAY]:
            # An empty array: gguf-py keeps no element type in `types`; it is the part after the
            # value type (parts: key length, key, value type, element type, count).
            types.append(VT(int(f.parts[3][0])))
        out["metadata"].append({"key": key, "type": type_name(types), "value": value})
    for t in r.tensors:
        item = {
            "name": t.name,
            "dtype": t.tensor_type.name,
            "shape": [int(d) for d in reversed(t.shape.tolist())],
            "data_offset": int(t.data_offset),
            "nbytes": int(t.n_bytes),
        }
        if hashes:
            item["sha256"] = hashlib.sha256(bytes(r.data[t.data_offset:t.data_offset + t.n_bytes])).hexdigest()
        out["tensors"].append(item)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
