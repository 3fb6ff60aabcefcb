//! Q8_0 and Q8_1: 32 signed bytes with a scale (Q8_1 also stores `s = d × Σq`).

use super::{inv, round_cvt, QK};
use crate::codec::block::{block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::max_abs_c;
use crate::codec::table::{Dequantize, Quantize};

block! {
    /// `block_q8_0`: value `q × d`.
    pub(crate) struct block_q8_0 [34 bytes] {
        d: F16,
        qs: [i8; 32],
    }
}

block! {
    /// `block_q8_1`: value `q × d`; `s = d × Σq` (for ggml's dot products).
    pub(crate) struct block_q8_1 [36 bytes] {
        d: F16,
        s: F16,
        qs: [i8; 32],
    }
}

impl Dequantize<QK> for block_q8_0 {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() {
            avx2::q8(src.iter().map(|b| (b.d, &b.qs)), dst)
        } else {
            dequant_q8(src.iter().map(|b| (b.d, &b.qs)), dst)
        })
    }
}

impl Dequantize<QK> for block_q8_1 {
    /// The value the block encodes (ggml has no `dequantize_row_q8_1`).
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK]]) {
        simd!(if isa.avx2() {
            avx2::q8(src.iter().map(|b| (b.d, &b.qs)), dst)
        } else {
            dequant_q8(src.iter().map(|b| (b.d, &b.qs)), dst)
        })
    }
}

/// `q × d` for blocks given as `(d, qs)`.
#[inline(always)]
fn dequant_q8<'a>(src: impl Iterator<Item = (F16, &'a [i8; QK])>, dst: &mut [[f32; QK]]) {
    for ((d, qs), y) in src.zip(dst) {
        let d = d.get();
        for (o, &q) in y.iter_mut().zip(qs) {
            *o = q as f32 * d;
        }
    }
}

impl Quantize<QK> for block_q8_0 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let d = max_abs_c(x) / 127.0;
            b.d = F16::new(d);
            let q = round_cvt(isa, x, inv(d));
            for (o, &v) in b.qs.iter_mut().zip(&q) {
                *o = v as i8;
            }
        }
    }
}

impl Quantize<QK> for block_q8_1 {
    fn quantize(isa: Isa, src: &[[f32; QK]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            let d = max_abs_c(x) / 127.0;
            b.d = F16::new(d);
            let q = round_cvt(isa, x, inv(d));
            let mut sum = 0i32;
            for j in 0..16 {
                let q0 = q[j] as i8;
                let q1 = q[j + 16] as i8;
                b.qs[j] = q0;
                b.qs[j + 16] = q1;
                sum += q0 as i32 + q1 as i32;
            }
            b.s = F16::new(sum as f32 * d);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::store_i8x16_mul;
    use std::arch::x86_64::*;

    /// Q8_0 and Q8_1 (given as `(d, qs)`): `q × d`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q8<'a>(src: impl Iterator<Item = (F16, &'a [i8; QK])>, dst: &mut [[f32; QK]]) {
        for ((d, qs), y) in src.zip(dst) {
            let d = _mm256_set1_ps(d.get());
            // SAFETY: qs is 32 bytes, y 32 floats.
            let q = _mm256_loadu_si256(qs.as_ptr() as *const __m256i);
            let yp = y.as_mut_ptr();
            store_i8x16_mul(_mm256_castsi256_si128(q), d, yp);
            store_i8x16_mul(_mm256_extracti128_si256(q, 1), d, yp.add(16));
        }
    }
}
