"""Shared fixtures of the Python package's tests.

The corpus is the repository's real files: `models/*.gguf` and `models/vocab/*.gguf` (fetched by
scripts/fetch-corpus.sh and scripts/fetch-gemma.sh) and `tests/data/small.gguf`. Where a test
needs something the machine lacks (the corpus, llama.cpp's sources), it is skipped, except under
CI (`CI` set to anything but `false` or `0`, as tests/README.md has it; scripts/test.sh sets
it), where it fails instead: CI checks everything.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "nightly: a larger matrix of a rule the per-commit run checks on one case; deselected by "
        "scripts/python-test.sh, run by its --nightly (scripts/test-nightly.sh)",
    )


def need(condition: bool, what: str) -> None:
    """Skips the test if `condition` is false (fails under CI), saying what is missing."""
    if condition:
        return
    if os.environ.get("CI", "") not in ("", "false", "0"):
        pytest.fail(f"{what} is missing (CI runs every test: run scripts/setup.sh)")
    pytest.skip(f"{what} is missing")


def corpus() -> list[Path]:
    """Every GGUF file of the corpus, sorted (empty when models/ is not fetched)."""
    files = sorted((ROOT / "models").glob("*.gguf")) + sorted((ROOT / "models" / "vocab").glob("*.gguf"))
    return [ROOT / "tests" / "data" / "small.gguf", *files]


def llama_cpp_src() -> Path | None:
    """The vendored llama.cpp sources of scripts/build-llama.sh (`$GGUF_LLAMA_CPP_DIR/src`)."""
    d = os.environ.get("GGUF_LLAMA_CPP_DIR")
    return Path(d) / "src" if d else None
