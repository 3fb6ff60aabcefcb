"""gguf-serde for Python: GGUF files at Rust speed.

- ``GGUFReader``: gguf-py's ``gguf.GGUFReader`` interface (``fields``, ``tensors``,
  ``get_field``, ``get_tensor``, ``alignment``, ``data_offset``, ``byte_order``, ``endianess``),
  so code written for gguf-py runs after changing its import; the file is validated and indexed
  by the Rust reader, and fields are decoded when first used.
- ``gguf_serde.quants``: ``quantize`` / ``dequantize`` with ``gguf.quants``'s signatures.
- ``quantize_file``, ``dequantize_file``, ``convert``, ``split``, ``merge``: the library's
  whole-file operations (what the ``gguf`` command does), with progress callbacks.

Refusals raise ``GGUFError`` (a ``ValueError``) saying what and where; I/O errors ``OSError``
(``FileNotFoundError``, … by their kind); a bad argument (an unknown type name, a negative
size) ``ValueError``. Files are read memory-mapped (as gguf-py's reader): a file truncated or
rewritten in place while it is being read kills the process with ``SIGBUS``.
Progress callbacks are called from the library's worker threads (with the GIL taken); an
exception one raises does not stop the operation: the first is raised when it returns.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from . import _native, quants
from ._reader import DuplicateKeyError, GGUFReader, GGUFUnicodeDecodeError, ReaderField, ReaderTensor
from .constants import (
    GGML_QUANT_SIZES,
    GGMLQuantizationType,
    GGUFEndian,
    GGUFValueType,
)

GGUFError = _native.GGUFError
__version__: str = _native.__version__

StrPath = str | bytes | os.PathLike[str] | os.PathLike[bytes]


@dataclass(frozen=True)
class Report:
    """What ``quantize_file`` or ``dequantize_file`` did."""

    #: The files written: the output, or with ``keep_split`` its shards.
    paths: list[str]
    #: Names of the tensors converted.
    converted: list[str]
    #: Names of the tensors copied as they were.
    kept: list[str]
    #: Bytes of tensor data read and written.
    bytes_in: int
    bytes_out: int


@dataclass(frozen=True)
class ConvertReport:
    """What ``convert`` did."""

    #: The files written (one, or the shards).
    paths: list[str]
    #: The output type, resolved (``auto`` becomes ``bf16`` or ``f16``).
    outtype: str


def quantize_file(
    input: StrPath,
    output: StrPath,
    ftype: str,
    *,
    pure: bool = False,
    leave_output_tensor: bool = False,
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    tensor_types: Sequence[str] = (),
    override_kv: Sequence[str] = (),
    exclude: Sequence[str] = (),
    imatrix: StrPath | None = None,
    keep_split: bool = False,
    threads: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> Report:
    """Quantizes the model at ``input`` (a file, or the first shard of a split model) to
    ``output`` as llama.cpp's ``llama-quantize`` does for the file type ``ftype`` (``"Q4_K_M"``,
    ``"Q8_0"``, ``"IQ4_XS"``, ``"COPY"``, …), byte-identical to its output (see ``gguf quantize``).

    The options are llama-quantize's: ``pure``, ``leave_output_tensor``, ``output_tensor_type``
    and ``token_embedding_type`` (ggml type names), ``tensor_types`` (``"PATTERN=TYPE"``),
    ``override_kv`` (``"KEY=TYPE:VALUE"``), ``imatrix`` (an importance matrix file), ``keep_split``
    (``output`` is then a prefix); ``exclude``: globs of tensor names kept as they are;
    ``threads``: worker threads (``None`` or ``0``: one per core; the output does not depend on
    it). ``progress(done, total)`` is called with bytes of source tensor data converted.

    An already-quantized input is re-quantized without being asked: tensors already of their
    target type are copied as they are, the others converted from their type (llama-quantize
    refuses this unless given ``--allow-requantize``; here it is always allowed, as with
    ``gguf quantize``, whose ``--allow-requantize`` is accepted and does nothing). Re-quantizing
    loses precision twice: quantize from an ``F32``/``F16``/``BF16`` model where there is one.

    An existing ``output`` is replaced; ``output`` may be ``input`` itself, which is then replaced
    in place (the result is written to a temporary file next to it and renamed over it once
    complete). Raises ``ValueError`` for an unknown ``ftype`` or type name, ``GGUFError`` for a
    file or option the library refuses, ``OSError`` for I/O errors.
    """
    r = _native.quantize_file(
        os.fsdecode(input),
        os.fsdecode(output),
        ftype,
        pure=pure,
        leave_output_tensor=leave_output_tensor,
        output_tensor_type=output_tensor_type,
        token_embedding_type=token_embedding_type,
        tensor_types=list(tensor_types),
        override_kv=list(override_kv),
        exclude=list(exclude),
        imatrix=None if imatrix is None else os.fsdecode(imatrix),
        keep_split=keep_split,
        threads=threads,
        progress=progress,
    )
    return Report(*r)


def dequantize_file(
    input: StrPath,
    output: StrPath,
    dtype: str = "F32",
    *,
    exclude: Sequence[str] = (),
    progress: Callable[[int, int], object] | None = None,
) -> Report:
    """Writes ``input`` with every quantized tensor converted to the float type ``dtype``
    (``"F32"``, ``"F16"``, ``"BF16"``) to ``output`` (``gguf dequantize``); tensors matching a
    glob of ``exclude`` are kept. ``progress(done, total)``: bytes of source tensor data.

    Raises ``GGUFError`` for a ``dtype`` that is a ggml type but not one of those three (use
    ``quantize_file`` to quantize), ``ValueError`` for a name that is no ggml type."""
    r = _native.dequantize_file(os.fsdecode(input), os.fsdecode(output), dtype, exclude=list(exclude), progress=progress)
    return Report(*r)


def convert(
    model_dir: StrPath,
    output: StrPath,
    outtype: str = "auto",
    *,
    model_name: str | None = None,
    metadata: Mapping[str, Any] | StrPath | None = None,
    split_max_size: int | None = None,
    vocab: bool = True,
    fp8_as_q8: bool = False,
    progress: Callable[[int], object] | None = None,
) -> ConvertReport:
    """Converts the Hugging Face checkpoint in ``model_dir`` (``config.json``, safetensors,
    tokenizer files) to GGUF at ``output`` as llama.cpp's ``convert_hf_to_gguf.py`` does,
    byte-identical to it for the architectures ``gguf convert`` lists.

    ``outtype``: ``"f32"``, ``"f16"``, ``"bf16"``, ``"q8_0"`` or ``"auto"``; ``model_name``: the
    reference's ``--model-name``; ``metadata``: its ``--metadata`` override, as a mapping or the
    path of a JSON file; ``split_max_size``: bytes of tensor data per shard (then ``output``
    without ``.gguf`` is the shards' prefix); ``vocab=False`` writes no tokenizer;
    ``fp8_as_q8=True`` is the reference's ``--fp8-as-q8``: the matrices made from FP8 weights of
    a pre-quantized checkpoint (``quantization_config.quant_method = "fp8"``) written as Q8_0.
    ``progress(done)`` is called with the bytes of source tensor data converted so far.

    Raises ``OSError`` (``FileNotFoundError``, …) for a file of the checkpoint that cannot be read
    (a missing ``model_dir`` or ``config.json``), ``GGUFError`` for a checkpoint the converter
    refuses, ``ValueError`` for a bad ``outtype``, ``metadata`` or negative ``split_max_size``.
    """
    if split_max_size is not None and split_max_size < 0:
        raise ValueError(f"split_max_size must be a size in bytes (>= 0), not {split_max_size}")
    meta: str | None = None
    if metadata is not None:
        if isinstance(metadata, Mapping):
            meta = json.dumps(dict(metadata))
        else:
            with open(metadata, encoding="utf-8") as f:
                meta = f.read()
    files, resolved = _native.convert(
        os.fsdecode(model_dir),
        os.fsdecode(output),
        outtype,
        model_name=model_name,
        metadata=meta,
        split_max_size=split_max_size,
        vocab=vocab,
        fp8_as_q8=fp8_as_q8,
        progress=progress,
    )
    return ConvertReport(files, resolved.lower())


def split(
    input: StrPath,
    prefix: StrPath,
    *,
    max_tensors: int | None = None,
    max_size: int | None = None,
    no_tensor_first_split: bool = False,
) -> list[str]:
    """Splits ``input`` into shards ``PREFIX-00001-of-0000N.gguf``, … in ``llama-gguf-split``'s
    layout (byte-identical to its shards for the same limit): at most ``max_tensors`` tensors
    (default 128) or ``max_size`` bytes of tensor data per shard; returns the shard paths.
    Existing shards of the same names are replaced.

    Raises ``ValueError`` for both limits or a negative one, ``GGUFError`` for a limit of 0 or a
    split the library refuses, ``OSError`` for I/O errors."""
    for name, limit in (("max_tensors", max_tensors), ("max_size", max_size)):
        if limit is not None and limit < 0:
            raise ValueError(f"{name} must be >= 0, not {limit}")
    return _native.split(
        os.fsdecode(input),
        os.fsdecode(prefix),
        max_tensors=max_tensors,
        max_size=max_size,
        no_tensor_first_split=no_tensor_first_split,
    )


def merge(shard: StrPath, output: StrPath) -> None:
    """Merges the split model of which ``shard`` is one shard (any) into ``output``, byte-identical
    to the file that was split.

    Raises ``GGUFError`` for a ``shard`` that is not a shard (a file without ``split.count``, as
    ``llama-gguf-split --merge`` refuses it), an ``output`` that is one of the shards, or shards
    that do not belong together; ``OSError`` for I/O errors (a missing shard)."""
    _native.merge(os.fsdecode(shard), os.fsdecode(output))


__all__ = [
    "GGUFReader",
    "ReaderField",
    "ReaderTensor",
    "GGUFError",
    "DuplicateKeyError",
    "GGUFUnicodeDecodeError",
    "GGMLQuantizationType",
    "GGUFValueType",
    "GGUFEndian",
    "GGML_QUANT_SIZES",
    "quants",
    "quantize_file",
    "dequantize_file",
    "convert",
    "split",
    "merge",
    "Report",
    "ConvertReport",
]
