"""gguf-py's own reader validation tests (llama.cpp's gguf-py/tests/test_gguf_reader_validation.py,
from the llama.cpp sources scripts/build-llama.sh fetches), run with gguf_serde.GGUFReader in
place of gguf-py's: the file is read as it is and only its import line is swapped, then its test
functions are collected here by pytest."""

from __future__ import annotations

from conftest import llama_cpp_src

_IMPORT = "from gguf.gguf_reader import GGUFReader"
_SWAPPED = "from gguf_serde import GGUFReader"


def _load() -> None:
    src = llama_cpp_src()
    path = src / "gguf-py" / "tests" / "test_gguf_reader_validation.py" if src else None
    if path is None or not path.is_file():
        # The test below fails (under CI) or skips, naming the missing file.
        return
    text = path.read_text(encoding="utf-8")
    assert text.count(_IMPORT) == 1, f"{path}: expected one line {_IMPORT!r}"
    code = compile(text.replace(_IMPORT, _SWAPPED), str(path), "exec")
    names: dict = {"__name__": __name__}
    exec(code, names)
    tests = {k: v for k, v in names.items() if k.startswith("test_") and callable(v)}
    assert tests, f"{path}: no test functions"
    assert names["GGUFReader"].__module__.startswith("gguf_serde")
    globals().update(tests)


_load()


def test_gguf_py_validation_file_found() -> None:
    from conftest import need

    src = llama_cpp_src()
    path = src / "gguf-py" / "tests" / "test_gguf_reader_validation.py" if src else None
    need(path is not None and path.is_file(), "llama.cpp's gguf-py/tests/test_gguf_reader_validation.py ($GGUF_LLAMA_CPP_DIR)")
    assert any(k.startswith("test_") and k != "test_gguf_py_validation_file_found" for k in globals())
