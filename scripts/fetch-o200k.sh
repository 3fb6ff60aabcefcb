#!/usr/bin/env bash
# Fetch OpenAI's o200k_base BPE ranks (the vocabulary of gpt-4o and, with the harmony special
# tokens, of gpt-oss's o200k_harmony) from the npm package `tiktoken` 1.0.22, which ships them as
# encoders/o200k_base.json ({"pat_str", "special_tokens", "bpe_ranks"}: js-tiktoken's form, lines
# of `MARK FIRST_RANK BASE64_TOKEN...`, consecutive ranks).
#
# Output: models/o200k/o200k_base.json (git-ignored), 2,325,457 bytes,
# sha256 df53e1a5f146e33a1b144d12ad9d685ee1b54dbc8b0950791ed45c933b119dc1.
# Runs only `npm pack` (the registry's tarball; nothing is installed). Idempotent: an existing,
# verified file is kept. tests/py/o200k_tokenizer.py turns it into a tokenizer.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/models/o200k/o200k_base.json"
want=df53e1a5f146e33a1b144d12ad9d685ee1b54dbc8b0950791ed45c933b119dc1
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$want" ]; then
  echo "$out"
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent tiktoken@1.0.22 >/dev/null)
tar -xzf "$tmp"/tiktoken-1.0.22.tgz -C "$tmp" package/encoders/o200k_base.json
got=$(sha256sum "$tmp/package/encoders/o200k_base.json" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "sha256 mismatch: got $got, want $want" >&2
  exit 1
fi
mv "$tmp/package/encoders/o200k_base.json" "$out"
echo "$out"
