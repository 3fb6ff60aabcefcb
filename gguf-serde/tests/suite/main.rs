//! The hermetic tests of gguf-serde, one binary (one link instead of one per file): nothing here
//! needs Python, gguf-py, llama.cpp or the downloaded models (`tests/README.md` of the workspace
//! says where those tests live). Files are made byte by byte with `common::B`, or checked
//! against values from the spec, ggml or gguf-py written into the test.
//!
//! `codec_vectors.rs`, `fuzz_seeds.rs` and `regressions.rs` beside this folder are binaries of
//! their own.

#[path = "../common/mod.rs"]
mod common;

mod compile_fail;
mod convert_joins;
mod convert_names;
mod edit;
mod error_context;
mod imatrix;
mod layers;
mod model_derive;
mod model_props;
mod model_stream;
mod model_write;
mod not_utf8;
mod odd_bools;
mod props;
mod remote;
mod resources;
mod roundtrip_props;
mod serde_bulk;
mod serde_hostile;
mod serde_layouts;
mod serde_mapping;
mod serde_proptest;
mod shard;
mod standard_keys;
mod string_array;
mod validation;
mod writer;

/// Variables that make tests check less while still passing: refused under `CI` (a failure),
/// and otherwise counted as a skip in the totals of `scripts/test.sh`.
#[test]
fn no_variable_makes_the_tests_check_less() {
    // PROPTEST_CASES lowers the number of cases of every property test that does not set its
    // own; GGUF_CODEC_NO_SIMD turns the SIMD kernels off, so SIMD-against-portable checks compare
    // the portable code with itself.
    for var in ["PROPTEST_CASES", "GGUF_CODEC_NO_SIMD", "GGUF_SKIP_PYTHON", "GGUF_SKIP_MODELS"] {
        if let Some(v) = std::env::var_os(var) {
            common::skip(&format!("{var}={} is set: some tests check less", v.to_string_lossy()));
        }
    }
}
