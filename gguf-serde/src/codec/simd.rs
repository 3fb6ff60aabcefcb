//! Runtime-detected x86-64 AVX2 (and F16C) versions of the dequantizers: F16, BF16, Q4_0, Q4_1,
//! Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K.
//!
//! Each computes exactly the scalar expression of the portable version, lane by lane (a float
//! multiply, then a separate subtract where the reference has one; never a fused multiply-add), so
//! the bits are the same; the tests run both paths over the same inputs. Setting the environment
//! variable `GGUF_CODEC_NO_SIMD` (read once) forces the portable paths.

#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::half_at;

/// Set by [`super::force_portable`]: use the portable paths even where SIMD is available.
pub(crate) static FORCE_PORTABLE: AtomicBool = AtomicBool::new(false);

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
    features().0 && !FORCE_PORTABLE.load(Ordering::Relaxed)
}

/// Whether AVX2 and F16C are available (and not disabled).
pub(crate) fn has_avx2_f16c() -> bool {
    features().1 && !FORCE_PORTABLE.load(Ordering::Relaxed)
}

/// Converts 8 signed bytes (the low 8 of `v`) to floats and multiplies by `d`, storing to `y`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_i8x8_mul(v: __m128i, d: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
    _mm256_storeu_ps(y, _mm256_mul_ps(f, d));
}

/// Stores 16 signed bytes times `d` to `y[0..16]`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_i8x16_mul(v: __m128i, d: __m256, y: *mut f32) {
    store_i8x8_mul(v, d, y);
    store_i8x8_mul(_mm_srli_si128(v, 8), d, y.add(8));
}

/// Stores 8 unsigned bytes as `d × q − m`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_u8x8_mul_sub(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(d, f), m));
}

/// F16 → f32 with F16C.
///
/// # Safety
/// The CPU must support AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f16_row_avx2(src: &[u8], dst: &mut [f32]) {
    let n = dst.len().min(src.len() / 2);
    let main = n / 8 * 8;
    let mut i = 0;
    while i < main {
        // SAFETY: i + 8 <= n, so 16 bytes from src[2i] and 8 floats at dst[i] are in bounds.
        let h = _mm_loadu_si128(src.as_ptr().add(2 * i) as *const __m128i);
        _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
        i += 8;
    }
    super::floats::f16_row_portable(&src[2 * main..2 * n], &mut dst[main..n]);
}

/// f32 → F16 with F16C (round to nearest even), NaN replaced by ggml's `0x7E00 | sign`.
///
/// # Safety
/// The CPU must support AVX2 and F16C.
#[target_feature(enable = "avx2,f16c")]
pub(crate) unsafe fn f32_to_f16_row_avx2(src: &[f32], dst: &mut [u8]) {
    let n = src.len().min(dst.len() / 2);
    let main = n / 8 * 8;
    let qnan = _mm_set1_epi16(0x7E00);
    let sign = _mm_set1_epi16(-0x8000);
    let mut i = 0;
    while i < main {
        // SAFETY: i + 8 <= n: 8 floats at src[i], 16 bytes at dst[2i].
        let x = _mm256_loadu_ps(src.as_ptr().add(i));
        let h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
        let nan32 = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
        let nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
        let fixed = _mm_or_si128(_mm_and_si128(h, sign), qnan);
        let out = _mm_blendv_epi8(h, fixed, nan16);
        _mm_storeu_si128(dst.as_mut_ptr().add(2 * i) as *mut __m128i, out);
        i += 8;
    }
    for (d, s) in dst[2 * main..2 * n].chunks_exact_mut(2).zip(&src[main..n]) {
        d.copy_from_slice(&super::f32_to_f16(*s).to_le_bytes());
    }
}

/// f32 → BF16 as `ggml_compute_fp32_to_bf16`: NaN keeps its top half with the quiet bit forced,
/// everything else rounds to nearest even.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn f32_to_bf16_row_avx2(src: &[f32], dst: &mut [u8]) {
    let n = src.len().min(dst.len() / 2);
    let main = n / 16 * 16;
    let absmask = _mm256_set1_epi32(0x7fff_ffff);
    let inf = _mm256_set1_epi32(0x7f80_0000);
    let one = _mm256_set1_epi32(1);
    let round = _mm256_set1_epi32(0x7fff);
    let quiet = _mm256_set1_epi32(64);
    let conv = |u: __m256i| {
        let nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absmask), inf);
        let rounded = _mm256_srli_epi32(
            _mm256_add_epi32(u, _mm256_add_epi32(round, _mm256_and_si256(_mm256_srli_epi32(u, 16), one))),
            16,
        );
        let q = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
        _mm256_blendv_epi8(rounded, q, nan)
    };
    let mut i = 0;
    while i < main {
        // SAFETY: i + 16 <= n: 16 floats at src[i], 32 bytes at dst[2i].
        let a = conv(_mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i));
        let b = conv(_mm256_loadu_si256(src.as_ptr().add(i + 8) as *const __m256i));
        // Values are < 2^16, so the unsigned saturating pack is exact; fix the lane order.
        let packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0b11_01_10_00);
        _mm256_storeu_si256(dst.as_mut_ptr().add(2 * i) as *mut __m256i, packed);
        i += 16;
    }
    for (d, s) in dst[2 * main..2 * n].chunks_exact_mut(2).zip(&src[main..n]) {
        d.copy_from_slice(&super::floats::f32_to_bf16(*s).to_le_bytes());
    }
}

/// BF16 → f32 (a 16-bit left shift).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bf16_row_avx2(src: &[u8], dst: &mut [f32]) {
    let n = dst.len().min(src.len() / 2);
    let main = n / 8 * 8;
    let mut i = 0;
    while i < main {
        // SAFETY: as in f16_row_avx2.
        let h = _mm_loadu_si128(src.as_ptr().add(2 * i) as *const __m128i);
        let w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
        _mm256_storeu_si256(dst.as_mut_ptr().add(i) as *mut __m256i, w);
        i += 8;
    }
    super::floats::bf16_row_portable(&src[2 * main..2 * n], &mut dst[main..n]);
}

/// Q8_0: `q × d`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q8_0_avx2(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(34).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        // SAFETY: b has 34 bytes (32 from offset 2), y has 32 floats.
        let q = _mm256_loadu_si256(b.as_ptr().add(2) as *const __m256i);
        let lo = _mm256_castsi256_si128(q);
        let hi = _mm256_extracti128_si256(q, 1);
        let yp = y.as_mut_ptr();
        store_i8x16_mul(lo, d, yp);
        store_i8x16_mul(hi, d, yp.add(16));
    }
}

/// Q4_0: `(q − 8) × d`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q4_0_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm_set1_epi8(0x0F);
    let eight = _mm_set1_epi8(8);
    for (b, y) in src.chunks_exact(18).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        // SAFETY: b has 18 bytes (16 from offset 2), y has 32 floats.
        let q = _mm_loadu_si128(b.as_ptr().add(2) as *const __m128i);
        let lo = _mm_sub_epi8(_mm_and_si128(q, m4), eight);
        let hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), m4), eight);
        let yp = y.as_mut_ptr();
        store_i8x16_mul(lo, d, yp);
        store_i8x16_mul(hi, d, yp.add(16));
    }
}

/// Q5_0: `((q | h << 4) − 16) × d`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q5_0_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm_set1_epi8(0x0F);
    let sixteen = _mm_set1_epi8(16);
    // Byte k of the result takes byte (k / 8) of the shuffled source, then tests bit k % 8.
    let spread_lo = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    let spread_hi = _mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    let bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    for (b, y) in src.chunks_exact(22).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        let qh = _mm_cvtsi32_si128(i32::from_le_bytes([b[2], b[3], b[4], b[5]]));
        let hb = |spread: __m128i| {
            let s = _mm_and_si128(_mm_shuffle_epi8(qh, spread), bits);
            _mm_and_si128(_mm_cmpeq_epi8(s, bits), sixteen)
        };
        // SAFETY: b has 22 bytes (16 from offset 6), y has 32 floats.
        let q = _mm_loadu_si128(b.as_ptr().add(6) as *const __m128i);
        let lo = _mm_sub_epi8(_mm_or_si128(_mm_and_si128(q, m4), hb(spread_lo)), sixteen);
        let hi = _mm_sub_epi8(_mm_or_si128(_mm_and_si128(_mm_srli_epi16(q, 4), m4), hb(spread_hi)), sixteen);
        let yp = y.as_mut_ptr();
        store_i8x16_mul(lo, d, yp);
        store_i8x16_mul(hi, d, yp.add(16));
    }
}

/// Q4_K: `d·sc × q − dmin·m` per 32 elements.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q4_k_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm256_set1_epi8(0x0F);
    for (b, y) in src.chunks_exact(144).zip(dst.chunks_exact_mut(256)) {
        let d = half_at(b, 0);
        let min = half_at(b, 2);
        let scales = &b[4..16];
        for j in 0..4 {
            let (sc1, mn1) = super::kquants::scale_min_k4(2 * j, scales);
            let (sc2, mn2) = super::kquants::scale_min_k4(2 * j + 1, scales);
            let d1 = _mm256_set1_ps(d * sc1 as f32);
            let m1 = _mm256_set1_ps(min * mn1 as f32);
            let d2 = _mm256_set1_ps(d * sc2 as f32);
            let m2 = _mm256_set1_ps(min * mn2 as f32);
            // SAFETY: 32 bytes at 16 + 32j lie inside the 144-byte block; y has 256 floats.
            let q = _mm256_loadu_si256(b.as_ptr().add(16 + 32 * j) as *const __m256i);
            let lo = _mm256_and_si256(q, m4);
            let hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            let yp = y.as_mut_ptr().add(64 * j);
            let lo0 = _mm256_castsi256_si128(lo);
            let lo1 = _mm256_extracti128_si256(lo, 1);
            let hi0 = _mm256_castsi256_si128(hi);
            let hi1 = _mm256_extracti128_si256(hi, 1);
            store_u8x8_mul_sub(lo0, d1, m1, yp);
            store_u8x8_mul_sub(_mm_srli_si128(lo0, 8), d1, m1, yp.add(8));
            store_u8x8_mul_sub(lo1, d1, m1, yp.add(16));
            store_u8x8_mul_sub(_mm_srli_si128(lo1, 8), d1, m1, yp.add(24));
            store_u8x8_mul_sub(hi0, d2, m2, yp.add(32));
            store_u8x8_mul_sub(_mm_srli_si128(hi0, 8), d2, m2, yp.add(40));
            store_u8x8_mul_sub(hi1, d2, m2, yp.add(48));
            store_u8x8_mul_sub(_mm_srli_si128(hi1, 8), d2, m2, yp.add(56));
        }
    }
}

/// Q6_K: `(d × sc) × (q − 32)`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q6_k_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm256_set1_epi8(0x0F);
    let m2 = _mm256_set1_epi8(0x03);
    let off = _mm256_set1_epi8(32);
    for (b, y) in src.chunks_exact(210).zip(dst.chunks_exact_mut(256)) {
        let d = half_at(b, 208);
        for n in 0..2 {
            // SAFETY: ql (64 bytes at 64n), qh (32 at 128 + 32n) lie inside the 210-byte block.
            let ql0 = _mm256_loadu_si256(b.as_ptr().add(64 * n) as *const __m256i);
            let ql1 = _mm256_loadu_si256(b.as_ptr().add(64 * n + 32) as *const __m256i);
            let qh = _mm256_loadu_si256(b.as_ptr().add(128 + 32 * n) as *const __m256i);
            let high = |shift: i32| -> __m256i {
                let s = match shift {
                    0 => qh,
                    2 => _mm256_srli_epi16(qh, 2),
                    4 => _mm256_srli_epi16(qh, 4),
                    _ => _mm256_srli_epi16(qh, 6),
                };
                _mm256_slli_epi16(_mm256_and_si256(s, m2), 4)
            };
            let q = [
                _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(ql0, m4), high(0)), off),
                _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(ql1, m4), high(2)), off),
                _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), high(4)), off),
                _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4), high(6)), off),
            ];
            let sc = &b[192 + 8 * n..200 + 8 * n];
            let yp = y.as_mut_ptr().add(128 * n);
            for (k, &qk) in q.iter().enumerate() {
                let s0 = _mm256_set1_ps(d * (sc[2 * k] as i8) as f32);
                let s1 = _mm256_set1_ps(d * (sc[2 * k + 1] as i8) as f32);
                let lo = _mm256_castsi256_si128(qk);
                let hi = _mm256_extracti128_si256(qk, 1);
                let o = yp.add(32 * k);
                store_i8x16_mul(lo, s0, o);
                store_i8x16_mul(hi, s1, o.add(16));
            }
        }
    }
}

/// Stores 16 unsigned bytes as `d × q − m`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_u8x16_mul_sub(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    store_u8x8_mul_sub(v, d, m, y);
    store_u8x8_mul_sub(_mm_srli_si128(v, 8), d, m, y.add(8));
}

/// Stores 8 unsigned bytes as `q × d + m`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_u8x8_mul_add(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
    _mm256_storeu_ps(y, _mm256_add_ps(_mm256_mul_ps(f, d), m));
}

/// Stores 16 unsigned bytes as `q × d + m`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_u8x16_mul_add(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    store_u8x8_mul_add(v, d, m, y);
    store_u8x8_mul_add(_mm_srli_si128(v, 8), d, m, y.add(8));
}

/// The 5th bits of Q5_0/Q5_1 for elements 0..16 (`hi = false`) or 16..32, as 0 or 16 per byte.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn q5_high_bits(qh: u32, hi: bool) -> __m128i {
    let spread = if hi {
        _mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)
    } else {
        _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)
    };
    let bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    let s = _mm_and_si128(_mm_shuffle_epi8(_mm_cvtsi32_si128(qh as i32), spread), bits);
    _mm_and_si128(_mm_cmpeq_epi8(s, bits), _mm_set1_epi8(16))
}

/// Q4_1: `q × d + m`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q4_1_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm_set1_epi8(0x0F);
    for (b, y) in src.chunks_exact(20).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        let m = _mm256_set1_ps(half_at(b, 2));
        // SAFETY: 16 bytes at 4 inside the 20-byte block; y has 32 floats.
        let q = _mm_loadu_si128(b.as_ptr().add(4) as *const __m128i);
        let yp = y.as_mut_ptr();
        store_u8x16_mul_add(_mm_and_si128(q, m4), d, m, yp);
        store_u8x16_mul_add(_mm_and_si128(_mm_srli_epi16(q, 4), m4), d, m, yp.add(16));
    }
}

/// Q5_1: `q × d + m`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q5_1_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm_set1_epi8(0x0F);
    for (b, y) in src.chunks_exact(24).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        let m = _mm256_set1_ps(half_at(b, 2));
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        // SAFETY: 16 bytes at 8 inside the 24-byte block; y has 32 floats.
        let q = _mm_loadu_si128(b.as_ptr().add(8) as *const __m128i);
        let lo = _mm_or_si128(_mm_and_si128(q, m4), q5_high_bits(qh, false));
        let hi = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(q, 4), m4), q5_high_bits(qh, true));
        let yp = y.as_mut_ptr();
        store_u8x16_mul_add(lo, d, m, yp);
        store_u8x16_mul_add(hi, d, m, yp.add(16));
    }
}

/// Q8_1: `q × d` (the `s` field is not needed).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q8_1_avx2(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(36).zip(dst.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(half_at(b, 0));
        // SAFETY: 32 bytes at 4 inside the 36-byte block; y has 32 floats.
        let q = _mm256_loadu_si256(b.as_ptr().add(4) as *const __m256i);
        let yp = y.as_mut_ptr();
        store_i8x16_mul(_mm256_castsi256_si128(q), d, yp);
        store_i8x16_mul(_mm256_extracti128_si256(q, 1), d, yp.add(16));
    }
}

/// Q8_K: `d × q` with an f32 `d`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q8_k_avx2(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(292).zip(dst.chunks_exact_mut(256)) {
        let d = _mm256_set1_ps(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        for k in 0..8 {
            // SAFETY: 32 bytes at 4 + 32k (k < 8) inside the 292-byte block; y has 256 floats.
            let q = _mm256_loadu_si256(b.as_ptr().add(4 + 32 * k) as *const __m256i);
            let yp = y.as_mut_ptr().add(32 * k);
            store_i8x16_mul(_mm256_castsi256_si128(q), d, yp);
            store_i8x16_mul(_mm256_extracti128_si256(q, 1), d, yp.add(16));
        }
    }
}

/// Q5_K: `d·sc × (q + 16·h) − dmin·m` per 32 elements.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q5_k_avx2(src: &[u8], dst: &mut [f32]) {
    let m4 = _mm256_set1_epi8(0x0F);
    let sixteen = _mm256_set1_epi8(16);
    for (b, y) in src.chunks_exact(176).zip(dst.chunks_exact_mut(256)) {
        let d = half_at(b, 0);
        let min = half_at(b, 2);
        let scales = &b[4..16];
        // SAFETY: qh is 32 bytes at 16 inside the 176-byte block.
        let qh = _mm256_loadu_si256(b.as_ptr().add(16) as *const __m256i);
        for j in 0..4 {
            let (sc1, mn1) = super::kquants::scale_min_k4(2 * j, scales);
            let (sc2, mn2) = super::kquants::scale_min_k4(2 * j + 1, scales);
            let d1 = _mm256_set1_ps(d * sc1 as f32);
            let m1 = _mm256_set1_ps(min * mn1 as f32);
            let d2 = _mm256_set1_ps(d * sc2 as f32);
            let m2 = _mm256_set1_ps(min * mn2 as f32);
            let u1 = _mm256_set1_epi8((1u8 << (2 * j)) as i8);
            let u2 = _mm256_set1_epi8((2u8 << (2 * j)) as i8);
            let h1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u1), u1), sixteen);
            let h2 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u2), u2), sixteen);
            // SAFETY: 32 bytes at 48 + 32j (j < 4) inside the block; y has 256 floats.
            let q = _mm256_loadu_si256(b.as_ptr().add(48 + 32 * j) as *const __m256i);
            let lo = _mm256_or_si256(_mm256_and_si256(q, m4), h1);
            let hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h2);
            let yp = y.as_mut_ptr().add(64 * j);
            store_u8x16_mul_sub(_mm256_castsi256_si128(lo), d1, m1, yp);
            store_u8x16_mul_sub(_mm256_extracti128_si256(lo, 1), d1, m1, yp.add(16));
            store_u8x16_mul_sub(_mm256_castsi256_si128(hi), d2, m2, yp.add(32));
            store_u8x16_mul_sub(_mm256_extracti128_si256(hi, 1), d2, m2, yp.add(48));
        }
    }
}

/// `(v >> shift) & 3` per byte, for shift 0, 2, 4 or 6.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn two_bits(v: __m256i, shift: u32) -> __m256i {
    let s = match shift {
        0 => v,
        2 => _mm256_srli_epi16(v, 2),
        4 => _mm256_srli_epi16(v, 4),
        _ => _mm256_srli_epi16(v, 6),
    };
    _mm256_and_si256(s, _mm256_set1_epi8(3))
}

/// Q2_K: `d·(sc & 15) × q − dmin·(sc >> 4)` per 16 elements.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q2_k_avx2(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(84).zip(dst.chunks_exact_mut(256)) {
        let d = half_at(b, 80);
        let min = half_at(b, 82);
        let mut is = 0;
        for n in 0..2 {
            // SAFETY: 32 bytes at 16 + 32n inside the 84-byte block.
            let q = _mm256_loadu_si256(b.as_ptr().add(16 + 32 * n) as *const __m256i);
            for (k, shift) in [0u32, 2, 4, 6].into_iter().enumerate() {
                let v = two_bits(q, shift);
                let sc0 = b[is];
                let sc1 = b[is + 1];
                is += 2;
                let yp = y.as_mut_ptr().add(128 * n + 32 * k);
                let (dl0, ml0) = (_mm256_set1_ps(d * (sc0 & 0xF) as f32), _mm256_set1_ps(min * (sc0 >> 4) as f32));
                let (dl1, ml1) = (_mm256_set1_ps(d * (sc1 & 0xF) as f32), _mm256_set1_ps(min * (sc1 >> 4) as f32));
                store_u8x16_mul_sub(_mm256_castsi256_si128(v), dl0, ml0, yp);
                store_u8x16_mul_sub(_mm256_extracti128_si256(v, 1), dl1, ml1, yp.add(16));
            }
        }
    }
}

/// Q3_K: `d·(sc − 32) × (q − 4·!h)` per 16 elements.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q3_k_avx2(src: &[u8], dst: &mut [f32]) {
    let four = _mm256_set1_epi8(4);
    for (b, y) in src.chunks_exact(110).zip(dst.chunks_exact_mut(256)) {
        let d_all = half_at(b, 108);
        let scales = super::kquants::q3_k_scales(&b[96..108]);
        // SAFETY: hmask is 32 bytes at 0 inside the 110-byte block.
        let hm = _mm256_loadu_si256(b.as_ptr() as *const __m256i);
        let mut is = 0;
        let mut m = 1u8;
        for n in 0..2 {
            // SAFETY: 32 bytes at 32 + 32n inside the block.
            let q = _mm256_loadu_si256(b.as_ptr().add(32 + 32 * n) as *const __m256i);
            for (k, shift) in [0u32, 2, 4, 6].into_iter().enumerate() {
                let mv = _mm256_set1_epi8(m as i8);
                let set = _mm256_cmpeq_epi8(_mm256_and_si256(hm, mv), mv);
                let v = _mm256_sub_epi8(two_bits(q, shift), _mm256_andnot_si256(set, four));
                let dl0 = _mm256_set1_ps(d_all * (scales[is] as i32) as f32);
                let dl1 = _mm256_set1_ps(d_all * (scales[is + 1] as i32) as f32);
                is += 2;
                let yp = y.as_mut_ptr().add(128 * n + 32 * k);
                store_i8x16_mul(_mm256_castsi256_si128(v), dl0, yp);
                store_i8x16_mul(_mm256_extracti128_si256(v, 1), dl1, yp.add(16));
                m <<= 1;
            }
        }
    }
}

/// `cvttss2si(((x[i] − sub) × mul) + add)` for 32 elements (the legacy quantizers' rounding;
/// `sub = 0` leaves `x` unchanged bit for bit).
///
/// # Safety
/// The CPU must support AVX2; `x` has at least 32 elements.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn affine_cvtt_32(x: &[f32], sub: f32, mul: f32, add: f32, out: &mut [i32; 32]) {
    let (s, m, a) = (_mm256_set1_ps(sub), _mm256_set1_ps(mul), _mm256_set1_ps(add));
    for k in 0..4 {
        // SAFETY: x has 32 elements, out is [i32; 32].
        let v = _mm256_loadu_ps(x.as_ptr().add(8 * k));
        let r = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v, s), m), a);
        _mm256_storeu_si256(out.as_mut_ptr().add(8 * k) as *mut __m256i, _mm256_cvttps_epi32(r));
    }
}

/// `(int)roundf(x[i] × mul)` as x86 computes it (see `round_cvt_i32`) for 32 elements.
///
/// # Safety
/// The CPU must support AVX2; `x` has at least 32 elements.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn round_cvt_32(x: &[f32], mul: f32, out: &mut [i32; 32]) {
    let m = _mm256_set1_ps(mul);
    let half = _mm256_set1_ps(0.5);
    let neg_half = _mm256_set1_ps(-0.5);
    let int_min = _mm256_set1_epi32(i32::MIN);
    for k in 0..4 {
        // SAFETY: x has 32 elements, out is [i32; 32].
        let v = _mm256_mul_ps(_mm256_loadu_ps(x.as_ptr().add(8 * k)), m);
        let q = _mm256_cvttps_epi32(v);
        let f = _mm256_sub_ps(v, _mm256_cvtepi32_ps(q));
        let up = _mm256_castps_si256(_mm256_cmp_ps(f, half, _CMP_GE_OQ));
        let down = _mm256_castps_si256(_mm256_cmp_ps(f, neg_half, _CMP_LE_OQ));
        let r = _mm256_add_epi32(_mm256_sub_epi32(q, up), down);
        let keep = _mm256_cmpeq_epi32(q, int_min);
        _mm256_storeu_si256(out.as_mut_ptr().add(8 * k) as *mut __m256i, _mm256_blendv_epi8(r, q, keep));
    }
}

/// Horizontal (min, max) of the lanes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn hmin_hmax(mn: __m256, mx: __m256) -> (f32, f32) {
    let mut a = [0f32; 8];
    let mut b = [0f32; 8];
    _mm256_storeu_ps(a.as_mut_ptr(), mn);
    _mm256_storeu_ps(b.as_mut_ptr(), mx);
    let mut lo = a[0];
    let mut hi = b[0];
    for k in 1..8 {
        lo = if a[k] < lo { a[k] } else { lo };
        hi = if b[k] > hi { b[k] } else { hi };
    }
    (lo, hi)
}

/// The largest `|x[i]|` of 32 elements, NaN ignored (0 if none is larger than 0).
///
/// # Safety
/// The CPU must support AVX2; `x` has 32 elements.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn abs_max_32(x: &[f32]) -> f32 {
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let mut acc = _mm256_setzero_ps();
    for k in 0..4 {
        // SAFETY: x has 32 elements. MAXPS returns its second operand when either is NaN.
        let v = _mm256_and_ps(_mm256_loadu_ps(x.as_ptr().add(8 * k)), absmask);
        acc = _mm256_max_ps(v, acc);
    }
    hmin_hmax(acc, acc).1
}

/// `(min, max)` of 32 elements compared as the reference does (`v < min`, `v > max`, starting
/// from `FLT_MAX` / `-FLT_MAX`; NaN never taken). Exact except for the sign of a zero result,
/// which the caller settles (see `min_max` in `legacy`).
///
/// # Safety
/// The CPU must support AVX2; `x` has 32 elements.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn min_max_32(x: &[f32]) -> (f32, f32) {
    let mut mn = _mm256_set1_ps(f32::MAX);
    let mut mx = _mm256_set1_ps(-f32::MAX);
    for k in 0..4 {
        // SAFETY: x has 32 elements. MINPS/MAXPS return the second operand (the accumulator)
        // when either is NaN or both are equal.
        let v = _mm256_loadu_ps(x.as_ptr().add(8 * k));
        mn = _mm256_min_ps(v, mn);
        mx = _mm256_max_ps(v, mx);
    }
    hmin_hmax(mn, mx)
}

#[cfg(test)]
mod tests {
    use super::super::{floats, kquants, legacy};
    use super::*;

    fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 33) as u8
            })
            .collect()
    }

    /// Runs `simd` and `portable` on the same random blocks (every bit pattern of the scales
    /// included) and compares bits.
    fn same_bits(ts: usize, bs: usize, simd: unsafe fn(&[u8], &mut [f32]), portable: fn(&[u8], &mut [f32])) {
        let nblocks = 4096 / bs.max(1) + 37;
        let src = random_bytes(nblocks * ts, ts as u64 * 31 + bs as u64);
        let mut a = vec![0f32; nblocks * bs];
        let mut b = vec![1f32; nblocks * bs];
        // SAFETY: the callers check the CPU features first.
        unsafe { simd(&src, &mut a) };
        portable(&src, &mut b);
        let diff = a.iter().zip(&b).position(|(x, y)| x.to_bits() != y.to_bits());
        assert_eq!(diff, None);
    }

    #[test]
    fn simd_paths_give_the_portable_bits() {
        if has_avx2() {
            same_bits(2, 1, bf16_row_avx2, floats::bf16_row_portable);
            same_bits(34, 32, q8_0_avx2, legacy::dequant_q8_0);
            same_bits(18, 32, q4_0_avx2, legacy::dequant_q4_0);
            same_bits(22, 32, q5_0_avx2, legacy::dequant_q5_0);
            same_bits(144, 256, q4_k_avx2, kquants::dequant_q4_k);
            same_bits(210, 256, q6_k_avx2, kquants::dequant_q6_k);
            same_bits(20, 32, q4_1_avx2, legacy::dequant_q4_1);
            same_bits(24, 32, q5_1_avx2, legacy::dequant_q5_1);
            same_bits(36, 32, q8_1_avx2, legacy::dequant_q8_1);
            same_bits(292, 256, q8_k_avx2, kquants::dequant_q8_k);
            same_bits(176, 256, q5_k_avx2, kquants::dequant_q5_k);
            same_bits(84, 256, q2_k_avx2, kquants::dequant_q2_k);
            same_bits(110, 256, q3_k_avx2, kquants::dequant_q3_k);
            // The quantizers' rounding helpers against the scalar conversions.
            let bits = random_bytes(4 * 32 * 64, 11);
            for (n, c) in bits.chunks_exact(128).enumerate() {
                let mut x: Vec<f32> = c.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                if n % 2 == 0 {
                    x.iter_mut().enumerate().for_each(|(i, v)| *v = (i as f32 - 16.0) * 0.37 + n as f32 * 0.25);
                }
                let (sub, mul, add) = (x[3].min(0.0), 1.7f32, 8.5f32);
                let mut a = [0i32; 32];
                unsafe { affine_cvtt_32(&x, sub, mul, add, &mut a) };
                let b: Vec<i32> = x.iter().map(|&v| super::super::cvtt_i32((v - sub) * mul + add)).collect();
                assert_eq!(a.to_vec(), b);
                unsafe { round_cvt_32(&x, mul, &mut a) };
                let b: Vec<i32> = x.iter().map(|&v| super::super::round_cvt_i32(v * mul)).collect();
                assert_eq!(a.to_vec(), b);
            }
        } else {
            eprintln!("no AVX2: SIMD paths not tested on this machine");
        }
        if has_avx2_f16c() {
            same_bits(2, 1, f16_row_avx2, floats::f16_row_portable);
            // Every f16 value, with an odd length for the scalar tail.
            let src: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).chain([0x01, 0x3c]).collect();
            let mut a = vec![0f32; 65537];
            let mut b = vec![0f32; 65537];
            // SAFETY: F16C and AVX2 checked above.
            unsafe { f16_row_avx2(&src, &mut a) };
            floats::f16_row_portable(&src, &mut b);
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
            // f32 -> f16 on special values and random bits, odd length.
            let mut x: Vec<f32> = random_bytes(4 * 4099, 7)
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            x.extend([f32::NAN, -f32::NAN, f32::INFINITY, 65520.0, 65519.99, 1e-8, -6e-8, 0.0, -0.0]);
            let mut a = vec![0u8; 2 * x.len()];
            // SAFETY: F16C and AVX2 checked above.
            unsafe { f32_to_f16_row_avx2(&x, &mut a) };
            let b: Vec<u8> = x.iter().flat_map(|&v| super::super::f32_to_f16(v).to_le_bytes()).collect();
            assert_eq!(a, b);
        }
        if has_avx2() {
            let mut x: Vec<f32> = random_bytes(4 * 4099, 9)
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            x.extend([f32::NAN, -f32::NAN, f32::INFINITY, f32::from_bits(0x3F80_8000), f32::from_bits(0x7F7F_FFFF)]);
            let mut a = vec![0u8; 2 * x.len()];
            // SAFETY: AVX2 checked above.
            unsafe { f32_to_bf16_row_avx2(&x, &mut a) };
            let b: Vec<u8> = x.iter().flat_map(|&v| floats::f32_to_bf16(v).to_le_bytes()).collect();
            assert_eq!(a, b);
        }
    }
}
