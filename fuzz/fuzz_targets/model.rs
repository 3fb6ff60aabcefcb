//! See `gguf_serde_fuzz::check_model`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gguf_serde_fuzz::check_model(data);
});
