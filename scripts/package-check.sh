#!/usr/bin/env bash
# Publishing checks (CI runs them from scripts/test.sh):
#   1. `cargo package` of gguf-derive, gguf-serde and gguf-cli, in dependency order (what `cargo
#      publish` would upload), and each package's sources checked (`cargo check`) as unpacked from
#      its .crate, against the others' packages: a file the package leaves out, or a path only the
#      workspace has, fails here;
#   2. every package in the dependency graph of the workspace (`cargo metadata`, dev and build
#      dependencies included) has a licence compatible with ours (MIT OR Apache-2.0): a licence
#      expression is accepted when every AND-term has at least one OR-alternative in ALLOWED;
#   3. gguf-serde builds, clippy-clean, with no default features and with each feature alone
#      (`derive`, `parallel`, `mmap`, `remote`, `convert`, `hash`, `export`): a cfg that leaves an
#      unused import or a missing item behind fails here, not in a user's build;
#   4. the docs of the three published crates build without a warning (broken intra-doc links).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# 1. `cargo package --no-verify` writes the .crate files to <target>/package/. Its own
# verification (a full `cargo build` of each package, in a target directory of its own, since it
# sees the others as registry crates) is replaced by a `cargo check` of the unpacked packages in a
# scratch workspace whose [patch.crates-io] points each at the others' unpacked sources, with the
# workspace's Cargo.lock (the same dependency versions): the same compile errors for what the
# package lacks, and the dependencies' checks are those the lints already made in the shared
# target directory. (The code generation and linking of that build check nothing more: the
# workspace's test build compiles the same sources.) Each package is checked on its own, with its
# default features, as `cargo publish` verifies it.
target=${CARGO_TARGET_DIR:-target}
version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "gguf-serde"))')
crates=(gguf-derive gguf-serde gguf-cli)
for crate in "${crates[@]}"; do rm -f "$target/package/$crate-$version.crate"; done
cargo package --workspace --exclude gguf-tests --exclude gguf-test-support \
  --exclude gguf-examples --exclude gguf-serde-python --allow-dirty --quiet --no-verify
scratch="$target/package-check"
rm -rf "$scratch"
mkdir -p "$scratch"
members=()
for crate in "${crates[@]}"; do
  tar -xzf "$target/package/$crate-$version.crate" -C "$scratch"
  members+=("\"$crate-$version\"")
done
{
  echo '[workspace]'
  echo 'resolver = "2"'
  echo "members = [$(IFS=,; echo "${members[*]}")]"
  echo '[patch.crates-io]'
  echo "gguf-derive = { path = \"gguf-derive-$version\" }"
  echo "gguf-serde = { path = \"gguf-serde-$version\" }"
} > "$scratch/Cargo.toml"
cp Cargo.lock "$scratch/Cargo.lock"
for crate in "${crates[@]}"; do
  echo "package-check: $crate as packaged" >&2
  CARGO_TARGET_DIR=$(cd "$target" && pwd) cargo check --quiet --offline --manifest-path "$scratch/Cargo.toml" -p "$crate"
done
cargo metadata --format-version 1 --locked | python3 scripts/licences.py
for features in "" derive parallel mmap remote convert hash export; do
  echo "package-check: gguf-serde --no-default-features --features '$features'" >&2
  cargo clippy --quiet --locked -p gguf-serde --no-default-features --features "$features" -- -D warnings
done
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --locked --no-deps -p gguf-serde -p gguf-derive -p gguf-cli
