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

use super::{f16_to_f32, f32_to_f16, nearest_int};
use crate::dtype::GgmlType;

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

#[inline(always)]
fn half_at(b: &[u8], off: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[off], b[off + 1]]))
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

/// ggml's `make_qx_quants` with no importance weights; `rmse_type` 1 (weights `x²`) is the only
/// one the reference quantizers here use without an importance matrix.
fn make_qx_quants(nmax: i32, x: &[f32], l_out: &mut [i8], qw: Option<&[f32]>) -> f32 {
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

/// ggml's `make_qkx2_quants`: scale and (negated) min for `x` with weights, searching `nstep + 1`
/// candidate scales. Returns `(scale, the_min)`.
#[allow(clippy::too_many_arguments)]
fn make_qkx2_quants(
    nmax: i32,
    x: &[f32],
    weights: &[f32],
    l_out: &mut [u8],
    laux: &mut [u8],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
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
    if max == min {
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
        let mut laux = [0u8; 16];
        let mut weights = [0f32; 16];
        let mut mins = [0f32; 16];
        let mut scales = [0f32; 16];
        let mut max_scale = 0f32;
        let mut max_min = 0f32;
        for j in 0..16 {
            let xs = &x[16 * j..16 * j + 16];
            for (w, &v) in weights.iter_mut().zip(xs) {
                *w = v.abs();
            }
            let (s, m) = make_qkx2_quants(3, xs, &weights, &mut l[16 * j..16 * j + 16], &mut laux, -0.5, 0.1, 15, true);
            scales[j] = s;
            mins[j] = m;
            if s > max_scale {
                max_scale = s;
            }
            if m > max_min {
                max_min = m;
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
        let mut scales = [0f32; 16];
        let mut max_scale = 0f32;
        let mut amax = 0f32;
        for j in 0..16 {
            scales[j] = make_q3_quants(4, &x[16 * j..16 * j + 16], &mut l[16 * j..16 * j + 16]);
            let scale = scales[j].abs();
            if scale > amax {
                amax = scale;
                max_scale = scales[j];
            }
        }
        let (hmask, rest) = y.split_at_mut(32);
        let (qs, rest) = rest.split_at_mut(64);
        let (sc, dd) = rest.split_at_mut(12);
        sc.iter_mut().for_each(|s| *s = 0);
        if max_scale != 0.0 {
            let iscale = -32.0f32 / max_scale;
            for j in 0..16 {
                let li = nearest_int(iscale * scales[j]) as i8;
                let li = (li.clamp(-32, 31) + 32) as u8;
                if j < 8 {
                    sc[j] = li & 0xF;
                } else {
                    sc[j - 8] |= (li & 0xF) << 4;
                }
                sc[j % 4 + 8] |= (li >> 4) << (2 * (j / 4));
            }
            dd.copy_from_slice(&f32_to_f16(1.0 / iscale).to_le_bytes());
        } else {
            dd.copy_from_slice(&f32_to_f16(0.0).to_le_bytes());
        }
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
        let mut lu = [0u8; QK_K];
        let mut m = 0;
        let mut hm = 1u8;
        for j in 0..QK_K {
            let mut v = l[j] as u8;
            if l[j] > 3 {
                hmask[m] |= hm;
                v = (l[j] - 4) as u8;
            }
            lu[j] = v;
            m += 1;
            if m == QK_K / 8 {
                m = 0;
                hm <<= 1;
            }
        }
        pack_2bit(&lu, qs);
    }
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
    let mut laux = [0u8; 32];
    let mut weights = [0f32; 32];
    let mut mins = [0f32; 8];
    let mut scales = [0f32; 8];
    let mut max_scale = 0f32;
    let mut max_min = 0f32;
    for j in 0..8 {
        let xs = &x[32 * j..32 * j + 32];
        let mut sum_x2 = 0f32;
        for &v in xs {
            sum_x2 += v * v;
        }
        let av_x = (sum_x2 / 32.0).sqrt();
        for (w, &v) in weights.iter_mut().zip(xs) {
            *w = av_x + v.abs();
        }
        let (s, m) =
            make_qkx2_quants(nmax, xs, &weights, &mut l[32 * j..32 * j + 32], &mut laux, rmin, 0.1, nstep, false);
        scales[j] = s;
        mins[j] = m;
        if s > max_scale {
            max_scale = s;
        }
        if m > max_min {
            max_min = m;
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
    head[0..2].copy_from_slice(&f32_to_f16(max_scale / 63.0).to_le_bytes());
    head[2..4].copy_from_slice(&f32_to_f16(max_min / 63.0).to_le_bytes());
    pack_scales_k4(&ls, &lm, &mut head[4..16]);
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
        let q = &mut y[16..144];
        for (n, qq) in q.chunks_exact_mut(32).enumerate() {
            let j = 64 * n;
            for i in 0..32 {
                qq[i] = l[j + i] | (l[j + i + 32] << 4);
            }
        }
    }
}

fn quant_q5_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(176)) {
        let mut l = [0u8; QK_K];
        quant_k4_head(x, 31, -0.5, 15, &mut y[0..16], &mut l);
        let (qh, ql) = y[16..176].split_at_mut(32);
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
}

fn quant_q6_k(src: &[f32], dst: &mut [u8]) {
    for (x, y) in src.chunks_exact(QK_K).zip(dst.chunks_exact_mut(210)) {
        let mut l = [0i8; QK_K];
        let mut scales = [0f32; 16];
        let mut max_scale = 0f32;
        let mut max_abs_scale = 0f32;
        for ib in 0..16 {
            let scale = make_qx_quants(32, &x[16 * ib..16 * ib + 16], &mut l[16 * ib..16 * ib + 16], None);
            scales[ib] = scale;
            let abs_scale = scale.abs();
            if abs_scale > max_abs_scale {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if max_abs_scale < GROUP_MAX_EPS {
            y.iter_mut().for_each(|b| *b = 0);
            continue;
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
