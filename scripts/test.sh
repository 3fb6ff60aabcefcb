#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (scripts/setup.sh), runs the
# lints (scripts/lint.sh), every test of the workspace, and a short run of each fuzz target
# (scripts/fuzz-smoke.sh). `.ci/run` runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
scripts/lint.sh
cargo test --workspace --release
scripts/fuzz-smoke.sh
