//! k-quants: 256-element super-blocks Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K.
//!
//! Layouts (`ggml-common.h`, offsets in bytes, little-endian):
//! - Q2_K (84): `scales[16]` (low nibble scale, high nibble min, per 16 elements) at 0, `qs[64]`
//!   (2 bits) at 16, `d` f16 at 80, `dmin` f16 at 82.
//! - Q3_K (110): `hmask[32]` (high bit) at 0, `qs[64]` (low 2 bits) at 32, `scales[12]` (16
//!   6-bit scales) at 96, `d` f16 at 108.
//! - Q4_K (144): `d` f16 at 0, `dmin` f16 at 2, `scales[12]` (8 6-bit scales and 8 6-bit mins)
//!   at 4, `qs[128]` (4 bits) at 16.
//! - Q5_K (176): `d`, `dmin`, `scales[12]` at 4, `qh[32]` (5th bit) at 16, `qs[128]` at 48.
//! - Q6_K (210): `ql[128]` (low 4 bits) at 0, `qh[64]` (high 2 bits) at 128, `scales[16]` i8 at
//!   192, `d` f16 at 208.
//! - Q8_K (292): `d` f32 at 0, `qs[256]` i8 at 4, `bsums[16]` i16 at 260.
//!
//! Dequantizers follow `dequantize_row_q{2..6,8}_K`, quantizers `quantize_row_q{2..6}_K_ref` and
//! `quantize_row_q8_K_ref` (`ggml-quants.c`), including their helpers `make_qx_quants`,
//! `make_q3_quants` and `make_qkx2_quants`, with every float expression in the reference's order.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::{f32_to_f16, half_at, nearest_int};
use crate::format::GgmlType;

const QK_K: usize = 256;
/// ggml's `GROUP_MAX_EPS`.
const GROUP_MAX_EPS: f32 = 1e-15;

/// Dequantizes whole blocks of `dtype` from `src` (little-endian block bytes) into `dst`
/// (`dst.len()` = blocks × block size, checked by the caller). Returns `false` if `dtype` is
/// not of this family.
pub(crate) fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> bool {
    match dtype {
        GgmlType::Q2_K => simd_or!(q2_k_avx2, dequant_q2_k, src, dst),
        GgmlType::Q3_K => simd_or!(q3_k_avx2, dequant_q3_k, src, dst),
        GgmlType::Q4_K => q4_k_rows(src, dst),
        GgmlType::Q5_K => simd_or!(q5_k_avx2, dequant_q5_k, src, dst),
        GgmlType::Q6_K => q6_k_rows(src, dst),
        GgmlType::Q8_K => simd_or!(q8_k_avx2, dequant_q8_k, src, dst),
        _ => return false,
    }
    true
}

/// Quantizes `src` (whole blocks) into `dst` (blocks × type size, checked by the caller).
/// Returns `false` if `dtype` is not quantized by this family.
pub(crate) fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> bool {
    match dtype {
        GgmlType::Q2_K => quant_q2_k(src, dst),
        GgmlType::Q3_K => quant_q3_k(src, dst),
        GgmlType::Q4_K => quant_q4_k(src, dst),
        GgmlType::Q5_K => quant_q5_k(src, dst),
        GgmlType::Q6_K => quant_q6_k(src, dst),
        GgmlType::Q8_K => quant_q8_k(src, dst),
        _ => return false,
    }
    true
}

/// ggml's `get_scale_min_k4`: the 6-bit scale and min of sub-block `j` (0..8) from `scales[12]`.
#[inline(always)]
pub(crate) fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

// ------------------------------------------------------------------------------- dequantize

pub(crate) fn dequant_q2_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(84).zip(dst.chunks_exact_mut(QK_K)) {
        let scales = &b[0..16];
        let qs = &b[16..80];
        let d = half_at(b, 80);
        let min = half_at(b, 82);
        let mut out = 0;
        let mut is = 0;
        for n in 0..2 {
            let q = &qs[32 * n..32 * n + 32];
            for shift in [0u32, 2, 4, 6] {
                for half in 0..2 {
                    let sc = scales[is];
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

/// Unpacks Q3_K's 12 scale bytes into 16 signed 6-bit scales (already minus 32).
#[inline(always)]
pub(crate) fn q3_k_scales(s: &[u8]) -> [i8; 16] {
    let mut out = [0i8; 16];
    for (j, o) in out.iter_mut().enumerate() {
        let low = if j < 8 { s[j] & 0xF } else { s[j - 8] >> 4 };
        let high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        *o = (low | (high << 4)) as i8 - 32;
    }
    out
}

pub(crate) fn dequant_q3_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(110).zip(dst.chunks_exact_mut(QK_K)) {
        let hm = &b[0..32];
        let qs = &b[32..96];
        let scales = q3_k_scales(&b[96..108]);
        let d_all = half_at(b, 108);
        let mut out = 0;
        let mut is = 0;
        let mut m = 1u8;
        for n in 0..2 {
            let q = &qs[32 * n..32 * n + 32];
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

pub(crate) fn q4_k_rows(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            unsafe { super::simd::q4_k_avx2(src, dst) };
            return;
        }
    }
    dequant_q4_k(src, dst);
}

pub(crate) fn q6_k_rows(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            unsafe { super::simd::q6_k_avx2(src, dst) };
            return;
        }
    }
    dequant_q6_k(src, dst);
}

/// Portable Q4_K.
pub(crate) fn dequant_q4_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(144).zip(dst.chunks_exact_mut(QK_K)) {
        let d = half_at(b, 0);
        let min = half_at(b, 2);
        let scales = &b[4..16];
        let qs = &b[16..144];
        for (j, (q, yy)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (sc1, m1) = scale_min_k4(2 * j, scales);
            let (sc2, m2) = scale_min_k4(2 * j + 1, scales);
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

pub(crate) fn dequant_q5_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(176).zip(dst.chunks_exact_mut(QK_K)) {
        let d = half_at(b, 0);
        let min = half_at(b, 2);
        let scales = &b[4..16];
        let qh = &b[16..48];
        let qs = &b[48..176];
        for (j, (ql, yy)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
            let (sc1, m1) = scale_min_k4(2 * j, scales);
            let (sc2, m2) = scale_min_k4(2 * j + 1, scales);
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

/// Portable Q6_K.
pub(crate) fn dequant_q6_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(210).zip(dst.chunks_exact_mut(QK_K)) {
        let d = half_at(b, 208);
        for n in 0..2 {
            let ql = &b[64 * n..64 * n + 64];
            let qh = &b[128 + 32 * n..128 + 32 * n + 32];
            let sc = &b[192 + 8 * n..192 + 8 * n + 8];
            let yy = &mut y[128 * n..128 * n + 128];
            for l in 0..32 {
                let is = l / 16;
                let q1 = ((ql[l] & 0xF) | ((qh[l] & 3) << 4)) as i32 - 32;
                let q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
                let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
                let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
                yy[l] = d * (sc[is] as i8) as f32 * q1 as f32;
                yy[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
                yy[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
                yy[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
            }
        }
    }
}

pub(crate) fn dequant_q8_k(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(292).zip(dst.chunks_exact_mut(QK_K)) {
        let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        for (o, &q) in y.iter_mut().zip(&b[4..260]) {
            *o = d * (q as i8) as f32;
        }
    }
}

// ------------------------------------------------------------------------- quantize helpers

/// ggml's `make_qx_quants` with `rmse_type` 1: weights `qw`, or `x²` when `None` (the only
/// variants the quantizers here use).
pub(crate) fn make_qx_quants(nmax: i32, x: &[f32], l_out: &mut [i8], qw: Option<&[f32]>) -> f32 {
    let n = x.len();
    let mut max = 0f32;
    let mut amax = 0f32;
    for &v in x {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l_out.iter_mut().for_each(|l| *l = 0);
        return 0.0;
    }
    let weight = |i: usize| match qw {
        Some(w) => w[i],
        None => x[i] * x[i],
    };
    let mut iscale = -(nmax as f32) / max;
    let mut sumlx = 0f32;
    let mut suml2 = 0f32;
    for i in 0..n {
        let l = nearest_int(iscale * x[i]).clamp(-nmax, nmax - 1);
        l_out[i] = (l + nmax) as i8;
        let w = weight(i);
        sumlx += w * x[i] * l as f32;
        suml2 += w * l as f32 * l as f32;
    }
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        iscale = -(nmax as f32 + 0.1f32 * is as f32) / max;
        sumlx = 0.0;
        suml2 = 0.0;
        for i in 0..n {
            let l = nearest_int(iscale * x[i]).clamp(-nmax, nmax - 1);
            let w = weight(i);
            sumlx += w * x[i] * l as f32;
            suml2 += w * l as f32 * l as f32;
        }
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for i in 0..n {
                let l = nearest_int(iscale * x[i]);
                l_out[i] = (nmax + l.clamp(-nmax, nmax - 1)) as i8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// ggml's `make_q3_quants` with `do_rmse = true` (the only use in the reference quantizers).
fn make_q3_quants(nmax: i32, x: &[f32], l_out: &mut [i8]) -> f32 {
    let n = x.len();
    let mut max = 0f32;
    let mut amax = 0f32;
    for &v in x {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l_out.iter_mut().for_each(|l| *l = 0);
        return 0.0;
    }
    let iscale = -(nmax as f32) / max;
    let mut sumlx = 0f32;
    let mut suml2 = 0f32;
    for i in 0..n {
        let l = nearest_int(iscale * x[i]).clamp(-nmax, nmax - 1);
        l_out[i] = l as i8;
        let w = x[i] * x[i];
        sumlx += w * x[i] * l as f32;
        suml2 += w * l as f32 * l as f32;
    }
    for _ in 0..5 {
        let mut n_changed = 0;
        for i in 0..n {
            let w = x[i] * x[i];
            let li = l_out[i] as f32;
            let mut slx = sumlx - w * x[i] * li;
            if slx > 0.0 {
                let mut sl2 = suml2 - w * li * li;
                let new_l = nearest_int(x[i] * sl2 / slx).clamp(-nmax, nmax - 1);
                if new_l != l_out[i] as i32 {
                    slx += w * x[i] * new_l as f32;
                    sl2 += w * new_l as f32 * new_l as f32;
                    if sl2 > 0.0 && slx * slx * suml2 > sumlx * sumlx * sl2 {
                        l_out[i] = new_l as i8;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed += 1;
                    }
                }
            }
        }
        if n_changed == 0 {
            break;
        }
    }
    for l in l_out.iter_mut() {
        *l = l.wrapping_add(nmax as i8);
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// ggml's `make_qkx2_quants` (`qkx3 = false`) and `make_qkx3_quants` with weights (`qkx3 =
/// true`; the only difference is its `max <= min` test for a flat sub-block), one sub-block at a
/// time. Scale and (negated) min for `x` with weights, searching `nstep + 1` candidate scales;
/// returns `(scale, the_min)`. The lane-parallel [`make_qkx2_quants_x8`] is tested against it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_qkx_quants(
    nmax: i32,
    x: &[f32],
    weights: &[f32],
    l_out: &mut [u8],
    laux: &mut [u8],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
    qkx3: bool,
) -> (f32, f32) {
    let n = x.len();
    let mut min = x[0];
    let mut max = x[0];
    let mut sum_w = weights[0];
    let mut sum_x = sum_w * x[0];
    for i in 1..n {
        if x[i] < min {
            min = x[i];
        }
        if x[i] > max {
            max = x[i];
        }
        let w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if min > 0.0 {
        min = 0.0;
    }
    if (qkx3 && max <= min) || max == min {
        l_out.iter_mut().for_each(|l| *l = 0);
        return (0.0, -min);
    }
    let nmaxf = nmax as f32;
    let mut iscale = nmaxf / (max - min);
    let mut scale = 1.0 / iscale;
    let err = |diff: f32| if use_mad { diff.abs() } else { diff * diff };
    let mut best_error = 0f32;
    for i in 0..n {
        let l = nearest_int(iscale * (x[i] - min)).clamp(0, nmax);
        l_out[i] = l as u8;
        let diff = scale * l as f32 + min - x[i];
        best_error += weights[i] * err(diff);
    }
    if nstep < 1 {
        return (scale, -min);
    }
    for is in 0..=nstep {
        iscale = (rmin + rdelta * is as f32 + nmaxf) / (max - min);
        let mut sum_l = 0f32;
        let mut sum_l2 = 0f32;
        let mut sum_xl = 0f32;
        for i in 0..n {
            let l = nearest_int(iscale * (x[i] - min)).clamp(0, nmax);
            laux[i] = l as u8;
            let w = weights[i];
            let lf = l as f32;
            sum_l += w * lf;
            sum_l2 += w * lf * lf;
            sum_xl += w * lf * x[i];
        }
        let d = sum_w * sum_l2 - sum_l * sum_l;
        if d > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / d;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / d;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut cur_error = 0f32;
            for i in 0..n {
                let diff = this_scale * laux[i] as f32 + this_min - x[i];
                cur_error += weights[i] * err(diff);
            }
            if cur_error < best_error {
                l_out[..n].copy_from_slice(&laux[..n]);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// Sub-blocks processed side by side by [`make_qkx2_quants_x8`].
const LANES: usize = 8;

type Lf = [f32; LANES];
type Li = [i32; LANES];

/// [`make_qkx_quants`] (`make_qkx2_quants`) for 8 independent sub-blocks at once: lane `k` of every array is
/// sub-block `k`. Each lane performs exactly the scalar function's operations in the same order
/// (its sums stay sequential), so the results are bit-identical; the lanes only let the compiler
/// use SIMD registers across sub-blocks. `x[i][k]` is element `i` of sub-block `k`.
/// Returns `(scale, the_min)` per lane and writes the levels to `l_out[i][k]`.
#[inline(always)]
fn qkx2_x8_body<const N: usize, const MAD: bool>(
    nmax: i32,
    x: &[Lf; N],
    w: &[Lf; N],
    l_out: &mut [[u8; LANES]; N],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
) -> (Lf, Lf) {
    let nmaxf = nmax as f32;
    let mut min = x[0];
    let mut max = x[0];
    let mut sum_w = w[0];
    let mut sum_x = [0f32; LANES];
    for k in 0..LANES {
        sum_x[k] = sum_w[k] * x[0][k];
    }
    for i in 1..N {
        for k in 0..LANES {
            let v = x[i][k];
            min[k] = if v < min[k] { v } else { min[k] };
            max[k] = if v > max[k] { v } else { max[k] };
            sum_w[k] += w[i][k];
            sum_x[k] += w[i][k] * v;
        }
    }
    let mut done = [false; LANES];
    let mut iscale = [0f32; LANES];
    let mut scale = [0f32; LANES];
    for k in 0..LANES {
        if min[k] > 0.0 {
            min[k] = 0.0;
        }
        done[k] = max[k] == min[k];
        iscale[k] = nmaxf / (max[k] - min[k]);
        scale[k] = 1.0 / iscale[k];
    }
    let err = |diff: f32| if MAD { diff.abs() } else { diff * diff };
    let near = |v: f32| -> i32 { ((v + 12_582_912.0f32).to_bits() as i32 & 0x007f_ffff) - 0x0040_0000 };
    let mut best_error = [0f32; LANES];
    for i in 0..N {
        for k in 0..LANES {
            let l = near(iscale[k] * (x[i][k] - min[k])).clamp(0, nmax);
            l_out[i][k] = l as u8;
            let diff = scale[k] * l as f32 + min[k] - x[i][k];
            best_error[k] += w[i][k] * err(diff);
        }
    }
    if nstep >= 1 {
        let mut laux = [[0i32; LANES]; N];
        for is in 0..=nstep {
            let mut sum_l = [0f32; LANES];
            let mut sum_l2 = [0f32; LANES];
            let mut sum_xl = [0f32; LANES];
            for k in 0..LANES {
                // `min` may have changed in an earlier step, as in the reference.
                iscale[k] = (rmin + rdelta * is as f32 + nmaxf) / (max[k] - min[k]);
            }
            for i in 0..N {
                let mut li: Li = [0; LANES];
                for k in 0..LANES {
                    li[k] = near(iscale[k] * (x[i][k] - min[k])).clamp(0, nmax);
                    let lf = li[k] as f32;
                    let wk = w[i][k];
                    sum_l[k] += wk * lf;
                    sum_l2[k] += wk * lf * lf;
                    sum_xl[k] += wk * lf * x[i][k];
                }
                laux[i] = li;
            }
            let mut ok = [false; LANES];
            let mut this_scale = [0f32; LANES];
            let mut this_min = [0f32; LANES];
            for k in 0..LANES {
                let d = sum_w[k] * sum_l2[k] - sum_l[k] * sum_l[k];
                ok[k] = d > 0.0 && !done[k];
                let ts = (sum_w[k] * sum_xl[k] - sum_x[k] * sum_l[k]) / d;
                let tm = (sum_l2[k] * sum_x[k] - sum_l[k] * sum_xl[k]) / d;
                let clamp_min = tm > 0.0;
                this_min[k] = if clamp_min { 0.0 } else { tm };
                this_scale[k] = if clamp_min { sum_xl[k] / sum_l2[k] } else { ts };
            }
            if !ok.iter().any(|&o| o) {
                continue;
            }
            let mut cur_error = [0f32; LANES];
            for i in 0..N {
                for k in 0..LANES {
                    let diff = this_scale[k] * laux[i][k] as f32 + this_min[k] - x[i][k];
                    cur_error[k] += w[i][k] * err(diff);
                }
            }
            let mut take = [false; LANES];
            for k in 0..LANES {
                take[k] = ok[k] && cur_error[k] < best_error[k];
                if take[k] {
                    best_error[k] = cur_error[k];
                    scale[k] = this_scale[k];
                    min[k] = this_min[k];
                }
            }
            if take.iter().any(|&t| t) {
                for i in 0..N {
                    for k in 0..LANES {
                        if take[k] {
                            l_out[i][k] = laux[i][k] as u8;
                        }
                    }
                }
            }
        }
    }
    let mut the_min = [0f32; LANES];
    for k in 0..LANES {
        if done[k] {
            scale[k] = 0.0;
            for row in l_out.iter_mut() {
                row[k] = 0;
            }
        }
        the_min[k] = -min[k];
    }
    (scale, the_min)
}

/// [`qkx2_x8_body`] written with AVX2 intrinsics: one 8-lane register per array row, the same
/// operations per lane in the same order (comparisons, selects and integer clamps where the scalar
/// code branches). Never a fused multiply-add.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn qkx2_x8_avx2<const N: usize, const MAD: bool>(
    nmax: i32,
    x: &[Lf; N],
    w: &[Lf; N],
    l_out: &mut [[u8; LANES]; N],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
) -> (Lf, Lf) {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let zi = _mm256_setzero_si256();
    let nmaxf = nmax as f32;
    let nmax_v = _mm256_set1_epi32(nmax);
    let magic = _mm256_set1_ps(12_582_912.0);
    let mant = _mm256_set1_epi32(0x007f_ffff);
    let bias = _mm256_set1_epi32(0x0040_0000);
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    // SAFETY (all loads/stores): x[i], w[i] are [f32; 8]; lv/laux rows are [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    // nearest_int, then clamp to [0, nmax].
    let level = |v: __m256| {
        let bits = _mm256_castps_si256(_mm256_add_ps(v, magic));
        let l = _mm256_sub_epi32(_mm256_and_si256(bits, mant), bias);
        _mm256_min_epi32(_mm256_max_epi32(l, zi), nmax_v)
    };
    let err = |d: __m256| if MAD { _mm256_and_ps(d, absmask) } else { _mm256_mul_ps(d, d) };

    let x0 = ld(&x[0]);
    let mut min = x0;
    let mut max = x0;
    let mut sum_w = ld(&w[0]);
    let mut sum_x = _mm256_mul_ps(sum_w, x0);
    for i in 1..N {
        let v = ld(&x[i]);
        let wi = ld(&w[i]);
        min = _mm256_blendv_ps(min, v, _mm256_cmp_ps(v, min, _CMP_LT_OQ));
        max = _mm256_blendv_ps(max, v, _mm256_cmp_ps(v, max, _CMP_GT_OQ));
        sum_w = _mm256_add_ps(sum_w, wi);
        sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(wi, v));
    }
    min = _mm256_blendv_ps(min, zero, _mm256_cmp_ps(min, zero, _CMP_GT_OQ));
    let done = _mm256_cmp_ps(max, min, _CMP_EQ_OQ);
    let iscale = _mm256_div_ps(_mm256_set1_ps(nmaxf), _mm256_sub_ps(max, min));
    let mut scale = _mm256_div_ps(_mm256_set1_ps(1.0), iscale);
    let mut best = zero;
    let mut lv = [[0i32; LANES]; N];
    for i in 0..N {
        let xi = ld(&x[i]);
        let l = level(_mm256_mul_ps(iscale, _mm256_sub_ps(xi, min)));
        _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, l);
        let diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(l)), min), xi);
        best = _mm256_add_ps(best, _mm256_mul_ps(ld(&w[i]), err(diff)));
    }
    if nstep >= 1 {
        let mut laux = [[0i32; LANES]; N];
        for is in 0..=nstep {
            let c = _mm256_set1_ps(rmin + rdelta * is as f32 + nmaxf);
            let isc = _mm256_div_ps(c, _mm256_sub_ps(max, min));
            let mut sum_l = zero;
            let mut sum_l2 = zero;
            let mut sum_xl = zero;
            for i in 0..N {
                let xi = ld(&x[i]);
                let wi = ld(&w[i]);
                let l = level(_mm256_mul_ps(isc, _mm256_sub_ps(xi, min)));
                _mm256_storeu_si256(laux[i].as_mut_ptr() as *mut __m256i, l);
                let lf = _mm256_cvtepi32_ps(l);
                let wl = _mm256_mul_ps(wi, lf);
                sum_l = _mm256_add_ps(sum_l, wl);
                sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, lf));
                sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, xi));
            }
            let d = _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_l2), _mm256_mul_ps(sum_l, sum_l));
            let ok = _mm256_andnot_ps(done, _mm256_cmp_ps(d, zero, _CMP_GT_OQ));
            if _mm256_movemask_ps(ok) == 0 {
                continue;
            }
            let ts = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_w, sum_xl), _mm256_mul_ps(sum_x, sum_l)), d);
            let tm = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_l2, sum_x), _mm256_mul_ps(sum_l, sum_xl)), d);
            let cm = _mm256_cmp_ps(tm, zero, _CMP_GT_OQ);
            let this_min = _mm256_blendv_ps(tm, zero, cm);
            let this_scale = _mm256_blendv_ps(ts, _mm256_div_ps(sum_xl, sum_l2), cm);
            let mut cur = zero;
            for i in 0..N {
                let xi = ld(&x[i]);
                let lf = _mm256_cvtepi32_ps(_mm256_loadu_si256(laux[i].as_ptr() as *const __m256i));
                let diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(this_scale, lf), this_min), xi);
                cur = _mm256_add_ps(cur, _mm256_mul_ps(ld(&w[i]), err(diff)));
            }
            let take = _mm256_and_ps(ok, _mm256_cmp_ps(cur, best, _CMP_LT_OQ));
            if _mm256_movemask_ps(take) == 0 {
                continue;
            }
            best = _mm256_blendv_ps(best, cur, take);
            scale = _mm256_blendv_ps(scale, this_scale, take);
            min = _mm256_blendv_ps(min, this_min, take);
            let ti = _mm256_castps_si256(take);
            for i in 0..N {
                let old = _mm256_loadu_si256(lv[i].as_ptr() as *const __m256i);
                let new = _mm256_loadu_si256(laux[i].as_ptr() as *const __m256i);
                _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, _mm256_blendv_epi8(old, new, ti));
            }
        }
    }
    let di = _mm256_castps_si256(done);
    for i in 0..N {
        let l = _mm256_andnot_si256(di, _mm256_loadu_si256(lv[i].as_ptr() as *const __m256i));
        _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, l);
        for k in 0..LANES {
            l_out[i][k] = lv[i][k] as u8;
        }
    }
    scale = _mm256_andnot_ps(done, scale);
    let neg_min = _mm256_xor_ps(min, _mm256_set1_ps(-0.0));
    let mut s_out = [0f32; LANES];
    let mut m_out = [0f32; LANES];
    _mm256_storeu_ps(s_out.as_mut_ptr(), scale);
    _mm256_storeu_ps(m_out.as_mut_ptr(), neg_min);
    (s_out, m_out)
}

/// Dispatches [`qkx2_x8_body`] to an AVX2 build of it when the CPU has AVX2 (same operations,
/// wider registers; no fused multiply-add is ever formed).
fn make_qkx2_quants_x8<const N: usize, const MAD: bool>(
    nmax: i32,
    x: &[Lf; N],
    w: &[Lf; N],
    l_out: &mut [[u8; LANES]; N],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
) -> (Lf, Lf) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            #[allow(unsafe_code)]
            return unsafe { qkx2_x8_avx2::<N, MAD>(nmax, x, w, l_out, rmin, rdelta, nstep) };
        }
    }
    qkx2_x8_body::<N, MAD>(nmax, x, w, l_out, rmin, rdelta, nstep)
}

/// [`make_qx_quants`] (weights `x²`, no importance) for 8 sub-blocks of 16 at once with AVX2,
/// lane `k` = sub-block `k`, `x[i][k]` its element `i`; the same operations per lane in the same
/// order as the scalar function. Returns the scales and writes the levels to `l_out[i][k]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn qx_x8_avx2(nmax: i32, x: &[Lf; 16], l_out: &mut [[i8; LANES]; 16]) -> Lf {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let magic = _mm256_set1_ps(12_582_912.0);
    let mant = _mm256_set1_epi32(0x007f_ffff);
    let bias = _mm256_set1_epi32(0x0040_0000);
    let lo = _mm256_set1_epi32(-nmax);
    let hi = _mm256_set1_epi32(nmax - 1);
    let nmax_v = _mm256_set1_epi32(nmax);
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    // SAFETY (all loads/stores): rows are [f32; 8] / [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    let level = |v: __m256| {
        let bits = _mm256_castps_si256(_mm256_add_ps(v, magic));
        let l = _mm256_sub_epi32(_mm256_and_si256(bits, mant), bias);
        _mm256_min_epi32(_mm256_max_epi32(l, lo), hi)
    };
    let mut max = zero;
    let mut amax = zero;
    for row in x.iter() {
        let v = ld(row);
        let ax = _mm256_and_ps(v, absmask);
        let gt = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, ax, gt);
        max = _mm256_blendv_ps(max, v, gt);
    }
    let done = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    // Sums for one candidate inverse scale.
    let sums = |isc: __m256| {
        let mut sumlx = zero;
        let mut suml2 = zero;
        for row in x.iter() {
            let v = ld(row);
            let lf = _mm256_cvtepi32_ps(level(_mm256_mul_ps(isc, v)));
            let w = _mm256_mul_ps(v, v);
            sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, v), lf));
            suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, lf), lf));
        }
        (sumlx, suml2)
    };
    let mut lv = [[0i32; LANES]; 16];
    let iscale = _mm256_div_ps(_mm256_set1_ps(-(nmax as f32)), max);
    for (i, row) in x.iter().enumerate() {
        let l = _mm256_add_epi32(level(_mm256_mul_ps(iscale, ld(row))), nmax_v);
        _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, l);
    }
    let (sumlx, suml2) = sums(iscale);
    let mut scale = _mm256_blendv_ps(_mm256_div_ps(sumlx, suml2), zero, _mm256_cmp_ps(suml2, zero, _CMP_EQ_OQ));
    let mut best = _mm256_mul_ps(scale, sumlx);
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        let isc = _mm256_div_ps(_mm256_set1_ps(-(nmax as f32 + 0.1f32 * is as f32)), max);
        let (sumlx, suml2) = sums(isc);
        let better = _mm256_cmp_ps(_mm256_mul_ps(sumlx, sumlx), _mm256_mul_ps(best, suml2), _CMP_GT_OQ);
        let upd = _mm256_andnot_ps(done, _mm256_and_ps(_mm256_cmp_ps(suml2, zero, _CMP_GT_OQ), better));
        if _mm256_movemask_ps(upd) == 0 {
            continue;
        }
        let ui = _mm256_castps_si256(upd);
        for (i, row) in x.iter().enumerate() {
            let l = _mm256_add_epi32(level(_mm256_mul_ps(isc, ld(row))), nmax_v);
            let old = _mm256_loadu_si256(lv[i].as_ptr() as *const __m256i);
            _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, _mm256_blendv_epi8(old, l, ui));
        }
        scale = _mm256_blendv_ps(scale, _mm256_div_ps(sumlx, suml2), upd);
        best = _mm256_blendv_ps(best, _mm256_mul_ps(scale, sumlx), upd);
    }
    let di = _mm256_castps_si256(done);
    for i in 0..16 {
        let l = _mm256_andnot_si256(di, _mm256_loadu_si256(lv[i].as_ptr() as *const __m256i));
        _mm256_storeu_si256(lv[i].as_mut_ptr() as *mut __m256i, l);
        for k in 0..LANES {
            l_out[i][k] = lv[i][k] as i8;
        }
    }
    let mut out = [0f32; LANES];
    _mm256_storeu_ps(out.as_mut_ptr(), _mm256_andnot_ps(done, scale));
    out
}

/// [`make_q3_quants`] for 8 sub-blocks of 16 at once with AVX2 (lane `k` = sub-block `k`), the
/// same operations per lane in the same order. A lane whose refinement pass changes nothing would
/// change nothing in a further pass either, so passes run until no lane changes (at most 5).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn q3_x8_avx2(nmax: i32, x: &[Lf; 16], l_out: &mut [[i8; LANES]; 16]) -> Lf {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let magic = _mm256_set1_ps(12_582_912.0);
    let mant = _mm256_set1_epi32(0x007f_ffff);
    let bias = _mm256_set1_epi32(0x0040_0000);
    let lo = _mm256_set1_epi32(-nmax);
    let hi = _mm256_set1_epi32(nmax - 1);
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    // SAFETY (all loads/stores): rows are [f32; 8] / [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    let level = |v: __m256| {
        let bits = _mm256_castps_si256(_mm256_add_ps(v, magic));
        let l = _mm256_sub_epi32(_mm256_and_si256(bits, mant), bias);
        _mm256_min_epi32(_mm256_max_epi32(l, lo), hi)
    };
    let mut max = zero;
    let mut amax = zero;
    for row in x.iter() {
        let v = ld(row);
        let ax = _mm256_and_ps(v, absmask);
        let gt = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, ax, gt);
        max = _mm256_blendv_ps(max, v, gt);
    }
    let done = _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ);
    let iscale = _mm256_div_ps(_mm256_set1_ps(-(nmax as f32)), max);
    let mut lv = [_mm256_setzero_si256(); 16];
    let mut sumlx = zero;
    let mut suml2 = zero;
    for (i, row) in x.iter().enumerate() {
        let v = ld(row);
        let l = level(_mm256_mul_ps(iscale, v));
        lv[i] = l;
        let lf = _mm256_cvtepi32_ps(l);
        let w = _mm256_mul_ps(v, v);
        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, v), lf));
        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, lf), lf));
    }
    for _ in 0..5 {
        let mut changed = _mm256_setzero_ps();
        for (i, row) in x.iter().enumerate() {
            let v = ld(row);
            let w = _mm256_mul_ps(v, v);
            let li = _mm256_cvtepi32_ps(lv[i]);
            let wx = _mm256_mul_ps(w, v);
            let mut slx = _mm256_sub_ps(sumlx, _mm256_mul_ps(wx, li));
            let c1 = _mm256_cmp_ps(slx, zero, _CMP_GT_OQ);
            let mut sl2 = _mm256_sub_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, li), li));
            let new_l = level(_mm256_div_ps(_mm256_mul_ps(v, sl2), slx));
            let c2 = _mm256_xor_ps(
                _mm256_castsi256_ps(_mm256_cmpeq_epi32(new_l, lv[i])),
                _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
            );
            let nf = _mm256_cvtepi32_ps(new_l);
            slx = _mm256_add_ps(slx, _mm256_mul_ps(wx, nf));
            sl2 = _mm256_add_ps(sl2, _mm256_mul_ps(_mm256_mul_ps(w, nf), nf));
            let c3 = _mm256_and_ps(
                _mm256_cmp_ps(sl2, zero, _CMP_GT_OQ),
                _mm256_cmp_ps(
                    _mm256_mul_ps(_mm256_mul_ps(slx, slx), suml2),
                    _mm256_mul_ps(_mm256_mul_ps(sumlx, sumlx), sl2),
                    _CMP_GT_OQ,
                ),
            );
            let upd = _mm256_andnot_ps(done, _mm256_and_ps(c1, _mm256_and_ps(c2, c3)));
            lv[i] = _mm256_blendv_epi8(lv[i], new_l, _mm256_castps_si256(upd));
            sumlx = _mm256_blendv_ps(sumlx, slx, upd);
            suml2 = _mm256_blendv_ps(suml2, sl2, upd);
            changed = _mm256_or_ps(changed, upd);
        }
        if _mm256_movemask_ps(changed) == 0 {
            break;
        }
    }
    let di = _mm256_castps_si256(done);
    let nmax_v = _mm256_set1_epi32(nmax);
    for i in 0..16 {
        let l = _mm256_andnot_si256(di, _mm256_add_epi32(lv[i], nmax_v));
        let mut tmp = [0i32; LANES];
        _mm256_storeu_si256(tmp.as_mut_ptr() as *mut __m256i, l);
        for k in 0..LANES {
            l_out[i][k] = tmp[k] as i8;
        }
    }
    let pos = _mm256_cmp_ps(suml2, zero, _CMP_GT_OQ);
    let scale = _mm256_and_ps(_mm256_andnot_ps(done, pos), _mm256_div_ps(sumlx, suml2));
    let mut out = [0f32; LANES];
    _mm256_storeu_ps(out.as_mut_ptr(), scale);
    out
}

/// The 16 sub-block scales and levels of one super-block (sub-blocks of 16), 8 sub-blocks at a
/// time through `kernel`: lane `k` of its arguments is sub-block `8 × half + k`, `x[i][k]` that
/// sub-block's element `i`; it returns the 8 scales and writes the levels to `l_out[i][k]`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn subblocks_x8(x: &[f32], l: &mut [i8; QK_K], kernel: impl Fn(&[Lf; 16], &mut [[i8; LANES]; 16]) -> Lf) -> [f32; 16] {
    let mut scales = [0f32; 16];
    for half in 0..2 {
        let mut xt = [[0f32; LANES]; 16];
        for k in 0..LANES {
            for i in 0..16 {
                xt[i][k] = x[16 * (8 * half + k) + i];
            }
        }
        let mut lt = [[0i8; LANES]; 16];
        let s8 = kernel(&xt, &mut lt);
        for k in 0..LANES {
            let j = 8 * half + k;
            scales[j] = s8[k];
            for i in 0..16 {
                l[16 * j + i] = lt[i][k];
            }
        }
    }
    scales
}

/// The 16 sub-block scales and levels of one Q3_K super-block (`make_q3_quants(16, 4, …, true)`
/// for each), 8 sub-blocks at a time with AVX2 when available.
fn q3_k_subblocks(x: &[f32], l: &mut [i8; QK_K]) -> [f32; 16] {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            #[allow(unsafe_code)]
            return subblocks_x8(x, l, |xt, lt| unsafe { q3_x8_avx2(4, xt, lt) });
        }
    }
    let mut scales = [0f32; 16];
    for j in 0..16 {
        scales[j] = make_q3_quants(4, &x[16 * j..16 * j + 16], &mut l[16 * j..16 * j + 16]);
    }
    scales
}

/// The 16 sub-block scales and levels of one Q6_K super-block (`make_qx_quants(16, 32, …, 1,
/// NULL)` for each), 8 sub-blocks at a time with AVX2 when available.
fn q6_k_subblocks(x: &[f32], l: &mut [i8; QK_K]) -> [f32; 16] {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            #[allow(unsafe_code)]
            return subblocks_x8(x, l, |xt, lt| unsafe { qx_x8_avx2(32, xt, lt) });
        }
    }
    let mut scales = [0f32; 16];
    for ib in 0..16 {
        scales[ib] = make_qx_quants(32, &x[16 * ib..16 * ib + 16], &mut l[16 * ib..16 * ib + 16], None);
    }
    scales
}

/// Packs 2-bit values `l[256]` the way Q2_K and Q3_K store `qs[64]`.
#[inline(always)]
fn pack_2bit(l: &[u8; QK_K], qs: &mut [u8]) {
    for j in (0..QK_K).step_by(128) {
        for i in 0..32 {
            qs[j / 4 + i] = l[j + i] | (l[j + i + 32] << 2) | (l[j + i + 64] << 4) | (l[j + i + 96] << 6);
        }
    }
}

// --------------------------------------------------------------------------------- quantize

fn quant_q2_k(src: &[f32], dst: &mut [u8]) {
    const Q4SCALE: f32 = 15.0;
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(84)) {
        let mut l = [0u8; QK_K];
        let mut mins = [0f32; 16];
        let mut scales = [0f32; 16];
        for half in 0..2 {
            let mut xt = [[0f32; LANES]; 16];
            let mut wt = [[0f32; LANES]; 16];
            for k in 0..LANES {
                let j = 8 * half + k;
                for i in 0..16 {
                    xt[i][k] = x[16 * j + i];
                    wt[i][k] = x[16 * j + i].abs();
                }
            }
            let mut lt = [[0u8; LANES]; 16];
            let (s8, m8) = make_qkx2_quants_x8::<16, true>(3, &xt, &wt, &mut lt, -0.5, 0.1, 15);
            for k in 0..LANES {
                let j = 8 * half + k;
                scales[j] = s8[k];
                mins[j] = m8[k];
                for i in 0..16 {
                    l[16 * j + i] = lt[i][k];
                }
            }
        }
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
        let (sc, rest) = y.split_at_mut(16);
        let (qs, dd) = rest.split_at_mut(64);
        if max_scale > 0.0 {
            let iscale = Q4SCALE / max_scale;
            for j in 0..16 {
                sc[j] = nearest_int(iscale * scales[j]) as u8;
            }
            dd[0..2].copy_from_slice(&f32_to_f16(max_scale / Q4SCALE).to_le_bytes());
        } else {
            sc.iter_mut().for_each(|s| *s = 0);
            dd[0..2].copy_from_slice(&f32_to_f16(0.0).to_le_bytes());
        }
        if max_min > 0.0 {
            let iscale = Q4SCALE / max_min;
            for j in 0..16 {
                let lm = nearest_int(iscale * mins[j]);
                sc[j] |= (lm << 4) as u8;
            }
            dd[2..4].copy_from_slice(&f32_to_f16(max_min / Q4SCALE).to_le_bytes());
        } else {
            dd[2..4].copy_from_slice(&f32_to_f16(0.0).to_le_bytes());
        }
        let d_all = half_at(dd, 0);
        let dmin_all = half_at(dd, 2);
        for j in 0..16 {
            let d = d_all * (sc[j] & 0xF) as f32;
            if d == 0.0 {
                continue;
            }
            let dm = dmin_all * (sc[j] >> 4) as f32;
            for ii in 0..16 {
                let q = nearest_int((x[16 * j + ii] + dm) / d).clamp(0, 3);
                l[16 * j + ii] = q as u8;
            }
        }
        pack_2bit(&l, qs);
    }
}

fn quant_q3_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(110)) {
        let mut l = [0i8; QK_K];
        let scales = q3_k_subblocks(x, &mut l);
        let mut max_scale = 0f32;
        let mut amax = 0f32;
        for &sc in &scales {
            let scale = sc.abs();
            if scale > amax {
                amax = scale;
                max_scale = sc;
            }
        }
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
        finish_q3_k(x, y, &ls, d_block, &mut l);
    }
}

/// The second half of the Q3_K quantizers (reference and importance): packs the 6-bit sub-block
/// scales `ls` and the super-block scale `d_block`, requantizes the levels against the stored
/// scales, and writes `hmask[32]`, `qs[64]`, `scales[12]`, `d` into the block `y`.
fn finish_q3_k(x: &[f32], y: &mut [u8], ls: &[u8; 16], d_block: f32, l: &mut [i8; QK_K]) {
    let (hmask, rest) = y.split_at_mut(32);
    let (qs, rest) = rest.split_at_mut(64);
    let (sc, dd) = rest.split_at_mut(12);
    sc.iter_mut().for_each(|s| *s = 0);
    for (j, &li) in ls.iter().enumerate() {
        if j < 8 {
            sc[j] = li & 0xF;
        } else {
            sc[j - 8] |= (li & 0xF) << 4;
        }
        sc[j % 4 + 8] |= (li >> 4) << (2 * (j / 4));
    }
    dd.copy_from_slice(&f32_to_f16(d_block).to_le_bytes());
    let d_all = half_at(dd, 0);
    let sci = q3_k_scales(sc);
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
    hmask.iter_mut().for_each(|h| *h = 0);
    // The high bit of element j goes to bit j / 32 of hmask[j % 32] (the reference walks
    // m = j % 32 and hm = 1 << (j / 32)); branch-free.
    let mut lu = [0u8; QK_K];
    for j in 0..QK_K {
        let high = (l[j] > 3) as u8;
        hmask[j % 32] |= high << (j / 32);
        lu[j] = (l[j] as u8).wrapping_sub(4 * high);
    }
    pack_2bit(&lu, qs);
}

/// Packs Q4_K/Q5_K sub-block scales and mins (`ls`, `lm` ≤ 63) into `scales[12]`.
#[inline(always)]
fn pack_scales_k4(ls: &[u8; 8], lm: &[u8; 8], sc: &mut [u8]) {
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
}

/// The shared first half of the Q4_K / Q5_K reference quantizers: per-32 scales and mins, the
/// block's `d`, `dmin` and packed scales, then the requantized levels `l`. Writes `d`, `dmin`,
/// `scales[12]` into `head[0..16]`.
fn quant_k4_head(x: &[f32], nmax: i32, rmin: f32, nstep: i32, head: &mut [u8], l: &mut [u8; QK_K]) {
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
    let (scales, mins) = make_qkx2_quants_x8::<32, false>(nmax, &xt, &wt, &mut lt, rmin, 0.1, nstep);
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
    write_k4_head(x, nmax, max_scale / 63.0, max_min / 63.0, &ls, &lm, head, l);
}

/// Writes `d`, `dmin` and the packed 6-bit scales and mins `ls`, `lm` into `head[0..16]` of a
/// Q4_K/Q5_K block, then requantizes the levels `l` (0..=`nmax`) against the stored values.
#[allow(clippy::too_many_arguments)]
fn write_k4_head(
    x: &[f32],
    nmax: i32,
    d_block: f32,
    m_block: f32,
    ls: &[u8; 8],
    lm: &[u8; 8],
    head: &mut [u8],
    l: &mut [u8; QK_K],
) {
    head[0..2].copy_from_slice(&f32_to_f16(d_block).to_le_bytes());
    head[2..4].copy_from_slice(&f32_to_f16(m_block).to_le_bytes());
    pack_scales_k4(ls, lm, &mut head[4..16]);
    let d_all = half_at(head, 0);
    let dmin_all = half_at(head, 2);
    for j in 0..8 {
        let (sc, m) = scale_min_k4(j, &head[4..16]);
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
}

fn quant_q4_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(144)) {
        let mut l = [0u8; QK_K];
        quant_k4_head(x, 15, -1.0, 20, &mut y[0..16], &mut l);
        pack_q4_k_levels(&l, &mut y[16..144]);
    }
}

/// Writes Q4_K levels `l` (0..=15) as `qs[128]` (`out` = the block from byte 16).
#[inline(always)]
fn pack_q4_k_levels(l: &[u8; QK_K], out: &mut [u8]) {
    for (n, qq) in out.chunks_exact_mut(32).enumerate() {
        let j = 64 * n;
        for i in 0..32 {
            qq[i] = l[j + i] | (l[j + i + 32] << 4);
        }
    }
}

fn quant_q5_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(176)) {
        let mut l = [0u8; QK_K];
        quant_k4_head(x, 31, -0.5, 15, &mut y[0..16], &mut l);
        pack_q5_k_levels(&l, &mut y[16..176]);
    }
}

/// Writes Q5_K levels `l` (0..=31) as `qh[32]` and `qs[128]` (`out` = the block from byte 16).
fn pack_q5_k_levels(l: &[u8; QK_K], out: &mut [u8]) {
    let (qh, ql) = out.split_at_mut(32);
    qh.iter_mut().for_each(|h| *h = 0);
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
}

fn quant_q6_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(210)) {
        let mut l = [0i8; QK_K];
        let scales = q6_k_subblocks(x, &mut l);
        finish_q6_k(x, y, &scales, &mut l);
    }
}

/// The second half of the Q6_K quantizers (reference and importance): super-block scale, 8-bit
/// sub-block scales, requantized levels, packing. `l` holds the first-pass levels.
fn finish_q6_k(x: &[f32], y: &mut [u8], scales: &[f32; 16], l: &mut [i8; QK_K]) {
    let mut max_scale = 0f32;
    let mut max_abs_scale = 0f32;
    for &scale in scales {
        let abs_scale = scale.abs();
        if abs_scale > max_abs_scale {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }
    if max_abs_scale < GROUP_MAX_EPS {
        y.iter_mut().for_each(|b| *b = 0);
        return;
    }
    let iscale = -128.0f32 / max_scale;
    y[208..210].copy_from_slice(&f32_to_f16(1.0 / iscale).to_le_bytes());
    for ib in 0..16 {
        y[192 + ib] = nearest_int(iscale * scales[ib]).min(127) as i8 as u8;
    }
    let d_all = half_at(y, 208);
    for j in 0..16 {
        let d = d_all * (y[192 + j] as i8) as f32;
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
            y[64 * n + i] = q1 | (q3 << 4);
            y[64 * n + i + 32] = q2 | (q4 << 4);
            y[128 + 32 * n + i] = (lu[j + i] >> 4)
                | ((lu[j + i + 32] >> 4) << 2)
                | ((lu[j + i + 64] >> 4) << 4)
                | ((lu[j + i + 96] >> 4) << 6);
        }
    }
}

/// `quantize_row_q8_K_ref`. One difference: for an all-zero block the reference leaves `bsums`
/// as they were in the output buffer; here they are written as zeros.
fn quant_q8_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(292)) {
        let mut max = 0f32;
        let mut amax = 0f32;
        for &v in x {
            let ax = v.abs();
            if ax > amax {
                amax = ax;
                max = v;
            }
        }
        if amax == 0.0 {
            y.iter_mut().for_each(|b| *b = 0);
            continue;
        }
        let iscale = -127.0f32 / max;
        let mut q = [0i8; QK_K];
        for (o, &v) in q.iter_mut().zip(x) {
            *o = nearest_int(iscale * v).min(127) as i8;
        }
        for (o, &v) in y[4..260].iter_mut().zip(&q) {
            *o = v as u8;
        }
        for j in 0..16 {
            let sum: i32 = q[16 * j..16 * j + 16].iter().map(|&v| v as i32).sum();
            y[260 + 2 * j..262 + 2 * j].copy_from_slice(&(sum as i16).to_le_bytes());
        }
        y[0..4].copy_from_slice(&(1.0 / iscale).to_le_bytes());
    }
}

// ------------------------------------------------------------- quantize with importance weights

/// ggml's `make_qp_quants`: quantizes non-negative `x` (sub-block scales or mins) to `0..=nmax`
/// with weights; returns the scale.
pub(crate) fn make_qp_quants(nmax: i32, x: &[f32], l_out: &mut [u8], qw: &[f32]) -> f32 {
    let n = x.len();
    let mut max = 0f32;
    for &v in x {
        max = if max > v { max } else { v };
    }
    if max < GROUP_MAX_EPS {
        l_out.iter_mut().for_each(|l| *l = 0);
        return 0.0;
    }
    let nmaxf = nmax as f32;
    let mut iscale = nmaxf / max;
    for i in 0..n {
        l_out[i] = nearest_int(iscale * x[i]) as u8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0f32;
    for i in 0..n {
        let diff = x[i] - scale * l_out[i] as f32;
        best_mse += qw[i] * diff * diff;
    }
    for is in -4i32..=4 {
        if is == 0 {
            continue;
        }
        let iscale_is = (0.1f32 * is as f32 + nmaxf) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0f32;
        for i in 0..n {
            let l = nearest_int(iscale_is * x[i]).min(nmax);
            let diff = x[i] - scale_is * l as f32;
            mse += qw[i] * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    let mut sumlx = 0f32;
    let mut suml2 = 0f32;
    for i in 0..n {
        let l = nearest_int(iscale * x[i]).min(nmax);
        l_out[i] = l as u8;
        let w = qw[i];
        sumlx += w * x[i] * l as f32;
        suml2 += w * l as f32 * l as f32;
    }
    for _ in 0..5 {
        let mut n_changed = 0;
        for i in 0..n {
            let w = qw[i];
            let li = l_out[i] as f32;
            let mut slx = sumlx - w * x[i] * li;
            let mut sl2 = suml2 - w * li * li;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nearest_int(x[i] * sl2 / slx).min(nmax);
                if new_l != l_out[i] as i32 {
                    slx += w * x[i] * new_l as f32;
                    sl2 += w * new_l as f32 * new_l as f32;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        l_out[i] = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed += 1;
                    }
                }
            }
        }
        if n_changed == 0 {
            break;
        }
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// Quantizes one row (`x.len()` = `n_per_row`, whole super-blocks) with importance weights
/// `qw` (one per column of the row), as ggml's `quantize_row_q{2..6}_K_impl`. Returns `false` if
/// `dtype` is not a k-quant with an importance path.
pub(crate) fn quantize_row_imatrix(dtype: GgmlType, x: &[f32], dst: &mut [u8], qw: &[f32]) -> bool {
    match dtype {
        GgmlType::Q2_K => q2_k_impl(x, dst, qw),
        GgmlType::Q3_K => q3_k_impl(x, dst, qw),
        GgmlType::Q4_K => q45_k_impl(x, dst, qw, 15, 144),
        GgmlType::Q5_K => q45_k_impl(x, dst, qw, 31, 176),
        GgmlType::Q6_K => q6_k_impl(x, dst, qw),
        _ => return false,
    }
    true
}

fn block_sigma2(x: &[f32], factor: f32) -> f32 {
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    factor * sumx2 / QK_K as f32
}

fn q2_k_impl(src: &[f32], dst: &mut [u8], qw_row: &[f32]) {
    for ((x, y), qwb) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(84)).zip(qw_row.chunks_exact(QK_K)) {
        let mut l = [0u8; QK_K];
        let mut laux = [0u8; 16];
        let mut mins = [0f32; 16];
        let mut scales = [0f32; 16];
        let mut sw = [0f32; 16];
        let mut weight = [0f32; 16];
        let sigma2 = block_sigma2(x, 1.0);
        for j in 0..16 {
            let qw = &qwb[16 * j..16 * j + 16];
            for i in 0..16 {
                let v = x[16 * j + i];
                weight[i] = qw[i] * (sigma2 + v * v).sqrt();
            }
            for &w in &weight {
                sw[j] += w;
            }
            let (sc, m) = make_qkx_quants(
                3,
                &x[16 * j..16 * j + 16],
                &weight,
                &mut l[16 * j..16 * j + 16],
                &mut laux,
                -0.9,
                0.05,
                36,
                false,
                true,
            );
            scales[j] = sc;
            mins[j] = m;
        }
        let mut ls = [0u8; 16];
        let mut lm = [0u8; 16];
        let dm = make_qp_quants(15, &scales, &mut ls, &sw);
        let mm = make_qp_quants(15, &mins, &mut lm, &sw);
        y[80..82].copy_from_slice(&f32_to_f16(dm).to_le_bytes());
        y[82..84].copy_from_slice(&f32_to_f16(mm).to_le_bytes());
        let dm = half_at(y, 80);
        let mm = half_at(y, 82);
        for j in 0..16 {
            y[j] = ls[j] | (lm[j] << 4);
        }
        for j in 0..16 {
            let d = dm * (y[j] & 0xF) as f32;
            if d == 0.0 {
                continue;
            }
            let m = mm * (y[j] >> 4) as f32;
            for ii in 0..16 {
                l[16 * j + ii] = nearest_int((x[16 * j + ii] + m) / d).clamp(0, 3) as u8;
            }
        }
        pack_2bit(&l, &mut y[16..80]);
    }
}

fn q3_k_impl(src: &[f32], dst: &mut [u8], qw_row: &[f32]) {
    for ((x, y), qwb) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(110)).zip(qw_row.chunks_exact(QK_K)) {
        let mut l = [0i8; QK_K];
        let mut scales = [0f32; 16];
        let mut sw = [0f32; 16];
        let mut weight = [0f32; 16];
        let sigma2 = block_sigma2(x, 2.0);
        for j in 0..16 {
            let qw = &qwb[16 * j..16 * j + 16];
            for i in 0..16 {
                let v = x[16 * j + i];
                weight[i] = qw[i] * (sigma2 + v * v).sqrt();
            }
            let mut sumw = 0f32;
            for &w in &weight {
                sumw += w;
            }
            sw[j] = sumw;
            scales[j] = make_qx_quants(4, &x[16 * j..16 * j + 16], &mut l[16 * j..16 * j + 16], Some(&weight));
        }
        let mut ls = [0i8; 16];
        let d_block = make_qx_quants(32, &scales, &mut ls, Some(&sw));
        finish_q3_k(x, y, &ls.map(|v| v as u8), d_block, &mut l);
    }
}

fn q45_k_impl(src: &[f32], dst: &mut [u8], qw_row: &[f32], nmax: i32, ts: usize) {
    for ((x, y), qwb) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(ts)).zip(qw_row.chunks_exact(QK_K)) {
        let mut l = [0u8; QK_K];
        let mut laux = [0u8; 32];
        let mut weights = [0f32; 32];
        let mut sw = [0f32; 8];
        let mut mins = [0f32; 8];
        let mut scales = [0f32; 8];
        let sigma2 = block_sigma2(x, 2.0);
        for j in 0..8 {
            let qw = &qwb[32 * j..32 * j + 32];
            for i in 0..32 {
                let v = x[32 * j + i];
                weights[i] = qw[i] * (sigma2 + v * v).sqrt();
            }
            let mut sumw = 0f32;
            for &w in &weights {
                sumw += w;
            }
            sw[j] = sumw;
            let (sc, m) = make_qkx_quants(
                nmax,
                &x[32 * j..32 * j + 32],
                &weights,
                &mut l[32 * j..32 * j + 32],
                &mut laux,
                -0.9,
                0.05,
                36,
                false,
                true,
            );
            scales[j] = sc;
            mins[j] = m;
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
        write_k4_head(x, nmax, d_block, m_block, &ls, &lm, &mut y[0..16], &mut l);
        if nmax == 15 {
            pack_q4_k_levels(&l, &mut y[16..144]);
        } else {
            pack_q5_k_levels(&l, &mut y[16..176]);
        }
    }
}

fn q6_k_impl(src: &[f32], dst: &mut [u8], qw_row: &[f32]) {
    for ((x, y), qwb) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(210)).zip(qw_row.chunks_exact(QK_K)) {
        let mut l = [0i8; QK_K];
        let mut scales = [0f32; 16];
        for ib in 0..16 {
            scales[ib] = make_qx_quants(
                32,
                &x[16 * ib..16 * ib + 16],
                &mut l[16 * ib..16 * ib + 16],
                Some(&qwb[16 * ib..16 * ib + 16]),
            );
        }
        finish_q6_k(x, y, &scales, &mut l);
    }
}

#[cfg(test)]
mod lane_tests {
    use super::*;

    /// The C vector inputs for `ty` followed by 64 Ki pseudo-random values at scales 1e-6..1e4
    /// (many more blocks than the vectors, for the lane-vs-scalar comparisons).
    fn inputs(ty: &str) -> Vec<f32> {
        let path = format!("{}/tests/data/codec/{ty}.in.f32", env!("CARGO_MANIFEST_DIR"));
        let data = std::fs::read(path).unwrap();
        let mut x: Vec<f32> = data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let mut st = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..65536i32 {
            st = st.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (st >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
            x.push(u * 10f32.powi(i / 256 % 11 - 6));
        }
        x
    }

    #[test]
    fn qkx2_lanes_equal_scalar_q4_k_shape() {
        let x = inputs("Q4_K");
        for (bi, blk) in x.chunks_exact(256).enumerate() {
            let mut xt = [[0f32; LANES]; 32];
            let mut wt = [[0f32; LANES]; 32];
            for k in 0..LANES {
                for i in 0..32 {
                    xt[i][k] = blk[32 * k + i];
                    wt[i][k] = 0.3 + blk[32 * k + i].abs();
                }
            }
            let mut lt = [[0u8; LANES]; 32];
            let (s8, m8) = make_qkx2_quants_x8::<32, false>(15, &xt, &wt, &mut lt, -1.0, 0.1, 20);
            let mut lt2 = [[0u8; LANES]; 32];
            let (s8b, m8b) = qkx2_x8_body::<32, false>(15, &xt, &wt, &mut lt2, -1.0, 0.1, 20);
            assert_eq!(
                (s8.map(f32::to_bits), m8.map(f32::to_bits), lt),
                (s8b.map(f32::to_bits), m8b.map(f32::to_bits), lt2)
            );
            for k in 0..LANES {
                let xs = &blk[32 * k..32 * k + 32];
                let w: Vec<f32> = xs.iter().map(|v| 0.3 + v.abs()).collect();
                let mut l = [0u8; 32];
                let mut laux = [0u8; 32];
                let (s, m) = make_qkx_quants(15, xs, &w, &mut l, &mut laux, -1.0, 0.1, 20, false, false);
                let ll: Vec<u8> = (0..32).map(|i| lt[i][k]).collect();
                assert_eq!(
                    (s.to_bits(), m.to_bits(), l.to_vec()),
                    (s8[k].to_bits(), m8[k].to_bits(), ll),
                    "block {bi} lane {k}"
                );
            }
        }
    }

    #[test]
    fn qx_lanes_equal_scalar() {
        if !crate::codec::simd::has_avx2() {
            return;
        }
        let x = inputs("Q6_K");
        for (bi, blk) in x.chunks_exact(128).enumerate() {
            let mut xt = [[0f32; LANES]; 16];
            for k in 0..LANES {
                for i in 0..16 {
                    xt[i][k] = blk[16 * k + i];
                }
            }
            let mut lt = [[0i8; LANES]; 16];
            #[allow(unsafe_code)]
            let s8 = unsafe { qx_x8_avx2(32, &xt, &mut lt) };
            for k in 0..LANES {
                let mut l = [0i8; 16];
                let s = make_qx_quants(32, &blk[16 * k..16 * k + 16], &mut l, None);
                let ll: Vec<i8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!((s.to_bits(), l.to_vec()), (s8[k].to_bits(), ll), "block {bi} lane {k}");
            }
        }
    }

    #[test]
    fn q3_lanes_equal_scalar() {
        if !crate::codec::simd::has_avx2() {
            return;
        }
        let x = inputs("Q3_K");
        for (bi, blk) in x.chunks_exact(128).enumerate() {
            let mut xt = [[0f32; LANES]; 16];
            for k in 0..LANES {
                for i in 0..16 {
                    xt[i][k] = blk[16 * k + i];
                }
            }
            let mut lt = [[0i8; LANES]; 16];
            #[allow(unsafe_code)]
            let s8 = unsafe { q3_x8_avx2(4, &xt, &mut lt) };
            for k in 0..LANES {
                let mut l = [0i8; 16];
                let s = make_q3_quants(4, &blk[16 * k..16 * k + 16], &mut l);
                let ll: Vec<i8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!((s.to_bits(), l.to_vec()), (s8[k].to_bits(), ll), "block {bi} lane {k}");
            }
        }
    }

    #[test]
    fn qkx2_lanes_equal_scalar() {
        let x = inputs("Q2_K");
        for (bi, blk) in x.chunks_exact(128).enumerate() {
            let mut xt = [[0f32; LANES]; 16];
            let mut wt = [[0f32; LANES]; 16];
            for k in 0..LANES {
                for i in 0..16 {
                    xt[i][k] = blk[16 * k + i];
                    wt[i][k] = blk[16 * k + i].abs();
                }
            }
            let mut lt = [[0u8; LANES]; 16];
            let (s8, m8) = make_qkx2_quants_x8::<16, true>(3, &xt, &wt, &mut lt, -0.5, 0.1, 15);
            let mut lt2 = [[0u8; LANES]; 16];
            let (s8b, m8b) = qkx2_x8_body::<16, true>(3, &xt, &wt, &mut lt2, -0.5, 0.1, 15);
            assert_eq!(
                (s8.map(f32::to_bits), m8.map(f32::to_bits), lt),
                (s8b.map(f32::to_bits), m8b.map(f32::to_bits), lt2)
            );
            for k in 0..LANES {
                let xs = &blk[16 * k..16 * k + 16];
                let w: Vec<f32> = xs.iter().map(|v| v.abs()).collect();
                let mut l = [0u8; 16];
                let mut laux = [0u8; 16];
                let (s, m) = make_qkx_quants(3, xs, &w, &mut l, &mut laux, -0.5, 0.1, 15, true, false);
                let ll: Vec<u8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!(
                    (s.to_bits(), m.to_bits(), l.to_vec()),
                    (s8[k].to_bits(), m8[k].to_bits(), ll),
                    "block {bi} lane {k} {xs:?}"
                );
            }
        }
    }
}
