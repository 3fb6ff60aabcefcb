#!/usr/bin/env bash
# Publishing checks (CI runs them from scripts/test.sh):
#   1. `cargo package` of gguf-derive, gguf-serde and gguf-cli, in dependency order, each built
#      from its packaged sources against the others' packages (what `cargo publish` would upload);
#   2. every package in the dependency graph of the workspace (`cargo metadata`, dev and build
#      dependencies included) has a licence compatible with ours (MIT OR Apache-2.0): a licence
#      expression is accepted when every AND-term has at least one OR-alternative in ALLOWED.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo package --workspace --exclude gguf-tests --exclude gguf-examples --allow-dirty --quiet
cargo metadata --format-version 1 --locked | python3 scripts/licences.py
