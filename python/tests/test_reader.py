"""gguf_serde.GGUFReader against gguf-py's gguf.GGUFReader (the oracle): every file of the corpus
and files gguf-py's own writer makes (every value type, nested arrays, both byte orders, every
tensor element type) read field for field and tensor for tensor the same; refusals as gguf-py's.

"The same" for a NumPy part or tensor view: same type (numpy.memmap), dtype (with byte order),
shape, and place in the file (its offset from the start of the mapping), so the same values.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from conftest import ROOT, corpus, need

import gguf_serde


def _offset(view: np.ndarray, reader: Any) -> int:
    """Where `view` starts in the file `reader` maps."""
    return view.__array_interface__["data"][0] - reader.data.__array_interface__["data"][0]


def _same_view(a: np.ndarray, ra: Any, b: np.ndarray, rb: Any, what: str) -> None:
    assert type(a) is type(b), f"{what}: {type(a)} != {type(b)}"
    assert a.dtype == b.dtype and a.dtype.byteorder == b.dtype.byteorder, f"{what}: {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    assert _offset(a, ra) == _offset(b, rb), f"{what}: offset {_offset(a, ra)} != {_offset(b, rb)}"


def _views(parts: list[np.ndarray], reader: Any) -> list[tuple]:
    """Each view's type, dtype (with byte order), shape and offset in the file."""
    base = reader.data.__array_interface__["data"][0]
    return [(type(p), p.dtype.str, p.shape, p.__array_interface__["data"][0] - base) for p in parts]


def _same_field(a: gguf_serde.ReaderField, ra: Any, b: gguf.ReaderField, rb: Any) -> None:
    what = b.name
    assert (a.offset, a.name) == (b.offset, b.name), what
    assert a.types == b.types and all(type(x) is gguf_serde.GGUFValueType for x in a.types), what
    assert a.data == b.data, what
    assert a.contents() == b.contents(), what
    if b.types and b.types[0] == gguf.GGUFValueType.ARRAY and b.data:
        n = len(b.data)
        for pick in (0, n - 1, -1, slice(1, 3), slice(None, None, 2)):
            assert a.contents(pick) == b.contents(pick), f"{what}[{pick}]"
    # The same views of the same bytes: the same values. A field of many parts (a vocabulary)
    # is compared at its first and last thousand parts and every 97th between (its length in
    # full): the parts of one array are made by one loop, and this keeps the corpus test short.
    pa, pb = a.parts, b.parts
    assert len(pa) == len(pb), what
    if len(pb) > 3000:
        pick = sorted({*range(1000), *range(len(pb) - 1000, len(pb)), *range(0, len(pb), 97)})
        pa, pb = [pa[i] for i in pick], [pb[i] for i in pick]
    assert _views(pa, ra) == _views(pb, rb), what


def compare(path: Path) -> None:
    """Reads `path` with both readers and compares everything gguf-py's reader has."""
    ours = gguf_serde.GGUFReader(path)
    ref = gguf.GGUFReader(path)
    assert (ours.byte_order, ours.alignment, ours.data_offset) == (ref.byte_order, ref.alignment, ref.data_offset)
    assert ours.endianess == ref.endianess and ours.endianess.name == ref.endianess.name
    assert list(ours.fields) == list(ref.fields)
    for name, b in ref.fields.items():
        a = ours.get_field(name)
        assert a is not None
        _same_field(a, ours, b, ref)
    assert ours.get_field("no.such.key") is None
    assert len(ours.tensors) == len(ref.tensors)
    for i, (a, b) in enumerate(zip(ours.tensors, ref.tensors)):
        assert ours.get_tensor(i) is a
        assert (a.name, a.tensor_type, a.n_elements, a.n_bytes, a.data_offset) == (
            b.name, b.tensor_type, b.n_elements, b.n_bytes, b.data_offset
        ), b.name
        assert a.tensor_type.name == b.tensor_type.name
        assert type(a.n_elements) is int and type(a.n_bytes) is int and type(a.data_offset) is int
        _same_view(a.shape, ours, b.shape, ref, f"{b.name} shape")
        assert a.shape.tolist() == b.shape.tolist()
        _same_view(a.data, ours, b.data, ref, f"{b.name} data")
        _same_field(a.field, ours, b.field, ref)


# The corpus files read in every run (scripts/test.sh), one of each kind the reader meets: the
# repository's test vector, the two models (their tensors: Q4_1, Q4_K, Q5_0, Q6_K, Q8_0, F32; and
# Gemma 3's 262,144-token vocabulary), a version-2 file (aquila), a `UINT8` array
# (nomic-bert-moe's token types) and the smallest vocabulary (bert-bge). The other 16
# vocabularies (the same string arrays, gguf-py's reading of them 1 to 15 s of CPU each) are read
# by the nightly run (`-m nightly`: scripts/python-test.sh --nightly, from
# scripts/test-nightly.sh); the Rust tests compare every corpus file with gguf-py in every run
# (tests/tests/interop/corpus.rs).
SUITE_CORPUS = {
    "small.gguf",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma-3-270m-q4_k_m.gguf",
    "ggml-vocab-aquila.gguf",
    "ggml-vocab-nomic-bert-moe.gguf",
    "ggml-vocab-bert-bge.gguf",
}


@pytest.mark.parametrize(
    "path",
    [p if p.name in SUITE_CORPUS else pytest.param(p, marks=pytest.mark.nightly) for p in corpus()],
    ids=lambda p: p.name,
)
def test_corpus_file_reads_as_gguf_py_reads_it(path: Path) -> None:
    need(path.is_file(), f"{path.relative_to(ROOT)} (scripts/fetch-corpus.sh)")
    compare(path)


def test_corpus_is_complete() -> None:
    # The corpus scripts/fetch-corpus.sh and fetch-gemma.sh make: 2 models and 19 vocabularies.
    files = corpus()
    need(len(files) == 22, "the corpus (models/, models/vocab/)")
    assert len(files) == 22
    assert SUITE_CORPUS <= {p.name for p in files}


def _write_every_kind(path: Path, endianess: gguf.GGUFEndian) -> None:
    """A file with every value type, nested and empty arrays and every typed tensor, written by
    gguf-py's own writer."""
    w = gguf.GGUFWriter(path, "llama", endianess=endianess)
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4_000_000_000)
    w.add_int32("t.i32", -2_000_000_000)
    w.add_float32("t.f32", 0.1)
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**62))
    w.add_float64("t.f64", 1e300)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "héllo wörld ✓")
    w.add_string("t.empty_str", "")
    w.add_array("t.ints", [1, 2, 3, -4])
    w.add_array("t.floats", [0.5, -1.25, 3.0])
    w.add_array("t.bools", [True, False, True])
    w.add_array("t.strs", ["a", "", "ünï", "\x00nul"])
    w.add_array("t.empty", [])
    w.add_key_value("t.nested", [[1, 2], [3]], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.ARRAY)
    w.add_key_value("t.nested_str", [["x", "yz"], ["w"]], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.ARRAY)
    rng = np.random.default_rng(7)
    w.add_tensor("f32", rng.standard_normal((3, 64)).astype(np.float32))
    w.add_tensor("f16", rng.standard_normal((2, 3, 32)).astype(np.float16))
    w.add_tensor("f64", rng.standard_normal(16))
    for t in (np.int8, np.int16, np.int32, np.int64):
        w.add_tensor(np.dtype(t).name, rng.integers(-100, 100, (4, 8)).astype(t))
    q = gguf.quants.quantize(rng.standard_normal((4, 64)).astype(np.float32), gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("q8_0", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    b = gguf.quants.quantize(rng.standard_normal((2, 32)).astype(np.float32), gguf.GGMLQuantizationType.BF16)
    w.add_tensor("bf16", b, raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


@pytest.mark.parametrize("endian", [gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG], ids=["little", "big"])
def test_every_value_and_tensor_type_reads_as_gguf_py_reads_it(tmp_path: Path, endian: gguf.GGUFEndian) -> None:
    path = tmp_path / "every.gguf"
    _write_every_kind(path, endian)
    compare(path)
    ours = gguf_serde.GGUFReader(path)
    assert ours.fields["t.str"].contents() == "héllo wörld ✓"
    assert ours.fields["t.strs"].contents() == ["a", "", "ünï", "\x00nul"]
    assert ours.fields["t.nested"].contents() == [1, 2, 3]
    assert ours.endianess == (gguf_serde.GGUFEndian.BIG if endian == gguf.GGUFEndian.BIG else gguf_serde.GGUFEndian.LITTLE)


def test_changes_through_the_parts_are_read_back_as_gguf_py(tmp_path: Path) -> None:
    # gguf-set-metadata's way: open with mode "r+", assign through the value's part.
    for mode in ("r+", "c"):
        results = []
        for reader in (gguf.GGUFReader, gguf_serde.GGUFReader):
            path = tmp_path / f"{reader.__module__}-{mode}.gguf"
            _write_every_kind(path, gguf.GGUFEndian.LITTLE)
            r = reader(path, mode)
            f = r.fields["t.u32"]
            f.parts[f.data[0]][0] = 7
            s = r.fields["t.ints"]
            s.parts[s.data[1]][0] = 99
            results.append((f.contents(), s.contents(), path.read_bytes()))
            del r, f, s
        assert results[0] == results[1]
        assert results[1][:2] == (7, [1, 99, 3, -4])


def _header(version: int = 3, tensors: int = 0, kvs: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, kvs)


def _kv_u32(key: bytes, value: int) -> bytes:
    return struct.pack("<Q", len(key)) + key + struct.pack("<II", 4, value)


def _tensor_info(name: bytes) -> bytes:
    return struct.pack("<Q", len(name)) + name + struct.pack("<IQIQ", 1, 32, 0, 0)


@pytest.mark.parametrize(
    "content, gguf_py_error",
    [
        (b"GGUX" + _header()[4:], ValueError),
        (_header(version=1), ValueError),
        (_header(kvs=2) + _kv_u32(b"a.b", 1) + _kv_u32(b"a.b", 2), KeyError),
        (_header(tensors=2) + _tensor_info(b"t") + _tensor_info(b"t") + bytes(256), ValueError),
        (_header(kvs=1) + _kv_u32(b"general.alignment", 3), ValueError),
        (b"", ValueError),
    ],
    ids=["magic", "version", "duplicate key", "duplicate tensor", "alignment", "empty"],
)
def test_refusals_raise_what_gguf_py_raises(tmp_path: Path, content: bytes, gguf_py_error: type) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(gguf_py_error) as ref:
        gguf.GGUFReader(path)
    with pytest.raises(gguf_py_error) as ours:
        gguf_serde.GGUFReader(path)
    assert isinstance(ours.value, gguf_serde.GGUFError)
    # Where gguf-py says why in words, ours starts with the same words.
    if gguf_py_error is ValueError:
        assert str(ours.value).startswith(str(ref.value)), (str(ours.value), str(ref.value))


def test_missing_file_is_the_os_error_gguf_py_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        gguf.GGUFReader(tmp_path / "none.gguf")
    with pytest.raises(FileNotFoundError):
        gguf_serde.GGUFReader(tmp_path / "none.gguf")


def test_a_gguf_py_script_runs_after_changing_its_import(tmp_path: Path) -> None:
    # A metadata dump and a tensor dequantize written against gguf-py, run with each package.
    path = ROOT / "tests" / "data" / "small.gguf"
    script = """
import numpy as np
from {pkg} import GGUFReader
from {pkg}.quants import dequantize

def dump(path):
    reader = GGUFReader(path)
    out = []
    for name, field in reader.fields.items():
        kind = field.types[0].name if field.types else "?"
        out.append((name, kind, field.contents()))
    for t in reader.tensors:
        out.append((t.name, t.tensor_type.name, t.shape.tolist(), dequantize(t.data, t.tensor_type).sum().item()))
    return out
"""
    results = []
    for pkg in ("gguf", "gguf_serde"):
        names: dict = {}
        exec(script.format(pkg=pkg), names)
        results.append(names["dump"](path))
    assert results[0] == results[1]
    copy = tmp_path / "copy.gguf"
    shutil.copy(path, copy)


def _kv_str(key: bytes, value: bytes) -> bytes:
    return struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, len(value)) + value


def _kv_strs(key: bytes, values: list[bytes]) -> bytes:
    items = b"".join(struct.pack("<Q", len(v)) + v for v in values)
    return struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 8, len(values)) + items


@pytest.mark.parametrize("key", [b"GGUF.version", b"GGUF.tensor_count", b"GGUF.kv_count", b"GGUF.magic"])
def test_a_key_named_like_a_header_field_is_what_gguf_py_makes_of_it(tmp_path: Path, key: bytes) -> None:
    # gguf-py keeps its header fields in `fields` under these names: a pair of the same name is
    # a duplicate (KeyError, "Duplicate ..."); a name it does not use (GGUF.magic) is a key.
    path = tmp_path / "header-key.gguf"
    path.write_bytes(_header(kvs=2) + _kv_u32(b"a.b", 1) + _kv_u32(key, 5))
    try:
        ref = gguf.GGUFReader(path)
    except KeyError as e:
        with pytest.raises(KeyError) as ours:
            gguf_serde.GGUFReader(path)
        assert isinstance(ours.value, gguf_serde.GGUFError)
        assert str(ours.value) == e.args[0] and ours.value.args[0] == e.args[0]
    else:
        ours = gguf_serde.GGUFReader(path)
        assert list(ours.fields) == list(ref.fields)
        assert ours.fields[key.decode()].contents() == ref.fields[key.decode()].contents() == 5
        compare(path)


def test_a_duplicate_key_is_refused_in_gguf_py_s_words(tmp_path: Path) -> None:
    path = tmp_path / "dup.gguf"
    path.write_bytes(_header(kvs=3) + _kv_u32(b"a.b", 1) + _kv_u32(b"c.d", 1) + _kv_u32(b"a.b", 2))
    with pytest.raises(KeyError) as ref:
        gguf.GGUFReader(path)
    with pytest.raises(KeyError) as ours:
        gguf_serde.GGUFReader(path)
    # args[0] is gguf-py's message exactly (code may compare it); str() too.
    assert ours.value.args[0] == ref.value.args[0]
    assert str(ours.value) == ref.value.args[0]
    assert isinstance(ours.value, gguf_serde.GGUFError)


def test_big_endian_integer_tensors_are_viewed_and_dequantized_as_gguf_py(tmp_path: Path) -> None:
    # A big-endian file made by gguf-py's writer: the tensor views are of the file's byte order
    # (">i4", ...) with the values written; gguf-py's dequantize has no integer types and views
    # F32/F16 bytes as native floats, which ours does too; ours converts the integer and F64 views
    # to the values they hold.
    path = tmp_path / "big.gguf"
    _write_every_kind(path, gguf.GGUFEndian.BIG)
    ours, ref = gguf_serde.GGUFReader(path), gguf.GGUFReader(path)
    written = {t.name: t for t in ref.tensors}
    for t in ours.tensors:
        want = written[t.name]
        assert t.data.dtype == want.data.dtype and t.data.tolist() == want.data.tolist(), t.name
        qtype = gguf.GGMLQuantizationType(t.tensor_type)
        try:
            expected = ref_dequantize = gguf.quants.dequantize(want.data, qtype)
        except NotImplementedError:
            ref_dequantize = None
            expected = want.data.astype(np.float32)  # the values of an integer or F64 view
        got = quants_dequantize(t.data, t.tensor_type)
        assert got.dtype == np.float32 and np.array_equal(got, expected, equal_nan=True), t.name
        if ref_dequantize is None:
            assert t.data.dtype.kind in "if" and t.data.dtype.byteorder in ">|", t.name
    int32 = ours.tensors[[t.name for t in ours.tensors].index("int32")]
    assert int32.data.dtype == np.dtype(">i4")
    assert quants_dequantize(int32.data, int32.tensor_type).tolist() == int32.data.tolist()


def quants_dequantize(data: np.ndarray, qtype: int) -> np.ndarray:
    return gguf_serde.quants.dequantize(data, gguf_serde.GGMLQuantizationType(qtype))


def test_contents_read_a_change_made_to_the_file_as_gguf_py(tmp_path: Path) -> None:
    # numpy.memmap mode "r" maps the file shared: a change made to the file after opening it
    # (here by another writer) shows in what gguf-py's contents() reads, values and strings
    # alike; a string that is no longer UTF-8 raises UnicodeDecodeError there (not a panic).
    content = (
        _header(kvs=4)
        + _kv_str(b"a.s", b"abcd")
        + _kv_strs(b"a.arr", [b"xy", b"zw"])
        + _kv_u32(b"a.u", 1)
        + _kv_strs(b"a.bad", [b"ok", b"ab"])
    )
    outcomes = []
    for reader in (gguf.GGUFReader, gguf_serde.GGUFReader):
        path = tmp_path / f"{reader.__module__}.gguf"
        path.write_bytes(content)
        r = reader(path)
        keys = ["a.s", "a.arr", "a.u", "a.bad"]
        before = [r.fields[k].contents() for k in keys]
        data = bytearray(content)
        i = data.index(b"abcd")
        data[i : i + 4] = b"a\xffcd"
        i = data.index(b"zw")
        data[i : i + 2] = b"Zw"
        i = data.index(b"a.u") + 3 + 4
        data[i : i + 4] = struct.pack("<I", 9)
        i = data.rindex(b"ab")
        data[i : i + 2] = b"\xc3("
        with open(path, "r+b") as f:
            f.write(data)
        after = []
        for k in keys:
            try:
                after.append(r.fields[k].contents())
            except UnicodeDecodeError as e:
                after.append(("UnicodeDecodeError", e.start, e.reason))
        outcomes.append((before, after))
        del r
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][1][1:3] == [["xy", "Zw"], 9]


def test_lazy_parts_and_tensors_are_made_once_across_threads(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "every.gguf"
    _write_every_kind(path, gguf.GGUFEndian.LITTLE)
    for _ in range(5):
        r = gguf_serde.GGUFReader(path)
        start = threading.Barrier(8)
        seen: list[tuple[int, int]] = []

        def first_access() -> None:
            start.wait()
            field = r.fields["t.strs"]
            seen.append((id(field.parts), id(r.tensors)))

        threads = [threading.Thread(target=first_access) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 8 and len(set(seen)) == 1
        assert r.fields["t.strs"].parts is r.fields["t.strs"].parts


def test_a_path_of_bytes_opens_as_with_gguf_py() -> None:
    path = ROOT / "tests" / "data" / "small.gguf"
    ref = gguf.GGUFReader(bytes(path))
    ours = gguf_serde.GGUFReader(bytes(path))
    assert list(ours.fields) == list(ref.fields)
    assert [t.name for t in ours.tensors] == [t.name for t in ref.tensors]


def _utf8_case(where: str, order: str) -> bytes:
    """A file with one string that is not UTF-8 (in a key, a value, an array element or a tensor
    name), of byte order `order` ("<" or ">")."""
    bad = b"ab\xffc"

    def s(b: bytes) -> bytes:
        return struct.pack(order + "Q", len(b)) + b

    def head(tensors: int, kvs: int) -> bytes:
        return b"GGUF" + struct.pack(order + "IQQ", 3, tensors, kvs)

    if where == "key":
        return head(0, 1) + s(b"a." + bad) + struct.pack(order + "II", 4, 1)
    if where == "value":
        return head(0, 1) + s(b"a.s") + struct.pack(order + "I", 8) + s(bad)
    if where == "array":
        return head(0, 1) + s(b"a.s") + struct.pack(order + "IIQ", 9, 8, 2) + s(b"ok") + s(b"\xc3(")
    info = s(b"t" + bad) + struct.pack(order + "IQIQ", 1, 8, 0, 0)
    return head(1, 0) + info + bytes(-(24 + len(info)) % 32) + bytes(32)


@pytest.mark.parametrize("order", ["<", ">"], ids=["little", "big"])
@pytest.mark.parametrize("where", ["key", "value", "array", "tensor name"])
def test_a_string_that_is_not_utf8_raises_gguf_py_s_unicode_decode_error(tmp_path: Path, where: str, order: str) -> None:
    # gguf-py raises UnicodeDecodeError when it decodes the string: at open for a key or tensor
    # name, from contents() for a value. Ours raises it where gguf-py does (ggml itself, and the
    # Rust reader, accept any bytes): the same UnicodeDecodeError (same bytes, position, reason),
    # at open also a GGUFError.
    path = tmp_path / "bad-utf8.gguf"
    path.write_bytes(_utf8_case(where, order))
    stage = "open"
    with pytest.raises(UnicodeDecodeError) as ref:
        r = gguf.GGUFReader(path)
        _ = r.tensors
        stage = "contents"
        for f in r.fields.values():
            f.contents()
    assert stage == ("open" if where in ("key", "tensor name") else "contents")
    with pytest.raises(UnicodeDecodeError) as ours:
        o = gguf_serde.GGUFReader(path)
        _ = o.tensors
        assert stage == "contents", "gguf-py raised at open, ours did not"
        for f in o.fields.values():
            f.contents()
    if stage == "open":
        assert isinstance(ours.value, gguf_serde.GGUFError)
    e, want = ours.value, ref.value
    assert (e.encoding, e.object, e.start, e.end, e.reason) == (want.encoding, want.object, want.start, want.end, want.reason)


def _bool_bytes_file() -> bytes:
    """BOOL bytes other than 0 and 1, which the spec forbids and ggml reads as true: a scalar
    stored as 0x02, an array as [0x01, 0x00, 0xff, 0x80]."""

    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 3)
    return (
        head
        + s(b"t.flag") + struct.pack("<I", 7) + b"\x02"
        + s(b"t.flags") + struct.pack("<IIQ", 9, 7, 4) + b"\x01\x00\xff\x80"
        + s(b"t.off") + struct.pack("<I", 7) + b"\x00"
    )


def test_bool_bytes_other_than_0_and_1_read_as_gguf_py_reads_them(tmp_path: Path) -> None:
    # gguf-py views them as numpy.bool_ and reads any byte other than 0 as True, as ggml does;
    # so does ours (the Rust reader refused them before issue 28).
    path = tmp_path / "bools.gguf"
    path.write_bytes(_bool_bytes_file())
    compare(path)
    ref = gguf.GGUFReader(path)
    assert ref.fields["t.flag"].contents() is True
    assert ref.fields["t.flags"].contents() == [True, False, True, True]
    ours = gguf_serde.GGUFReader(path)
    assert [ours.fields[k].contents() for k in ("t.flag", "t.flags", "t.off")] == [True, [True, False, True, True], False]


def _alignment_2gib(tensor: bool) -> bytes:
    """`general.alignment` = 2^31 (the largest power of two of a UINT32, which gguf-py and ggml
    take), with one F32 tensor of 4 elements at relative offset 0 or none."""
    key = b"general.alignment"
    head = b"GGUF" + struct.pack("<IQQ", 3, int(tensor), 1)
    meta = head + struct.pack("<Q", len(key)) + key + struct.pack("<II", 4, 2**31)
    if tensor:
        meta += struct.pack("<Q", 1) + b"t" + struct.pack("<IQIQ", 1, 4, 0, 0)
    return meta


def test_an_alignment_of_two_gib_reads_as_gguf_py_reads_it(tmp_path: Path) -> None:
    # Without tensors: 57 bytes; gguf-py's data_offset is the end of the tensor infos rounded up
    # (2^31), ggml's the end itself.
    path = tmp_path / "align.gguf"
    path.write_bytes(_alignment_2gib(False))
    compare(path)
    assert gguf_serde.GGUFReader(path).data_offset == 2**31
    # With a tensor: its data at 2^31, in a sparse file (no 2 GiB on the disk), memory-mapped by
    # both readers.
    sparse = tmp_path / "sparse.gguf"
    with open(sparse, "wb") as f:
        f.write(_alignment_2gib(True))
        f.seek(2**31)
        f.write(struct.pack("<4f", 1.0, -2.0, 0.5, 3.0))
    compare(sparse)
    t = gguf_serde.GGUFReader(sparse).tensors[0]
    assert (t.data_offset, t.data.tolist()) == (2**31, [1.0, -2.0, 0.5, 3.0])
