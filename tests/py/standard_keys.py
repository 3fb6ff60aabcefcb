"""The standard metadata keys of gguf-py (PyPI `gguf`), and the GGUF type its writer gives each, as JSON.

Usage: python standard_keys.py TMPDIR

Output: {"keys": [{"class": "Rope", "name": "FREQ_BASE", "key": "{arch}.rope.freq_base"}, ...],
         "writes": [{"method": "add_rope_freq_base", "key": "{arch}.rope.freq_base",
                     "type": "f32", "element": null}, ...]}

`keys` is every string constant of `gguf.constants.Keys` (nested classes included), with its
placeholders (`{arch}`, `{id}`, `{name}`, `{dense}`) as gguf-py spells them.

`writes` comes from running every `GGUFWriter.add_*` method that writes metadata: each is called on
its own writer (architecture `{arch}`, so that the key keeps its placeholder) with a value made from
its parameter annotations, the file is written to TMPDIR, and gguf-py's reader reads the key back.
A parameter whose annotation is a union is tried once per member (e.g. `add_sliding_window_pattern`
takes an int or a list of bools), so a key can appear more than once. Numbered keys
(`general.base_model.0.name`) are reported with `{id}`, named chat templates with `{name}`, the
dense-layer keys with `{dense}`.
"""
import inspect
import itertools
import json
import os
import re
import sys
import typing
from collections.abc import Mapping, Sequence

import gguf
from gguf.constants import GGUFValueType as VT, Keys

NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
         VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool", VT.STRING: "string", VT.ARRAY: "array",
         VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT64: "f64"}

# The generic writers (the key is a parameter) and the non-metadata ones.
GENERIC = {"add_key_value", "add_uint8", "add_int8", "add_uint16", "add_int16", "add_uint32", "add_int32",
           "add_float32", "add_uint64", "add_int64", "add_float64", "add_bool", "add_string", "add_array",
           "add_tensor", "add_tensor_info", "add_shard_kv_data", "add_custom_alignment"}


def keys():
    out = []

    def walk(cls, path):
        for name, v in vars(cls).items():
            if name.startswith("_"):
                continue
            if isinstance(v, str):
                out.append({"class": ".".join(path), "name": name, "key": v})
            elif inspect.isclass(v):
                walk(v, path + [name])

    for name, cls in vars(Keys).items():
        if inspect.isclass(cls) and not name.startswith("_"):
            walk(cls, [name])
    return out


def samples(ann):
    """Values to try for a parameter annotation (one per union member)."""
    origin = typing.get_origin(ann)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return [v for a in typing.get_args(ann) for v in samples(a)]
    if ann is int:
        return [3]
    if ann is float:
        return [1.5]
    if ann is bool:
        return [True]
    if ann is str:
        return ["x"]
    if ann in (bytes, bytearray):
        return [b"x"]
    if origin in (Sequence, list, tuple, typing.Sequence):
        (inner,) = typing.get_args(ann)[:1] or (int,)
        if typing.get_origin(inner) in (Mapping, dict, typing.Mapping):
            return [[{"name": "default", "template": "t"}, {"name": "tool_use", "template": "u"}]]
        return [[v, v] for v in samples(inner)]
    if inspect.isclass(ann) and issubclass(ann, __import__("enum").Enum):  # PoolingType, ...
        return [list(ann)[0]]
    return []


def unplace(key):
    key = re.sub(r"^general\.(base_model|dataset)\.\d+\.", r"general.\1.{id}.", key)
    key = re.sub(r"^tokenizer\.chat_template\.tool_use$", "tokenizer.chat_template.{name}", key)
    key = re.sub(r"^\{arch\}\.DENSE_(feat_in|feat_out)$", r"{arch}.{dense}_\1", key)
    return key


def writes(tmp):
    out = []
    for mname, fn in inspect.getmembers(gguf.GGUFWriter, inspect.isfunction):
        if not mname.startswith("add_") or mname in GENERIC:
            continue
        hints = typing.get_type_hints(fn)
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
        choices = []
        for p in params:
            if p.name == "dense":
                choices.append(["DENSE"])
                continue
            s = samples(hints.get(p.name, int))
            if not s:
                raise SystemExit(f"no sample value for {mname}({p.name}: {hints.get(p.name)})")
            choices.append(s)
        for args in itertools.product(*choices):
            path = os.path.join(tmp, f"{mname}.gguf")
            w = gguf.GGUFWriter(path, "{arch}")
            w.kv_data[0].clear()  # the writer adds general.architecture itself
            fn(w, *args)
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.close()
            r = gguf.GGUFReader(path)
            for key, f in r.fields.items():
                if key.startswith("GGUF."):
                    continue
                elem = NAMES[f.types[1]] if f.types[0] == VT.ARRAY else None
                out.append({"method": mname, "key": unplace(key), "type": NAMES[f.types[0]], "element": elem})
            os.remove(path)
    return out


if __name__ == "__main__":
    print(json.dumps({"keys": keys(), "writes": writes(sys.argv[1])}))
