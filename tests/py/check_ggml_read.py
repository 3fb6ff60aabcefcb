"""Checks the output of tests/harness/ggml_read (ggml's reader) against gguf-py on the same file.

Usage: python tests/py/check_ggml_read.py GGML_READ_OUTPUT FILE [MAX_HASHED_TENSOR_BYTES]

Rebuilds the dump that tests/harness/ggml_read.c documents from gguf-py's GGUFReader: header
numbers (the data offset unpadded when there are no tensors, as ggml gives it), every key with its
type and value (floats as bit patterns, arrays as element type, count and FNV-1a 64 of the element
encoding), every tensor's name, ggml type name, ne without trailing 1s, offset relative to the data
section and byte size; tensor data hashes too for tensors of at most MAX_HASHED_TENSOR_BYTES
(default 1 MiB; pure Python hashes about 10 MB/s). Prints the number of lines compared and exits 1
at the first difference.
"""

import struct
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType

FNV_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK = (1 << 64) - 1

NAMES = {
    GGUFValueType.UINT8: "u8", GGUFValueType.INT8: "i8", GGUFValueType.UINT16: "u16",
    GGUFValueType.INT16: "i16", GGUFValueType.UINT32: "u32", GGUFValueType.INT32: "i32",
    GGUFValueType.FLOAT32: "f32", GGUFValueType.BOOL: "bool", GGUFValueType.STRING: "str",
    GGUFValueType.ARRAY: "arr", GGUFValueType.UINT64: "u64", GGUFValueType.INT64: "i64",
    GGUFValueType.FLOAT64: "f64",
}


def fnv1a(data: bytes, h: int = FNV_BASIS) -> int:
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def esc(b: bytes) -> str:
    if not b:
        return '""'
    out = []
    for c in b:
        if c == 0x5C:
            out.append("\\\\")
        elif 0x21 <= c <= 0x7E and c != 0x22:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "".join(out)


def scalar(t: GGUFValueType, part: np.ndarray) -> str:
    if t == GGUFValueType.STRING:
        return esc(bytes(part))
    v = part[0]
    if t == GGUFValueType.FLOAT32:
        return "0x%08x" % struct.unpack("<I", struct.pack("<f", v))[0]
    if t == GGUFValueType.FLOAT64:
        return "0x%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]
    if t == GGUFValueType.BOOL:
        return "true" if v else "false"
    return str(int(v))


def ggml_type_name(name: str) -> str:
    n = name.lower()
    return n[:-2] + "_K" if n.endswith("_k") else n


def expected(path: str, max_hash: int) -> list:
    r = GGUFReader(path)
    fields = [f for k, f in r.fields.items() if not k.startswith("GGUF.")]
    lines = [
        "version %d" % r.fields["GGUF.version"].parts[0][0],
        "alignment %d" % r.alignment,
        # ggml pads the data offset only when there are tensors (gguf.h, gguf_get_data_offset);
        # without, it is the end of the metadata.
        "data_offset %d" % (r.data_offset if r.tensors else
                            max(f.offset + sum(p.nbytes for p in f.parts) for f in r.fields.values())),
        "n_kv %d" % len(fields),
        "n_tensors %d" % len(r.tensors),
    ]
    for f in fields:
        t = f.types[0]
        key = esc(bytes(f.parts[1]))
        if t != GGUFValueType.ARRAY:
            lines.append("kv %s %s %s" % (key, NAMES[t], scalar(t, f.parts[f.data[0]])))
            continue
        et = f.types[1]
        h = FNV_BASIS
        if et == GGUFValueType.STRING:
            for i in f.data:
                s = bytes(f.parts[i])
                h = fnv1a(s, fnv1a(struct.pack("<Q", len(s)), h))
        else:
            parts = [f.parts[i] for i in f.data]
            if et == GGUFValueType.BOOL:  # ggml stores any non-zero byte as 1
                raw = bytes(1 if p[0] else 0 for p in parts)
            else:
                raw = np.concatenate(parts).tobytes() if parts else b""
            h = fnv1a(raw, h)
        lines.append("kv %s arr %s %d fnv1a64:%016x" % (key, NAMES[et], len(f.data), h))
    for t in r.tensors:
        ne = [int(d) for d in t.field.parts[3]]
        while len(ne) > 1 and ne[-1] == 1:
            ne.pop()
        offset = int(t.field.parts[-1][0])
        data = bytes(np.asarray(t.data).view(np.uint8).reshape(-1)) if t.n_bytes <= max_hash else None
        lines.append(
            "tensor %s %s %d %s %d %d %s"
            % (esc(t.name.encode()), ggml_type_name(t.tensor_type.name), len(ne), ",".join(map(str, ne)),
               offset, t.n_bytes, "fnv1a64:%016x" % fnv1a(data) if data is not None else None)
        )
    return lines


def main() -> int:
    got = open(sys.argv[1], encoding="ascii").read().splitlines()
    max_hash = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 20
    want = expected(sys.argv[2], max_hash)
    if len(got) != len(want):
        print("line count: ggml %d, gguf-py %d" % (len(got), len(want)))
        return 1
    hashed = 0
    for i, (g, w) in enumerate(zip(got, want)):
        if w.endswith(" None"):  # tensor too large to hash here: compare all but the hash
            g, w = g.rsplit(" ", 1)[0], w.rsplit(" ", 1)[0]
        elif w.startswith("tensor "):
            hashed += 1
        if g != w:
            print("line %d differs:\n  ggml    %s\n  gguf-py %s" % (i + 1, g, w))
            return 1
    print("%s: %d lines equal (%d tensor data hashes compared)" % (sys.argv[2], len(got), hashed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
