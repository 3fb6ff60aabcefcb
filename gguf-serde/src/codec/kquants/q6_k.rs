//! Q6_K: 16 sub-blocks of 16 6-bit levels (low 4 bits in `ql`, high 2 in `qh`), each with an
//! 8-bit signed scale.

use super::lanes::{quants_x16, weighted_qx_x16, Search16};
use super::{GROUP_MAX_EPS, QK_K};
use crate::codec::block::{block, Block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::{max_by_abs, nearest_int};
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q6_K`: value `(d × sc) × (q − 32)`, `sc = scales[i / 16]`.
    pub(crate) struct block_q6_K [210 bytes] {
        ql: [u8; 128],
        qh: [u8; 64],
        scales: [i8; 16],
        d: F16,
    }
}

impl Dequantize<QK_K> for block_q6_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() { avx2::q6_k(src, dst) } else { dequant_q6_k(src, dst) })
    }
}

fn dequant_q6_k(src: &[block_q6_K], dst: &mut [[f32; QK_K]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        for n in 0..2 {
            let ql = &b.ql[64 * n..64 * n + 64];
            let qh = &b.qh[32 * n..32 * n + 32];
            let sc = &b.scales[8 * n..8 * n + 8];
            let yy = &mut y[128 * n..128 * n + 128];
            for l in 0..32 {
                let is = l / 16;
                let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i32 - 32;
                let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
                let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
                let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
                yy[l] = d * sc[is] as f32 * q1 as f32;
                yy[l + 32] = d * sc[is + 2] as f32 * q2 as f32;
                yy[l + 64] = d * sc[is + 4] as f32 * q3 as f32;
                yy[l + 96] = d * sc[is + 6] as f32 * q4 as f32;
            }
        }
    }
}

impl Quantize<QK_K> for block_q6_K {
    fn quantize(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        for (x, y) in src.iter().zip(dst) {
            let mut l = [0i8; QK_K];
            let scales = quants_x16(isa, Search16::Q6, x, &mut l);
            *y = finish_q6_k(x, &scales, &mut l);
        }
    }
}

impl QuantizeRow<QK_K> for block_q6_K {
    fn quantize_row(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self], weights: &[[f32; QK_K]]) {
        for ((x, y), qwb) in src.iter().zip(dst).zip(weights) {
            let mut l = [0i8; QK_K];
            // Each sub-block's make_qx_quants(16, 32, …, qw), eight side by side.
            let scales = weighted_qx_x16(isa, 32, x, |ib| std::array::from_fn(|i| qwb[16 * ib + i]), &mut l);
            *y = finish_q6_k(x, &scales, &mut l);
        }
    }
}

/// The second half of the Q6_K quantizers (reference and importance): super-block scale, 8-bit
/// sub-block scales, requantized levels, packing. `l` holds the first-pass levels.
fn finish_q6_k(x: &[f32; QK_K], scales: &[f32; 16], l: &mut [i8; QK_K]) -> block_q6_K {
    let (max_abs_scale, max_scale) = max_by_abs(scales);
    let mut y = block_q6_K::zeroed();
    if max_abs_scale < GROUP_MAX_EPS {
        return y;
    }
    let iscale = -128.0f32 / max_scale;
    y.d = F16::new(1.0 / iscale);
    for ib in 0..16 {
        y.scales[ib] = nearest_int(iscale * scales[ib]).min(127) as i8;
    }
    let d_all = y.d.get();
    for j in 0..16 {
        let d = d_all * y.scales[j] as f32;
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            let q = nearest_int(x[16 * j + ii] / d).clamp(-32, 31);
            l[16 * j + ii] = (q + 32) as i8;
        }
    }
    let lu = l.map(|v| v as u8);
    for n in 0..2 {
        let j = 128 * n;
        for i in 0..32 {
            let q1 = lu[j + i] & 0xF;
            let q2 = lu[j + i + 32] & 0xF;
            let q3 = lu[j + i + 64] & 0xF;
            let q4 = lu[j + i + 96] & 0xF;
            y.ql[64 * n + i] = q1 | (q3 << 4);
            y.ql[64 * n + i + 32] = q2 | (q4 << 4);
            y.qh[32 * n + i] = (lu[j + i] >> 4)
                | ((lu[j + i + 32] >> 4) << 2)
                | ((lu[j + i + 64] >> 4) << 4)
                | ((lu[j + i + 96] >> 4) << 6);
        }
    }
    y
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::store_i8x16_mul;
    use std::arch::x86_64::*;

    /// Q6_K: `(d × sc) × (q − 32)`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q6_k(src: &[block_q6_K], dst: &mut [[f32; QK_K]]) {
        let m4 = _mm256_set1_epi8(0x0F);
        let m2 = _mm256_set1_epi8(0x03);
        let off = _mm256_set1_epi8(32);
        for (b, y) in src.iter().zip(dst) {
            let d = b.d.get();
            for n in 0..2 {
                // SAFETY: 64 bytes at 64n inside ql[128], 32 at 32n inside qh[64].
                let ql0 = _mm256_loadu_si256(b.ql.as_ptr().add(64 * n) as *const __m256i);
                let ql1 = _mm256_loadu_si256(b.ql.as_ptr().add(64 * n + 32) as *const __m256i);
                let qh = _mm256_loadu_si256(b.qh.as_ptr().add(32 * n) as *const __m256i);
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
                let sc = b.scales.as_chunks::<8>().0[n];
                // SAFETY: 128 floats at 128n inside y.
                let yp = y.as_mut_ptr().add(128 * n);
                for (k, (&qk, &[sc0, sc1])) in q.iter().zip(sc.as_chunks::<2>().0).enumerate() {
                    let s0 = _mm256_set1_ps(d * sc0 as f32);
                    let s1 = _mm256_set1_ps(d * sc1 as f32);
                    let lo = _mm256_castsi256_si128(qk);
                    let hi = _mm256_extracti128_si256(qk, 1);
                    let o = yp.add(32 * k);
                    store_i8x16_mul(lo, s0, o);
                    store_i8x16_mul(hi, s1, o.add(16));
                }
            }
        }
    }
}
