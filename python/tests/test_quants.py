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


# Values where ggml's C arithmetic and gguf-py's NumPy arithmetic can part ways: NaNs (quiet,
# signalling, negative, with payloads), infinities, signed zeros, subnormals, the float32 and
# float16 limits, and magnitudes near the ends of the float32 range.
_SPECIAL = np.concatenate(
    [
        np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFC12345, 0x7FC00001], dtype=np.uint32).view(np.float32),
        np.array(
            [np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-40, 1.2e-38, -1.2e-38, 3.4028235e38,
             -3.4028235e38, 3e38, -3e38, 1e-30, -1e-30, 2.0**-64, 2.0**64, 1e20, -1e20, 65504.0, 65520.0,
             -65520.0, 6e-8, 1.0, -1.0, 0.5],
            dtype=np.float32,
        ),
    ]
)


def _special_blocks(qtype: Q, seed: int) -> np.ndarray:
    """Rows of one block each: normal values of a random scale (1e-45 to 1e38) with a random
    share (all, half, a tenth, one in fifty) replaced by special values; every special value as
    a whole block; blocks of +0.0 and -0.0 mixed; blocks of tiny ranges around zero and one."""
    block = gguf.GGML_QUANT_SIZES[qtype][0]
    rng = np.random.default_rng(seed)
    rows = []
    for share in (1.0, 0.5, 0.1, 0.02):
        for _ in range(150):
            with np.errstate(over="ignore", under="ignore"):
                x = (rng.standard_normal(block) * 10.0 ** rng.integers(-45, 39)).astype(np.float32)
            pick = rng.random(block) < share
            x[pick] = rng.choice(_SPECIAL, int(pick.sum()))
            rows.append(x)
    rows.extend(np.full(block, v, np.float32) for v in _SPECIAL)
    rows.extend(np.where(rng.random((40, block)) < 0.5, np.float32(0.0), np.float32(-0.0)))
    for base in (0.0, -0.0, 1.0):
        x = np.full(block, base, np.float32)
        x[rng.integers(0, block, 3)] = np.float32(base) + np.float32(1e-44)
        rows.append(x)
    return np.stack(rows)


@pytest.mark.parametrize("qtype", [t for t in GGUF_PY_QUANTIZE if t != Q.F32], ids=lambda t: t.name)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quantize_of_special_values_is_byte_identical_to_gguf_py(qtype: Q, seed: int) -> None:
    x = _special_blocks(qtype, seed * 1000 + int(qtype))
    with np.errstate(all="ignore"):  # gguf-py's NumPy warns on NaN casts and 1/0
        want = ref.quantize(x, qtype)
        got = quants.quantize(x, qtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = np.flatnonzero((got.view(np.uint8) != want.view(np.uint8)).reshape(len(x), -1).any(axis=-1))
    assert differ.size == 0, f"{qtype.name}: blocks {differ[:5].tolist()}, e.g. {x[differ[0]][:8].tolist()}"
    # As a whole tensor (several blocks per row), too.
    rows = x[: len(x) // 4 * 4].reshape(-1, 4 * x.shape[-1])
    with np.errstate(all="ignore"):
        assert np.array_equal(quants.quantize(rows, qtype).view(np.uint8), ref.quantize(rows, qtype).view(np.uint8))


def test_dequantize_takes_what_gguf_py_takes() -> None:
    # gguf-py's dequantize reads the blocks as bytes: a list is refused (AttributeError), a 0-d
    # array (IndexError), an array of wider items or with rows of part blocks (ValueError); an
    # array of one-byte items (int8, bool) is read as its bytes.
    # Rows of 2448 bytes: whole blocks of each type tried (34, 18, 2 and 144 bytes).
    blocks = np.random.default_rng(5).integers(0, 256, (3, 2448), dtype=np.uint8)
    for qtype in (Q.Q8_0, Q.Q4_0, Q.BF16, Q.Q4_K):
        cases = {
            "list": blocks.tolist(),
            "tuple": tuple(blocks[0].tolist()),
            "0-d": np.uint8(3),
            "float32": blocks.astype(np.float32),
            "float16": blocks[:, :1224].astype(np.float16),
            "int32": blocks.astype(np.int32),
            "big-endian uint16": blocks.view(">u2"),
            "part block": blocks[:, :35],
        }
        for what, x in cases.items():
            with np.errstate(all="ignore"):
                try:
                    ref.dequantize(x, qtype)
                except Exception as e:  # noqa: BLE001 - the oracle's exception type is the answer
                    want: type[BaseException] = type(e)
                else:
                    raise AssertionError(f"gguf-py took {what} for {qtype.name}")
            with pytest.raises(want):
                quants.dequantize(x, qtype)
        with np.errstate(all="ignore"):
            for x in (blocks.view(np.int8), blocks.astype(bool)):
                assert _same_bits(quants.dequantize(x, qtype), ref.dequantize(x, qtype))
    # F32 and F16: the bytes viewed as the type, whatever the array (gguf-py's `view`).
    for qtype in (Q.F32, Q.F16):
        for x in (blocks, blocks.view(">u2"), blocks.view(np.int32)):
            assert _same_bits(quants.dequantize(x, qtype), ref.dequantize(x, qtype))
        with pytest.raises(AttributeError):
            ref.dequantize([1.0], qtype)
        with pytest.raises(AttributeError):
            quants.dequantize([1.0], qtype)


def _nan_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` half-float NaNs as little-endian bytes ``(n, 2)``: random sign and payload."""
    bits = np.uint16(0x7C00) | rng.integers(1, 0x400, n, dtype=np.uint16)
    bits |= (rng.integers(0, 2, n, dtype=np.uint16) << np.uint16(15)).astype(np.uint16)
    return bits.astype("<u2").view(np.uint8).reshape(n, 2)


@pytest.mark.parametrize("qtype", [t for t in GGUF_PY_DEQUANTIZE if t not in (Q.F32, Q.F16, Q.BF16)], ids=lambda t: t.name)
def test_dequantize_of_nan_scales_is_gguf_py_s_but_for_nan_payloads(qtype: Q) -> None:
    # What the docs promise: with NaN block scales (every half float of the first 4 bytes of a
    # block made a NaN: d, and m for Q4_1/Q5_1), the output is NaN exactly where gguf-py's is and
    # every other value has gguf-py's bits; only the NaNs' sign and payload may differ.
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(200 + int(qtype))
    n = 64
    blocks = rng.integers(0, 256, (n, size), dtype=np.uint8)
    if size >= 4:
        blocks[:, 0:2] = _nan_f16(rng, n)
        blocks[::2, 2:4] = _nan_f16(rng, (n + 1) // 2)
    with np.errstate(all="ignore"):
        want = ref.dequantize(blocks.reshape(1, -1), qtype)
    got = quants.dequantize(blocks.reshape(1, -1), qtype)
    assert got.shape == want.shape and got.dtype == np.float32
    want = want.astype(np.float32, copy=False)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
