"""The installed package: its typed stubs agree with the module they describe."""

from __future__ import annotations

import ast
from pathlib import Path

import gguf_serde
from gguf_serde import _native, constants


def _stub(name: str) -> ast.Module:
    path = Path(gguf_serde.__file__).parent / name
    assert path.is_file(), f"{name} is not installed with the package"
    return ast.parse(path.read_text(encoding="utf-8"))


def test_the_constants_stub_lists_every_ggml_type() -> None:
    classes = {n.name: n for n in _stub("constants.pyi").body if isinstance(n, ast.ClassDef)}
    for enum in (constants.GGMLQuantizationType, constants.GGUFValueType, constants.GGUFEndian):
        members = {
            t.id: n.value.value
            for n in classes[enum.__name__].body
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        assert members == {m.name: m.value for m in enum}, enum.__name__


def test_the_native_stub_names_every_function_and_class() -> None:
    tree = _stub("_native.pyi")
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    public = {k for k in dir(_native) if not k.startswith("_")}
    assert stubbed == public
    assert (Path(gguf_serde.__file__).parent / "py.typed").is_file()


def test_the_enums_equal_gguf_py_s_as_the_readme_says() -> None:
    import gguf

    for ours, theirs in (
        (constants.GGMLQuantizationType, gguf.GGMLQuantizationType),
        (constants.GGUFValueType, gguf.GGUFValueType),
        (constants.GGUFEndian, gguf.GGUFEndian),
    ):
        for m in theirs:
            mine = ours[m.name]
            assert mine == m and hash(mine) == hash(m) and theirs(mine) is m
            assert not isinstance(mine, theirs)
    for t in gguf.GGMLQuantizationType:
        if t == gguf.GGMLQuantizationType.Q8_1:
            # gguf-py 0.19.0 has 40 bytes, from when its scales were float32; ggml's block_q8_1
            # is 36 (ggml-common.h asserts 2 halves + 32), as llama.cpp's own gguf-py now says.
            assert constants.GGML_QUANT_SIZES[constants.GGMLQuantizationType.Q8_1] == (32, 2 + 2 + 32)
            continue
        assert constants.GGML_QUANT_SIZES[constants.GGMLQuantizationType(t)] == gguf.GGML_QUANT_SIZES[t]
        assert gguf.GGML_QUANT_SIZES[constants.GGMLQuantizationType(t)] == gguf.GGML_QUANT_SIZES[t]
    assert (constants.GGUF_MAGIC, constants.GGUF_VERSION, constants.GGUF_DEFAULT_ALIGNMENT) == (
        gguf.GGUF_MAGIC, gguf.GGUF_VERSION, gguf.GGUF_DEFAULT_ALIGNMENT
    )


def test_get_type_is_gguf_py_s() -> None:
    import gguf
    import numpy as np

    values = ["s", b"b", bytearray(b"x"), [1, 2], [], 1.5, True, False, 0, -(2**70), 2**40]
    for v in values:
        want = gguf.GGUFValueType.get_type(v)
        got = constants.GGUFValueType.get_type(v)
        assert type(got) is constants.GGUFValueType and got == want, v
    for v in [(1, 2), None, np.float32(1.0), np.int64(3), {"a": 1}]:
        try:
            gguf.GGUFValueType.get_type(v)
        except ValueError as e:
            want = e.args[0]
        else:
            raise AssertionError(f"gguf-py took {v!r}")
        try:
            constants.GGUFValueType.get_type(v)
        except ValueError as e:
            assert e.args[0] == want
        else:
            raise AssertionError(f"get_type took {v!r}")
