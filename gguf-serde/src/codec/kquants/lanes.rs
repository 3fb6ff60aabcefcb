//! Eight sub-blocks side by side: the lane-parallel versions of the scale searches in
//! [`search`](super::search) that the reference quantizers of Q2_K, Q3_K, Q4_K, Q5_K and Q6_K
//! run on every sub-block. Lane `k` of every array is sub-block `k` (`x[i][k]` its element `i`);
//! each lane performs exactly the scalar function's operations in the same order, so the results
//! are bit-identical (`lanes/tests.rs` checks each against the scalar search).

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::{GROUP_MAX_EPS, QK_K};
use crate::codec::isa::{simd, Isa};

/// Sub-blocks processed side by side by [`make_qkx2_quants_x8`].
pub(crate) const LANES: usize = 8;

/// One value per lane.
pub(crate) type Lf = [f32; LANES];
/// One level per lane.
type Li = [i32; LANES];

/// [`make_qkx_quants`](super::search::make_qkx_quants) (`make_qkx2_quants`) for 8 independent sub-blocks at once: lane `k` of every array is
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

/// `nearest_int` of each lane, clamped to `[lo, hi]` (the scalar searches' `nearest_int(v)` and
/// `clamp`).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn level_x8(
    v: std::arch::x86_64::__m256,
    lo: std::arch::x86_64::__m256i,
    hi: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let bits = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12_582_912.0)));
    let l = _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007f_ffff)), _mm256_set1_epi32(0x0040_0000));
    _mm256_min_epi32(_mm256_max_epi32(l, lo), hi)
}

/// Per lane, the first value of largest magnitude (`max`, as `max_by_abs`) and whether that
/// magnitude is below `GROUP_MAX_EPS` (`done`, all ones): the start of `make_qx_quants` and
/// `make_q3_quants`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn signed_max_x8<const N: usize>(x: &[Lf; N]) -> (std::arch::x86_64::__m256, std::arch::x86_64::__m256) {
    use std::arch::x86_64::*;
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    let mut max = _mm256_setzero_ps();
    let mut amax = _mm256_setzero_ps();
    for row in x.iter() {
        // SAFETY: a row is [f32; 8].
        let v = _mm256_loadu_ps(row.as_ptr());
        let ax = _mm256_and_ps(v, absmask);
        let gt = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, ax, gt);
        max = _mm256_blendv_ps(max, v, gt);
    }
    (max, _mm256_cmp_ps(amax, _mm256_set1_ps(GROUP_MAX_EPS), _CMP_LT_OQ))
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
    let absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
    // SAFETY (all loads/stores): x[i], w[i] are [f32; 8]; lv/laux rows are [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    let level = |v: __m256| level_x8(v, zi, nmax_v);
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

/// [`qkx2_x8_body`], with its AVX2 build when `isa` has AVX2 (same operations, wider registers;
/// no fused multiply-add is ever formed).
#[allow(clippy::too_many_arguments)]
pub(crate) fn make_qkx2_quants_x8<const N: usize, const MAD: bool>(
    isa: Isa,
    nmax: i32,
    x: &[Lf; N],
    w: &[Lf; N],
    l_out: &mut [[u8; LANES]; N],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
) -> (Lf, Lf) {
    simd!(if isa.avx2() {
        qkx2_x8_avx2::<N, MAD>(nmax, x, w, l_out, rmin, rdelta, nstep)
    } else {
        qkx2_x8_body::<N, MAD>(nmax, x, w, l_out, rmin, rdelta, nstep)
    })
}

/// [`make_qx_quants`](super::search::make_qx_quants) for 8 sub-blocks of `N` at once with AVX2,
/// lane `k` = sub-block `k`, `x[i][k]` its element `i`, with the importance weights `w[i][k]`, or
/// `x²` without; the same operations per lane in the same order as the scalar function. Returns
/// the scales and writes the levels to `l_out[i][k]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn qx_x8_avx2<const N: usize>(nmax: i32, x: &[Lf; N], w: Option<&[Lf; N]>, l_out: &mut [[i8; LANES]; N]) -> Lf {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let (lo, hi) = (_mm256_set1_epi32(-nmax), _mm256_set1_epi32(nmax - 1));
    let nmax_v = _mm256_set1_epi32(nmax);
    // SAFETY (all loads/stores): rows are [f32; 8] / [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    let level = |v: __m256| level_x8(v, lo, hi);
    let (max, done) = signed_max_x8(x);
    // Sums for one candidate inverse scale.
    let sums = |isc: __m256| {
        let mut sumlx = zero;
        let mut suml2 = zero;
        for (i, row) in x.iter().enumerate() {
            let v = ld(row);
            let lf = _mm256_cvtepi32_ps(level(_mm256_mul_ps(isc, v)));
            let w = match w {
                Some(w) => ld(&w[i]),
                None => _mm256_mul_ps(v, v),
            };
            sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(_mm256_mul_ps(w, v), lf));
            suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w, lf), lf));
        }
        (sumlx, suml2)
    };
    let mut lv = [[0i32; LANES]; N];
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
    for i in 0..N {
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

/// [`make_qx_quants`](super::search::make_qx_quants) with importance weights for 8 blocks of `N`
/// side by side (lane `k` = block `k`, `x[i][k]` its element `i`, `w[i][k]` that element's
/// weight): [`qx_x8_avx2`] when `isa` has AVX2, else the scalar search lane by lane. The results
/// are the scalar function's, bit for bit. Returns the scales and writes the levels (`0..2 nmax`)
/// to `l_out[i][k]`.
pub(crate) fn make_qx_quants_x8<const N: usize>(
    isa: Isa,
    nmax: i32,
    x: &[Lf; N],
    w: &[Lf; N],
    l_out: &mut [[i8; LANES]; N],
) -> Lf {
    simd!(if isa.avx2() {
        qx_x8_avx2::<N>(nmax, x, Some(w), l_out)
    } else {
        let mut scales = [0f32; LANES];
        for k in 0..LANES {
            let xs: [f32; N] = std::array::from_fn(|i| x[i][k]);
            let ws: [f32; N] = std::array::from_fn(|i| w[i][k]);
            let mut ls = [0i8; N];
            scales[k] = super::search::make_qx_quants(nmax, &xs, &mut ls, Some(&ws));
            for i in 0..N {
                l_out[i][k] = ls[i];
            }
        }
        scales
    })
}

/// [`make_q3_quants`](super::search::make_q3_quants) for 8 sub-blocks of 16 at once with AVX2 (lane `k` = sub-block `k`), the
/// same operations per lane in the same order. A lane whose refinement pass changes nothing would
/// change nothing in a further pass either, so passes run until no lane changes (at most 5).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn q3_x8_avx2(nmax: i32, x: &[Lf; 16], l_out: &mut [[i8; LANES]; 16]) -> Lf {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let (lo, hi) = (_mm256_set1_epi32(-nmax), _mm256_set1_epi32(nmax - 1));
    // SAFETY (all loads/stores): rows are [f32; 8] / [i32; 8].
    let ld = |a: &Lf| _mm256_loadu_ps(a.as_ptr());
    let level = |v: __m256| level_x8(v, lo, hi);
    let (max, done) = signed_max_x8(x);
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
/// time through `kernel(half, x, l_out)`: lane `k` of its arguments is sub-block `8 × half + k`,
/// `x[i][k]` that sub-block's element `i`; it returns the 8 scales and writes the levels to
/// `l_out[i][k]`.
#[inline(always)]
fn subblocks_x8(
    x: &[f32],
    l: &mut [i8; QK_K],
    kernel: impl Fn(usize, &[Lf; 16], &mut [[i8; LANES]; 16]) -> Lf,
) -> [f32; 16] {
    let mut scales = [0f32; 16];
    for half in 0..2 {
        let mut xt = [[0f32; LANES]; 16];
        for k in 0..LANES {
            for i in 0..16 {
                xt[i][k] = x[16 * (8 * half + k) + i];
            }
        }
        let mut lt = [[0i8; LANES]; 16];
        let s8 = kernel(half, &xt, &mut lt);
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

/// `make_qx_quants(nmax, …)` with importance weights on the 16 sub-blocks of 16 of one
/// super-block (Q3_K's and Q6_K's importance paths): `weights(j)` gives sub-block `j`'s weights;
/// eight sub-blocks at a time side by side ([`make_qx_quants_x8`], the scalar results bit for
/// bit). Returns the 16 scales and writes the levels (`0..2 nmax`) to `l`.
pub(crate) fn weighted_qx_x16(
    isa: Isa,
    nmax: i32,
    x: &[f32; QK_K],
    weights: impl Fn(usize) -> [f32; 16],
    l: &mut [i8; QK_K],
) -> [f32; 16] {
    subblocks_x8(x, l, |half, xt, lt| {
        let mut wt = [[0f32; LANES]; 16];
        for k in 0..LANES {
            let w = weights(8 * half + k);
            for i in 0..16 {
                wt[i][k] = w[i];
            }
        }
        make_qx_quants_x8::<16>(isa, nmax, xt, &wt, lt)
    })
}

/// A scale search over one sub-block of 16: the reference quantizers' uses of them.
#[derive(Clone, Copy)]
pub(super) enum Search16 {
    /// Q3_K's `make_q3_quants(16, 4, …, true)`.
    Q3,
    /// Q6_K's `make_qx_quants(16, 32, …, 1, NULL)`.
    Q6,
}

/// The 16 sub-block scales and levels of one super-block (sub-blocks of 16) by `search`, 8
/// sub-blocks at a time with AVX2 when `isa` has it.
#[inline(always)]
pub(super) fn quants_x16(isa: Isa, search: Search16, x: &[f32; QK_K], l: &mut [i8; QK_K]) -> [f32; 16] {
    simd!(if isa.avx2() {
        match search {
            Search16::Q3 => subblocks_x8(x, l, |_, xt, lt| q3_x8_avx2(4, xt, lt)),
            Search16::Q6 => subblocks_x8(x, l, |_, xt, lt| qx_x8_avx2::<16>(32, xt, None, lt)),
        }
    } else {
        let mut scales = [0f32; 16];
        for (j, (xs, ls)) in x.chunks_exact(16).zip(l.chunks_exact_mut(16)).enumerate() {
            scales[j] = match search {
                Search16::Q3 => super::search::make_q3_quants(4, xs, ls),
                Search16::Q6 => super::search::make_qx_quants(32, xs, ls, None),
            };
        }
        scales
    })
}

#[cfg(test)]
mod tests;
