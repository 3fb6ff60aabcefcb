"""Typed stubs of gguf_serde.constants (GGMLQuantizationType is made from the Rust type table at import)."""

from enum import IntEnum
from typing import Any

GGUF_MAGIC: int
GGUF_VERSION: int
GGUF_DEFAULT_ALIGNMENT: int
GGML_MAX_DIMS: int

class GGMLQuantizationType(IntEnum):
    """A ggml tensor type (ggml's enum ggml_type)."""

    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    IQ2_XXS = 16
    IQ2_XS = 17
    IQ3_XXS = 18
    IQ1_S = 19
    IQ4_NL = 20
    IQ3_S = 21
    IQ2_S = 22
    IQ4_XS = 23
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    IQ1_M = 29
    BF16 = 30
    TQ1_0 = 34
    TQ2_0 = 35
    MXFP4 = 39
    NVFP4 = 40
    Q1_0 = 41
    Q2_0 = 42

class GGUFValueType(IntEnum):
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
    def get_type(val: Any) -> GGUFValueType: ...

class GGUFEndian(IntEnum):
    LITTLE = 0
    BIG = 1

GGML_QUANT_SIZES: dict[GGMLQuantizationType, tuple[int, int]]
CAN_QUANTIZE: frozenset[GGMLQuantizationType]
CAN_DEQUANTIZE: frozenset[GGMLQuantizationType]
