"""The tokenizer keys llama.cpp's converter writes for a Hugging Face tokenizer folder, as JSON.

Usage: python vocab_reference.py LLAMA_CPP_SRC DIR METHOD [VOCAB_SIZE]
       python vocab_reference.py LLAMA_CPP_SRC DIR chkhsh

Runs the reference's own code: METHOD of `conversion/base.py`'s TextModel (`_set_vocab_sentencepiece`,
`_set_vocab_gpt2`, `_set_vocab_llama_hf`, `_set_vocab_glm`) or an architecture's `set_vocab` (`llama`, `gemma2`,
`gemma3`, `qwen2`, `phi3`, `glm4`), on an object carrying only what those methods read (`dir_model`, `hparams`,
`find_hparam`, a real `gguf.GGUFWriter`), and prints the writer's keys in order:
`[{"key", "type", "value"}]` with types named as `gguf inspect --json` names them.
base.py imports torch at its top but the vocabulary code never uses it: a stub module stands in.

`chkhsh` prints `{"chkhsh": HASH}`: the hash `get_vocab_base_pre` computes for DIR (the check
text `chktxt` taken from that method's source, encoded by `transformers.AutoTokenizer`), also
for a tokenizer whose hash the reference's table does not list.
"""
import json
import sys
import types


class _Any:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Any()

    def __getattr__(self, name):
        return _Any()

    def __getitem__(self, k):
        return _Any()

    def __or__(self, other):
        return _Any()

    __ror__ = __or__

    def __mro_entries__(self, bases):
        return (object,)


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Any()


import transformers  # noqa: E402,F401  (before the stub: it probes for torch)
from transformers import AutoConfig, AutoTokenizer  # noqa: E402,F401

for name in ("torch", "torch.nn", "torch.nn.functional"):
    sys.modules[name] = _Stub(name)
sys.modules["torch"].Tensor = _Any

src, folder, method = sys.argv[1], sys.argv[2], sys.argv[3]
vocab_size = int(sys.argv[4]) if len(sys.argv) > 4 else None
sys.path.insert(0, src)
sys.path.insert(1, src + "/gguf-py")

import logging  # noqa: E402
from pathlib import Path  # noqa: E402

logging.disable(logging.WARNING)
import gguf  # noqa: E402
from conversion import base  # noqa: E402

ARCH = {"llama": ("conversion.llama", "LlamaModel"), "gemma3": ("conversion.gemma", "Gemma3Model"),
        "gemma2": ("conversion.gemma", "Gemma2Model"), "qwen2": ("conversion.qwen", "Qwen2Model"),
        "phi3": ("conversion.phi", "Phi3MiniModel"), "glm4": ("conversion.glm", "Glm4Model")}

if method == "chkhsh":
    import ast
    import hashlib
    import inspect
    import re

    source = inspect.getsource(base.TextModel.get_vocab_base_pre)
    chktxt = ast.literal_eval(re.search(r"^\s*chktxt = (.*)$", source, re.M).group(1))
    chktok = AutoTokenizer.from_pretrained(folder).encode(chktxt)
    json.dump({"chkhsh": hashlib.sha256(str(chktok).encode()).hexdigest()}, sys.stdout)
    sys.exit(0)

if method in ARCH:
    import importlib
    cls = getattr(importlib.import_module(ARCH[method][0]), ARCH[method][1])
    fn = cls.set_vocab
else:
    cls = base.TextModel
    fn = getattr(base.TextModel, method)


class Fake(cls):  # type: ignore[misc, valid-type]
    model_arch = gguf.MODEL_ARCH.LLAMA

    def __init__(self):  # no ModelBase.__init__: only what the vocabulary code reads
        self.dir_model = Path(folder)
        self.hparams = {} if vocab_size is None else {"vocab_size": vocab_size}
        self.gguf_writer = gguf.GGUFWriter(path=None, arch="llama")
        self.is_mistral_format = False
        self.origin_hf_arch = None


m = Fake()
fn(m)

TYPES = {gguf.GGUFValueType.UINT8: "u8", gguf.GGUFValueType.INT8: "i8", gguf.GGUFValueType.UINT16: "u16",
         gguf.GGUFValueType.INT16: "i16", gguf.GGUFValueType.UINT32: "u32", gguf.GGUFValueType.INT32: "i32",
         gguf.GGUFValueType.FLOAT32: "f32", gguf.GGUFValueType.BOOL: "bool", gguf.GGUFValueType.STRING: "string",
         gguf.GGUFValueType.UINT64: "u64", gguf.GGUFValueType.INT64: "i64", gguf.GGUFValueType.FLOAT64: "f64"}


def conv(v):
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8")
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return v
    return v


out = []
for key, gv in m.gguf_writer.kv_data[0].items():
    if key == "general.architecture":  # written by GGUFWriter itself
        continue
    if gv.type == gguf.GGUFValueType.ARRAY:
        items = list(gv.value)
        sub = gv.sub_type or gguf.GGUFValueType.get_type(items[0])
        out.append({"key": key, "type": f"array<{TYPES[sub]}>", "value": [conv(x) for x in items]})
    else:
        out.append({"key": key, "type": TYPES[gv.type], "value": conv(gv.value)})
json.dump(out, sys.stdout, ensure_ascii=False)
