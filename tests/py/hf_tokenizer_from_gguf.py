"""Rebuild a Hugging Face tokenizer folder from the vocabulary of a GGUF file.

Usage: python hf_tokenizer_from_gguf.py VOCAB.gguf OUTDIR

Writes into OUTDIR (created if missing): tokenizer.json, tokenizer_config.json,
special_tokens_map.json, as Hugging Face `transformers` rebuilds them from the file
(`AutoTokenizer.from_pretrained(folder, gguf_file=...)` then `save_pretrained`), and, for a
SentencePiece vocabulary (`tokenizer.ggml.model` = "llama"), a `tokenizer.model`: a SentencePiece
ModelProto built with sentencepiece's own protobuf module from the file's tokens, scores and token
types (llama.cpp's converter reads SentencePiece vocabularies from tokenizer.model, not from
tokenizer.json).

Used for llama.cpp's `models/ggml-vocab-*.gguf` (llama-spm, llama-bpe, qwen2, phi-3, ...) and for
the Gemma 3 270M model file. The output is deterministic: the same bytes on every run.

transformers' GGUF path reads the file with a reader module that imports torch at its top, though
reading the metadata needs none. This script supplies that one function, `read_gguf_metadata`,
with the same results (scalars as Python values, numeric arrays as lists, string arrays as lists
when asked for, else as their length), so that no torch is needed.

Needs: transformers, tokenizers, sentencepiece, protobuf, numpy (the pins in scripts/setup.sh).
"""
import json
import os
import struct
import sys
import tempfile
import types

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _read_string(data, pos):
    (n,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    return bytes(data[pos:pos + n]).decode("utf-8"), pos + n


def _read_value(data, pos, vtype, keep_strings):
    if vtype in _SCALAR:
        fmt = _SCALAR[vtype]
        return struct.unpack_from(fmt, data, pos)[0], pos + struct.calcsize(fmt)
    if vtype == 8:
        return _read_string(data, pos)
    if vtype == 9:
        etype, count = struct.unpack_from("<IQ", data, pos)
        pos += 12
        if etype in _SCALAR:
            fmt = _SCALAR[etype]
            width = struct.calcsize(fmt)
            return list(struct.unpack_from(f"<{count}{fmt[1]}", data, pos)), pos + count * width
        if etype != 8:
            raise ValueError(f"array of GGUF type {etype} at offset {pos}: not supported here")
        values = []
        for _ in range(count):
            s, pos = _read_string(data, pos)
            values.append(s)
        return (values if keep_strings else count), pos
    raise ValueError(f"GGUF value type {vtype} at offset {pos}: not supported here")


def read_gguf_metadata(gguf_path, string_arrays=()):
    """`(metadata, tensor_names)` of a GGUF file, as transformers' reader returns them."""
    import numpy as np

    data = np.memmap(gguf_path, mode="r", dtype=np.uint8)
    if bytes(data[:4]) != b"GGUF":
        raise ValueError(f"{gguf_path}: not a GGUF file (no magic)")
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", data, 4)
    if version not in (2, 3):
        raise ValueError(f"{gguf_path}: GGUF version {version} not supported")
    pos = 24
    metadata = {}
    for _ in range(n_kv):
        key, pos = _read_string(data, pos)
        (vtype,) = struct.unpack_from("<I", data, pos)
        metadata[key], pos = _read_value(data, pos + 4, vtype, key in string_arrays)
    names = []
    for _ in range(n_tensors):
        name, pos = _read_string(data, pos)
        (n_dims,) = struct.unpack_from("<I", data, pos)
        pos += 4 + 8 * n_dims + 12
        names.append(name)
    if "general.architecture" not in metadata:
        raise ValueError(f"{gguf_path}: no general.architecture")
    return metadata, tuple(names)


def _install_reader_shim():
    shim = types.ModuleType("transformers.integrations.gguf.reader")
    shim.read_gguf_metadata = read_gguf_metadata

    def _needs_torch(*_args, **_kwargs):
        raise RuntimeError("loading GGUF tensors needs torch; this script only reads the vocabulary")

    shim.load_gguf_state_dict = _needs_torch
    shim.GgufHeader = None
    sys.modules[shim.__name__] = shim


def _sentencepiece_model(metadata, path):
    """A SentencePiece ModelProto (BPE, byte fallback, as Llama's and Gemma's) from the GGUF vocabulary."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    tokens = metadata["tokenizer.ggml.tokens"]
    scores = metadata.get("tokenizer.ggml.scores") or [0.0] * len(tokens)
    ttypes = metadata.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    unk = metadata.get("tokenizer.ggml.unknown_token_id", 0)
    # The SentencePiece model proper ends at its last normal or byte piece; what follows in a GGUF
    # are the tokens a checkpoint adds in tokenizer_config.json (Phi-3's <|endoftext|>, ...) and
    # the padding up to the model's vocab_size, which llama.cpp's converter adds back itself.
    n_base = 1 + max(i for i, t in enumerate(ttypes) if int(t) in (1, 6))
    m = pb.ModelProto()
    # GGUF token types (gguf-py's TokenType) share SentencePiece's numbering:
    # 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte. SentencePiece allows one
    # unknown piece; others (old converters' padding) become unused.
    for i, (tok, score, tt) in enumerate(zip(tokens[:n_base], scores, ttypes)):
        p = m.pieces.add()
        p.piece = tok
        p.score = float(score)
        p.type = 5 if int(tt) == 2 and i != unk else int(tt)
    ts = m.trainer_spec
    ts.model_type = pb.TrainerSpec.BPE
    ts.vocab_size = n_base
    ts.byte_fallback = any(int(t) == 6 for t in ttypes)

    def special(key, default):
        v = metadata.get(f"tokenizer.ggml.{key}")
        return int(v) if v is not None else default

    ts.unk_id = special("unknown_token_id", 0)
    ts.bos_id = special("bos_token_id", -1)
    ts.eos_id = special("eos_token_id", -1)
    ts.pad_id = special("padding_token_id", -1)
    ns = m.normalizer_spec
    ns.name = "identity"
    ns.add_dummy_prefix = bool(metadata.get("tokenizer.ggml.add_space_prefix", True))
    ns.remove_extra_whitespaces = False
    ns.escape_whitespaces = True
    blob = m.SerializeToString(deterministic=True)
    with open(path, "wb") as f:
        f.write(blob)
    # sentencepiece must accept what we wrote, as llama.cpp's converter loads it
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor()
    sp.LoadFromSerializedProto(blob)
    if sp.vocab_size() != n_base:
        raise ValueError(f"{path}: sentencepiece sees {sp.vocab_size()} pieces, expected {n_base}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hf_tokenizer_from_gguf.py VOCAB.gguf OUTDIR")
    src, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    _install_reader_shim()
    import transformers
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES

    metadata, _ = read_gguf_metadata(src, ("tokenizer.ggml.tokens",))
    # The class AutoTokenizer picks for the model type (it needs a model config for that, which
    # transformers builds from a GGUF with torch only); architectures without an entry of their
    # own (llama, phi3) get the generic fast tokenizer, as AutoTokenizer gives them.
    arch = metadata["general.architecture"]
    name = TOKENIZER_MAPPING_NAMES.get({"gemma3": "gemma3_text"}.get(arch, arch)) or "TokenizersBackend"
    cls = getattr(transformers, name)
    tok = cls.from_pretrained(os.path.dirname(src), gguf_file=os.path.basename(src))
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tok.save_pretrained(tmp)
        with open(os.path.join(tmp, "tokenizer.json"), "rb") as f:
            tokenizer_json = f.read()
        with open(os.path.join(tmp, "tokenizer_config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        template = os.path.join(tmp, "chat_template.jinja")
        if os.path.exists(template):
            with open(template, encoding="utf-8") as f:
                cfg["chat_template"] = f.read()
    # Facts of this load, not of the tokenizer: a checkpoint's tokenizer_config.json has neither.
    for key in ("is_local", "local_files_only", "name_or_path"):
        cfg.pop(key, None)
    # transformers 5 writes the added tokens into tokenizer.json only; checkpoints (and so
    # llama.cpp's SentencePiece path, which reads no tokenizer.json) have them in
    # tokenizer_config.json's added_tokens_decoder too, keyed by id, as transformers 4 wrote it.
    added = json.loads(tokenizer_json).get("added_tokens", [])
    cfg["added_tokens_decoder"] = {
        str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip", "single_word", "special")}
        for t in sorted(added, key=lambda t: t["id"])
    }
    smap = {k: cfg[k] for k in ("bos_token", "eos_token", "unk_token", "pad_token") if cfg.get(k) is not None}
    with open(os.path.join(out, "tokenizer.json"), "wb") as f:
        f.write(tokenizer_json)
    for name, obj in (("tokenizer_config.json", cfg), ("special_tokens_map.json", smap)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=True)
            f.write("\n")
    if metadata.get("tokenizer.ggml.model") == "llama":
        _sentencepiece_model(metadata, os.path.join(out, "tokenizer.model"))


if __name__ == "__main__":
    main()
