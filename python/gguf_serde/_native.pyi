"""Typed stubs of gguf_serde._native, the Rust half of the package (python/src/lib.rs)."""

from typing import Any, Callable

__version__: str

class GGUFError(ValueError):
    """A file, value or operation gguf-serde refuses; the message says what and where."""

class DuplicateKeyError(GGUFError):
    """A key stored twice in one file (re-raised as gguf_serde.DuplicateKeyError, a KeyError too)."""

class InvalidUtf8Error(GGUFError):
    """A string that is not UTF-8; args (message, offset of its bytes) (re-raised as
    gguf_serde.GGUFUnicodeDecodeError, a UnicodeDecodeError too)."""

class Reader:
    """A GGUF file memory-mapped and validated by the Rust reader."""

    def __init__(self, path: str) -> None: ...
    def header(self) -> tuple[int, bool, int, int, int, int, int]:
        """(version, big_endian, alignment, data_offset, tensor_infos_end, tensor_count, kv_count)"""
    def kvs(self) -> list[tuple[str, int, int, int | None, int, int]]:
        """(key, pair offset, value type, element type or None, value/elements offset, element count,
        or a string's byte length)"""
    def kv_parts(self, index: int) -> tuple[bytes, bytes, bytes, bytes, bytes, list[int]]:
        """(run offsets, run codes, run counts, run repeats, data indices, types)"""
    def kv_strings(self, index: int) -> str | list[str] | None:
        """The strings joined by NUL (a list if one holds NUL; None if no longer valid UTF-8)"""
    def tensors(self) -> list[tuple[str, int, int, list[int], int, int, int]]:
        """(name, info offset, ggml type id, ne, data offset, bytes, elements)"""

def ggml_types() -> list[tuple[str, int, int, int, bool, bool]]:
    """(name, id, block size, bytes per block, can quantize, can dequantize) of every ggml type."""

def quantize(type_id: int, src: Any, dst: Any) -> None: ...
def dequantize(type_id: int, src: Any, dst: Any) -> None: ...
def irregular_blocks(src: Any, block: int, affine: bool) -> bytes:
    """Native uint64 indices of the blocks ggml's and gguf-py's quantizers may part ways on."""
def quantize_file(
    input: str,
    output: str,
    ftype: str,
    *,
    pure: bool = False,
    leave_output_tensor: bool = False,
    output_tensor_type: str | None = None,
    token_embedding_type: str | None = None,
    tensor_types: list[str] = ...,
    override_kv: list[str] = ...,
    exclude: list[str] = ...,
    imatrix: str | None = None,
    keep_split: bool = False,
    threads: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[str], list[str], list[str], int, int]: ...
def dequantize_file(
    input: str,
    output: str,
    dtype: str = "F32",
    *,
    exclude: list[str] = ...,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[list[str], list[str], list[str], int, int]: ...
def split(
    input: str,
    prefix: str,
    *,
    max_tensors: int | None = None,
    max_size: int | None = None,
    no_tensor_first_split: bool = False,
) -> list[str]: ...
def merge(shard: str, output: str) -> None: ...
def convert(
    model_dir: str,
    output: str,
    outtype: str = "auto",
    *,
    model_name: str | None = None,
    metadata: str | None = None,
    split_max_size: int | None = None,
    vocab: bool = True,
    fp8_as_q8: bool = False,
    progress: Callable[[int], object] | None = None,
) -> tuple[list[str], str]: ...
