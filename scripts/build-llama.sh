#!/usr/bin/env bash
# Builds llama.cpp (CPU only, Release) once per machine, from the llama.cpp that the
# `llama-cpp-python==0.3.36` source distribution vendors (llama.cpp@0c1e57098, ggml 0.25.3), fetched
# from PyPI only and checked against its sha256. The reference for the interoperability tests.
#
# Usage: [GGUF_SERDE_CACHE=DIR] [GGUF_SERDE_JOBS=N] scripts/build-llama.sh [--src-only] [TARGET...]
#   TARGET           ninja targets; none = what the test suite uses: llama-quantize
#                    llama-gguf-split llama-gguf-hash llama-imatrix llama-tokenize llama-simple and the libraries
#                    llama ggml ggml-base ggml-cpu
#   --src-only       fetch and unpack the source, build nothing
#   GGUF_SERDE_JOBS  ninja's -j (default 2)
# Prints the cache directory on stdout, last (everything else goes to stderr), so that
#   dir=$(scripts/build-llama.sh ggml-base)
# gives, under "$dir":
#   src/          the unpacked llama.cpp tree (src/ggml/include, src/include, src/src, src/gguf-py,
#                 src/models, src/convert_hf_to_gguf.py)
#   build/bin/    the programs and shared libraries (libggml-base.so, libllama.so, ...)
#   llama_cpp_python-0.3.36.tar.gz   the verified sdist
#   stamp         the targets built so far, one per line, after a line `config <hash of the flags>`;
#                 written (atomically) only after `ninja` built every requested target
# The cache is ${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}/llama.cpp-<sdist sha256>, outside the
# clone, so every clone and worktree of the machine shares one build. A second run with targets
# already in the stamp is a no-op that prints the path. Safe to interrupt and re-run: downloads and
# unpacking go through temporary names renamed into place, the configure step is redone unless it
# completed, ninja resumes; concurrent runs wait on a lock.
#
# Needs python3 with pip (the repository's .venv, made by scripts/setup.sh, which can call this
# script as `scripts/build-llama.sh >/dev/null`), a C/C++ compiler, and PyPI: `cmake` and `ninja`
# are installed into .venv from PyPI. A fresh full build takes about 20 minutes on 2 busy cores;
# `ggml-base` alone about a minute (BENCHMARKS.md, "Metadata walk vs ggml").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

version=0.3.36
sha=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
cmake_pin=cmake==4.4.4
ninja_pin=ninja==1.13.2
default_targets="llama-quantize llama-gguf-split llama-gguf-hash llama-imatrix llama-tokenize llama-simple llama ggml ggml-base ggml-cpu"
cmake_flags=(
  -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF
  # Not -march=native: on a machine that reports AVX-512 and AMX, a native build of this
  # llama.cpp dies in its repacked-weights path (SIGSEGV in llama-imatrix, SIGILL/SIGSEGV when
  # libllama evaluates Gemma 3). A fixed x86-64 level with AVX2/FMA/F16C, which every machine
  # of the suite has, runs everywhere and gives the same results on every such machine.
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=ON -DLLAMA_BUILD_TOOLS=ON
)
jobs=${GGUF_SERDE_JOBS:-2}

src_only=0
if [ "${1:-}" = "--src-only" ]; then
  src_only=1
  shift
fi
if [ $# -gt 0 ]; then targets=("$@"); else read -r -a targets <<< "$default_targets"; fi

cache=${GGUF_SERDE_CACHE:-$HOME/.cache/gguf-serde}
dir="$cache/llama.cpp-$sha"
mkdir -p "$dir"
config="config $(printf '%s\n' "${cmake_flags[@]}" "$cmake_pin" | sha256sum | cut -c1-16)"

# Every target asked for is in the stamp, and the stamp is for these flags.
built() {
  [ -f "$dir/stamp" ] && [ "$(head -n1 "$dir/stamp")" = "$config" ] || return 1
  local t
  for t in "${targets[@]}"; do grep -qxF "$t" "$dir/stamp" || return 1; done
}

if { [ "$src_only" = 1 ] && [ -f "$dir/src/.unpacked" ]; } || { [ "$src_only" = 0 ] && built; }; then
  echo "$dir"
  exit 0
fi

exec 9> "$dir/lock"
flock 9
rm -rf "$dir"/tmp.*  # left by a run that was killed; nobody else holds the lock
tmp=$(mktemp -d "$dir/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 1. The source: the sdist from PyPI, verified, unpacked to src/ under a temporary name first.
if [ ! -f "$dir/src/.unpacked" ]; then
  sdist="$dir/llama_cpp_python-$version.tar.gz"
  if [ ! -f "$sdist" ] || [ "$(sha256sum "$sdist" | cut -d' ' -f1)" != "$sha" ]; then
    py=${PYTHON:-python3}
    [ -x "$root/.venv/bin/python" ] && py="$root/.venv/bin/python"
    echo "build-llama: downloading llama-cpp-python==$version (sdist) from PyPI" >&2
    "$py" -m pip download --quiet --no-deps --disable-pip-version-check --no-binary llama-cpp-python \
      -d "$tmp/dl" "llama-cpp-python==$version" >&2
    got=$(sha256sum "$tmp/dl/llama_cpp_python-$version.tar.gz" | cut -d' ' -f1)
    if [ "$got" != "$sha" ]; then
      echo "build-llama: sha256 mismatch for llama_cpp_python-$version.tar.gz: got $got, want $sha" >&2
      exit 1
    fi
    mv "$tmp/dl/llama_cpp_python-$version.tar.gz" "$sdist"
  fi
  echo "build-llama: unpacking vendor/llama.cpp" >&2
  mkdir "$tmp/x"
  tar -xzf "$sdist" -C "$tmp/x" "llama_cpp_python-$version/vendor/llama.cpp"
  # The vendored tree's .git is a gitlink into llama-cpp-python's repository, which is not there.
  rm -f "$tmp/x/llama_cpp_python-$version/vendor/llama.cpp/.git"
  touch "$tmp/x/llama_cpp_python-$version/vendor/llama.cpp/.unpacked"
  rm -rf "$dir/src" "$dir/build" "$dir/stamp"
  mv "$tmp/x/llama_cpp_python-$version/vendor/llama.cpp" "$dir/src"
fi
if [ "$src_only" = 1 ]; then
  echo "$dir"
  exit 0
fi
if built; then  # another run finished the build while this one waited on the lock
  echo "$dir"
  exit 0
fi

# 2. cmake and ninja from PyPI, into the repository's venv.
if [ ! -x "$root/.venv/bin/python" ]; then
  echo "build-llama: no .venv; run scripts/setup.sh first" >&2
  exit 1
fi
bin="$root/.venv/bin"
have=$("$bin/python" -c 'import importlib.metadata as m; print("cmake==" + m.version("cmake"), "ninja==" + m.version("ninja"))' 2>/dev/null || true)
if [ "$have" != "$cmake_pin $ninja_pin" ] || [ ! -x "$bin/cmake" ] || [ ! -x "$bin/ninja" ]; then
  echo "build-llama: installing $cmake_pin $ninja_pin into .venv" >&2
  "$bin/python" -m pip install --quiet --disable-pip-version-check "$cmake_pin" "$ninja_pin" >&2
fi

# 3. Configure (redone from scratch unless a previous configure with these flags completed), build.
if [ "$(cat "$dir/build/.configured" 2>/dev/null)" != "$config" ]; then
  rm -rf "$dir/build" "$dir/stamp"
  echo "build-llama: configuring" >&2
  "$bin/cmake" -S "$dir/src" -B "$dir/build" -DCMAKE_MAKE_PROGRAM="$bin/ninja" "${cmake_flags[@]}" >&2
  echo "$config" > "$dir/build/.configured"
fi
echo "build-llama: building ${targets[*]} (-j$jobs)" >&2
start=$(date +%s)
"$bin/ninja" -C "$dir/build" -j"$jobs" "${targets[@]}" >&2
echo "build-llama: built in $(( $(date +%s) - start )) s" >&2

# 4. The stamp: the targets built before (same flags) plus these, renamed into place.
{
  echo "$config"
  { [ -f "$dir/stamp" ] && [ "$(head -n1 "$dir/stamp")" = "$config" ] && tail -n +2 "$dir/stamp"
    printf '%s\n' "${targets[@]}"; } | sort -u
} > "$tmp/stamp"
mv "$tmp/stamp" "$dir/stamp"
echo "$dir"
