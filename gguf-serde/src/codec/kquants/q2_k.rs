//! Q2_K: 16 sub-blocks of 16 2-bit levels, each with a 4-bit scale and a 4-bit min.

use super::lanes::{make_qkx2_quants_x8, LANES};
use super::search::make_qp_quants;
use super::{block_sigma2, pack_2bit, subblock_weights, QK_K};
use crate::codec::block::{block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::nearest_int;
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q2_K`: value `d·(sc & 15) × q − dmin·(sc >> 4)`, `sc = scales[i / 16]`.
    pub(crate) struct block_q2_K [84 bytes] {
        scales: [u8; 16],
        qs: [u8; 64],
        d: F16,
        dmin: F16,
    }
}

impl Dequantize<QK_K> for block_q2_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() { avx2::q2_k(src, dst) } else { dequant_q2_k(src, dst) })
    }
}

fn dequant_q2_k(src: &[block_q2_K], dst: &mut [[f32; QK_K]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let min = b.dmin.get();
        let mut out = 0;
        let mut is = 0;
        for n in 0..2 {
            let q = &b.qs[32 * n..32 * n + 32];
            for shift in [0u32, 2, 4, 6] {
                for half in 0..2 {
                    let sc = b.scales[is];
                    is += 1;
                    let dl = d * (sc & 0xF) as f32;
                    let ml = min * (sc >> 4) as f32;
                    for l in 0..16 {
                        y[out] = dl * ((q[l + 16 * half] >> shift) & 3) as f32 - ml;
                        out += 1;
                    }
                }
            }
        }
    }
}

impl Quantize<QK_K> for block_q2_K {
    fn quantize(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        const Q4SCALE: f32 = 15.0;
        for (x, y) in src.iter().zip(dst) {
            let mut l = [0u8; QK_K];
            // make_qkx2_quants(16, 3, …, weights |x|, …, -0.5, 0.1, 15, true) per sub-block.
            let weights = |j: usize| -> [f32; 16] { std::array::from_fn(|i| x[16 * j + i].abs()) };
            let (scales, mins) = qkx_x16::<true>(isa, x, weights, &mut l, (-0.5, 0.1, 15));
            let mut max_scale = 0f32;
            let mut max_min = 0f32;
            for j in 0..16 {
                if scales[j] > max_scale {
                    max_scale = scales[j];
                }
                if mins[j] > max_min {
                    max_min = mins[j];
                }
            }
            let mut sc = [0u8; 16];
            if max_scale > 0.0 {
                let iscale = Q4SCALE / max_scale;
                for j in 0..16 {
                    sc[j] = nearest_int(iscale * scales[j]) as u8;
                }
                y.d = F16::new(max_scale / Q4SCALE);
            } else {
                y.d = F16::new(0.0);
            }
            if max_min > 0.0 {
                let iscale = Q4SCALE / max_min;
                for j in 0..16 {
                    let lm = nearest_int(iscale * mins[j]);
                    sc[j] |= (lm << 4) as u8;
                }
                y.dmin = F16::new(max_min / Q4SCALE);
            } else {
                y.dmin = F16::new(0.0);
            }
            y.scales = sc;
            requantize(x, y, &mut l);
        }
    }
}

/// The scales and mins of the 16 sub-blocks of 16 of `x` by `make_qkx2_quants` (with `MAD`, and
/// `(rmin, rdelta, nstep)`), sub-block `j` weighted by `weights(j)`, eight sub-blocks side by side
/// ([`make_qkx2_quants_x8`]); the levels (0..=3) go to `l`.
#[inline(always)]
fn qkx_x16<const MAD: bool>(
    isa: Isa,
    x: &[f32; QK_K],
    weights: impl Fn(usize) -> [f32; 16],
    l: &mut [u8; QK_K],
    (rmin, rdelta, nstep): (f32, f32, i32),
) -> ([f32; 16], [f32; 16]) {
    let mut mins = [0f32; 16];
    let mut scales = [0f32; 16];
    for half in 0..2 {
        let mut xt = [[0f32; LANES]; 16];
        let mut wt = [[0f32; LANES]; 16];
        for k in 0..LANES {
            let j = 8 * half + k;
            let w = weights(j);
            for i in 0..16 {
                xt[i][k] = x[16 * j + i];
                wt[i][k] = w[i];
            }
        }
        let mut lt = [[0u8; LANES]; 16];
        let (s8, m8) = make_qkx2_quants_x8::<16, MAD>(isa, 3, &xt, &wt, &mut lt, rmin, rdelta, nstep);
        for k in 0..LANES {
            let j = 8 * half + k;
            scales[j] = s8[k];
            mins[j] = m8[k];
            for i in 0..16 {
                l[16 * j + i] = lt[i][k];
            }
        }
    }
    (scales, mins)
}

/// Requantizes the levels against the stored scales and mins (`l` keeps the first-pass levels
/// of sub-blocks whose scale is 0) and packs them into `y.qs`.
fn requantize(x: &[f32; QK_K], y: &mut block_q2_K, l: &mut [u8; QK_K]) {
    let d_all = y.d.get();
    let dmin_all = y.dmin.get();
    for j in 0..16 {
        let d = d_all * (y.scales[j] & 0xF) as f32;
        if d == 0.0 {
            continue;
        }
        let dm = dmin_all * (y.scales[j] >> 4) as f32;
        for ii in 0..16 {
            let q = nearest_int((x[16 * j + ii] + dm) / d).clamp(0, 3);
            l[16 * j + ii] = q as u8;
        }
    }
    y.qs = pack_2bit(l);
}

/// `quantize_row_q2_K_impl`: each sub-block's scale and min by `make_qkx3_quants`, eight
/// sub-blocks at a time in SIMD lanes ([`make_qkx2_quants_x8`] with `make_qkx3_quants`' arguments;
/// the same results bit for bit, see `weighted_k4_head` in `q4_k.rs`), then the 4-bit scales and
/// mins by `make_qp_quants`.
impl QuantizeRow<QK_K> for block_q2_K {
    fn quantize_row(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self], weights: &[[f32; QK_K]]) {
        for ((x, y), qwb) in src.iter().zip(dst).zip(weights) {
            let mut l = [0u8; QK_K];
            let sigma2 = block_sigma2(x, 1.0);
            let mut sw = [0f32; 16];
            for (j, swj) in sw.iter_mut().enumerate() {
                for &w in &subblock_weights::<16>(x, qwb, sigma2, j) {
                    *swj += w;
                }
            }
            // make_qkx3_quants(16, 3, …, weight) per sub-block.
            let weights = |j: usize| subblock_weights::<16>(x, qwb, sigma2, j);
            let (scales, mins) = qkx_x16::<false>(isa, x, weights, &mut l, (-0.9, 0.05, 36));
            let mut ls = [0u8; 16];
            let mut lm = [0u8; 16];
            let dm = make_qp_quants(15, &scales, &mut ls, &sw);
            let mm = make_qp_quants(15, &mins, &mut lm, &sw);
            y.d = F16::new(dm);
            y.dmin = F16::new(mm);
            for j in 0..16 {
                y.scales[j] = ls[j] | (lm[j] << 4);
            }
            requantize(x, y, &mut l);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::{store_u8x16_mul_sub, two_bits};
    use std::arch::x86_64::*;

    /// Q2_K: `d·(sc & 15) × q − dmin·(sc >> 4)` per 16 elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q2_k(src: &[block_q2_K], dst: &mut [[f32; QK_K]]) {
        for (b, y) in src.iter().zip(dst) {
            let d = b.d.get();
            let min = b.dmin.get();
            let mut is = 0;
            for n in 0..2 {
                // SAFETY: 32 bytes at 32n inside qs[64].
                let q = _mm256_loadu_si256(b.qs.as_ptr().add(32 * n) as *const __m256i);
                for (k, shift) in [0u32, 2, 4, 6].into_iter().enumerate() {
                    let v = two_bits(q, shift);
                    let sc0 = b.scales[is];
                    let sc1 = b.scales[is + 1];
                    is += 2;
                    // SAFETY: 32 floats at 128n + 32k < 256.
                    let yp = y.as_mut_ptr().add(128 * n + 32 * k);
                    let (dl0, ml0) = (_mm256_set1_ps(d * (sc0 & 0xF) as f32), _mm256_set1_ps(min * (sc0 >> 4) as f32));
                    let (dl1, ml1) = (_mm256_set1_ps(d * (sc1 & 0xF) as f32), _mm256_set1_ps(min * (sc1 >> 4) as f32));
                    store_u8x16_mul_sub(_mm256_castsi256_si128(v), dl0, ml0, yp);
                    store_u8x16_mul_sub(_mm256_extracti128_si256(v, 1), dl1, ml1, yp.add(16));
                }
            }
        }
    }
}
