"""gguf-py's quantizer arithmetic, in NumPy, for the blocks where it and ggml's C reference part ways.

gguf-serde's Rust codecs follow ggml's ``quantize_row_*_ref``; gguf-py's ``gguf.quants``
computes the same formulas with NumPy, and the two give the same bytes for every block of
finite values of moderate size. They differ where a block holds NaN or ±inf (NumPy's ``max`` and
``argmax`` take a NaN as the maximum, C's comparisons skip it), where it is all zeros (ggml
starts its search from ``+0.0``, NumPy takes the block's first element, so the sign of the zero
scale differs), where the scale ``d`` is so small that ``1/d`` overflows, and where NaN or
infinite intermediates are cast to integers (which C leaves undefined and NumPy does the
platform's way). ``quants.quantize`` promises gguf-py's bytes, so such blocks (``irregular``
below) are redone here with the NumPy operations gguf-py's formulas use, in the same order and
the same dtypes, so that the casts of non-finite values come out as NumPy makes them.

Each ``_q_*`` takes ``(n, block size)`` ``float32`` blocks and gives ``(n, bytes per block)``
``uint8`` blocks in ggml's layout. The types are those gguf-py 0.19.0 quantizes with NumPy
(``BF16`` is elementwise and already identical; ``F32``/``F16`` are NumPy casts in both).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import numpy.typing as npt

from . import _native
from .constants import GGMLQuantizationType as Q

Blocks = npt.NDArray[np.float32]
Bytes = npt.NDArray[np.uint8]

def _recip(d: Blocks) -> Blocks:
    """``1/d``, and 0 where ``d`` is 0 (both quantizers' rule for an all-equal block)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.where(d == 0, 0, 1 / d)


def _round_half_away(x: Blocks) -> Blocks:
    """``x`` rounded to the nearest integer, halves away from zero (C's ``roundf``), computed as
    floor(|x|) + floor(2·frac(|x|)) with the sign of ``x`` (NaN for NaN or infinite ``x``)."""
    with np.errstate(invalid="ignore"):
        mag = np.abs(x)
        whole = np.floor(mag)
        return np.sign(x) * (whole + np.floor(2 * (mag - whole)))


def _f16_bytes(x: Blocks) -> Bytes:
    """``(n, 1)`` floats as ``(n, 2)`` bytes of IEEE half floats (NumPy's cast)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(np.float16).view(np.uint8)


def _to_u8(x: Blocks) -> Bytes:
    """Floats cast to ``uint8`` as NumPy casts them (also NaN, infinite and out-of-range ones)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(np.uint8)


def _nibbles(q: Bytes) -> Bytes:
    """A block's 4-bit codes two to a byte: element ``j`` in the low half of byte ``j``, element
    ``j + half`` in the high half (bits above 4 dropped by the ``uint8`` shift)."""
    half = q.shape[-1] // 2
    return (q[:, :half] & np.uint8(0x0F)) | (q[:, half:] << np.uint8(4))


def _symmetric(blocks: Blocks, levels: int) -> tuple[Blocks, Bytes]:
    """Q4_0/Q5_0: the scale (the element of largest magnitude, the first such, over ``-levels/2``)
    and the codes ``trunc(x/d + levels/2 + 0.5)`` clipped to ``levels - 1``."""
    half = levels // 2
    pick = np.abs(blocks).argmax(axis=-1)[:, None]
    d = np.take_along_axis(blocks, pick, axis=-1) / -half
    with np.errstate(invalid="ignore", over="ignore"):
        q = np.trunc(blocks * _recip(d) + np.float32(half + 0.5), dtype=np.float32)
    return d, _to_u8(q).clip(0, levels - 1)


def _affine(blocks: Blocks, levels: int) -> tuple[Blocks, Blocks, Bytes]:
    """Q4_1/Q5_1: the scale ``(max - min) / (levels - 1)``, the minimum, and the codes
    ``trunc((x - min)/d + 0.5)`` clipped to ``levels - 1`` (NaN propagates through max/min)."""
    with np.errstate(invalid="ignore", over="ignore"):
        hi = blocks.max(axis=-1, keepdims=True)
        lo = blocks.min(axis=-1, keepdims=True)
        d = (hi - lo) / (levels - 1)
        q = np.trunc((blocks - lo) * _recip(d) + np.float32(0.5), dtype=np.float32)
    return d, lo, _to_u8(q).clip(0, levels - 1)


def _high_bits(q: Bytes) -> Bytes:
    """Bit 4 of each of a block's 32 codes, packed little-endian into 4 bytes (Q5's ``qh``)."""
    return np.packbits(q >> np.uint8(4), axis=-1, bitorder="little")


def _q4_0(blocks: Blocks) -> Bytes:
    d, q = _symmetric(blocks, 16)
    return np.concatenate([_f16_bytes(d), _nibbles(q)], axis=-1)


def _q5_0(blocks: Blocks) -> Bytes:
    d, q = _symmetric(blocks, 32)
    return np.concatenate([_f16_bytes(d), _high_bits(q), _nibbles(q)], axis=-1)


def _q4_1(blocks: Blocks) -> Bytes:
    d, lo, q = _affine(blocks, 16)
    return np.concatenate([_f16_bytes(d), _f16_bytes(lo), _nibbles(q)], axis=-1)


def _q5_1(blocks: Blocks) -> Bytes:
    d, lo, q = _affine(blocks, 32)
    return np.concatenate([_f16_bytes(d), _f16_bytes(lo), _high_bits(q), _nibbles(q)], axis=-1)


def _q8_0(blocks: Blocks) -> Bytes:
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(blocks).max(axis=-1, keepdims=True) / 127
        q = _round_half_away(blocks * _recip(d))
        codes = q.astype(np.int8).view(np.uint8)
    return np.concatenate([_f16_bytes(d), codes], axis=-1)


def _ternary(blocks: Blocks) -> tuple[Blocks, Bytes]:
    """TQ1_0/TQ2_0: the scale (largest magnitude) and the codes ``round(x/d) + 1`` (0, 1, 2)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(blocks).max(axis=-1, keepdims=True)
        q = _round_half_away(blocks * _recip(d)).astype(np.int8)
    return d, (q + np.int8(1)).astype(np.uint8)


def _base3(q: Bytes, digits: int, width: int) -> Bytes:
    """Codes in groups of ``digits`` rows of ``width``: each column's digits as one base-3 number
    (first row most significant; products wrap in ``uint8``, the sum is NumPy's default integer),
    scaled to a byte as ggml's TQ1_0 stores it (``(v·256 + 242) // 243`` in ``uint16``)."""
    n = q.shape[0]
    weights = np.array([3**k for k in range(4, 4 - digits, -1)], dtype=np.uint8).reshape(1, 1, digits, 1)
    v = np.sum(q.reshape(n, -1, digits, width) * weights, axis=-2).reshape(n, -1)
    return ((v.astype(np.uint16) * 256 + (243 - 1)) // 243).astype(np.uint8)


def _tq1_0(blocks: Blocks) -> Bytes:
    d, q = _ternary(blocks)
    packed = [_base3(q[:, :160], 5, 32), _base3(q[:, 160:240], 5, 16), _base3(q[:, 240:], 4, 4)]
    return np.concatenate([*packed, _f16_bytes(d)], axis=-1)


def _tq2_0(blocks: Blocks) -> Bytes:
    d, q = _ternary(blocks)
    n = q.shape[0]
    shifted = q.reshape(n, -1, 4, 32) << np.array([0, 2, 4, 6], dtype=np.uint8).reshape(1, 1, 4, 1)
    packed = (shifted[:, :, 0] | shifted[:, :, 1] | shifted[:, :, 2] | shifted[:, :, 3]).reshape(n, -1)
    return np.concatenate([packed, _f16_bytes(d)], axis=-1)


# MXFP4's E2M1 values, doubled (the OCP microscaling format's table, as ggml keeps it).
_E2M1_X2 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.int8)


def _mxfp4(blocks: Blocks) -> Bytes:
    n = blocks.shape[0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        amax = np.abs(blocks).max(axis=-1, keepdims=True)
        e = np.where(amax > 0, np.floor(np.log2(amax)) - 2 + 127, 0).astype(np.uint8)
        # E8M0 exponent to a float32 of half its value (ggml's GGML_E8M0_TO_FP32_HALF).
        bits = np.where(
            e < 2, np.uint32(0x00200000) << e.astype(np.uint32), (e - np.uint8(1)).astype(np.uint32) << np.uint32(23)
        )
        scale = bits.view(np.float32)
        err = np.abs(scale.reshape(n, 1, 1) * _E2M1_X2.astype(np.float32) - blocks.reshape(n, -1, 1))
    best = np.argmin(err, axis=-1).astype(np.uint8)
    return np.concatenate([e, _nibbles(best)], axis=-1)


_RULES: dict[int, Callable[[Blocks], Bytes]] = {
    Q.Q4_0: _q4_0,
    Q.Q4_1: _q4_1,
    Q.Q5_0: _q5_0,
    Q.Q5_1: _q5_1,
    Q.Q8_0: _q8_0,
    Q.TQ1_0: _tq1_0,
    Q.TQ2_0: _tq2_0,
    Q.MXFP4: _mxfp4,
}


def irregular(qtype: int, blocks: Blocks) -> npt.NDArray[np.intp]:
    """The indices of the blocks (rows of the C-contiguous ``blocks``) ggml's and gguf-py's
    arithmetic may quantize differently: a NaN or infinite element, all zeros, a largest
    magnitude outside [2⁻⁶⁴, 2⁶⁴], and for Q4_1/Q5_1 a zero minimum (its sign depends on the
    search order) or a range so small that ``1/d`` overflows (found by the Rust half,
    ``_native.irregular_blocks``). Empty for a type without rules here."""
    if qtype not in _RULES or blocks.size == 0:
        return np.empty(0, dtype=np.intp)
    affine = qtype in (Q.Q4_1, Q.Q5_1)
    found = _native.irregular_blocks(blocks.reshape(-1), blocks.shape[-1], affine)
    return np.frombuffer(found, dtype=np.uint64).astype(np.intp)


def quantize_blocks(qtype: int, blocks: Blocks) -> Bytes:
    """``blocks`` quantized with gguf-py's NumPy arithmetic (a type of ``_RULES``)."""
    return _RULES[qtype](blocks)
