//! Plain (one element per block) types: F32, F16, BF16, F64 and the integers I8–I64.
//!
//! F16 and BF16 follow ggml's `ggml_fp16_to_fp32_row` / `ggml_bf16_to_fp32_row` and, for
//! quantizing, `ggml_fp32_to_fp16_row` / `ggml_fp32_to_bf16_row_ref` (`ggml.c`, conversions in
//! `ggml-impl.h`). ggml has no row converters for F64 and the integer types; they convert to the
//! nearest `f32`. A block of a plain type is its little-endian scalar ([`F16`], [`F32`], …).

use super::block::{BF16, F16, F32, F64, I16, I32, I64};
use super::isa::{simd, Isa};
use super::scalar::f32_to_f16;
use super::table::{Dequantize, Quantize};

impl Dequantize<1> for F32 {
    fn dequantize(_: Isa, src: &[F32], dst: &mut [[f32; 1]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = [s.get()];
        }
    }
}

impl Quantize<1> for F32 {
    fn quantize(_: Isa, src: &[[f32; 1]], dst: &mut [F32]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = F32::new(s[0]);
        }
    }
}

impl Dequantize<1> for F16 {
    /// Exact conversion; with F16C when the CPU has it (same bits).
    fn dequantize(isa: Isa, src: &[F16], dst: &mut [[f32; 1]]) {
        let dst = dst.as_flattened_mut();
        simd!(if isa.avx2_f16c() { avx2::f16_row(src, dst) } else { f16_row_portable(src, dst) })
    }
}

impl Quantize<1> for F16 {
    fn quantize(isa: Isa, src: &[[f32; 1]], dst: &mut [F16]) {
        let src = src.as_flattened();
        simd!(if isa.avx2_f16c() {
            avx2::f32_to_f16_row(src, dst)
        } else {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = F16::new(s);
            }
        })
    }
}

impl Dequantize<1> for BF16 {
    /// A 16-bit shift.
    fn dequantize(isa: Isa, src: &[BF16], dst: &mut [[f32; 1]]) {
        let dst = dst.as_flattened_mut();
        simd!(if isa.avx2() { avx2::bf16_row(src, dst) } else { bf16_row_portable(src, dst) })
    }
}

impl Quantize<1> for BF16 {
    fn quantize(isa: Isa, src: &[[f32; 1]], dst: &mut [BF16]) {
        let src = src.as_flattened();
        simd!(if isa.avx2() {
            avx2::f32_to_bf16_row(src, dst)
        } else {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = BF16::from_bits(f32_to_bf16(s));
            }
        })
    }
}

impl Dequantize<1> for F64 {
    /// Rounds to the nearest `f32`.
    fn dequantize(_: Isa, src: &[F64], dst: &mut [[f32; 1]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = [s.get() as f32];
        }
    }
}

impl Dequantize<1> for i8 {
    fn dequantize(_: Isa, src: &[i8], dst: &mut [[f32; 1]]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = [s as f32];
        }
    }
}

impl Dequantize<1> for I16 {
    fn dequantize(_: Isa, src: &[I16], dst: &mut [[f32; 1]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = [s.bits() as f32];
        }
    }
}

impl Dequantize<1> for I32 {
    /// Rounds values above 2^24 to the nearest `f32`.
    fn dequantize(_: Isa, src: &[I32], dst: &mut [[f32; 1]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = [s.bits() as f32];
        }
    }
}

impl Dequantize<1> for I64 {
    /// Rounds values above 2^24 to the nearest `f32`.
    fn dequantize(_: Isa, src: &[I64], dst: &mut [[f32; 1]]) {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = [s.bits() as f32];
        }
    }
}

/// f32 → bf16 bits as ggml's `ggml_compute_fp32_to_bf16`: NaN keeps its top 16 bits with the
/// quiet bit forced; everything else rounds to nearest even (overflow to infinity).
#[inline(always)]
pub(crate) fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if u & 0x7fff_ffff > 0x7f80_0000 {
        ((u >> 16) | 64) as u16
    } else {
        (u.wrapping_add(0x7fff + ((u >> 16) & 1)) >> 16) as u16
    }
}

/// Portable F16 row.
fn f16_row_portable(src: &[F16], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = s.get();
    }
}

/// Portable BF16 row.
fn bf16_row_portable(src: &[BF16], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f32::from_bits((s.bits() as u32) << 16);
    }
}

/// The AVX2 (and F16C) row converters. Each handles `min(src.len(), dst.len())` elements.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;

    /// F16 → f32 with F16C.
    ///
    /// # Safety
    /// The CPU must support AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn f16_row(src: &[F16], dst: &mut [f32]) {
        let n = dst.len().min(src.len());
        let main = n / 8 * 8;
        let mut i = 0;
        while i < main {
            // SAFETY: i + 8 <= n: 8 halves (16 bytes) at src[i] and 8 floats at dst[i].
            let h = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
            _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
            i += 8;
        }
        f16_row_portable(&src[main..n], &mut dst[main..n]);
    }

    /// f32 → F16 with F16C (round to nearest even), NaN replaced by ggml's `0x7E00 | sign`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and F16C.
    #[target_feature(enable = "avx2,f16c")]
    pub(super) unsafe fn f32_to_f16_row(src: &[f32], dst: &mut [F16]) {
        let n = src.len().min(dst.len());
        let main = n / 8 * 8;
        let qnan = _mm_set1_epi16(0x7E00);
        let sign = _mm_set1_epi16(-0x8000);
        let mut i = 0;
        while i < main {
            // SAFETY: i + 8 <= n: 8 floats at src[i], 8 halves (16 bytes) at dst[i].
            let x = _mm256_loadu_ps(src.as_ptr().add(i));
            let h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT);
            let nan32 = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
            let nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan32), _mm256_extracti128_si256(nan32, 1));
            let fixed = _mm_or_si128(_mm_and_si128(h, sign), qnan);
            let out = _mm_blendv_epi8(h, fixed, nan16);
            _mm_storeu_si128(dst.as_mut_ptr().add(i) as *mut __m128i, out);
            i += 8;
        }
        for (d, &s) in dst[main..n].iter_mut().zip(&src[main..n]) {
            *d = F16::from_bits(f32_to_f16(s));
        }
    }

    /// f32 → BF16 as `ggml_compute_fp32_to_bf16`: NaN keeps its top half with the quiet bit
    /// forced, everything else rounds to nearest even.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn f32_to_bf16_row(src: &[f32], dst: &mut [BF16]) {
        let n = src.len().min(dst.len());
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
            // SAFETY: i + 16 <= n: 16 floats at src[i], 16 bf16 (32 bytes) at dst[i].
            let a = conv(_mm256_loadu_si256(src.as_ptr().add(i) as *const __m256i));
            let b = conv(_mm256_loadu_si256(src.as_ptr().add(i + 8) as *const __m256i));
            // Values are < 2^16, so the unsigned saturating pack is exact; fix the lane order.
            let packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0b11_01_10_00);
            _mm256_storeu_si256(dst.as_mut_ptr().add(i) as *mut __m256i, packed);
            i += 16;
        }
        for (d, &s) in dst[main..n].iter_mut().zip(&src[main..n]) {
            *d = BF16::from_bits(f32_to_bf16(s));
        }
    }

    /// BF16 → f32 (a 16-bit left shift).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn bf16_row(src: &[BF16], dst: &mut [f32]) {
        let n = dst.len().min(src.len());
        let main = n / 8 * 8;
        let mut i = 0;
        while i < main {
            // SAFETY: as in f16_row.
            let h = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
            let w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
            _mm256_storeu_si256(dst.as_mut_ptr().add(i) as *mut __m256i, w);
            i += 8;
        }
        bf16_row_portable(&src[main..n], &mut dst[main..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::dequantize;
    use crate::format::GgmlType;

    #[test]
    fn bf16_rounding_by_hand() {
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8000)), 0x3F80); // tie, even stays
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F81_8000)), 0x3F82); // tie, odd rounds up
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8001)), 0x3F81);
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F7F_FFFF)), 0x7F80); // overflow to inf
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F80_0001)), 0x7FC0); // sNaN quieted
        assert_eq!(f32_to_bf16(f32::from_bits(0xFFFF_FFFF)), 0xFFFF);
    }

    #[test]
    fn integers_and_f64() {
        let mut out = [0f32; 2];
        dequantize(GgmlType::I8, &[0xFF, 0x7F], &mut out).unwrap();
        assert_eq!(out, [-1.0, 127.0]);
        dequantize(GgmlType::I16, &[0x00, 0x80, 0x01, 0x00], &mut out).unwrap();
        assert_eq!(out, [-32768.0, 1.0]);
        let mut one = [0f32; 1];
        dequantize(GgmlType::I32, &16_777_217i32.to_le_bytes(), &mut one).unwrap();
        assert_eq!(one, [16_777_216.0]);
        dequantize(GgmlType::I64, &(-(1i64 << 40)).to_le_bytes(), &mut one).unwrap();
        assert_eq!(one, [-(2f32.powi(40))]);
        dequantize(GgmlType::F64, &0.1f64.to_le_bytes(), &mut one).unwrap();
        assert_eq!(one, [0.1f32]);
    }

    /// Every f16 value, with an odd length for the scalar tail, and f32 → F16 / BF16 on special
    /// values and random bits: the SIMD rows against the portable ones.
    #[test]
    fn simd_rows_equal_portable_rows_on_every_f16() {
        use crate::codec::{dequantize_isa, quantize_isa};
        let (simd, portable) = (Isa::detected(), Isa::portable());
        if crate::codec::isa::skip_without_avx2(simd) {
            return;
        }
        let src: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).chain([0x01, 0x3c]).collect();
        for t in [GgmlType::F16, GgmlType::BF16] {
            let (mut a, mut b) = (vec![0f32; 65537], vec![0f32; 65537]);
            dequantize_isa(simd, t, &src, &mut a).unwrap();
            dequantize_isa(portable, t, &src, &mut b).unwrap();
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{t}");
        }
        let mut s = 7u64;
        let mut x: Vec<f32> = (0..4099)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                f32::from_bits((s >> 32) as u32)
            })
            .collect();
        x.extend([f32::NAN, -f32::NAN, f32::INFINITY, 65520.0, 65519.99, 1e-8, -6e-8, 0.0, -0.0]);
        x.extend([f32::from_bits(0x3F80_8000), f32::from_bits(0x7F7F_FFFF)]);
        for t in [GgmlType::F16, GgmlType::BF16] {
            let (mut a, mut b) = (vec![0u8; 2 * x.len()], vec![1u8; 2 * x.len()]);
            quantize_isa(simd, t, &x, &mut a).unwrap();
            quantize_isa(portable, t, &x, &mut b).unwrap();
            assert_eq!(a, b, "{t}");
        }
    }
}
