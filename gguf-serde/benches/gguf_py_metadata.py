"""Time gguf-py (PyPI `gguf`) reading the Gemma 3 270M metadata into Python objects: the
counterpart of `serde_metadata.rs` (see BENCHMARKS.md, "Serde").

Usage: python gguf_py_metadata.py MODEL.gguf [REPEATS]

Prints the time to open the file (GGUFReader parses metadata and tensor infos) and the best of
REPEATS (default 3) for turning all 33 values into Python objects (`ReaderField.contents()`:
str, int, float, bool, lists), 262,144 tokens included.
"""
import sys
import time

import gguf


def main():
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t = time.perf_counter()
    r = gguf.GGUFReader(path)
    opened = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        values = {k: f.contents() for k, f in r.fields.items() if not k.startswith("GGUF.")}
        best = min(best, time.perf_counter() - t)
    assert len(values) == 33 and len(values["tokenizer.ggml.tokens"]) == 262144
    print(f"gguf-py open (GGUFReader): {opened * 1000:.0f} ms")
    print(f"gguf-py values to Python objects (best of {repeats}): {best * 1000:.0f} ms")


if __name__ == "__main__":
    main()
