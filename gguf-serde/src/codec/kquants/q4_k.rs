//! Q4_K and Q5_K: 8 sub-blocks of 32 4-bit (Q5_K: 5-bit, 5th bit in `qh`) levels, each with a
//! 6-bit scale and a 6-bit min, packed alike in `scales[12]`; they share their quantizers' steps.

use super::lanes::{make_qkx2_quants_x8, LANES};
use super::search::make_qp_quants;
use super::{block_sigma2, subblock_weights, QK_K};
use crate::codec::block::{block, F16};
use crate::codec::isa::{simd, Isa};
use crate::codec::scalar::nearest_int;
use crate::codec::table::{Dequantize, Quantize, QuantizeRow};

block! {
    /// `block_q4_K`: value `d·sc × q − dmin·m` per 32 elements.
    pub(crate) struct block_q4_K [144 bytes] {
        d: F16,
        dmin: F16,
        scales: [u8; 12],
        qs: [u8; 128],
    }
}

block! {
    /// `block_q5_K`: value `d·sc × (q + 16·h) − dmin·m` per 32 elements.
    pub(crate) struct block_q5_K [176 bytes] {
        d: F16,
        dmin: F16,
        scales: [u8; 12],
        qh: [u8; 32],
        qs: [u8; 128],
    }
}

/// ggml's `get_scale_min_k4`: the 6-bit scale and min of sub-block `j` (0..8) from `scales[12]`.
#[inline(always)]
fn scale_min_k4(j: usize, q: &[u8; 12]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

impl Dequantize<QK_K> for block_q4_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() { avx2::q4_k(src, dst) } else { dequant_q4_k(src, dst) })
    }
}

impl Dequantize<QK_K> for block_q5_K {
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; QK_K]]) {
        simd!(if isa.avx2() { avx2::q5_k(src, dst) } else { dequant_q5_k(src, dst) })
    }
}

fn dequant_q4_k(src: &[block_q4_K], dst: &mut [[f32; QK_K]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let min = b.dmin.get();
        for (j, (q, yy)) in b.qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (sc1, m1) = scale_min_k4(2 * j, &b.scales);
            let (sc2, m2) = scale_min_k4(2 * j + 1, &b.scales);
            let d1 = d * sc1 as f32;
            let m1 = min * m1 as f32;
            let d2 = d * sc2 as f32;
            let m2 = min * m2 as f32;
            let (lo, hi) = yy.split_at_mut(32);
            for l in 0..32 {
                lo[l] = d1 * (q[l] & 0xF) as f32 - m1;
                hi[l] = d2 * (q[l] >> 4) as f32 - m2;
            }
        }
    }
}

fn dequant_q5_k(src: &[block_q5_K], dst: &mut [[f32; QK_K]]) {
    for (b, y) in src.iter().zip(dst) {
        let d = b.d.get();
        let min = b.dmin.get();
        let qh = &b.qh;
        for (j, (ql, yy)) in b.qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (sc1, m1) = scale_min_k4(2 * j, &b.scales);
            let (sc2, m2) = scale_min_k4(2 * j + 1, &b.scales);
            let d1 = d * sc1 as f32;
            let m1 = min * m1 as f32;
            let d2 = d * sc2 as f32;
            let m2 = min * m2 as f32;
            let u1 = 1u8 << (2 * j);
            let u2 = 2u8 << (2 * j);
            let (lo, hi) = yy.split_at_mut(32);
            for l in 0..32 {
                let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
                let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
                lo[l] = d1 * ((ql[l] & 0xF) + h1) as f32 - m1;
                hi[l] = d2 * ((ql[l] >> 4) + h2) as f32 - m2;
            }
        }
    }
}

/// The fields Q4_K and Q5_K share: `d`, `dmin` and the packed scales and mins.
struct K4Head {
    d: F16,
    dmin: F16,
    scales: [u8; 12],
}

/// Packs Q4_K/Q5_K sub-block scales and mins (`ls`, `lm` ≤ 63) into `scales[12]`.
#[inline(always)]
fn pack_scales_k4(ls: &[u8; 8], lm: &[u8; 8]) -> [u8; 12] {
    let mut sc = [0u8; 12];
    for j in 0..8 {
        if j < 4 {
            sc[j] = ls[j];
            sc[j + 4] = lm[j];
        } else {
            sc[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4);
            sc[j - 4] |= (ls[j] >> 4) << 6;
            sc[j] |= (lm[j] >> 4) << 6;
        }
    }
    sc
}

/// The head of a Q4_K/Q5_K block from the super-block scales and the 6-bit sub-block scales and
/// mins `ls`, `lm`; then requantizes the levels `l` (0..=`nmax`) against the stored values.
fn k4_head(
    x: &[f32; QK_K],
    nmax: i32,
    d_block: f32,
    m_block: f32,
    ls: &[u8; 8],
    lm: &[u8; 8],
    l: &mut [u8; QK_K],
) -> K4Head {
    let head = K4Head { d: F16::new(d_block), dmin: F16::new(m_block), scales: pack_scales_k4(ls, lm) };
    let d_all = head.d.get();
    let dmin_all = head.dmin.get();
    for j in 0..8 {
        let (sc, m) = scale_min_k4(j, &head.scales);
        let d = d_all * sc as f32;
        if d == 0.0 {
            continue;
        }
        let dm = dmin_all * m as f32;
        for ii in 0..32 {
            let q = nearest_int((x[32 * j + ii] + dm) / d).clamp(0, nmax);
            l[32 * j + ii] = q as u8;
        }
    }
    head
}

/// The shared first half of the Q4_K / Q5_K reference quantizers: per-32 scales and mins, the
/// block's head, then the requantized levels `l`.
fn quant_k4_head(isa: Isa, x: &[f32; QK_K], nmax: i32, rmin: f32, nstep: i32, l: &mut [u8; QK_K]) -> K4Head {
    // Sub-block j's element i at [i][j] (transposed for the lane-parallel search).
    let mut xt = [[0f32; LANES]; 32];
    let mut wt = [[0f32; LANES]; 32];
    for j in 0..8 {
        let xs = &x[32 * j..32 * j + 32];
        let mut sum_x2 = 0f32;
        for &v in xs {
            sum_x2 += v * v;
        }
        let av_x = (sum_x2 / 32.0).sqrt();
        for (i, &v) in xs.iter().enumerate() {
            xt[i][j] = v;
            wt[i][j] = av_x + v.abs();
        }
    }
    let mut lt = [[0u8; LANES]; 32];
    let (scales, mins) = make_qkx2_quants_x8::<32, false>(isa, nmax, &xt, &wt, &mut lt, rmin, 0.1, nstep);
    let mut max_scale = 0f32;
    let mut max_min = 0f32;
    for j in 0..8 {
        for i in 0..32 {
            l[32 * j + i] = lt[i][j];
        }
        if scales[j] > max_scale {
            max_scale = scales[j];
        }
        if mins[j] > max_min {
            max_min = mins[j];
        }
    }
    let inv_scale = if max_scale > 0.0 { 63.0 / max_scale } else { 0.0 };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    let mut ls = [0u8; 8];
    let mut lm = [0u8; 8];
    for j in 0..8 {
        ls[j] = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        lm[j] = (nearest_int(inv_min * mins[j]) as u8).min(63);
    }
    k4_head(x, nmax, max_scale / 63.0, max_min / 63.0, &ls, &lm, l)
}

/// The importance version of [`quant_k4_head`] (`quantize_row_q{4,5}_K_impl`): each sub-block's
/// scale and min by `make_qkx3_quants` (the eight sub-blocks side by side in SIMD lanes,
/// [`make_qkx2_quants_x8`] with `make_qkx3_quants`' arguments: its flat-block test `max <= min`
/// is `max == min` once `min` is clamped to at most 0, so the results are the scalar search's,
/// bit for bit), then the 6-bit scales and mins by `make_qp_quants`.
fn weighted_k4_head(isa: Isa, x: &[f32; QK_K], qw: &[f32; QK_K], nmax: i32, l: &mut [u8; QK_K]) -> K4Head {
    let mut sw = [0f32; 8];
    let sigma2 = block_sigma2(x, 2.0);
    // Sub-block j's element i at [i][j] (transposed for the lane-parallel search).
    let mut xt = [[0f32; LANES]; 32];
    let mut wt = [[0f32; LANES]; 32];
    for j in 0..8 {
        let weights = subblock_weights::<32>(x, qw, sigma2, j);
        let mut sumw = 0f32;
        for &w in &weights {
            sumw += w;
        }
        sw[j] = sumw;
        for i in 0..32 {
            xt[i][j] = x[32 * j + i];
            wt[i][j] = weights[i];
        }
    }
    let mut lt = [[0u8; LANES]; 32];
    let (scales, mins) = make_qkx2_quants_x8::<32, false>(isa, nmax, &xt, &wt, &mut lt, -0.9, 0.05, 36);
    for j in 0..8 {
        for i in 0..32 {
            l[32 * j + i] = lt[i][j];
        }
    }
    let mut ls = [0u8; 8];
    let mut lm = [0u8; 8];
    let d_block = make_qp_quants(63, &scales, &mut ls, &sw);
    let m_block = make_qp_quants(63, &mins, &mut lm, &sw);
    if nmax == 31 {
        // quantize_row_q5_K_impl clamps to 63 (a no-op for make_qp_quants' output).
        ls = ls.map(|v| v.min(63));
        lm = lm.map(|v| v.min(63));
    }
    k4_head(x, nmax, d_block, m_block, &ls, &lm, l)
}

/// Q4_K's levels `l` (0..=15) as `qs[128]`.
#[inline(always)]
fn pack_q4_k_levels(l: &[u8; QK_K]) -> [u8; 128] {
    let mut qs = [0u8; 128];
    for (n, qq) in qs.chunks_exact_mut(32).enumerate() {
        let j = 64 * n;
        for i in 0..32 {
            qq[i] = l[j + i] | (l[j + i + 32] << 4);
        }
    }
    qs
}

/// Q5_K's levels `l` (0..=31) as `qh[32]` and `qs[128]`.
fn pack_q5_k_levels(l: &[u8; QK_K]) -> ([u8; 32], [u8; 128]) {
    let mut qh = [0u8; 32];
    let mut ql = [0u8; 128];
    let mut m1 = 1u8;
    let mut m2 = 2u8;
    for (n, qq) in ql.chunks_exact_mut(32).enumerate() {
        let base = 64 * n;
        for j in 0..32 {
            let mut l1 = l[base + j];
            if l1 > 15 {
                l1 -= 16;
                qh[j] |= m1;
            }
            let mut l2 = l[base + j + 32];
            if l2 > 15 {
                l2 -= 16;
                qh[j] |= m2;
            }
            qq[j] = l1 | (l2 << 4);
        }
        m1 <<= 2;
        m2 <<= 2;
    }
    (qh, ql)
}

impl block_q4_K {
    fn new(h: K4Head, l: &[u8; QK_K]) -> Self {
        block_q4_K { d: h.d, dmin: h.dmin, scales: h.scales, qs: pack_q4_k_levels(l) }
    }
}

impl block_q5_K {
    fn new(h: K4Head, l: &[u8; QK_K]) -> Self {
        let (qh, qs) = pack_q5_k_levels(l);
        block_q5_K { d: h.d, dmin: h.dmin, scales: h.scales, qh, qs }
    }
}

impl Quantize<QK_K> for block_q4_K {
    fn quantize(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        for (x, y) in src.iter().zip(dst) {
            let mut l = [0u8; QK_K];
            let head = quant_k4_head(isa, x, 15, -1.0, 20, &mut l);
            *y = block_q4_K::new(head, &l);
        }
    }
}

impl Quantize<QK_K> for block_q5_K {
    fn quantize(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self]) {
        for (x, y) in src.iter().zip(dst) {
            let mut l = [0u8; QK_K];
            let head = quant_k4_head(isa, x, 31, -0.5, 15, &mut l);
            *y = block_q5_K::new(head, &l);
        }
    }
}

impl QuantizeRow<QK_K> for block_q4_K {
    fn quantize_row(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self], weights: &[[f32; QK_K]]) {
        for ((x, y), qw) in src.iter().zip(dst).zip(weights) {
            let mut l = [0u8; QK_K];
            let head = weighted_k4_head(isa, x, qw, 15, &mut l);
            *y = block_q4_K::new(head, &l);
        }
    }
}

impl QuantizeRow<QK_K> for block_q5_K {
    fn quantize_row(isa: Isa, src: &[[f32; QK_K]], dst: &mut [Self], weights: &[[f32; QK_K]]) {
        for ((x, y), qw) in src.iter().zip(dst).zip(weights) {
            let mut l = [0u8; QK_K];
            let head = weighted_k4_head(isa, x, qw, 31, &mut l);
            *y = block_q5_K::new(head, &l);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::*;
    use crate::codec::avx2::{store_u8x16_mul_sub, store_u8x8_mul_sub};
    use std::arch::x86_64::*;

    /// Q4_K: `d·sc × q − dmin·m` per 32 elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q4_k(src: &[block_q4_K], dst: &mut [[f32; QK_K]]) {
        let m4 = _mm256_set1_epi8(0x0F);
        for (b, y) in src.iter().zip(dst) {
            let d = b.d.get();
            let min = b.dmin.get();
            for j in 0..4 {
                let (sc1, mn1) = scale_min_k4(2 * j, &b.scales);
                let (sc2, mn2) = scale_min_k4(2 * j + 1, &b.scales);
                let d1 = _mm256_set1_ps(d * sc1 as f32);
                let m1 = _mm256_set1_ps(min * mn1 as f32);
                let d2 = _mm256_set1_ps(d * sc2 as f32);
                let m2 = _mm256_set1_ps(min * mn2 as f32);
                // SAFETY: 32 bytes at 32j inside qs[128]; 64 floats at 64j inside y.
                let q = _mm256_loadu_si256(b.qs.as_ptr().add(32 * j) as *const __m256i);
                let lo = _mm256_and_si256(q, m4);
                let hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                let yp = y.as_mut_ptr().add(64 * j);
                let lo0 = _mm256_castsi256_si128(lo);
                let lo1 = _mm256_extracti128_si256(lo, 1);
                let hi0 = _mm256_castsi256_si128(hi);
                let hi1 = _mm256_extracti128_si256(hi, 1);
                store_u8x8_mul_sub(lo0, d1, m1, yp);
                store_u8x8_mul_sub(_mm_srli_si128(lo0, 8), d1, m1, yp.add(8));
                store_u8x8_mul_sub(lo1, d1, m1, yp.add(16));
                store_u8x8_mul_sub(_mm_srli_si128(lo1, 8), d1, m1, yp.add(24));
                store_u8x8_mul_sub(hi0, d2, m2, yp.add(32));
                store_u8x8_mul_sub(_mm_srli_si128(hi0, 8), d2, m2, yp.add(40));
                store_u8x8_mul_sub(hi1, d2, m2, yp.add(48));
                store_u8x8_mul_sub(_mm_srli_si128(hi1, 8), d2, m2, yp.add(56));
            }
        }
    }

    /// Q5_K: `d·sc × (q + 16·h) − dmin·m` per 32 elements.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn q5_k(src: &[block_q5_K], dst: &mut [[f32; QK_K]]) {
        let m4 = _mm256_set1_epi8(0x0F);
        let sixteen = _mm256_set1_epi8(16);
        for (b, y) in src.iter().zip(dst) {
            let d = b.d.get();
            let min = b.dmin.get();
            // SAFETY: qh is 32 bytes.
            let qh = _mm256_loadu_si256(b.qh.as_ptr() as *const __m256i);
            for j in 0..4 {
                let (sc1, mn1) = scale_min_k4(2 * j, &b.scales);
                let (sc2, mn2) = scale_min_k4(2 * j + 1, &b.scales);
                let d1 = _mm256_set1_ps(d * sc1 as f32);
                let m1 = _mm256_set1_ps(min * mn1 as f32);
                let d2 = _mm256_set1_ps(d * sc2 as f32);
                let m2 = _mm256_set1_ps(min * mn2 as f32);
                let u1 = _mm256_set1_epi8((1u8 << (2 * j)) as i8);
                let u2 = _mm256_set1_epi8((2u8 << (2 * j)) as i8);
                let h1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u1), u1), sixteen);
                let h2 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u2), u2), sixteen);
                // SAFETY: 32 bytes at 32j inside qs[128]; 64 floats at 64j inside y.
                let q = _mm256_loadu_si256(b.qs.as_ptr().add(32 * j) as *const __m256i);
                let lo = _mm256_or_si256(_mm256_and_si256(q, m4), h1);
                let hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h2);
                let yp = y.as_mut_ptr().add(64 * j);
                store_u8x16_mul_sub(_mm256_castsi256_si128(lo), d1, m1, yp);
                store_u8x16_mul_sub(_mm256_extracti128_si256(lo, 1), d1, m1, yp.add(16));
                store_u8x16_mul_sub(_mm256_castsi256_si128(hi), d2, m2, yp.add(32));
                store_u8x16_mul_sub(_mm256_extracti128_si256(hi, 1), d2, m2, yp.add(48));
            }
        }
    }
}
