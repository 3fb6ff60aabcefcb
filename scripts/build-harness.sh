#!/usr/bin/env bash
# Compiles the C harnesses of tests/harness/ against the llama.cpp build of scripts/build-llama.sh
# (which it runs for the libraries it needs; the first time that builds ggml-base and llama, some
# minutes), or against the build in GGUF_LLAMA_CPP_DIR when that is set (as the tests set it).
# Usage: [GGUF_LLAMA_CPP_DIR=DIR] scripts/build-harness.sh
# Writes, git-ignored, each linked to the build's shared libraries with an rpath and recompiled only
# when its source, a header of tests/harness/ or a library it links is newer:
#   target/harness/ggml_read    tests/harness/ggml_read.c, against libggml-base.so
#   target/harness/llama_run    tests/harness/llama_run.c, against libllama.so (and libggml*.so)
#   target/harness/llama_tokenize  tests/harness/llama_tokenize.c, against libllama.so (and libggml*.so)
# Prints target/harness on stdout, last, so that `h=$(scripts/build-harness.sh); "$h/ggml_read" FILE`
# works. The interop tests (tests/src/lib.rs, `llama_run`) run this script themselves.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ -n "${GGUF_LLAMA_CPP_DIR:-}" ]; then
  llama=$GGUF_LLAMA_CPP_DIR
else
  llama=$(scripts/build-llama.sh ggml-base llama | tail -1)
fi
out="$root/target/harness"
mkdir -p "$out"
lib="$llama/build/bin"
cflags=(-O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L)

# build NAME LIBRARY -lLIB...: compiles tests/harness/NAME.c into target/harness/NAME if stale.
build() {
  local name=$1 newest=$2
  shift 2
  local src="tests/harness/$name.c"
  if [ ! -f "$lib/$newest" ]; then
    echo "build-harness.sh: no $lib/$newest (build llama.cpp: scripts/build-llama.sh)" >&2
    exit 1
  fi
  local stale=0 h
  for h in tests/harness/*.h; do
    [ "$h" -nt "$out/$name" ] && stale=1
  done
  if [ ! -x "$out/$name" ] || [ "$src" -nt "$out/$name" ] || [ "$lib/$newest" -nt "$out/$name" ] || [ $stale = 1 ]; then
    ${CC:-cc} "${cflags[@]}" -I"$llama/src/include" -I"$llama/src/ggml/include" "$src" \
      -o "$out/$name.tmp.$$" -L"$lib" "$@" -Wl,-rpath,"$lib" -lm
    mv "$out/$name.tmp.$$" "$out/$name"
  fi
}
build ggml_read libggml-base.so -lggml-base
build llama_run libllama.so -lllama -lggml -lggml-base
build llama_tokenize libllama.so -lllama -lggml -lggml-base
echo "$out"
