//! Scalar conversions with exactly ggml's reference semantics, shared by the kernels.

/// f16 bits → f32, as ggml's `GGML_FP16_TO_FP32` (exact for every finite value; NaN stays NaN
/// with its payload, quieted).
#[inline(always)]
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// f32 → f16 bits as ggml's `GGML_FP32_TO_FP16` (`ggml_compute_fp32_to_fp16`): round to nearest
/// even, overflow to infinity, every NaN to the quiet NaN `0x7E00` with the input's sign.
#[inline(always)]
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    if x.is_nan() {
        ((x.to_bits() >> 16) as u16 & 0x8000) | 0x7E00
    } else {
        half::f16::from_f32(x).to_bits()
    }
}

/// ggml's `nearest_int`: round to nearest (ties to even) by adding 1.5 × 2^23 and reading the low
/// mantissa bits; meaningful for |x| ≤ 2^22, and like the reference it never fails outside that.
#[inline(always)]
pub(crate) fn nearest_int(x: f32) -> i32 {
    let v = x + 12_582_912.0f32;
    (v.to_bits() as i32 & 0x007f_ffff) - 0x0040_0000
}

/// C's float → 32-bit int conversion as x86-64 does it (`cvttss2si`): truncate toward zero, and
/// `i32::MIN` for NaN and values out of range. ggml converts floats to `int8_t`/`uint8_t` with a
/// cast that compiles to this, keeping the low byte.
#[inline(always)]
pub(crate) fn cvtt_i32(x: f32) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE is part of the x86-64 baseline; this is the instruction itself.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_cvtt_ss2si(std::arch::x86_64::_mm_set_ss(x))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // `as` saturates; x86 gives i32::MIN for anything out of range or NaN.
        if x.is_nan() || !(-2_147_483_648.0f32..2_147_483_648.0f32).contains(&x) {
            i32::MIN
        } else {
            x as i32
        }
    }
}

/// `(int)roundf(x)` as the reference computes it on x86-64 (round half away from zero, then
/// `cvttss2si`), without a call to `roundf`.
#[inline(always)]
pub(crate) fn round_cvt_i32(x: f32) -> i32 {
    let q = cvtt_i32(x);
    if q == i32::MIN {
        // NaN, out of range, or exactly -2^31 (already integral): roundf changes nothing.
        return q;
    }
    // Exact: |x| < 2^31 and q = trunc(x), so x - q is representable.
    let f = x - q as f32;
    q + (f >= 0.5) as i32 - (f <= -0.5) as i32
}

/// The largest magnitude of `x` and the value that has it (the first one: strict `>`, as every
/// reference search does it; NaN never taken): `(amax, max)`, `(0, 0)` for an empty or all-zero
/// `x`.
#[inline(always)]
pub(crate) fn max_by_abs(x: &[f32]) -> (f32, f32) {
    let mut amax = 0f32;
    let mut max = 0f32;
    for &v in x {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    (amax, max)
}

/// `amax = MAX(amax, fabsf(v))` over `x` from 0, with C's `MAX(a, b) = a > b ? a : b` (so a NaN
/// `v` replaces `amax`).
#[inline(always)]
pub(crate) fn max_abs_c(x: &[f32]) -> f32 {
    let mut amax = 0f32;
    for &v in x {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    amax
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_int_and_cvtt() {
        assert_eq!([0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -3.7].map(nearest_int), [0, 2, 2, 0, -2, 4, -4]);
        assert_eq!(
            [1.9, -1.9, f32::NAN, 3e9, -3e9, f32::INFINITY].map(cvtt_i32),
            [1, -1, i32::MIN, i32::MIN, i32::MIN, i32::MIN]
        );
        assert_eq!(cvtt_i32(-2_147_483_648.0), i32::MIN);
        for x in [0.5f32, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 126.5, 1e9, -1e9, 3e9, f32::NAN, 8388607.5] {
            let want = if x.is_nan() || x.abs() >= 2_147_483_648.0 { i32::MIN } else { x.round() as i32 };
            assert_eq!(round_cvt_i32(x), want, "{x}");
        }
    }

    #[test]
    fn f16_conversions_match_ggml_on_special_values() {
        // Values worked out by hand from IEEE 754 binary16.
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(65520.0), 0x7C00); // rounds up to infinity
        assert_eq!(f32_to_f16(-f32::INFINITY), 0xFC00);
        assert_eq!(f32_to_f16(f32::from_bits(0x7FC1_2345)), 0x7E00);
        assert_eq!(f32_to_f16(f32::from_bits(0xFF80_0001)), 0xFE00);
        assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0x0000); // tie to even
        assert_eq!(f32_to_f16(1.5 * 2f32.powi(-25)), 0x0001);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0xFC00), f32::NEG_INFINITY);
        assert_eq!(f16_to_f32(0x7D00).to_bits(), 0x7FE0_0000); // signalling NaN comes out quiet
    }
}
