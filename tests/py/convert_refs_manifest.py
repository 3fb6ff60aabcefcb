"""Describe GGUF files for tests/data/convert-refs.json (written by scripts/make-convert-refs.sh).

Usage:
  python convert_refs_manifest.py inputs DIR          -> {"FILE": sha256, ...} of the files in DIR
  python convert_refs_manifest.py gguf FILE           -> the description of one GGUF file

A GGUF description, parsed from the bytes here (no gguf-py), is
  {"sha256", "size", "version", "alignment", "data_offset",
   "keys": [{"key", "type", "value"}],        scalars and strings as values, in file order;
   "tensors": [{"name", "dtype", "shape", "data_offset", "nbytes"}]}
Types are spelled as `gguf inspect --json` spells them (u32, f32, string, bool, array<string>, ...).
An array's entry has, instead of "value", "length" and "sha256": the sha256 of the array's payload
exactly as stored after its element type and count (for numbers, the little-endian elements; for
strings, each one's u64 length and UTF-8 bytes). f32 values are written as the decimal of the
f32 widened to f64 (exact). `shape` is canonical (outermost first: the stored ne reversed);
`data_offset` is absolute (the data section's start plus the tensor's offset); `dtype` is the
ggml type name (F32, F16, BF16, Q8_0, ...); `nbytes` the tensor's size in the file.
"""
import hashlib
import json
import os
import struct
import sys

SCALAR = {0: ("<B", "u8"), 1: ("<b", "i8"), 2: ("<H", "u16"), 3: ("<h", "i16"), 4: ("<I", "u32"),
          5: ("<i", "i32"), 6: ("<f", "f32"), 7: ("<?", "bool"), 10: ("<Q", "u64"), 11: ("<q", "i64"),
          12: ("<d", "f64")}
# ggml types: name, block elements, block bytes
GGML = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 8: ("Q8_0", 32, 34), 30: ("BF16", 1, 2), 2: ("Q4_0", 32, 18),
        3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
        26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 39: ("MXFP4", 32, 17)}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def describe(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("<Q")
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    def skip_value(t):
        nonlocal pos
        if t in SCALAR:
            pos += struct.calcsize(SCALAR[t][0])
        elif t == 8:
            n = take("<Q")
            pos += n
        elif t == 9:
            et, n = take("<I"), take("<Q")
            for _ in range(n):
                skip_value(et)
        else:
            raise ValueError(f"{path}: value type {t} at {pos}")

    def type_name(t, start):
        if t != 9:
            return "string" if t == 8 else SCALAR[t][1]
        et = struct.unpack_from("<I", data, start)[0]
        return f"array<{type_name(et, start + 12)}>"

    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not GGUF")
    pos = 4
    version, n_tensors, n_kv = take("<I"), take("<Q"), take("<Q")
    keys = []
    alignment = 32
    for _ in range(n_kv):
        key = string()
        t = take("<I")
        entry = {"key": key, "type": type_name(t, pos)}
        if t == 9:
            start = pos
            et, n = take("<I"), take("<Q")
            payload = pos
            pos = start
            skip_value(9)
            entry["length"] = n
            entry["sha256"] = hashlib.sha256(data[payload:pos]).hexdigest()
        elif t == 8:
            entry["value"] = string()
        else:
            entry["value"] = take(SCALAR[t][0])
        if key == "general.alignment":
            alignment = entry["value"]
        keys.append(entry)
    infos = []
    for _ in range(n_tensors):
        name = string()
        nd = take("<I")
        ne = [take("<Q") for _ in range(nd)]
        gt, off = take("<I"), take("<Q")
        infos.append((name, ne, gt, off))
    data_offset = (pos + alignment - 1) // alignment * alignment
    tensors = []
    for name, ne, gt, off in infos:
        tname, be, bb = GGML[gt]
        n = 1
        for d in ne:
            n *= d
        tensors.append({"name": name, "dtype": tname, "shape": list(reversed(ne)),
                        "data_offset": data_offset + off, "nbytes": n // be * bb})
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "version": version,
            "alignment": alignment, "data_offset": data_offset, "keys": keys, "tensors": tensors}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("inputs", "gguf"):
        sys.exit("usage: convert_refs_manifest.py inputs DIR | gguf FILE")
    if sys.argv[1] == "inputs":
        d = sys.argv[2]
        out = {name: sha256_file(os.path.join(d, name)) for name in sorted(os.listdir(d))}
    else:
        out = describe(sys.argv[2])
    json.dump(out, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
