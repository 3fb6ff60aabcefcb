"""``GGUFReader``: gguf-py's reader interface over gguf-serde's validating reader.

The file is opened and validated by the Rust library (``gguf_serde._native.Reader``); what
gguf-py's reader builds eagerly at open (a NumPy array per key, string and array element) is
built here on first use, field by field, with the same layout:

- ``ReaderField.parts``: NumPy views of ``GGUFReader.data`` (the ``numpy.memmap`` of the file),
  in gguf-py's order: a pair's key length, key bytes and type id, then its value (a scalar is one
  part; a string its length and its bytes; an array its element type, its length, then each
  element's parts); ``data`` the indices of the parts that hold the value, ``types`` the value's
  types (an array's, then its first element's);
- ``ReaderField.contents()``: the value decoded from the mapping's bytes at each call (so a
  change made to the file, through the parts with mode ``"r+"`` or by another process, is what
  ``contents()`` returns, as in gguf-py): with mode ``"r"`` numbers and strings from one view and
  string arrays by the Rust reader (one ``str`` for all), with ``"r+"``/``"c"`` from the parts;
  strings are decoded as UTF-8 as gguf-py does (``UnicodeDecodeError`` if they are not);
- lazily made things (``parts``, ``data``, ``types``, ``tensors``) are made once, under a lock,
  also when several threads ask for them first at once;
- ``ReaderTensor``: gguf-py's named tuple; ``data`` a view of the mapping, typed for the float
  and integer types, bytes (``uint8``, rows of blocks) for the quantized ones.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Literal, NamedTuple, Union

import numpy as np
import numpy.typing as npt

from . import _native
from .constants import (
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGMLQuantizationType,
    GGUFEndian,
    GGUFValueType,
)
from .quants import quant_shape_to_byte_shape

GGUFError = _native.GGUFError


class DuplicateKeyError(GGUFError, KeyError):  # type: ignore[misc, valid-type]
    """A key stored twice: a ``GGUFError`` (``ValueError``) and, as gguf-py raises, a ``KeyError``.

    ``args[0]`` is gguf-py's message exactly (``"Duplicate KEY already in list at offset N"``,
    ``N`` the offset of the second pair); for a key the file holds twice, ``args[1]`` is
    gguf-serde's own message.
    """

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


class GGUFUnicodeDecodeError(GGUFError, UnicodeDecodeError):  # type: ignore[misc, valid-type]
    """A key or tensor name of the file that is not UTF-8, refused when the file is opened, as
    gguf-py refuses it (ggml and the Rust reader accept any bytes): a ``GGUFError``
    (``ValueError``) and the ``UnicodeDecodeError`` gguf-py raises when it decodes that string,
    with the same ``object``, ``start``, ``end`` and ``reason``; ``gguf_message`` says where. A
    value that is not UTF-8 raises gguf-py's ``UnicodeDecodeError`` from ``contents()``, as
    gguf-py does."""

    gguf_message: str


def _utf8_error(data: npt.NDArray[np.uint8], message: str, at: int) -> BaseException:
    """The ``GGUFUnicodeDecodeError`` of the string whose bytes start at ``at`` (its ``uint64``
    length just before, in the file's byte order: swapped when the version's low half reads 0,
    gguf-py's test), or a ``GGUFError`` of ``message`` if the bytes do not say more."""
    swapped = int(data[4:8].view(np.uint32)[0]) & 0xFFFF == 0
    n = int(data[at - 8 : at].view(np.uint64).byteswap()[0] if swapped else data[at - 8 : at].view(np.uint64)[0])
    raw = data[at : at + n].tobytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        err = GGUFUnicodeDecodeError(e.encoding, e.object, e.start, e.end, e.reason)
        err.gguf_message = message
        err.add_note(message)
        return err
    return GGUFError(message)


# The NumPy type of each fixed-size GGUF value type (the codes the Rust reader gives parts).
_SCALAR_TYPES: dict[int, type[np.generic]] = {
    GGUFValueType.UINT8: np.uint8,
    GGUFValueType.INT8: np.int8,
    GGUFValueType.UINT16: np.uint16,
    GGUFValueType.INT16: np.int16,
    GGUFValueType.UINT32: np.uint32,
    GGUFValueType.INT32: np.int32,
    GGUFValueType.FLOAT32: np.float32,
    GGUFValueType.UINT64: np.uint64,
    GGUFValueType.INT64: np.int64,
    GGUFValueType.FLOAT64: np.float64,
    GGUFValueType.BOOL: np.bool_,
}

# The element type a tensor's `data` view has, for the types that are not read as bytes.
_TENSOR_ITEM_TYPES: dict[int, type[np.generic]] = {
    GGMLQuantizationType.F16: np.float16,
    GGMLQuantizationType.F32: np.float32,
    GGMLQuantizationType.F64: np.float64,
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
}

# A field's data indices, its types, and a function making its parts.
_Layout = tuple[list[int], list[GGUFValueType], Callable[[], list[npt.NDArray[Any]]]]

# Held while a lazily made attribute (a field's layout or parts, a reader's tensors) is made:
# each is made once even when threads ask for it at the same time. Re-entrant: making the
# tensors makes their fields' parts.
_LAZY = threading.RLock()


class ReaderField:
    """One field of the file, as gguf-py's ``ReaderField``: a key/value pair, a header field
    (``GGUF.version``, ``GGUF.tensor_count``, ``GGUF.kv_count``) or a tensor info.

    ``offset``: where the field starts in the file; ``name``: the key (or tensor name);
    ``parts``: NumPy views of the file's bytes; ``data``: indices into ``parts`` of the value;
    ``types``: the value types (empty for a tensor info). ``data`` and ``types`` are made on first
    access, ``parts`` (a view per string and array element) on first access of ``parts``, each
    once (thread-safe).
    """

    __slots__ = ("offset", "name", "_parts", "_data", "_types", "_load", "_build", "_value")

    def __init__(
        self,
        offset: int,
        name: str,
        parts: list[npt.NDArray[Any]] | None = None,
        data: list[int] | None = None,
        types: list[GGUFValueType] | None = None,
        *,
        load: Callable[[], _Layout] | None = None,
        value: Callable[[], Any] | None = None,
    ) -> None:
        self.offset = offset
        self.name = name
        self._parts = parts if parts is not None or load is not None else []
        self._data = data if data is not None or load is not None else [-1]
        self._types = types if types is not None or load is not None else []
        # `load()` gives (data, types, a function building the parts).
        self._load = load
        self._build: Callable[[], list[npt.NDArray[Any]]] | None = None
        # A function decoding the value (flat for arrays) from the mapping's current bytes.
        self._value: Any = value

    def _loaded(self) -> None:
        if self._load is not None:
            with _LAZY:
                if self._load is not None:
                    self._data, self._types, self._build = self._load()
                    self._load = None

    @property
    def parts(self) -> list[npt.NDArray[Any]]:
        parts = self._parts
        if parts is None:
            self._loaded()
            with _LAZY:
                if self._parts is None:
                    assert self._build is not None
                    self._parts = self._build()
                    self._build = None
                parts = self._parts
        return parts

    @property
    def data(self) -> list[int]:
        self._loaded()
        return self._data  # type: ignore[return-value]

    @property
    def types(self) -> list[GGUFValueType]:
        self._loaded()
        return self._types  # type: ignore[return-value]

    def contents(self, index_or_slice: int | slice = slice(None)) -> Any:
        """The value: a number, bool or ``str``; for an array the list of its elements (arrays of
        arrays flattened, as gguf-py does), or the element or sub-list ``index_or_slice`` picks;
        ``None`` for a tensor info."""
        if self._value is not None:
            value = self._value()
            if value is not _FROM_PARTS:
                return value[index_or_slice] if isinstance(value, list) else value
        return _contents_from_parts(self.parts, self.data, self.types, index_or_slice)

    def __repr__(self) -> str:
        return f"ReaderField(offset={self.offset}, name={self.name!r})"


# What a field's value function gives when the value is to be decoded from the parts instead.
_FROM_PARTS = object()


def _contents_from_parts(
    parts: list[npt.NDArray[Any]], data: list[int], types: list[GGUFValueType], index_or_slice: int | slice
) -> Any:
    """``contents()`` read from the parts (gguf-py's rules: strings decoded as UTF-8; an array's
    elements are the parts its data indices name, an array of arrays flattened)."""
    if not types:
        return None
    if types[0] == GGUFValueType.ARRAY:
        picked = data[index_or_slice]
        if types[-1] == GGUFValueType.STRING:
            if isinstance(index_or_slice, int):
                return parts[picked].tobytes().decode("utf-8")  # type: ignore[index]
            return [parts[i].tobytes().decode("utf-8") for i in picked]  # type: ignore[union-attr]
        if isinstance(index_or_slice, int):
            return parts[picked].tolist()[0]  # type: ignore[index]
        return [x for i in picked for x in parts[i].tolist()]  # type: ignore[union-attr]
    if types[0] == GGUFValueType.STRING:
        return parts[-1].tobytes().decode("utf-8")
    return parts[-1].tolist()[0]


class ReaderTensor(NamedTuple):
    """A tensor, as gguf-py's ``ReaderTensor``: ``shape`` the stored dims (``ne``, fastest first,
    a ``uint64`` view); ``data`` a view of the mapping in NumPy order (outermost first), of the
    type's NumPy type for F16/F32/F64/I8/I16/I32/I64 and of bytes (``uint8``, last axis the row's
    blocks) for the others; ``data_offset`` absolute; ``field`` the tensor info."""

    name: str
    tensor_type: GGMLQuantizationType
    shape: npt.NDArray[np.uint64]
    n_elements: int
    n_bytes: int
    data_offset: int
    data: npt.NDArray[Any]
    field: ReaderField


class GGUFReader:
    """A GGUF file, read as gguf-py's ``gguf.GGUFReader`` reads it (same attributes, same field
    layout), validated and indexed by gguf-serde's Rust reader.

    ``path``: a ``str``, ``bytes`` or ``os.PathLike`` (what ``numpy.memmap`` takes). ``mode``:
    the ``numpy.memmap`` mode of ``data`` (``"r"``, or ``"r+"``/``"c"`` to change values through
    the parts, as with gguf-py). Raises ``ValueError`` (``gguf_serde.GGUFError``) naming what is
    wrong and where for a file the reader refuses (``GGUFUnicodeDecodeError``, also a
    ``UnicodeDecodeError``, for a string that is not UTF-8), ``KeyError`` too for a duplicate key,
    also one named like a header field (``GGUF.version``, ``GGUF.tensor_count``,
    ``GGUF.kv_count``: "Duplicate KEY already in list at offset N", as gguf-py), ``OSError`` when
    the file cannot be opened. An empty file is a ``GGUFError`` (gguf-py: NumPy's ``ValueError``
    "cannot mmap an empty file", with which the message starts).

    The file is memory-mapped, as in gguf-py: if it is truncated (or replaced in place) while the
    reader is open, reading a part, a tensor's ``data`` or ``contents()`` past its new end kills
    the process with ``SIGBUS`` (an OS signal, not a Python exception); don't change a file that
    is open for reading.
    """

    # I: same byte order as this machine, S: swapped.
    byte_order: Literal["I", "S"] = "I"
    alignment: int = GGUF_DEFAULT_ALIGNMENT
    data_offset: int

    gguf_scalar_to_np: dict[GGUFValueType, type[np.generic]] = {
        GGUFValueType(k): v for k, v in _SCALAR_TYPES.items()
    }

    def __init__(self, path: os.PathLike[str] | os.PathLike[bytes] | str | bytes, mode: Literal["r", "r+", "c"] = "r"):
        try:
            self.data = np.memmap(path, mode=mode)
        except ValueError as e:
            # An empty file, which NumPy cannot map (gguf-py raises this ValueError): a GGUFError
            # (a ValueError too) that starts with NumPy's words.
            if os.path.isfile(path) and os.path.getsize(path) == 0:
                raise GGUFError(f"{e} ({os.fsdecode(path)}: an empty file is not a GGUF file)") from None
            raise
        try:
            # A path of bytes (as numpy.memmap takes it) as the file system encodes names.
            self._file = _native.Reader(os.fsdecode(path))
        except _native.DuplicateKeyError as e:
            raise DuplicateKeyError(*e.args) from None
        except _native.InvalidUtf8Error as e:
            raise _utf8_error(self.data, *e.args) from None
        _version, big, alignment, _data_offset, infos_end, _n_tensors, _n_kv = self._file.header()
        host_big = sys.byteorder == "big"
        self.byte_order = "S" if big != host_big else "I"
        self.endianess = GGUFEndian.BIG if big else GGUFEndian.LITTLE
        self.alignment = alignment
        # The end of the tensor infos rounded up to the alignment, as gguf-py computes it (also
        # for a file without tensors, which may end before that).
        self.data_offset = -(-infos_end // alignment) * alignment
        self._read_only = mode == "r"
        self._tensors: list[ReaderTensor] | None = None
        self.fields: OrderedDict[str, ReaderField] = OrderedDict()
        u32, u64 = GGUFValueType.UINT32, GGUFValueType.UINT64
        counts = self._get(8, np.uint64, 2)
        for offset, name, part, vtype in (
            (4, "GGUF.version", self._get(4, np.uint32), u32),
            (8, "GGUF.tensor_count", counts[:1], u64),
            (16, "GGUF.kv_count", counts[1:], u64),
        ):
            self.fields[name] = ReaderField(offset, name, [part], [0], [vtype])
        for index, (key, offset, vtype, elem, at, n) in enumerate(self._file.kvs()):
            if key in self.fields:
                # A key named like a header field (the file's own duplicates are refused by the
                # Rust reader): gguf-py's refusal, in its words.
                raise DuplicateKeyError(f"Duplicate {key} already in list at offset {offset}")
            value = None
            if self._read_only and elem != GGUFValueType.ARRAY:
                value = self._value_of(index, vtype, elem, at, n)
            self.fields[key] = ReaderField(offset, key, load=self._kv_layout_of(index), value=value)

    # Fetch a key/value metadata field by key.
    def get_field(self, key: str) -> Union[ReaderField, None]:
        """The field of ``key``, or ``None``."""
        return self.fields.get(key, None)

    def get_tensor(self, idx: int) -> ReaderTensor:
        """Tensor ``idx`` in file order."""
        return self.tensors[idx]

    @property
    def tensors(self) -> list[ReaderTensor]:
        """The tensors in file order (made once, on first access)."""
        tensors = self._tensors
        if tensors is None:
            with _LAZY:
                if self._tensors is None:
                    self._tensors = [self._tensor(*info) for info in self._file.tensors()]
                tensors = self._tensors
        return tensors

    @tensors.setter
    def tensors(self, value: list[ReaderTensor]) -> None:
        self._tensors = value

    def _get(
        self,
        offset: int,
        dtype: npt.DTypeLike,
        count: int = 1,
        override_order: None | Literal["I", "S", "<"] = None,
    ) -> npt.NDArray[Any]:
        """``count`` items of ``dtype`` at ``offset``: a view of ``data`` in the file's byte order."""
        count = int(count)
        dt = np.dtype(dtype)
        arr = self.data[offset : offset + dt.itemsize * count].view(dt)[:count]
        return arr.view(arr.dtype.newbyteorder(self.byte_order if override_order is None else override_order))

    def _value_of(self, index: int, vtype: int, elem: int | None, at: int, n: int) -> Callable[[], Any]:
        """A function decoding pair ``index``'s value from the mapping's current bytes: a number
        or bool from a view of it, a string from its ``n`` bytes (its length when the file was
        opened, as gguf-py's parts keep it), an array of numbers or bools from one view of its
        elements, an array of strings by the Rust reader (``_FROM_PARTS`` when its bytes are no
        longer what was validated at open: the parts then decode it, as gguf-py does)."""
        if elem is None:
            if vtype == GGUFValueType.STRING:
                return lambda: self.data[at + 8 : at + 8 + n].tobytes().decode("utf-8")
            scalar = _SCALAR_TYPES[vtype]
            return lambda: self._get(at, scalar).tolist()[0]
        if elem == GGUFValueType.STRING:

            def strings() -> Any:
                joined = self._file.kv_strings(index)
                if joined is None:
                    return _FROM_PARTS
                if isinstance(joined, list):
                    return joined
                return joined.split("\0") if n else []

            return strings
        item = _SCALAR_TYPES[elem]
        return lambda: self._get(at, item, n).tolist()

    def _kv_layout_of(self, index: int) -> Callable[[], _Layout]:
        return lambda: self._kv_layout(index)

    def _kv_layout(self, index: int) -> _Layout:
        offsets, codes, counts, repeats, data, types = self._file.kv_parts(index)

        def build() -> list[npt.NDArray[Any]]:
            parts: list[npt.NDArray[Any]] = []
            order = self.byte_order
            dtypes = {code: np.dtype(t).newbyteorder(order) for code, t in _SCALAR_TYPES.items()}
            mm = self.data
            for off, code, count, repeat in zip(
                np.frombuffer(offsets, np.uint64).tolist(),
                codes,
                np.frombuffer(counts, np.uint64).tolist(),
                np.frombuffer(repeats, np.uint64).tolist(),
            ):
                dt = dtypes[code]
                if repeat == 1:
                    parts.append(mm[off : off + dt.itemsize * count].view(dt))
                else:
                    # `repeat` one-item parts one after another: rows of one view.
                    parts.extend(mm[off : off + dt.itemsize * repeat].view(dt).reshape(repeat, 1))
            return parts

        return np.frombuffer(data, np.uint64).tolist(), [GGUFValueType(t) for t in types], build

    def _tensor(
        self, name: str, info_offset: int, type_id: int, ne: list[int], data_offset: int, n_bytes: int, n_elements: int
    ) -> ReaderTensor:
        field = ReaderField(info_offset, name, load=lambda: self._tensor_layout(info_offset, name, len(ne)))
        ggml_type = GGMLQuantizationType(type_id)
        np_dims: tuple[int, ...] = tuple(reversed(ne))
        item_type = _TENSOR_ITEM_TYPES.get(ggml_type)
        if item_type is not None:
            data = self._get(data_offset, item_type, n_elements)
        else:
            data = self._get(data_offset, np.uint8, n_bytes)
            np_dims = quant_shape_to_byte_shape(np_dims, ggml_type)
        return ReaderTensor(
            name=name,
            tensor_type=ggml_type,
            shape=field.parts[3],
            n_elements=n_elements,
            n_bytes=n_bytes,
            data_offset=data_offset,
            data=data.reshape(np_dims),
            field=field,
        )

    def _tensor_layout(self, offset: int, name: str, n_dims: int) -> _Layout:
        """A tensor info's parts: name length, name, dim count, dims, type id, relative offset."""
        n = len(name.encode("utf-8"))
        at = offset + 8 + n
        parts = [
            self._get(offset, np.uint64),
            self._get(offset + 8, np.uint8, n),
            self._get(at, np.uint32),
            self._get(at + 4, np.uint64, n_dims),
            self._get(at + 4 + 8 * n_dims, np.uint32),
            self._get(at + 8 + 8 * n_dims, np.uint64),
        ]
        return [1, 3, 4, 5], [], lambda: parts


# The reader's classes, then its exceptions.
__all__ = ["GGUFReader", "ReaderField", "ReaderTensor", "GGML_QUANT_SIZES"]
__all__ += ["GGUFError", "DuplicateKeyError", "GGUFUnicodeDecodeError"]
