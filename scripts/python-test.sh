#!/usr/bin/env bash
# The Python package's tests (python/: the module `gguf_serde`, PyO3 + maturin), as a user gets
# it: a venv of its own, target/python-venv (git-ignored, kept between runs), with the pinned test
# dependencies (numpy, gguf-py 0.19.0 as the oracle, pytest, pytest-xdist), then `pip install ./python`, which
# builds the extension with maturin, then pytest on python/tests. scripts/test.sh builds it after
# the cargo build and runs its tests beside the cargo tests.
#
# The extension is built under the workspace's `hostile` profile (Cargo.toml: release code
# generation, with overflow checks and debug assertions in the workspace's own crates), the profile
# of every test build of scripts/test.sh, so that it shares their compiled dependencies; a user's
# `pip install ./python` builds the same code in release (maturin's default), without the checks.
#
# Prints how long the build took (wall and CPU), and ends with one cargo-style line,
# `test result: ok. N passed; N failed; N ignored; ...`, which scripts/test.sh adds to its totals
# (pytest's skips, none under CI where a missing input fails its test, count as ignored).
# Needs python3 with venv, PyPI (numpy, gguf, pytest, pytest-xdist; maturin for the build), and for the
# oracle tests the corpus (scripts/setup.sh) and the llama.cpp build ($GGUF_LLAMA_CPP_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "numpy==2.4.6" "gguf==0.19.0" "pytest==9.2.0" \
  "pytest-xdist==3.8.0" "execnet==2.1.2"
build() {
  local TIMEFORMAT="python-test: built and installed python/ in %0R s wall, %0U s user + %0S s system CPU"
  time MATURIN_PEP517_ARGS="--profile hostile" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps ./python
}
# `--build` only builds and installs (scripts/test.sh builds it after the cargo builds, then runs
# the tests beside the cargo tests: `--test`, which only runs them); no argument does both, as
# does `--nightly` (with the nightly tests instead of the others).
[[ ${1:-} == --test ]] || build
[[ ${1:-} != --build ]] || exit 0
if [[ -z ${GGUF_LLAMA_CPP_DIR:-} ]]; then
  GGUF_LLAMA_CPP_DIR=$(scripts/build-llama.sh --src-only | tail -1)
  export GGUF_LLAMA_CPP_DIR
fi
mkdir -p target
report=target/python-tests.xml
rm -f "$report"
status=0
# The `pytest` script, not `python -m pytest` (which puts the working folder on sys.path):
# `import gguf_serde` must find the installed package. Two worker processes (pytest-xdist `-n 2`,
# one per core of the suite's 2-core machine): the tests are independent (each writes only to its
# own `tmp_path`), and most of their time is one core's NumPy, gguf-py and llama.cpp work.
# The tests marked `nightly` (larger matrices of a rule the others check on one case:
# tests/README.md, "Moved to the nightly run") are left out; `--nightly` runs only them
# (scripts/test-nightly.sh).
marks="not nightly"
[[ ${1:-} != --nightly ]] || marks=nightly
# The tests' `tmp_path` folders under the clone's target/ (pytest empties --basetemp at the start
# of a run), not the system temp folder, where pytest keeps the last three runs' (350 MB each).
"$venv/bin/pytest" python/tests -q -p no:cacheprovider -n 2 -m "$marks" --basetemp=target/pytest-tmp \
  --junitxml="$report" || status=$?
"$venv/bin/python" - "$report" "$status" <<'PY'
import sys
import xml.etree.ElementTree as ET

path, status = sys.argv[1], int(sys.argv[2])
try:
    suites = list(ET.parse(path).getroot().iter("testsuite"))
    n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
except (OSError, ET.ParseError):
    n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
failed = n["failures"] + n["errors"]
passed = n["tests"] - failed - n["skipped"]
# pytest without a report or with no test (exit 5) failed as a whole: counted as one failure.
if status != 0 and failed == 0:
    failed = 1
ok = "ok" if status == 0 else "FAILED"
print(f"test result: {ok}. {passed} passed; {failed} failed; {n['skipped']} ignored; 0 measured; 0 filtered out (pytest, python/tests)")
PY
exit $status
