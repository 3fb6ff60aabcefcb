//! Opens the input as a GGUF file through every entry point (`from_slice`, `from_vec`,
//! `from_reader` over a cursor, with and without a prefix) and checks that they agree.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = gguf_serde_fuzz::open_all_ways(data);
});
