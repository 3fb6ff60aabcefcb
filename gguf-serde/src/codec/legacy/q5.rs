//! Q5_0 and Q5_1: 32 5-bit levels (low 4 bits in `qs`, 5th bits in `qh`) with a scale (and a min).

use super::{affine_cvtt, imatrix_levels, inv, min_i8_of, min_max, pack_5bit, signed_absmax, QK};
use crate::codec::block::{block, F16, U32};
use crate::codec::isa::{simd, Isa};
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q5_0`: value `(q − 16) × d`; `qh` is a `uint32_t` in ggml's code.
    pub(crate) struct block_q5_0 [22 bytes] {
        d: F16,
        qh: U32,
        qs: [u8; 16],
    }
}

block! {
    /// `block_q5_1`: value `q × d + m`.
    pub(crate) struct block_q5_1 [24 bytes] {
        d: F16,
        m: F16,
        qh: U32,
        qs: [u8; 16],
    }
}

impl Dequantize<QK> for block_q5_0 {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() { avx2::q5_0(src, dst) } else { dequant_q5_0(src, dst) })
    }
}

impl Dequantize<QK> for block_q5_1 {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() { avx2::q5_1(src, dst) } else { dequant_q5_1(src, dst) })
    }
}

fn dequant_q5_0(src: &[block_q5_0], dst: &mut [[f32; QK]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let qh = b.qh.bits();
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            let h0 = ((qh >> j) << 4) as u8 & 0x10;
            let h1 = (qh >> (j + 12)) as u8 & 0x10;
            lo[j] = (((b.qs[j] & 0x0F) | h0) as i32 - 16) as f32 * d;
            hi[j] = (((b.qs[j] >> 4) | h1) as i32 - 16) as f32 * d;
        }
    }
}

fn dequant_q5_1(src: &[block_q5_1], dst: &mut [[f32; QK]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let m = b.m.get();
        let qh = b.qh.bits();
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            let h0 = ((qh >> j) << 4) as u8 & 0x10;
            let h1 = (qh >> (j + 12)) as u8 & 0x10;
            lo[j] = ((b.qs[j] & 0x0F) | h0) as f32 * d + m;
            hi[j] = ((b.qs[j] >> 4) | h1) as f32 * d + m;
        }
    }
}

impl Quantize<QK> for block_q5_0 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let max = signed_absmax(isa, x);
            let d = max / -16.0;
            let id = inv(d);
            b.d = F16::new(d);
            let q = affine_cvtt(isa, x, 0.0, id, 16.5);
            let (qs, qh) = pack_5bit(&q, |v| min_i8_of(31, v));
            (b.qs, b.qh) = (qs, U32::from_bits(qh));
        }
    }
}

impl Quantize<QK> for block_q5_1 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let (min, max) = min_max(isa, x);
            let d = (max - min) / 31.0;
            let id = inv(d);
            b.d = F16::new(d);
            b.m = F16::new(min);
            let q = affine_cvtt(isa, x, min, id, 0.5);
            // `(uint8_t)(float)`: no clamp in the reference.
            let (qs, qh) = pack_5bit(&q, |v| v as u8);
            (b.qs, b.qh) = (qs, U32::from_bits(qh));
        }
    }
}

impl QuantizeRow<QK> for block_q5_0 {
    fn quantize_row(isa: Isa, src: &[[f32; QK]], dst: &mut [Self], weights: &[[f32; QK]]) {
        imatrix_levels::<false>(isa, src, weights, 16, |i, d, _, l| {
            let (qs, qh) = pack_5bit(l, |v| v);
            dst[i] = block_q5_0 { d: F16::new(d), qh: U32::from_bits(qh), qs };
        });
    }
}

impl QuantizeRow<QK> for block_q5_1 {
    fn quantize_row(isa: Isa, src: &[[f32; QK]], dst: &mut [Self], weights: &[[f32; QK]]) {
        imatrix_levels::<true>(isa, src, weights, 31, |i, d, m, l| {
            let (qs, qh) = pack_5bit(l, |v| v);
            dst[i] = block_q5_1 { d: F16::new(d), m: F16::new(m), qh: U32::from_bits(qh), qs };
        });
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::{q5_high_bits, store_i8x16_mul, store_u8x16_mul_add};
    use std::arch::x86_64::*;

    /// Q5_0: `((q | h << 4) − 16) × d`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q5_0(src: &[block_q5_0], dst: &mut [[f32; QK]]) {
        let m4 = _mm_set1_epi8(0x0F);
        let sixteen = _mm_set1_epi8(16);
        for (b, y) in src.iter().zip(dst) {
            let d = _mm256_set1_ps(b.d.get());
            let qh = b.qh.bits();
            // SAFETY: qs is 16 bytes, y 32 floats.
            let q = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
            let lo = _mm_sub_epi8(_mm_or_si128(_mm_and_si128(q, m4), q5_high_bits(qh, false)), sixteen);
            let hi =
                _mm_sub_epi8(_mm_or_si128(_mm_and_si128(_mm_srli_epi16(q, 4), m4), q5_high_bits(qh, true)), sixteen);
            let yp = y.as_mut_ptr();
            store_i8x16_mul(lo, d, yp);
            store_i8x16_mul(hi, d, yp.add(16));
        }
    }

    /// Q5_1: `q × d + m`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q5_1(src: &[block_q5_1], dst: &mut [[f32; QK]]) {
        let m4 = _mm_set1_epi8(0x0F);
        for (b, y) in src.iter().zip(dst) {
            let d = _mm256_set1_ps(b.d.get());
            let m = _mm256_set1_ps(b.m.get());
            let qh = b.qh.bits();
            // SAFETY: qs is 16 bytes, y 32 floats.
            let q = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
            let lo = _mm_or_si128(_mm_and_si128(q, m4), q5_high_bits(qh, false));
            let hi = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(q, 4), m4), q5_high_bits(qh, true));
            let yp = y.as_mut_ptr();
            store_u8x16_mul_add(lo, d, m, yp);
            store_u8x16_mul_add(hi, d, m, yp.add(16));
        }
    }
}
