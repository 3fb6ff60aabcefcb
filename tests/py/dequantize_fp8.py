"""A pre-quantized FP8 checkpoint's float32 twin, for transformers' logits oracle.

Usage: python dequantize_fp8.py SRC_DIR DST_DIR

transformers runs an FP8 checkpoint on the CPU only by dequantizing it to bfloat16, and only when
the block size divides every weight, so the tiny FP8 cases (whose edge blocks are partial on
purpose) are run by transformers from this twin instead: DST_DIR gets SRC_DIR's files, with each
FP8 weight `X` (F8_E4M3 or F8_E5M2) and its `X_scale_inv` replaced by the float32 weight they
mean — each code's exact value (make_convert_inputs.fp8_values) times its block's scale, one
float32 product, as DeepSeek's `weight_dequant` and llama.cpp's converter compute it — and
config.json without `quantization_config`. Other tensors are copied as they are. Numpy and
safetensors only.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_convert_inputs import SAFETENSORS_DTYPES, fp8_values, write_safetensors  # noqa: E402

NUMPY = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "F8_E4M3": "u1", "F8_E5M2": "u1"}


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", None)
    out = {}
    for name, h in header.items():
        a, b = h["data_offsets"]
        out[name] = (h["dtype"], np.frombuffer(data[a:b], dtype=NUMPY[h["dtype"]]).reshape(h["shape"]))
    return meta, out


def widen(dtype, a):
    if dtype == "BF16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def main():
    src, dst = sys.argv[1:3]
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    br, bc = cfg["quantization_config"]["weight_block_size"]
    del cfg["quantization_config"]
    for name in sorted(os.listdir(src)):
        if name == "config.json":
            with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
                f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        elif name.endswith(".safetensors"):
            meta, tensors = read_safetensors(os.path.join(src, name))
            out, dtypes = {}, {}
            for t, (dtype, a) in tensors.items():
                if t.endswith("_scale_inv"):
                    continue
                if dtype in ("F8_E4M3", "F8_E5M2"):
                    vals = np.concatenate([fp8_values(dtype), [np.nan] * (128 - len(fp8_values(dtype)))])
                    x = np.where(a & 0x80, -1.0, 1.0) * vals[a & 0x7F]
                    sdtype, s = tensors[t + "_scale_inv"]
                    s = widen(sdtype, s)
                    s = np.repeat(np.repeat(s, br, axis=0), bc, axis=1)[: a.shape[0], : a.shape[1]]
                    out[t] = (x.astype(np.float32) * s).astype("<f4")
                    dtypes[t] = "F32"
                else:
                    out[t], dtypes[t] = np.ascontiguousarray(a), dtype
            assert all(d in SAFETENSORS_DTYPES for d in dtypes.values())
            write_safetensors(os.path.join(dst, name), out, dtypes, meta)
        elif name == "model.safetensors.index.json":
            sys.exit("a sharded FP8 checkpoint is not handled here")
        elif os.path.isfile(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(dst, name))


if __name__ == "__main__":
    main()
