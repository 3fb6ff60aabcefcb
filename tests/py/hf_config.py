"""The hyper-parameters llama.cpp's convert_hf_to_gguf.py sees for a checkpoint folder, as JSON.

Usage: hf_config.py DIR...

Replicates, without torch and without importing the reference script:
- `ModelBase.load_hparams` (conversion/base.py): `AutoConfig.from_pretrained(DIR,
  trust_remote_code=False).to_dict()`; when that raises, `config.json` as read; then the renames
  of `llm_config`, `lm_config`, `thinker_config.text_config`, `language_config` and `lfm` to
  `text_config`;
- `TextModel.__init__`: `text_config`, when present, merged over the top level.

Prints a JSON list, one `{"hparams": {...}, "auto_config": true|false, "error": "..."}` per DIR
in order (`auto_config` false when transformers raised and the raw file was used; `error` is
then the exception's text). Non-finite floats are written as the strings "NaN",
"Infinity", "-Infinity".
"""

import json
import math
import os
import pathlib
import sys

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from transformers import AutoConfig  # noqa: E402


def load_hparams(d):
    error = None
    try:
        config = AutoConfig.from_pretrained(d, trust_remote_code=False).to_dict()
    except Exception as e:  # the reference catches every exception and reads the file instead
        error = f"{type(e).__name__}: {e}"
        with open(os.path.join(d, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    if "llm_config" in config:
        config["text_config"] = config["llm_config"]
    if "lm_config" in config:
        config["text_config"] = config["lm_config"]
    if "thinker_config" in config:
        config["text_config"] = config["thinker_config"]["text_config"]
    if "language_config" in config:
        config["text_config"] = config["language_config"]
    if "lfm" in config:
        config["text_config"] = config["lfm"]
    return config, error


def finite(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: hf_config.py DIR...")
    out = []
    for arg in sys.argv[1:]:
        # the reference passes a pathlib.Path: str() of it is the name_or_path transformers records
        hparams, error = load_hparams(pathlib.Path(arg))
        if "text_config" in hparams:
            hparams = {**hparams, **hparams["text_config"]}
        out.append({"hparams": finite(hparams), "auto_config": error is None, "error": error})
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
