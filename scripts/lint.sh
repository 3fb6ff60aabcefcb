#!/usr/bin/env bash
# Lints: clippy on every crate and target with warnings as errors (the parsing and codec modules
# also deny unwrap/expect/panic/indexing: see the `#![deny]` at the top of container/mod.rs,
# codec/iq/mod.rs and codec/other.rs; container/ and format/ deny unchecked arithmetic,
# `clippy::arithmetic_side_effects`, as module attributes this run applies), and rustfmt in check
# mode, the fuzz crate included.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo clippy --workspace --all-targets -- -D warnings
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
