#!/usr/bin/env bash
# Publishing checks (CI runs them from scripts/test.sh):
#   1. `cargo package` of gguf-derive, gguf-serde and gguf-cli, in dependency order, each built
#      from its packaged sources against the others' packages (what `cargo publish` would upload);
#   2. every package in the dependency graph of the workspace (`cargo metadata`, dev and build
#      dependencies included) has a licence compatible with ours (MIT OR Apache-2.0): a licence
#      expression is accepted when every AND-term has at least one OR-alternative in ALLOWED;
#   3. gguf-serde builds, clippy-clean, with no default features and with each feature alone
#      (`derive`, `parallel`, `mmap`, `remote`): a cfg that leaves an unused import or a missing
#      item behind fails here, not in a user's build;
#   4. the docs of the three published crates build without a warning (broken intra-doc links).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# `cargo package` verifies each crate against the others' packages, which it sees as registry
# crates: cargo takes a registry crate of the same name and version as unchanged, so a build left
# from an earlier run (or an old unpacked copy in $CARGO_HOME) would be reused and gguf-serde
# checked against an old gguf-derive. Both are removed first; crates.io's are kept. The packages
# are built in a target directory of their own (target/package-check), so that this removal
# leaves the workspace's own builds (the lints' clippy, the checks below) cached for the next run.
cargo_home=${CARGO_HOME:-$HOME/.cargo}
version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "gguf-serde"))')
for crate in gguf-derive gguf-serde gguf-cli; do
  rm -rf "$cargo_home"/registry/src/-*/"$crate-$version"
done
package_target=${CARGO_TARGET_DIR:-target}/package-check
CARGO_TARGET_DIR=$package_target cargo clean --quiet --profile dev -p gguf-derive -p gguf-serde -p gguf-cli
CARGO_TARGET_DIR=$package_target cargo package --workspace --exclude gguf-tests --exclude gguf-test-support \
  --exclude gguf-examples --exclude gguf-serde-python --allow-dirty --quiet
cargo metadata --format-version 1 --locked | python3 scripts/licences.py
for features in "" derive parallel mmap remote convert hash export; do
  echo "package-check: gguf-serde --no-default-features --features '$features'" >&2
  cargo clippy --quiet --locked -p gguf-serde --no-default-features --features "$features" -- -D warnings
done
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --locked --no-deps -p gguf-serde -p gguf-derive -p gguf-cli
