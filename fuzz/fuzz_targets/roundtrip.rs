//! Whatever opens writes back through `GgufWriter` and re-opens to the same content (see
//! `check_roundtrip`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    gguf_serde_fuzz::check_roundtrip(data);
});
