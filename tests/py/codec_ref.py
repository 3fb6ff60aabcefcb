#!/usr/bin/env python3
"""Reference outputs from gguf-py's `gguf.quants` for the Rust codec tests.

Usage: codec_ref.py JOBS

JOBS is a text file, one job per line, fields separated by single spaces:

  dequant TYPE IN OUT        IN: raw little-endian blocks of ggml type TYPE (e.g. Q4_K);
                             OUT: the dequantized values as little-endian f32
  quant TYPE IN OUT          IN: little-endian f32 values; OUT: the quantized blocks
  hashes MODEL LIST OUT      LIST: lines "NAME TYPE OFFSET NBYTES" (absolute byte offset of the
                             tensor data in MODEL); OUT: lines "NAME SHA256" where SHA256 is the
                             hex digest of the dequantized values as little-endian f32

Every job runs in this one process (numpy starts once). Exits non-zero on any failure.
"""
import hashlib
import sys

import numpy as np
from gguf import quants
from gguf.constants import GGMLQuantizationType as T


def qtype(name):
    return T[name]


def dequant(name, data):
    t = qtype(name)
    raw = np.frombuffer(data, dtype=np.uint8)
    if t == T.BF16:
        # gguf.quants handles BF16 as a 2-byte "block".
        return quants.dequantize(raw, t).astype("<f4")
    if t == T.F16:
        return raw.view("<f2").astype("<f4")
    return quants.dequantize(raw, t).astype("<f4")


def main():
    with open(sys.argv[1]) as f:
        jobs = [line.split() for line in f if line.strip()]
    for job in jobs:
        kind = job[0]
        if kind == "dequant":
            _, name, src, dst = job
            with open(src, "rb") as f:
                data = f.read()
            dequant(name, data).tofile(dst)
        elif kind == "quant":
            _, name, src, dst = job
            x = np.fromfile(src, dtype="<f4")
            t = qtype(name)
            if t == T.F16:
                out = x.astype("<f2").view(np.uint8)
            else:
                out = quants.quantize(x.reshape(1, -1), t)
            np.asarray(out, dtype=np.uint8).tofile(dst)
        elif kind == "hashes":
            _, model, lst, dst = job
            mm = np.memmap(model, dtype=np.uint8, mode="r")
            lines = []
            with open(lst) as f:
                for line in f:
                    tname, name, off, n = line.split()
                    off, n = int(off), int(n)
                    vals = dequant(name, mm[off:off + n].tobytes())
                    lines.append(f"{tname} {hashlib.sha256(vals.tobytes()).hexdigest()}\n")
            with open(dst, "w") as f:
                f.writelines(lines)
        else:
            raise SystemExit(f"unknown job {kind!r}")


if __name__ == "__main__":
    main()
