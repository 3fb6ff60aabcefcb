"""Print the key/value metadata of a GGUF file as gguf-py (PyPI `gguf`) reads it, as JSON.

Usage: python kv_dump.py FILE

Output: [{"key", "type", "value"}] in file order; `type` is `u32`, `string`, `array<f32>`,
`array<array<i32>>`, ...; values are Python's own (floats exact as doubles). Arrays of arrays, which
gguf-py's reader does not decode, get the value null.
"""
import json
import sys

import gguf
from gguf.constants import GGUFValueType as VT

NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
         VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool", VT.STRING: "string", VT.ARRAY: "array",
         VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT64: "f64"}


def type_name(types):
    if types[0] == VT.ARRAY:
        return "array<" + type_name(types[1:]) + ">" if len(types) > 1 else "array"
    return NAMES[types[0]]


def main():
    r = gguf.GGUFReader(sys.argv[1])
    out = []
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        types = list(f.types)
        if types == [VT.ARRAY]:
            types.append(VT(int(f.parts[3][0])))  # empty array: element type from the parts
        nested = len(types) > 1 and types[0] == VT.ARRAY and types[1] == VT.ARRAY
        out.append({"key": key, "type": type_name(types), "value": None if nested else f.contents()})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
