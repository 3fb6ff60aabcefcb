"""gguf_serde beside gguf-py (BENCHMARKS.md, "Python: gguf_serde beside gguf-py").

    python python/bench/bench_vs_gguf_py.py MODEL.gguf [--repeat N]

in a venv with both packages (scripts/python-test.sh makes target/python-venv). Measures, for
each package, wall time of:
  open        GGUFReader(path)
  open+fields GGUFReader(path), then contents() of every field (the values a metadata dump
              prints)
  open+parts  GGUFReader(path), then the parts of every field (gguf-py builds them at open)
  dequantize  every tensor of the file with quants.dequantize (the whole model to float32)
gguf-py's times are of one run (they take seconds), ours the best of --repeat runs (default 5).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any, Callable

import gguf
import gguf.quants
import numpy as np

import gguf_serde
import gguf_serde.quants


def timed(f: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = args.model

    def open_only(mod: Any) -> Callable[[], Any]:
        return lambda: mod.GGUFReader(path)

    def open_fields(mod: Any) -> Callable[[], Any]:
        def run() -> None:
            r = mod.GGUFReader(path)
            for f in r.fields.values():
                f.contents()

        return run

    def open_parts(mod: Any) -> Callable[[], Any]:
        def run() -> None:
            r = mod.GGUFReader(path)
            for f in r.fields.values():
                f.parts

        return run

    def dequantize(mod: Any, quants: Any) -> Callable[[], Any]:
        r = mod.GGUFReader(path)

        def run() -> int:
            n = 0
            for t in r.tensors:
                n += quants.dequantize(t.data, t.tensor_type).size
            return n

        return run

    print(f"file: {os.path.basename(path)} ({os.path.getsize(path) / 1e6:.0f} MB)")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, gguf-py {gguf.__version__ if hasattr(gguf, '__version__') else '0.19.0'}, gguf_serde {gguf_serde.__version__}")
    rows = [
        ("open", open_only),
        ("open+fields", open_fields),
        ("open+parts", open_parts),
    ]
    for name, make in rows:
        ref = timed(make(gguf), 1)
        ours = timed(make(gguf_serde), args.repeat)
        print(f"{name:12} gguf-py {ref:9.4f} s   gguf_serde {ours:9.4f} s   {ref / ours:8.0f}x")
    ref = timed(dequantize(gguf, gguf.quants), 1)
    ours = timed(dequantize(gguf_serde, gguf_serde.quants), min(args.repeat, 3))
    print(f"{'dequantize':12} gguf-py {ref:9.4f} s   gguf_serde {ours:9.4f} s   {ref / ours:8.0f}x")


if __name__ == "__main__":
    main()
