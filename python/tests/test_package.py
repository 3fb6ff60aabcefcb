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
