//! Feeds the input to gguf-serde's reader and to ggml's (`gguf_init_from_buffer`, run in a worker
//! process) and fails on any difference not listed in README.md. Needs `--features ggml`.
#![no_main]

libfuzzer_sys::fuzz_target!(init: gguf_serde_fuzz::differential::worker_if_asked(), |data: &[u8]| {
    gguf_serde_fuzz::differential::check_differential(data);
});
