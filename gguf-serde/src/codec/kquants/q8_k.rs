//! Q8_K: 256 signed bytes with an f32 scale and the sums of each 16 (an intermediate type of
//! ggml's dot products).

use super::QK_K;
use crate::codec::block::{block, Block, F32, I16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::{max_by_abs, nearest_int};
use crate::codec::table::{Dequantize, Quantize};

block! {
    /// `block_q8_K`: value `d × q`; `bsums[j]` = Σ of `qs[16j..16j + 16]`.
    pub(crate) struct block_q8_K [292 bytes] {
        d: F32,
        qs: [i8; 256],
        bsums: [I16; 16],
    }
}

impl Dequantize<QK_K> for block_q8_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() {
            avx2::q8_k(src, dst)
        } else {
            for (b, y) in src.iter().zip(dst) {
                let d = b.d.get();
                for (o, &q) in y.iter_mut().zip(&b.qs) {
                    *o = d * q as f32;
                }
            }
        })
    }
}

impl Quantize<QK_K> for block_q8_K {
    /// `quantize_row_q8_K_ref`. One difference: for an all-zero block the reference leaves
    /// `bsums` as they were in the output buffer; here they are written as zeros.
    fn quantize(_: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        for (x, y) in src.iter().zip(dst) {
            let (amax, max) = max_by_abs(x);
            if amax == 0.0 {
                *y = block_q8_K::zeroed();
                continue;
            }
            let iscale = -127.0f32 / max;
            for (o, &v) in y.qs.iter_mut().zip(x) {
                *o = nearest_int(iscale * v).min(127) as i8;
            }
            for j in 0..16 {
                let sum: i32 = y.qs[16 * j..16 * j + 16].iter().map(|&v| v as i32).sum();
                y.bsums[j] = I16::from_bits(sum as i16);
            }
            y.d = F32::new(1.0 / iscale);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::store_i8x16_mul;
    use std::arch::x86_64::*;

    /// Q8_K: `d × q` with an f32 `d`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q8_k(src: &[block_q8_K], dst: &mut [[f32; QK_K]]) {
        for (b, y) in src.iter().zip(dst) {
            let d = _mm256_set1_ps(b.d.get());
            for k in 0..8 {
                // SAFETY: 32 bytes at 32k inside qs[256]; 32 floats at 32k inside y.
                let q = _mm256_loadu_si256(b.qs.as_ptr().add(32 * k) as *const __m256i);
                let yp = y.as_mut_ptr().add(32 * k);
                store_i8x16_mul(_mm256_castsi256_si128(q), d, yp);
                store_i8x16_mul(_mm256_extracti128_si256(q, 1), d, yp.add(16));
            }
        }
    }
}
