"""Quantize and dequantize NumPy arrays, with gguf-py's ``gguf.quants`` signatures.

``quantize(data, qtype)`` takes floats whose last axis is a whole number of blocks and returns
the blocks as ``uint8``, last axis ``row elements / block size × bytes per block``;
``dequantize(data, qtype)`` takes such bytes and returns ``float32`` with the last axis in
elements. The work is done by gguf-serde's codecs (ggml's reference algorithms, bit-identical to
ggml's ``quantize_row_*_ref`` / ``dequantize_row_*``; ``dequantize`` equals gguf-py's bit for
bit except for the payload and sign of NaNs made from NaN block scales), in parallel over the CPU's cores, for every
type they cover: more than gguf-py (k-quant and i-quant quantizers, ``Q8_1``, ``Q8_K``, ``I8`` to
``I64``, ``F64``; ``gguf_serde.constants.CAN_QUANTIZE`` / ``CAN_DEQUANTIZE`` list them). ``F32``
and ``F16`` are NumPy conversions, as in gguf-py.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import _native, _numpy_quants
from .constants import CAN_DEQUANTIZE, CAN_QUANTIZE, GGML_QUANT_SIZES, GGMLQuantizationType


class QuantError(Exception):
    """An array that cannot be quantized to the type (its rows are not whole blocks)."""


def quant_shape_to_byte_shape(shape: Sequence[int], quant_type: GGMLQuantizationType) -> tuple[int, ...]:
    """The shape of the bytes of an array of ``shape`` (elements) quantized to ``quant_type``.

    Raises ``ValueError`` if the last axis is not a whole number of blocks.
    """
    block_size, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(quant_type)]
    if shape[-1] % block_size != 0:
        raise ValueError(
            f"Quantized tensor row size ({shape[-1]}) is not a multiple of "
            f"{GGMLQuantizationType(quant_type).name} block size ({block_size})"
        )
    return (*shape[:-1], shape[-1] // block_size * type_size)


def quant_shape_from_byte_shape(shape: Sequence[int], quant_type: GGMLQuantizationType) -> tuple[int, ...]:
    """The shape in elements of bytes of ``shape`` holding blocks of ``quant_type``.

    Raises ``ValueError`` if the last axis is not a whole number of blocks.
    """
    block_size, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(quant_type)]
    if shape[-1] % type_size != 0:
        raise ValueError(
            f"Quantized tensor bytes per row ({shape[-1]}) is not a multiple of "
            f"{GGMLQuantizationType(quant_type).name} type size ({type_size})"
        )
    return (*shape[:-1], shape[-1] // type_size * block_size)


# Types a tensor's `data` view holds as numbers rather than bytes (GGUFReader's convention).
_NUMERIC = {
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
    GGMLQuantizationType.F64: np.float64,
}


def quantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """``data`` quantized to ``qtype``: ``float32``/``float16`` for ``F32``/``F16``, else the
    blocks as ``uint8`` (last axis in bytes).

    For the types gguf-py quantizes (``BF16``, ``Q4_0``, ``Q4_1``, ``Q5_0``, ``Q5_1``, ``Q8_0``,
    ``TQ1_0``, ``TQ2_0``, ``MXFP4``) the bytes are gguf-py's for every input, NaN, ±inf, -0.0,
    subnormal and huge values included: the blocks where ggml's C arithmetic (the Rust codecs')
    and gguf-py's NumPy arithmetic part ways are redone with the latter (see
    ``gguf_serde._numpy_quants``). The other types are ggml's reference quantizers.

    Raises ``QuantError`` if the last axis is not whole blocks, ``NotImplementedError`` for a
    type without a quantizer here (the integer types, ``F64``, and ``IQ2_XXS``, ``IQ2_XS``,
    ``IQ1_S``, which ggml quantizes only with an importance matrix), ``gguf_serde.GGUFError`` for
    values ggml's grid quantizers abort on (NaN or infinite blocks for the ``IQ1``-``IQ3`` types),
    ``AttributeError`` for something that is not an array (as gguf-py).
    """
    qtype = GGMLQuantizationType(qtype)
    if qtype == GGMLQuantizationType.F32:
        return data.astype(np.float32, copy=False)
    if qtype == GGMLQuantizationType.F16:
        return data.astype(np.float16, copy=False)
    if qtype not in CAN_QUANTIZE:
        raise NotImplementedError(f"Quantization for {qtype.name} is not yet implemented")
    block_size, type_size = GGML_QUANT_SIZES[qtype]
    if data.shape[-1] % block_size != 0:
        raise QuantError(f"Can't quantize tensor with shape {data.shape} to {qtype.name}")
    src = np.ascontiguousarray(data, dtype=np.float32)
    out = np.empty(quant_shape_to_byte_shape(data.shape, qtype), dtype=np.uint8)
    _native.quantize(int(qtype), src.reshape(-1), out.reshape(-1))
    blocks = src.reshape(-1, block_size)
    odd = _numpy_quants.irregular(qtype, blocks)
    if odd.size:
        out.reshape(-1, type_size)[odd] = _numpy_quants.quantize_blocks(qtype, blocks[odd])
    return out


def dequantize(data: np.ndarray, qtype: GGMLQuantizationType) -> np.ndarray:
    """``data`` (blocks of ``qtype`` as bytes: an array of ``uint8``, ``int8`` or ``bool``, last
    axis in bytes) as ``float32`` (last axis in elements), as gguf-py's ``dequantize``.

    The values are gguf-py's bit for bit, NaN payloads excepted: in a block whose scale (or
    minimum) is a NaN, the output is NaN where gguf-py's is, but the NaN's sign and payload bits
    may differ (ggml's C arithmetic passes on another of two NaN operands than NumPy: Q4_1/Q5_1
    with ``d`` and ``m`` both NaN give ``m``'s payload, gguf-py ``d``'s; the IQ2/IQ3 types may
    differ in the sign). Every other value, ±inf and -0.0 included, has gguf-py's bits.

    ``F32`` and ``F16`` are gguf-py's: the array's bytes viewed as that type (``F32`` a view of
    ``data``), whatever its dtype or byte order. The integer types and ``F64`` (which gguf-py does
    not dequantize) also take an array of that type in either byte order (a big-endian file's
    tensor view) and convert its values; their bytes are read as little-endian.

    Raises as gguf-py does: ``AttributeError`` for something that is not an array (a list),
    ``IndexError`` for a 0-d array, ``ValueError`` if the last axis is not whole blocks or the
    array's items are wider than a byte, ``NotImplementedError`` for a type without a decoder.
    """
    qtype = GGMLQuantizationType(qtype)
    if qtype == GGMLQuantizationType.F32:
        return data.view(np.float32)
    if qtype == GGMLQuantizationType.F16:
        return data.view(np.float16).astype(np.float32)
    numeric = _NUMERIC.get(qtype)
    if numeric is not None and isinstance(data, np.ndarray) and data.dtype.newbyteorder("=") == np.dtype(numeric):
        return data.astype(np.float32)
    if qtype not in CAN_DEQUANTIZE:
        raise NotImplementedError(f"Dequantization for {qtype.name} is not yet implemented")
    out_shape = quant_shape_from_byte_shape(data.shape, qtype)
    if data.dtype.itemsize != 1:
        raise ValueError(f"dequantize takes {qtype.name} blocks as bytes (uint8), not an array of {data.dtype}")
    src = np.ascontiguousarray(data).view(np.uint8)
    out = np.empty(out_shape, dtype=np.float32)
    _native.dequantize(int(qtype), src.reshape(-1), out.reshape(-1))
    return out


__all__ = ["quantize", "dequantize", "quant_shape_to_byte_shape", "quant_shape_from_byte_shape", "QuantError"]
