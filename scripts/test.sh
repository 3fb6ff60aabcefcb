#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs (scripts/setup.sh), then runs
# every test of the workspace. `.ci/run` runs exactly this.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
cargo test --workspace --release
