"""The whole-file operations through Python: split and merge against llama.cpp's
llama-gguf-split and the input itself, quantize_file against llama.cpp's llama-quantize,
dequantize_file against gguf-py's dequantizers, convert against convert_hf_to_gguf.py's output
(tests/data/convert-refs.json); errors as Python exceptions; progress callbacks."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import gguf
import numpy as np
import pytest
from conftest import ROOT, need

import gguf_serde

SMALL = ROOT / "tests" / "data" / "small.gguf"
SMOLLM = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def llama_tool(name: str) -> Path:
    d = os.environ.get("GGUF_LLAMA_CPP_DIR")
    p = Path(d) / "build" / "bin" / name if d else None
    need(p is not None and p.is_file(), f"llama.cpp's {name} ($GGUF_LLAMA_CPP_DIR/build/bin, scripts/build-llama.sh)")
    assert p is not None
    return p


def test_split_gives_llama_gguf_split_s_shards_and_merge_gives_the_input(tmp_path: Path) -> None:
    tool = llama_tool("llama-gguf-split")
    subprocess.run(
        [tool, "--split", "--split-max-tensors", "1", SMALL, tmp_path / "ref"],
        check=True,
        capture_output=True,
    )
    got = gguf_serde.split(SMALL, tmp_path / "ours", max_tensors=1)
    assert [Path(p).name for p in got] == [f"ours-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    for i, p in enumerate(got, 1):
        assert Path(p).read_bytes() == (tmp_path / f"ref-0000{i}-of-00003.gguf").read_bytes(), p
    gguf_serde.merge(got[1], tmp_path / "merged.gguf")
    assert (tmp_path / "merged.gguf").read_bytes() == SMALL.read_bytes()


def test_split_by_size_and_merge_round_trip(tmp_path: Path) -> None:
    got = gguf_serde.split(SMALL, tmp_path / "s", max_size=1000, no_tensor_first_split=True)
    assert len(got) >= 3
    first = gguf_serde.GGUFReader(got[0])
    assert first.tensors == [] and first.fields["split.count"].contents() == len(got)
    # Paths of bytes as well as str and os.PathLike (as numpy.memmap and GGUFReader take them).
    gguf_serde.merge(os.fsencode(got[-1]), os.fsencode(tmp_path / "m.gguf"))
    assert (tmp_path / "m.gguf").read_bytes() == SMALL.read_bytes()
    with pytest.raises(ValueError):
        gguf_serde.split(SMALL, tmp_path / "t", max_tensors=1, max_size=10)


def test_quantize_file_is_byte_identical_to_llama_quantize(tmp_path: Path) -> None:
    need(SMOLLM.is_file(), "models/SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-corpus.sh)")
    tool = llama_tool("llama-quantize")
    ref = tmp_path / "ref.gguf"
    subprocess.run([tool, "--allow-requantize", SMOLLM, ref, "Q8_0", "2"], check=True, capture_output=True)
    calls: list[tuple[int, int]] = []
    report = gguf_serde.quantize_file(SMOLLM, tmp_path / "ours.gguf", "Q8_0", threads=2, progress=lambda d, t: calls.append((d, t)))
    assert report.paths == [str(tmp_path / "ours.gguf")]
    assert (tmp_path / "ours.gguf").read_bytes() == ref.read_bytes()
    assert report.converted and report.bytes_in > 0
    assert calls and calls[-1][0] == calls[-1][1] and all(d <= t for d, t in calls)


def test_dequantize_file_gives_gguf_py_s_values(tmp_path: Path) -> None:
    out = tmp_path / "f32.gguf"
    calls: list[int] = []
    report = gguf_serde.dequantize_file(SMALL, out, "F32", progress=lambda d, t: calls.append(d))
    assert report.paths == [str(out)] and calls
    src, dst = gguf.GGUFReader(SMALL), gguf.GGUFReader(out)
    for a, b in zip(src.tensors, dst.tensors):
        assert b.tensor_type == gguf.GGMLQuantizationType.F32
        want = gguf.quants.dequantize(a.data, a.tensor_type)
        assert np.array_equal(np.asarray(b.data).view(np.uint32), want.astype(np.float32).view(np.uint32)), a.name


def test_errors_are_python_exceptions(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        gguf_serde.quantize_file(tmp_path / "none.gguf", tmp_path / "o.gguf", "Q8_0")
    with pytest.raises(ValueError, match="file type"):
        gguf_serde.quantize_file(SMALL, tmp_path / "o.gguf", "Q9_9")
    with pytest.raises(FileNotFoundError):
        gguf_serde.merge(tmp_path / "none-00001-of-00002.gguf", tmp_path / "o.gguf")
    with pytest.raises((gguf_serde.GGUFError, OSError)):
        gguf_serde.convert(tmp_path, tmp_path / "o.gguf")
    (tmp_path / "bad.gguf").write_bytes(b"GGUF" + bytes(4))
    with pytest.raises(gguf_serde.GGUFError, match="offset"):
        gguf_serde.split(tmp_path / "bad.gguf", tmp_path / "x")


def test_a_progress_callback_that_raises_fails_the_call(tmp_path: Path) -> None:
    def boom(done: int, total: int) -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        gguf_serde.dequantize_file(SMALL, tmp_path / "o.gguf", progress=boom)


def _has_inputs(folder: Path, inputs: dict[str, str]) -> bool:
    """Whether `folder` has each file `inputs` names with that sha256."""
    import hashlib

    return all(
        (folder / n).is_file() and hashlib.sha256((folder / n).read_bytes()).hexdigest() == h for n, h in inputs.items()
    )


def _kept_case(case: str, inputs: dict[str, str]) -> Path | None:
    """The checkpoint of `case` that the Rust tests keep (`gguf_tests::convert_refs::
    cached_convert_case`: `<target>/test-tmp/convert-cases/<case>-<tag>/`, made by the same
    tests/py/make_convert_inputs.py), if one has each file `inputs` names with its sha256;
    scripts/test.sh runs the cargo tests first, so there is one."""
    import os

    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    for d in sorted((target / "test-tmp" / "convert-cases").glob(f"{case}-*")):
        if d.is_dir() and d.name[len(case) + 1 :].isalnum() and _has_inputs(d, inputs):
            return d
    return None


def convert_case(tmp_path: Path, case: str) -> tuple[Path, dict]:
    """Converter reference `case` of tests/data/convert-refs.json in `tmp_path/case`: a copy of
    the checkpoint the Rust tests keep ([`_kept_case`]), else remade by
    tests/py/make_convert_inputs.py (a few seconds of Python); either way every file's sha256 is
    checked against the manifest. Returns the checkpoint folder and the case's entry (with the
    reference's "outputs")."""
    import hashlib
    import json
    import shutil

    venv_python = ROOT / ".venv" / "bin" / "python"
    need(venv_python.is_file() and (ROOT / "models" / "vocab").is_dir(), ".venv and models/ (scripts/setup.sh)")
    refs = json.loads((ROOT / "tests" / "data" / "convert-refs.json").read_text())["cases"][case]
    ckpt = tmp_path / case
    kept = _kept_case(case, refs["inputs"])
    if kept is not None:
        shutil.copytree(kept, ckpt)
    else:
        subprocess.run(
            [venv_python, ROOT / "tests" / "py" / "make_convert_inputs.py", ROOT / "models", tmp_path, case],
            check=True,
            capture_output=True,
        )
    for name, sha in refs["inputs"].items():
        assert hashlib.sha256((ckpt / name).read_bytes()).hexdigest() == sha, name
    return ckpt, refs


def test_convert_is_byte_identical_to_convert_hf_to_gguf(tmp_path: Path) -> None:
    # The references of tests/data/convert-refs.json: llama.cpp's convert_hf_to_gguf.py run on
    # checkpoints that tests/py/make_convert_inputs.py remakes byte for byte (checked here by
    # their sha256). This case has a model card with front matter and a SentencePiece tokenizer.
    import hashlib

    ckpt, refs = convert_case(tmp_path, "tiny-Llama-2-chat-hf")
    for outtype in ("q8_0", "auto"):
        done: list[int] = []
        out = tmp_path / f"{outtype}.gguf"
        report = gguf_serde.convert(ckpt, out, outtype, progress=done.append)
        assert report.paths == [str(out)] and done and done == sorted(done)
        want = refs["outputs"][outtype]
        assert out.stat().st_size == want["size"], outtype
        assert hashlib.sha256(out.read_bytes()).hexdigest() == want["sha256"], outtype
    assert report.outtype in ("bf16", "f16")


def test_convert_fp8_as_q8_is_byte_identical_to_the_reference(tmp_path: Path) -> None:
    # convert_hf_to_gguf.py --outtype f16 --fp8-as-q8 on the tiny DeepSeek-V3 in FP8 (E4M3 weights
    # with block scales), whose digest tests/data/convert-refs.json holds as "f16-fp8-as-q8"; the
    # same checkpoint without the option gives the plain f16 reference.
    import hashlib

    ckpt, refs = convert_case(tmp_path, "tiny-DeepSeek-V3-FP8")
    for fp8_as_q8, key in ((True, "f16-fp8-as-q8"), (False, "f16")):
        out = tmp_path / f"{key}.gguf"
        gguf_serde.convert(ckpt, out, "f16", fp8_as_q8=fp8_as_q8)
        want = refs["outputs"][key]
        assert out.stat().st_size == want["size"], key
        assert hashlib.sha256(out.read_bytes()).hexdigest() == want["sha256"], key


def test_dequantize_file_takes_only_a_float_type(tmp_path: Path) -> None:
    # `gguf dequantize` writes F32, F16 or BF16; another ggml type is refused, naming those.
    out = tmp_path / "o.gguf"
    for dtype in ("Q8_0", "Q4_K", "I32"):
        with pytest.raises(gguf_serde.GGUFError, match="F32, F16 or BF16"):
            gguf_serde.dequantize_file(SMALL, out, dtype)
    assert not out.exists()
    with pytest.raises(ValueError):
        gguf_serde.dequantize_file(SMALL, out, "F99")


def test_convert_of_a_missing_checkpoint_is_the_os_error_the_reference_raises(tmp_path: Path) -> None:
    # convert_hf_to_gguf.py opens config.json with open(): FileNotFoundError for a missing folder
    # or a folder without it; ours raises the same class, naming the file.
    with pytest.raises(FileNotFoundError, match="config.json"):
        gguf_serde.convert(tmp_path / "none", tmp_path / "o.gguf")
    with pytest.raises(FileNotFoundError, match="config.json"):
        gguf_serde.convert(tmp_path, tmp_path / "o.gguf")
    with pytest.raises(ValueError, match="split_max_size"):
        gguf_serde.convert(tmp_path, tmp_path / "o.gguf", split_max_size=-1)


def test_merge_refuses_what_llama_gguf_split_refuses(tmp_path: Path) -> None:
    # llama-gguf-split --merge refuses a file without split.count ("input file does not contain
    # split.count metadata"); ours does too, and writes nothing.
    tool = llama_tool("llama-gguf-split")
    r = subprocess.run([tool, "--merge", SMALL, tmp_path / "ref.gguf"], capture_output=True)
    assert r.returncode != 0 and b"split.count" in r.stderr
    with pytest.raises(gguf_serde.GGUFError, match="cannot merge.*split.count"):
        gguf_serde.merge(SMALL, tmp_path / "m.gguf")
    assert not (tmp_path / "m.gguf").exists()
    # An output that is one of the shards is refused, as a merge (the shard is left as it was).
    shards = gguf_serde.split(SMALL, tmp_path / "s", max_tensors=1)
    before = Path(shards[1]).read_bytes()
    with pytest.raises(gguf_serde.GGUFError, match="cannot merge: the output .* is one of the shards"):
        gguf_serde.merge(shards[0], shards[1])
    assert Path(shards[1]).read_bytes() == before


@pytest.mark.parametrize("limit", ["max_tensors", "max_size"])
def test_a_negative_split_limit_is_a_value_error(tmp_path: Path, limit: str) -> None:
    with pytest.raises(ValueError, match=f"{limit} must be >= 0, not -1"):
        gguf_serde.split(SMALL, tmp_path / "s", **{limit: -1})
    assert list(tmp_path.iterdir()) == []
