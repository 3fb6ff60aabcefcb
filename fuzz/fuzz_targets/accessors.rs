//! Opens the input and, when it opens, calls every accessor of every value and tensor (see
//! `check_accessors`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(f) = gguf_serde::Gguf::from_slice(data) {
        gguf_serde_fuzz::check_accessors(&f);
    }
});
