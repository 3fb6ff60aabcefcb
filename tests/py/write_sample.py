"""Write a GGUF file with gguf-py (PyPI `gguf`) covering every value type, arrays (empty, nested)
and many tensor types; print JSON describing what was written (the expected reading).

Usage: python write_sample.py OUT [--big-endian] [--alignment N]

The JSON has the shape of `dump.py`: keys with type names and values, tensors with name, dtype,
canonical shape (outermost first) and the sha256 of the bytes as stored in the file.
"""
import hashlib
import json
import sys

import numpy as np
import gguf
from gguf.constants import GGMLQuantizationType as QT

BLOCKS = {  # ggml type -> (elements per block, bytes per block)
    QT.Q4_0: (32, 18), QT.Q4_1: (32, 20), QT.Q5_0: (32, 22), QT.Q5_1: (32, 24), QT.Q8_0: (32, 34),
    QT.Q2_K: (256, 84), QT.Q3_K: (256, 110), QT.Q4_K: (256, 144), QT.Q5_K: (256, 176), QT.Q6_K: (256, 210),
    QT.IQ4_NL: (32, 18), QT.IQ4_XS: (256, 136), QT.TQ2_0: (256, 66), QT.MXFP4: (32, 17),
}


def main():
    out = sys.argv[1]
    big = "--big-endian" in sys.argv
    align = None
    if "--alignment" in sys.argv:
        align = int(sys.argv[sys.argv.index("--alignment") + 1])
    endian = gguf.GGUFEndian.BIG if big else gguf.GGUFEndian.LITTLE
    w = gguf.GGUFWriter(out, "llama", endianess=endian)
    meta = [("general.architecture", "string", "llama")]

    def kv(key, tname, value, fn):
        fn(key, value)
        meta.append((key, tname, value))

    if align is not None:
        w.add_custom_alignment(align)
        meta.append(("general.alignment", "u32", align))
    kv("t.u8", "u8", 200, w.add_uint8)
    kv("t.i8", "i8", -100, w.add_int8)
    kv("t.u16", "u16", 60000, w.add_uint16)
    kv("t.i16", "i16", -30000, w.add_int16)
    kv("t.u32", "u32", 4000000000, w.add_uint32)
    kv("t.i32", "i32", -2000000000, w.add_int32)
    kv("t.f32", "f32", 0.5, w.add_float32)
    kv("t.bool", "bool", True, w.add_bool)
    kv("t.string", "string", "héllo, wörld ✓", w.add_string)
    kv("t.u64", "u64", 18000000000000000000, w.add_uint64)
    kv("t.i64", "i64", -9000000000000000000, w.add_int64)
    kv("t.f64", "f64", -1.25e300, w.add_float64)
    # (gguf-py's add_string silently drops empty strings, so none is written here.)
    kv("t.arr.i32", "array<i32>", [1, -2, 3], w.add_array)
    kv("t.arr.f32", "array<f32>", [0.25, -1.5], w.add_array)
    kv("t.arr.string", "array<string>", ["a", "", "ünïcode"], w.add_array)
    kv("t.arr.bool", "array<bool>", [True, False, True], w.add_array)
    kv("t.arr.nested", "array<array<i32>>", [[1, 2], [3], [4, 5, 6]], w.add_array)
    w.add_key_value("t.arr.u8", [1, 2, 255], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT8)
    meta.append(("t.arr.u8", "array<u8>", [1, 2, 255]))
    w.add_key_value("t.arr.u64", [1, 2**63], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT64)
    meta.append(("t.arr.u64", "array<u64>", [1, 2**63]))

    rng = np.random.default_rng(1234)
    tensors = []

    def add(name, arr, raw_dtype=None, shape=None):
        if raw_dtype is None:
            w.add_tensor(name, arr)
            dtype = {np.float32: "F32", np.float16: "F16", np.int8: "I8", np.int16: "I16",
                     np.int32: "I32", np.int64: "I64", np.float64: "F64"}[arr.dtype.type]
            stored = arr.astype(arr.dtype.newbyteorder(">")) if big else arr
            tensors.append((name, dtype, list(arr.shape), stored.tobytes()))
        else:
            w.add_tensor(name, arr, raw_dtype=raw_dtype)
            tensors.append((name, raw_dtype.name, shape, arr.tobytes()))

    add("f32", rng.standard_normal((3, 64)).astype(np.float32))
    add("f16", rng.standard_normal((2, 3, 32)).astype(np.float16))
    add("i8", rng.integers(-128, 127, (5, 7)).astype(np.int8))
    add("i16", rng.integers(-3000, 3000, (4,)).astype(np.int16))
    add("i32", rng.integers(-100000, 100000, (2, 2, 2, 2)).astype(np.int32))
    add("i64", rng.integers(-10**12, 10**12, (3,)).astype(np.int64))
    add("f64", rng.standard_normal((2, 2)).astype(np.float64))
    bf16 = rng.integers(0, 2**16, (4, 16)).astype(np.uint16).view(np.uint8).reshape(4, 32)
    add("bf16", bf16, QT.BF16, [4, 16])
    for qt, (blk, size) in BLOCKS.items():
        rows, blocks = 3, 2
        raw = rng.integers(0, 256, (rows, blocks * size)).astype(np.uint8)
        add("q." + qt.name.lower(), raw, qt, [rows, blocks * blk])

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    json.dump({
        "version": 3,
        "endianness": "big" if big else "little",
        "alignment": align if align is not None else 32,
        "metadata": [{"key": k, "type": t, "value": v} for k, t, v in meta],
        "tensors": [{"name": n, "dtype": d, "shape": s, "sha256": hashlib.sha256(b).hexdigest()}
                    for n, d, s, b in tensors],
    }, sys.stdout)


if __name__ == "__main__":
    main()
