//! The inputs of the converter references (`tests/data/convert-refs.json`, made with torch by
//! `scripts/make-convert-refs.sh`) are remade here without torch, byte for byte: every file of
//! every case has the sha256 the manifest recorded, so a converter test compares its output on
//! exactly the checkpoint llama.cpp's `convert_hf_to_gguf.py` converted.

use gguf_tests::convert_refs::{convert_ref, convert_ref_cases, make_convert_case, OUTTYPES};

#[test]
fn inputs_remade_with_the_references_digests() {
    let cases = convert_ref_cases();
    assert!(cases.len() >= 7, "manifest has {} cases", cases.len());
    for case in &cases {
        let Some(dir) = make_convert_case(case) else { return };
        assert!(dir.join("config.json").is_file(), "{case}: no config.json");
        for outtype in OUTTYPES {
            let r = convert_ref(case, outtype);
            assert_eq!(r["sha256"].as_str().map(str::len), Some(64), "{case} {outtype}: no sha256");
            assert!(r["keys"].as_array().is_some_and(|k| !k.is_empty()), "{case} {outtype}: no keys");
            assert!(r["tensors"].as_array().is_some_and(|t| !t.is_empty()), "{case} {outtype}: no tensors");
        }
    }
}
