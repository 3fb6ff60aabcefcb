//! Plain (one element per block) types: F32, F16, BF16, F64 and the integers I8–I64.
//!
//! F16 and BF16 follow ggml's `ggml_fp16_to_fp32_row` / `ggml_bf16_to_fp32_row` and, for
//! quantizing, `ggml_fp32_to_fp16_row` / `ggml_fp32_to_bf16_row_ref` (`ggml.c`, conversions in
//! `ggml-impl.h`). ggml has no row converters for F64 and the integer types; they convert to the
//! nearest `f32`.

use super::{f16_to_f32, f32_to_f16};
use crate::format::GgmlType;

/// Dequantizes whole blocks of `dtype` from `src` (little-endian block bytes) into `dst`
/// (`dst.len()` = blocks × block size, checked by the caller). Returns `false` if `dtype` is
/// not of this family.
pub(crate) fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> bool {
    match dtype {
        GgmlType::F32 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(4)) {
                *d = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            }
        }
        GgmlType::F16 => f16_row(src, dst),
        GgmlType::BF16 => bf16_row(src, dst),
        GgmlType::F64 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(8)) {
                *d = f64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]) as f32;
            }
        }
        GgmlType::I8 => {
            for (d, &s) in dst.iter_mut().zip(src) {
                *d = s as i8 as f32;
            }
        }
        GgmlType::I16 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = i16::from_le_bytes([s[0], s[1]]) as f32;
            }
        }
        GgmlType::I32 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(4)) {
                *d = i32::from_le_bytes([s[0], s[1], s[2], s[3]]) as f32;
            }
        }
        GgmlType::I64 => {
            for (d, s) in dst.iter_mut().zip(src.chunks_exact(8)) {
                *d = i64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]) as f32;
            }
        }
        _ => return false,
    }
    true
}

/// Quantizes `src` (whole blocks) into `dst` (blocks × type size, checked by the caller).
/// Returns `false` if `dtype` is not quantized by this family.
pub(crate) fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> bool {
    match dtype {
        GgmlType::F32 => {
            for (d, s) in dst.chunks_exact_mut(4).zip(src) {
                d.copy_from_slice(&s.to_le_bytes());
            }
        }
        GgmlType::F16 => {
            #[cfg(target_arch = "x86_64")]
            {
                if super::simd::has_avx2_f16c() {
                    // SAFETY: AVX2 and F16C checked at run time.
                    unsafe { super::simd::f32_to_f16_row_avx2(src, dst) };
                    return true;
                }
            }
            for (d, s) in dst.chunks_exact_mut(2).zip(src) {
                d.copy_from_slice(&f32_to_f16(*s).to_le_bytes());
            }
        }
        GgmlType::BF16 => {
            #[cfg(target_arch = "x86_64")]
            {
                if super::simd::has_avx2() {
                    // SAFETY: AVX2 checked at run time.
                    unsafe { super::simd::f32_to_bf16_row_avx2(src, dst) };
                    return true;
                }
            }
            for (d, s) in dst.chunks_exact_mut(2).zip(src) {
                d.copy_from_slice(&f32_to_bf16(*s).to_le_bytes());
            }
        }
        _ => return false,
    }
    true
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

/// F16 row: dispatches to F16C when the CPU has it (same bits: the conversion is exact).
pub(crate) fn f16_row(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2_f16c() {
            // SAFETY: the CPU supports AVX2 and F16C (checked at run time).
            unsafe { super::simd::f16_row_avx2(src, dst) };
            return;
        }
    }
    f16_row_portable(src, dst);
}

/// Portable F16 row.
pub(crate) fn f16_row_portable(src: &[u8], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
        *d = f16_to_f32(u16::from_le_bytes([s[0], s[1]]));
    }
}

/// BF16 row: a 16-bit shift, which the compiler vectorizes on its own.
pub(crate) fn bf16_row(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked at run time).
            unsafe { super::simd::bf16_row_avx2(src, dst) };
            return;
        }
    }
    bf16_row_portable(src, dst);
}

/// Portable BF16 row.
pub(crate) fn bf16_row_portable(src: &[u8], dst: &mut [f32]) {
    for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
        *d = f32::from_bits((u16::from_le_bytes([s[0], s[1]]) as u32) << 16);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(dequantize(GgmlType::I8, &[0xFF, 0x7F], &mut out));
        assert_eq!(out, [-1.0, 127.0]);
        assert!(dequantize(GgmlType::I16, &[0x00, 0x80, 0x01, 0x00], &mut out));
        assert_eq!(out, [-32768.0, 1.0]);
        let mut one = [0f32; 1];
        assert!(dequantize(GgmlType::I32, &16_777_217i32.to_le_bytes(), &mut one));
        assert_eq!(one, [16_777_216.0]);
        assert!(dequantize(GgmlType::I64, &(-(1i64 << 40)).to_le_bytes(), &mut one));
        assert_eq!(one, [-(2f32.powi(40))]);
        assert!(dequantize(GgmlType::F64, &0.1f64.to_le_bytes(), &mut one));
        assert_eq!(one, [0.1f32]);
    }
}
