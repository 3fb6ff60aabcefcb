"""gguf_serde.quants against gguf.quants (the oracle): quantize byte for byte for every type
gguf-py quantizes, dequantize bit for bit for every type gguf-py dequantizes (random blocks and
the real tensors of the corpus); the types only we have (whose bytes the Rust tests compare with
ggml's) handed through the binding (a round trip within the type's precision); errors as
gguf-py's."""

from __future__ import annotations

from pathlib import Path

import gguf
import gguf.quants as ref
import numpy as np
import pytest
from conftest import ROOT, need

import gguf_serde
from gguf_serde import quants

Q = gguf.GGMLQuantizationType


def _gguf_py_quantizes(t: Q) -> bool:
    if t in (Q.F32, Q.F16):
        return True
    cls = ref._type_traits.get(t)
    return cls is not None and "quantize_blocks" in vars(cls)


GGUF_PY_QUANTIZE = [t for t in Q if _gguf_py_quantizes(t)]
GGUF_PY_DEQUANTIZE = [Q.F32, Q.F16, *ref._type_traits]


def _floats(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Normal values at several scales, a zero block, a constant block and large magnitudes."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    x *= np.float32(10.0) ** rng.integers(-3, 4, (*shape[:-1], 1)).astype(np.float32)
    flat = x.reshape(-1)
    flat[:256] = 0.0
    flat[256:512] = 0.75
    flat[512:520] = [1e4, -1e4, 3e-8, -3e-8, 65504.0, -65504.0, 1e-30, 7.0]
    return x


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and dtype and the same bits, any NaN counting as one value (IEEE 754 leaves
    the payload of an operation on two NaNs open; see the codec docs)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a = np.where(np.isnan(a), np.float32(np.nan), a)
    b = np.where(np.isnan(b), np.float32(np.nan), b)
    return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def test_the_types_compared() -> None:
    # gguf-py 0.19.0 quantizes F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, TQ1_0, TQ2_0 (and
    # maybe more in later versions: all of them are compared).
    assert {Q.BF16, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.TQ1_0, Q.TQ2_0} <= set(GGUF_PY_QUANTIZE)
    assert {Q.Q4_K, Q.Q6_K, Q.IQ2_XXS, Q.IQ4_XS, Q.MXFP4} <= set(GGUF_PY_DEQUANTIZE)


@pytest.mark.parametrize("qtype", GGUF_PY_QUANTIZE, ids=lambda t: t.name)
def test_quantize_is_byte_identical_to_gguf_py(qtype: Q) -> None:
    x = _floats((8, 512), seed=int(qtype))
    want = ref.quantize(x, qtype)
    got = quants.quantize(x, qtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    # A 1-D input and a non-contiguous one give the same bytes as their contiguous rows.
    assert np.array_equal(quants.quantize(x[0], qtype), ref.quantize(x[0], qtype))
    t = np.asfortranarray(x)
    assert np.array_equal(quants.quantize(t, qtype), ref.quantize(t, qtype))


@pytest.mark.parametrize("qtype", GGUF_PY_DEQUANTIZE, ids=lambda t: t.name)
def test_dequantize_of_random_blocks_is_bit_identical_to_gguf_py(qtype: Q) -> None:
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(100 + int(qtype))
    blocks = rng.integers(0, 256, (6, 4 * 256 // block * size), dtype=np.uint8)
    with np.errstate(all="ignore"):  # random scales: gguf-py's NumPy warns on inf * 0
        want = ref.dequantize(blocks, qtype)
    got = quants.dequantize(blocks, qtype)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert _same_bits(got, want)


def _models() -> list[Path]:
    return sorted((ROOT / "models").glob("*.gguf"))


@pytest.mark.parametrize("name", ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"])
def test_dequantize_of_the_corpus_tensors_is_bit_identical_to_gguf_py(name: str) -> None:
    path = ROOT / "models" / name
    need(path.is_file(), f"models/{name} (scripts/setup.sh)")
    reader = gguf_serde.GGUFReader(path)
    seen = set()
    for t in reader.tensors:
        key = (t.tensor_type, t.data.ndim)
        if key in seen:
            continue
        seen.add(key)
        rows = t.data[:64] if t.data.ndim > 1 else t.data
        want = ref.dequantize(np.asarray(rows), Q(t.tensor_type))
        got = quants.dequantize(rows, t.tensor_type)
        assert _same_bits(got, want.astype(np.float32, copy=False)), t.name
    assert len(seen) >= 3


@pytest.mark.parametrize(
    "qtype", sorted(gguf_serde.constants.CAN_QUANTIZE - set(GGUF_PY_QUANTIZE)), ids=lambda t: t.name
)
def test_types_gguf_py_lacks_round_trip(qtype: gguf_serde.GGMLQuantizationType) -> None:
    # No gguf-py oracle for these quantizers: the Rust codecs are checked byte for byte against
    # ggml itself (gguf-serde/tests/data/codec); here the binding is checked to hand the data
    # through (a round trip close to the input, and every block decoded by gguf-py where it can).
    x = np.random.default_rng(int(qtype)).standard_normal((4, 512)).astype(np.float32)
    q = quants.quantize(x, qtype)
    block, size = gguf_serde.GGML_QUANT_SIZES[qtype]
    assert q.dtype == np.uint8 and q.shape == (4, 512 // block * size)
    y = quants.dequantize(q, qtype)
    assert y.shape == x.shape and y.dtype == np.float32
    err = float(np.sqrt(np.mean((y - x) ** 2)))
    # N(0, 1) data: even a 1-bit sign quant (error sqrt(1 - 2/pi) = 0.60) stays under 0.75.
    assert err < 0.75, f"{qtype.name}: rms error {err}"
    if qtype in ref._type_traits:
        assert _same_bits(y, ref.dequantize(q, Q(qtype)))


def test_errors_are_gguf_py_s() -> None:
    x = np.zeros((2, 48), np.float32)
    with pytest.raises(ref.QuantError):
        ref.quantize(x, Q.Q4_0)
    with pytest.raises(quants.QuantError):
        quants.quantize(x, Q.Q4_0)
    for mod in (ref, quants):
        with pytest.raises(NotImplementedError):
            mod.quantize(np.zeros((1, 256), np.float32), Q.IQ2_XXS)
        with pytest.raises(ValueError):
            mod.dequantize(np.zeros((1, 33), np.uint8), Q.Q4_K)
    assert quants.quant_shape_to_byte_shape((3, 512), Q.Q4_K) == ref.quant_shape_to_byte_shape((3, 512), Q.Q4_K)
    assert quants.quant_shape_from_byte_shape((3, 288), Q.Q4_K) == ref.quant_shape_from_byte_shape((3, 288), Q.Q4_K)
