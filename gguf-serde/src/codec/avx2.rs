//! AVX2 primitives shared by the kernels' AVX2 code (x86-64 only): byte-to-float conversions with
//! a scale (and offset), bit spreading, and the rounding and min/max helpers of the legacy
//! quantizers. Each computes exactly the portable scalar expression lane by lane (a multiply, then
//! a separate add or subtract; never a fused multiply-add), so the bits are the same.
//!
//! Every function requires AVX2 (callers reach them through `simd!`, see `isa.rs`).

#![allow(unsafe_code)]

use std::arch::x86_64::*;

/// Converts 8 signed bytes (the low 8 of `v`) to floats and multiplies by `d`, storing to `y`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_i8x8_mul(v: __m128i, d: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
    _mm256_storeu_ps(y, _mm256_mul_ps(f, d));
}

/// Stores 16 signed bytes times `d` to `y[0..16]`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_i8x16_mul(v: __m128i, d: __m256, y: *mut f32) {
    store_i8x8_mul(v, d, y);
    store_i8x8_mul(_mm_srli_si128(v, 8), d, y.add(8));
}

/// Stores 8 unsigned bytes as `d × q − m`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_u8x8_mul_sub(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(d, f), m));
}

/// Stores 16 unsigned bytes as `d × q − m`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_u8x16_mul_sub(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    store_u8x8_mul_sub(v, d, m, y);
    store_u8x8_mul_sub(_mm_srli_si128(v, 8), d, m, y.add(8));
}

/// Stores 8 unsigned bytes as `q × d + m`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_u8x8_mul_add(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    let f = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
    _mm256_storeu_ps(y, _mm256_add_ps(_mm256_mul_ps(f, d), m));
}

/// Stores 16 unsigned bytes as `q × d + m`.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn store_u8x16_mul_add(v: __m128i, d: __m256, m: __m256, y: *mut f32) {
    store_u8x8_mul_add(v, d, m, y);
    store_u8x8_mul_add(_mm_srli_si128(v, 8), d, m, y.add(8));
}

/// The 5th bits of Q5_0/Q5_1 for elements 0..16 (`hi = false`) or 16..32, as 0 or 16 per byte.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn q5_high_bits(qh: u32, hi: bool) -> __m128i {
    let spread = if hi {
        _mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3)
    } else {
        _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1)
    };
    let bits = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    let s = _mm_and_si128(_mm_shuffle_epi8(_mm_cvtsi32_si128(qh as i32), spread), bits);
    _mm_and_si128(_mm_cmpeq_epi8(s, bits), _mm_set1_epi8(16))
}

/// `(v >> shift) & 3` per byte, for shift 0, 2, 4 or 6.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn two_bits(v: __m256i, shift: u32) -> __m256i {
    let s = match shift {
        0 => v,
        2 => _mm256_srli_epi16(v, 2),
        4 => _mm256_srli_epi16(v, 4),
        _ => _mm256_srli_epi16(v, 6),
    };
    _mm256_and_si256(s, _mm256_set1_epi8(3))
}

/// `cvttss2si(((x[i] − sub) × mul) + add)` for 32 elements (the legacy quantizers' rounding;
/// `sub = 0` leaves `x` unchanged bit for bit).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn affine_cvtt_32(x: &[f32; 32], sub: f32, mul: f32, add: f32, out: &mut [i32; 32]) {
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
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn round_cvt_32(x: &[f32; 32], mul: f32, out: &mut [i32; 32]) {
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
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn abs_max_32(x: &[f32; 32]) -> f32 {
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
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn min_max_32(x: &[f32; 32]) -> (f32, f32) {
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
    use super::*;
    use crate::codec::isa::Isa;
    use crate::codec::scalar::{cvtt_i32, round_cvt_i32};

    fn random_f32(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                f32::from_bits((s >> 32) as u32)
            })
            .collect()
    }

    /// The quantizers' rounding helpers against the scalar conversions, on random bit patterns
    /// and on smooth values.
    #[test]
    fn rounding_helpers_equal_the_scalar_conversions() {
        if crate::codec::isa::skip_without_avx2(Isa::detected()) {
            return;
        }
        for n in 0..64 {
            let mut x: [f32; 32] = random_f32(32, n as u64 + 11).try_into().unwrap();
            if n % 2 == 0 {
                x.iter_mut().enumerate().for_each(|(i, v)| *v = (i as f32 - 16.0) * 0.37 + n as f32 * 0.25);
            }
            let (sub, mul, add) = (x[3].min(0.0), 1.7f32, 8.5f32);
            let mut a = [0i32; 32];
            // SAFETY: AVX2 checked above; x has 32 elements.
            unsafe { affine_cvtt_32(&x, sub, mul, add, &mut a) };
            let b: Vec<i32> = x.iter().map(|&v| cvtt_i32((v - sub) * mul + add)).collect();
            assert_eq!(a.to_vec(), b);
            // SAFETY: as above.
            unsafe { round_cvt_32(&x, mul, &mut a) };
            let b: Vec<i32> = x.iter().map(|&v| round_cvt_i32(v * mul)).collect();
            assert_eq!(a.to_vec(), b);
        }
    }
}
