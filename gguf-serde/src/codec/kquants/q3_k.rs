//! Q3_K: 16 sub-blocks of 16 3-bit levels (low 2 bits in `qs`, high bit in `hmask`), each with a
//! 6-bit signed scale.

use super::lanes::{quants_x16, weighted_qx_x16, Search16};
use super::search::make_qx_quants;
use super::{block_sigma2, pack_2bit, subblock_weights, QK_K};
use crate::codec::block::{block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::{max_by_abs, nearest_int};
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q3_K`: value `d·(sc − 32) × (q − 4·!h)`; the 12 scale bytes are byte-wise in ggml.
    pub(crate) struct block_q3_K [110 bytes] {
        hmask: [u8; 32],
        qs: [u8; 64],
        scales: [u8; 12],
        d: F16,
    }
}

/// Unpacks Q3_K's 12 scale bytes into 16 signed 6-bit scales (already minus 32).
#[inline(always)]
fn q3_k_scales(s: &[u8; 12]) -> [i8; 16] {
    let mut out = [0i8; 16];
    for (j, o) in out.iter_mut().enumerate() {
        let low = if j < 8 { s[j] & 0xF } else { s[j - 8] >> 4 };
        let high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        *o = (low | (high << 4)) as i8 - 32;
    }
    out
}

impl Dequantize<QK_K> for block_q3_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() { avx2::q3_k(src, dst) } else { dequant_q3_k(src, dst) })
    }
}

fn dequant_q3_k(src: &[block_q3_K], dst: &mut [[f32; QK_K]]) {
    for (b, y) in src.iter().zip(dst) {
        let hm = &b.hmask;
        let scales = q3_k_scales(&b.scales);
        let d_all = b.d.get();
        let mut out = 0;
        let mut is = 0;
        let mut m = 1u8;
        for n in 0..2 {
            let q = &b.qs[32 * n..32 * n + 32];
            for shift in [0u32, 2, 4, 6] {
                for half in 0..2 {
                    let dl = d_all * (scales[is] as i32) as f32;
                    is += 1;
                    for l in 0..16 {
                        let i = l + 16 * half;
                        let v = ((q[i] >> shift) & 3) as i32 - if hm[i] & m != 0 { 0 } else { 4 };
                        y[out] = dl * v as f32;
                        out += 1;
                    }
                }
                m <<= 1;
            }
        }
    }
}

impl Quantize<QK_K> for block_q3_K {
    fn quantize(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        for (x, y) in src.iter().zip(dst) {
            let mut l = [0i8; QK_K];
            let scales = quants_x16(isa, Search16::Q3, x, &mut l);
            let (_, max_scale) = max_by_abs(&scales);
            let mut ls = [0u8; 16];
            let d_block = if max_scale != 0.0 {
                let iscale = -32.0f32 / max_scale;
                for j in 0..16 {
                    let li = nearest_int(iscale * scales[j]) as i8;
                    ls[j] = (li.clamp(-32, 31) + 32) as u8;
                }
                1.0 / iscale
            } else {
                0.0
            };
            *y = finish_q3_k(x, &ls, d_block, &mut l);
        }
    }
}

/// The second half of the Q3_K quantizers (reference and importance): packs the 6-bit sub-block
/// scales `ls` and the super-block scale `d_block`, requantizes the levels against the stored
/// scales, and returns the block.
fn finish_q3_k(x: &[f32; QK_K], ls: &[u8; 16], d_block: f32, l: &mut [i8; QK_K]) -> block_q3_K {
    let mut sc = [0u8; 12];
    for (j, &li) in ls.iter().enumerate() {
        if j < 8 {
            sc[j] = li & 0xF;
        } else {
            sc[j - 8] |= (li & 0xF) << 4;
        }
        sc[j % 4 + 8] |= (li >> 4) << (2 * (j / 4));
    }
    let d = F16::new(d_block);
    let d_all = d.get();
    let sci = q3_k_scales(&sc);
    for j in 0..16 {
        let d = d_all * sci[j] as f32;
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            let q = nearest_int(x[16 * j + ii] / d).clamp(-4, 3);
            l[16 * j + ii] = (q + 4) as i8;
        }
    }
    let mut hmask = [0u8; 32];
    // The high bit of element j goes to bit j / 32 of hmask[j % 32] (the reference walks
    // m = j % 32 and hm = 1 << (j / 32)); branch-free.
    let mut lu = [0u8; QK_K];
    for j in 0..QK_K {
        let high = (l[j] > 3) as u8;
        hmask[j % 32] |= high << (j / 32);
        lu[j] = (l[j] as u8).wrapping_sub(4 * high);
    }
    block_q3_K { hmask, qs: pack_2bit(&lu), scales: sc, d }
}

impl QuantizeRow<QK_K> for block_q3_K {
    fn quantize_row(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self], weights: &[[f32; QK_K]]) {
        for ((x, y), qwb) in src.iter().zip(dst).zip(weights) {
            let mut l = [0i8; QK_K];
            let mut sw = [0f32; 16];
            let sigma2 = block_sigma2(x, 2.0);
            for j in 0..16 {
                let mut sumw = 0f32;
                for &w in &subblock_weights::<16>(x, qwb, sigma2, j) {
                    sumw += w;
                }
                sw[j] = sumw;
            }
            // Each sub-block's make_qx_quants(16, 4, …, weight), eight side by side.
            let scales = weighted_qx_x16(isa, 4, x, |j| subblock_weights::<16>(x, qwb, sigma2, j), &mut l);
            let mut ls = [0i8; 16];
            let d_block = make_qx_quants(32, &scales, &mut ls, Some(&sw));
            *y = finish_q3_k(x, &ls.map(|v| v as u8), d_block, &mut l);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::{store_i8x16_mul, two_bits};
    use std::arch::x86_64::*;

    /// Q3_K: `d·(sc − 32) × (q − 4·!h)` per 16 elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q3_k(src: &[block_q3_K], dst: &mut [[f32; QK_K]]) {
        let four = _mm256_set1_epi8(4);
        for (b, y) in src.iter().zip(dst) {
            let d_all = b.d.get();
            let scales = q3_k_scales(&b.scales);
            // SAFETY: hmask is 32 bytes.
            let hm = _mm256_loadu_si256(b.hmask.as_ptr() as *const __m256i);
            let mut is = 0;
            let mut m = 1u8;
            for n in 0..2 {
                // SAFETY: 32 bytes at 32n inside qs[64].
                let q = _mm256_loadu_si256(b.qs.as_ptr().add(32 * n) as *const __m256i);
                for (k, shift) in [0u32, 2, 4, 6].into_iter().enumerate() {
                    let mv = _mm256_set1_epi8(m as i8);
                    let set = _mm256_cmpeq_epi8(_mm256_and_si256(hm, mv), mv);
                    let v = _mm256_sub_epi8(two_bits(q, shift), _mm256_andnot_si256(set, four));
                    let dl0 = _mm256_set1_ps(d_all * (scales[is] as i32) as f32);
                    let dl1 = _mm256_set1_ps(d_all * (scales[is + 1] as i32) as f32);
                    is += 2;
                    // SAFETY: 32 floats at 128n + 32k < 256.
                    let yp = y.as_mut_ptr().add(128 * n + 32 * k);
                    store_i8x16_mul(_mm256_castsi256_si128(v), dl0, yp);
                    store_i8x16_mul(_mm256_extracti128_si256(v, 1), dl1, yp.add(16));
                    m <<= 1;
                }
            }
        }
    }
}
