"""The ggml tensor types and GGUF value types, as the enums gguf-py names them.

Values are the ids of the GGUF format (ggml's ``enum ggml_type``, GGUF's value type ids); the
ggml type table comes from the Rust library (``gguf_serde._native.ggml_types``), so it holds every
type the library knows, a few more than gguf-py 0.19.0 (``Q2_0``). ``IntEnum``s: a member equals
gguf-py's member of the same name (``GGMLQuantizationType.Q4_K == gguf.GGMLQuantizationType.Q4_K``,
also as dict keys), but they are other classes: ``isinstance(t, gguf.GGMLQuantizationType)`` is
false (convert with ``gguf.GGMLQuantizationType(t)``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from . import _native

#: The file's first 4 bytes, b"GGUF", read as a little-endian uint32 (as gguf-py's).
GGUF_MAGIC = 0x46554747
#: The format version written (the reader takes 2 and 3, as gguf-py's).
GGUF_VERSION = 3
#: Bytes: the alignment of tensor data when the file has no general.alignment.
GGUF_DEFAULT_ALIGNMENT = 32
#: ggml's limit on a tensor's dimensions; GGUFReader refuses a tensor info with more (gguf-py
#: 0.19.0 has no such constant).
GGML_MAX_DIMS = 4

_TYPES = _native.ggml_types()

GGMLQuantizationType = IntEnum(  # type: ignore[misc]
    "GGMLQuantizationType", [(name, tid) for name, tid, *_ in _TYPES], module=__name__
)
GGMLQuantizationType.__doc__ = "A ggml tensor type (ggml's enum ggml_type)."


class GGUFValueType(IntEnum):
    """A GGUF metadata value type."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    @staticmethod
    def get_type(val: Any) -> GGUFValueType:
        """The value type gguf-py's ``GGUFValueType.get_type`` gives a Python value: ``STRING``
        for ``str``, ``bytes`` and ``bytearray``, ``ARRAY`` for a ``list``, ``FLOAT32`` for a
        ``float``, ``BOOL`` for a ``bool``, ``INT32`` for another ``int`` (whatever its size, as
        gguf-py). Raises ``ValueError`` ("Unknown type: …") for anything else (a tuple, a NumPy
        scalar, ``None``)."""
        if isinstance(val, (str, bytes, bytearray)):
            return GGUFValueType.STRING
        if isinstance(val, list):
            return GGUFValueType.ARRAY
        if isinstance(val, float):
            return GGUFValueType.FLOAT32
        if isinstance(val, bool):
            return GGUFValueType.BOOL
        if isinstance(val, int):
            return GGUFValueType.INT32
        raise ValueError(f"Unknown type: {type(val)}")


class GGUFEndian(IntEnum):
    """A GGUF file's byte order."""

    LITTLE = 0
    BIG = 1


#: ggml type -> (elements per block, bytes per block), as gguf-py's ``GGML_QUANT_SIZES``.
GGML_QUANT_SIZES: dict[GGMLQuantizationType, tuple[int, int]] = {
    GGMLQuantizationType(tid): (block, size) for _, tid, block, size, *_ in _TYPES
}

#: The types gguf_serde.quants.quantize / dequantize take (beyond F32 and F16, done with NumPy).
CAN_QUANTIZE: frozenset[GGMLQuantizationType] = frozenset(
    GGMLQuantizationType(tid) for _, tid, _b, _s, q, _d in _TYPES if q
)
CAN_DEQUANTIZE: frozenset[GGMLQuantizationType] = frozenset(
    GGMLQuantizationType(tid) for _, tid, _b, _s, _q, d in _TYPES if d
)
