//! Q4_0 and Q4_1: 32 4-bit levels with a scale (and a min).

use super::{affine_cvtt, imatrix_levels, inv, min_i8_of, min_max, pack_nibbles, signed_absmax, QK};
use crate::codec::block::{block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q4_0`: value `(q − 8) × d`.
    pub(crate) struct block_q4_0 [18 bytes] {
        d: F16,
        qs: [u8; 16],
    }
}

block! {
    /// `block_q4_1`: value `q × d + m`.
    pub(crate) struct block_q4_1 [20 bytes] {
        d: F16,
        m: F16,
        qs: [u8; 16],
    }
}

impl Dequantize<QK> for block_q4_0 {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() { avx2::q4_0(src, dst) } else { dequant_q4_0(src, dst) })
    }
}

impl Dequantize<QK> for block_q4_1 {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() { avx2::q4_1(src, dst) } else { dequant_q4_1(src, dst) })
    }
}

fn dequant_q4_0(src: &[block_q4_0], dst: &mut [[f32; QK]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            lo[j] = ((b.qs[j] & 0x0F) as i32 - 8) as f32 * d;
            hi[j] = ((b.qs[j] >> 4) as i32 - 8) as f32 * d;
        }
    }
}

fn dequant_q4_1(src: &[block_q4_1], dst: &mut [[f32; QK]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let m = b.m.get();
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            lo[j] = (b.qs[j] & 0x0F) as f32 * d + m;
            hi[j] = (b.qs[j] >> 4) as f32 * d + m;
        }
    }
}

impl Quantize<QK> for block_q4_0 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let max = signed_absmax(isa, x);
            let d = max / -8.0;
            let id = inv(d);
            b.d = F16::new(d);
            // x - 0.0 is x bit for bit, so this is `x * id + 8.5` as in the reference.
            let q = affine_cvtt(isa, x, 0.0, id, 8.5);
            b.qs = pack_nibbles(&q, |v| min_i8_of(15, v));
        }
    }
}

impl Quantize<QK> for block_q4_1 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let (min, max) = min_max(isa, x);
            let d = (max - min) / 15.0;
            let id = inv(d);
            b.d = F16::new(d);
            b.m = F16::new(min);
            let q = affine_cvtt(isa, x, min, id, 0.5);
            b.qs = pack_nibbles(&q, |v| min_i8_of(15, v));
        }
    }
}

impl QuantizeRow<QK> for block_q4_0 {
    fn quantize_row(isa: Isa, src: &[[f32; QK]], dst: &mut [Self], weights: &[[f32; QK]]) {
        imatrix_levels::<false>(isa, src, weights, 8, |i, d, _, l| {
            dst[i] = block_q4_0 { d: F16::new(d), qs: pack_nibbles(l, |v| v) };
        });
    }
}

impl QuantizeRow<QK> for block_q4_1 {
    fn quantize_row(isa: Isa, src: &[[f32; QK]], dst: &mut [Self], weights: &[[f32; QK]]) {
        imatrix_levels::<true>(isa, src, weights, 15, |i, d, m, l| {
            dst[i] = block_q4_1 { d: F16::new(d), m: F16::new(m), qs: pack_nibbles(l, |v| v) };
        });
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::{store_i8x16_mul, store_u8x16_mul_add};
    use std::arch::x86_64::*;

    /// Q4_0: `(q − 8) × d`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q4_0(src: &[block_q4_0], dst: &mut [[f32; QK]]) {
        let m4 = _mm_set1_epi8(0x0F);
        let eight = _mm_set1_epi8(8);
        for (b, y) in src.iter().zip(dst) {
            let d = _mm256_set1_ps(b.d.get());
            // SAFETY: qs is 16 bytes, y 32 floats.
            let q = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
            let lo = _mm_sub_epi8(_mm_and_si128(q, m4), eight);
            let hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), m4), eight);
            let yp = y.as_mut_ptr();
            store_i8x16_mul(lo, d, yp);
            store_i8x16_mul(hi, d, yp.add(16));
        }
    }

    /// Q4_1: `q × d + m`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q4_1(src: &[block_q4_1], dst: &mut [[f32; QK]]) {
        let m4 = _mm_set1_epi8(0x0F);
        for (b, y) in src.iter().zip(dst) {
            let d = _mm256_set1_ps(b.d.get());
            let m = _mm256_set1_ps(b.m.get());
            // SAFETY: qs is 16 bytes, y 32 floats.
            let q = _mm_loadu_si128(b.qs.as_ptr() as *const __m128i);
            let yp = y.as_mut_ptr();
            store_u8x16_mul_add(_mm_and_si128(q, m4), d, m, yp);
            store_u8x16_mul_add(_mm_and_si128(_mm_srli_epi16(q, 4), m4), d, m, yp.add(16));
        }
    }
}
