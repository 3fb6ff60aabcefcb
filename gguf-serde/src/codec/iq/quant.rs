//! Quantization of the grid i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, as
//! ggml's `quantize_row_iq2_xxs_impl`, `quantize_row_iq2_xs_impl`, `quantize_row_iq2_s_impl`,
//! `quantize_row_iq3_xxs_impl` (grid 256), `quantize_row_iq3_s_impl`, `quantize_row_iq1_s_impl`
//! and `quantize_row_iq1_m_impl` (`ggml-quants.c`), which `quantize_iq*` and
//! `ggml_quantize_chunk` run. Every float expression is evaluated in the reference's order, so
//! the bytes are identical to ggml's (without FMA contraction).
//!
//! The five IQ2/IQ3 types share one sub-block search ([`grid_search`]): signs folded out, a scan
//! of trial scales snapping each group of levels to the grid (or its nearest grid point,
//! [`best_neighbour`]), then a refit. The IQ1 types split each sub-block's sorted values into
//! three groups exhaustively.
//!
//! Where ggml aborts the process (`GGML_ASSERT`, `GGML_ABORT`) or reads out of bounds, these
//! functions fail with a reason instead; that only happens for blocks with NaN, infinite or
//! huge values, or NaN/infinite weights.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::tables::{Grid4, Grid8, GridTables, Lookup, Tables};
use super::{block_iq1_m, block_iq1_s, block_iq2_s, block_iq2_xs, block_iq2_xxs, block_iq3_s, block_iq3_xxs};
use crate::codec::block::{F16, U16, U32};
use crate::codec::isa::Isa;
use crate::codec::kquants::search::make_qp_quants;
use crate::codec::scalar::nearest_int;

/// Why ggml's quantizer would abort on a block.
pub(crate) type Fail = &'static str;

const NO_NEIGHBOUR: Fail =
    "no grid point at a finite weighted distance (ggml: GGML_ASSERT(grid_index >= 0) in iq*_find_best_neighbour)";
const NO_NEIGHBOUR_IQ1: Fail = "no grid point at a finite weighted distance (ggml's iq1_find_best_neighbour2 then \
                                searches the whole grid reading past the block, and asserts)";
const OFF_GRID: Fail = "levels not on the grid (ggml: \"Oops: found point not on grid\", GGML_ABORT)";
const BAD_SCALE: Fail = "NaN sub-block scale (ggml: GGML_ASSERT(scale >= 0))";
const NO_WEIGHTS: Fail = "no importance weights (ggml: GGML_ASSERT(quant_weights))";

/// `GROUP_MAX_EPS` (IQ2_XXS, IQ2_XS).
const EPS: f32 = 1e-15;
/// `GROUP_MAX_EPS_IQ2_S` and `GROUP_MAX_EPS_IQ3_XXS`.
const EPS_1E8: f32 = 1e-8;
/// IQ3_S skips a sub-block only when its maximum is 0 (`!max`): for a maximum that is not
/// negative, the same as `max <` the smallest subnormal.
const EPS_ZERO: f32 = f32::from_bits(1);
/// `GROUP_MAX_EPS_IQ1_S`, `GROUP_MAX_EPS_IQ1_M`.
const EPS_IQ1_S: f32 = 1e-12;
const EPS_IQ1_M: f32 = 1e-7;

/// C's `MAX(a, b)`: `a > b ? a : b` (a NaN `b` replaces `a`).
#[inline(always)]
fn c_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `Σ x²` in order.
fn sum_squares(x: &[f32]) -> f32 {
    let mut s = 0f32;
    for &v in x {
        s += v * v;
    }
    s
}

/// The importance weights of one sub-block: `qw · sqrt(sigma2 + x²)` with weights, else
/// `unweighted(sigma2, x)` (ggml's fallback of each type).
fn sub_weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, unweighted: fn(f32, f32) -> f32, out: &mut [f32]) {
    match qw {
        Some(qw) => {
            for ((w, &q), &x) in out.iter_mut().zip(qw).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
        }
        None => {
            for (w, &x) in out.iter_mut().zip(xb) {
                *w = unweighted(sigma2, x);
            }
        }
    }
}

/// Folds the signs out of each group of 8: `xval = |x|` (ggml's `x >= 0 ? x : -x`), sign bit `i`
/// set for a negative `x_i`. With `even` (IQ2_XXS, IQ2_XS, IQ3_XXS: 7 stored bits, the 8th
/// implied by even parity), an odd count of negatives flips back the value of least `w·x²`.
// Indexing: `8 * k + i < 8 * signs.len() <= xb.len()` (callers pass matching sizes).
#[allow(clippy::indexing_slicing)]
fn fold_signs(xb: &[f32], weight: &[f32], xval: &mut [f32], signs: &mut [u8], even: bool) {
    for (k, sk) in signs.iter_mut().enumerate() {
        let mut nflip = 0;
        let mut s = 0u8;
        for i in 0..8 {
            let v = xb[8 * k + i];
            if v >= 0.0 {
                xval[8 * k + i] = v;
            } else {
                xval[8 * k + i] = -v;
                nflip += 1;
                s |= 1 << i;
            }
        }
        if even && nflip % 2 == 1 {
            let mut imin = 0;
            let mut min = weight[8 * k] * xb[8 * k] * xb[8 * k];
            for i in 1..8 {
                let ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                if ax < min {
                    min = ax;
                    imin = i;
                }
            }
            xval[8 * k + imin] = -xval[8 * k + imin];
            s ^= 1 << imin;
        }
        *sk = if even { s & 127 } else { s };
    }
}

/// `iq2_find_best_neighbour` / `iq3_find_best_neighbour` (`q` = the coordinate) and
/// `iq1_find_best_neighbour2` (`q` = `xg[level]`): the neighbour whose `scale · q` is nearest
/// `xval` in weighted squared distance (first of equals, strictly below `FLT_MAX`); its levels go
/// to `l`. None found fails with `fail`.
#[inline]
fn best_neighbour<const D: usize>(
    t: &GridTables<D>,
    nb: &[u16],
    (xval, w): (&[f32], &[f32]),
    scale: f32,
    q: impl Fn(i8) -> f32,
    l: &mut [i8],
    fail: Fail,
) -> Result<usize, Fail> {
    let mut best_d2 = f32::MAX;
    let mut best = None;
    for &j in nb {
        let mut d2 = 0f32;
        for ((&p, &x), &wi) in t.point(j as usize).iter().zip(xval).zip(w) {
            let diff = scale * q(p) - x;
            d2 += wi * diff * diff;
        }
        if d2 < best_d2 {
            best_d2 = d2;
            best = Some(j as usize);
        }
    }
    let j = best.ok_or(fail)?;
    for (li, &p) in l.iter_mut().zip(t.point(j)) {
        *li = (p - 1) / 2;
    }
    Ok(j)
}

/// [`best_neighbour`] with the grid coordinates themselves as `q` (the IQ2 and IQ3 searches), eight
/// neighbours at a time in AVX2 lanes when `isa` has AVX2 (8-coordinate and 4-coordinate grids): each lane sums its neighbour's
/// weighted squared distance in the scalar order (no fused multiply-add), and the lanes are then
/// compared in list order with the same strict `<`, so the neighbour chosen is the scalar one.
#[inline]
fn best_grid_neighbour<const D: usize>(
    isa: Isa,
    t: &GridTables<D>,
    nb: &[u16],
    (xval, w): (&[f32], &[f32]),
    scale: f32,
    l: &mut [i8],
) -> Result<usize, Fail> {
    #[cfg(target_arch = "x86_64")]
    if (D == 8 || D == 4) && isa.avx2() {
        // SAFETY: the CPU has AVX2 (checked above).
        #[allow(unsafe_code)]
        let best = unsafe {
            if D == 8 {
                avx2::best_neighbour8(t, nb, xval, w, scale)
            } else {
                avx2::best_neighbour4(t, nb, xval, w, scale)
            }
        };
        let j = best.ok_or(NO_NEIGHBOUR)?;
        for (li, &p) in l.iter_mut().zip(t.point(j)) {
            *li = (p - 1) / 2;
        }
        return Ok(j);
    }
    best_neighbour(t, nb, (xval, w), scale, f32::from, l, NO_NEIGHBOUR)
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::GridTables;
    use std::arch::x86_64::*;

    /// The first neighbour in `nb` of least weighted squared distance `Σ w_i·(scale·p_i − x_i)²`
    /// (summed in `i` order, each term `(w_i·diff)·diff`), strictly below `f32::MAX`; `None` if
    /// none is. `t` is an 8-coordinate grid; `xval` and `w` hold 8 values.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn best_neighbour8<const D: usize>(
        t: &GridTables<D>,
        nb: &[u16],
        xval: &[f32],
        w: &[f32],
        scale: f32,
    ) -> Option<usize> {
        scan::<8>(nb, xval, w, scale, |chunk| {
            // Row k: neighbour k's 8 coordinates.
            let r: [__m256; 8] = std::array::from_fn(|k| match t.point_f32(row(chunk, k)) {
                // SAFETY: 8 floats.
                Some(p) if p.len() == 8 => _mm256_loadu_ps(p.as_ptr()),
                _ => _mm256_set1_ps(1.0),
            });
            // Transpose: column i, lane k = neighbour k's coordinate i.
            let t0 = _mm256_unpacklo_ps(r[0], r[1]);
            let t1 = _mm256_unpackhi_ps(r[0], r[1]);
            let t2 = _mm256_unpacklo_ps(r[2], r[3]);
            let t3 = _mm256_unpackhi_ps(r[2], r[3]);
            let t4 = _mm256_unpacklo_ps(r[4], r[5]);
            let t5 = _mm256_unpackhi_ps(r[4], r[5]);
            let t6 = _mm256_unpacklo_ps(r[6], r[7]);
            let t7 = _mm256_unpackhi_ps(r[6], r[7]);
            let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
            let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
            let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
            let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
            let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
            let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
            let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
            let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
            [
                _mm256_permute2f128_ps::<0x20>(u0, u4),
                _mm256_permute2f128_ps::<0x20>(u1, u5),
                _mm256_permute2f128_ps::<0x20>(u2, u6),
                _mm256_permute2f128_ps::<0x20>(u3, u7),
                _mm256_permute2f128_ps::<0x31>(u0, u4),
                _mm256_permute2f128_ps::<0x31>(u1, u5),
                _mm256_permute2f128_ps::<0x31>(u2, u6),
                _mm256_permute2f128_ps::<0x31>(u3, u7),
            ]
        })
    }

    /// [`best_neighbour8`] for a 4-coordinate grid (`xval` and `w` hold 4 values).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn best_neighbour4<const D: usize>(
        t: &GridTables<D>,
        nb: &[u16],
        xval: &[f32],
        w: &[f32],
        scale: f32,
    ) -> Option<usize> {
        scan::<4>(nb, xval, w, scale, |chunk| {
            // Row k: neighbour k's 4 coordinates.
            let r: [__m128; 8] = std::array::from_fn(|k| match t.point_f32(row(chunk, k)) {
                // SAFETY: 4 floats.
                Some(p) if p.len() == 4 => _mm_loadu_ps(p.as_ptr()),
                _ => _mm_set1_ps(1.0),
            });
            // Rows k and k + 4 in the two halves, then a 4×4 transpose within each half:
            // column i, lane k = neighbour k's coordinate i.
            let a0 = _mm256_set_m128(r[4], r[0]);
            let a1 = _mm256_set_m128(r[5], r[1]);
            let a2 = _mm256_set_m128(r[6], r[2]);
            let a3 = _mm256_set_m128(r[7], r[3]);
            let t0 = _mm256_unpacklo_ps(a0, a1);
            let t1 = _mm256_unpackhi_ps(a0, a1);
            let t2 = _mm256_unpacklo_ps(a2, a3);
            let t3 = _mm256_unpackhi_ps(a2, a3);
            [
                _mm256_shuffle_ps::<0x44>(t0, t2),
                _mm256_shuffle_ps::<0xEE>(t0, t2),
                _mm256_shuffle_ps::<0x44>(t1, t3),
                _mm256_shuffle_ps::<0xEE>(t1, t3),
            ]
        })
    }

    /// The grid point number of lane `k` of a chunk of up to 8 neighbours: the chunk's last past
    /// its end (those lanes are computed, never chosen).
    #[inline]
    fn row(chunk: &[u16], k: usize) -> usize {
        usize::from(chunk.get(k).or(chunk.last()).copied().unwrap_or(0))
    }

    /// The search shared by [`best_neighbour8`] and [`best_neighbour4`]: `columns(chunk)` gives,
    /// for up to 8 neighbours, each coordinate `i` as a vector whose lane `k` is neighbour `k`'s;
    /// each lane's distance is summed in coordinate order, then the lanes are compared in list
    /// order with a strict `<`, as the scalar loop compares the neighbours.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn scan<const N: usize>(
        nb: &[u16],
        xval: &[f32],
        w: &[f32],
        scale: f32,
        columns: impl Fn(&[u16]) -> [__m256; N],
    ) -> Option<usize> {
        let sc = _mm256_set1_ps(scale);
        let xs: [__m256; N] = std::array::from_fn(|i| _mm256_set1_ps(xval.get(i).copied().unwrap_or(0.0)));
        let ws: [__m256; N] = std::array::from_fn(|i| _mm256_set1_ps(w.get(i).copied().unwrap_or(0.0)));
        let mut best_d2 = f32::MAX;
        let mut best = None;
        for chunk in nb.chunks(8) {
            let mut d2 = _mm256_setzero_ps();
            for ((&ci, &xi), &wi) in columns(chunk).iter().zip(&xs).zip(&ws) {
                let diff = _mm256_sub_ps(_mm256_mul_ps(sc, ci), xi);
                d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(wi, diff), diff));
            }
            let mut d = [0f32; 8];
            _mm256_storeu_ps(d.as_mut_ptr(), d2);
            for (&dk, &j) in d.iter().zip(chunk) {
                if dk < best_d2 {
                    best_d2 = dk;
                    best = Some(usize::from(j));
                }
            }
        }
        best
    }
}

/// `Σ w·x·q` and `Σ w·q²` with `q = 2l + 1`.
fn fit(weight: &[f32], xval: &[f32], l: &[i8]) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0f32, 0f32);
    for ((&w, &x), &li) in weight.iter().zip(xval).zip(l) {
        let q = (2 * i32::from(li) + 1) as f32;
        sumqx += w * x * q;
        sumq2 += w * q * q;
    }
    (sumqx, sumq2)
}

/// Where the trial scales start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// IQ2_XXS: from `make_qp_quants(…, kMaxQ + 1, …)`, trials around `scale · kMaxQ`.
    QpQuants,
    /// The others: `max / (2·kMaxQ − 1)`, trials around `max`.
    Max,
}

/// Which groups the refit after the trials snaps again with the best scale.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Refit {
    /// IQ2_XXS: every group, whenever the scale is positive.
    All,
    /// IQ2_XS, IQ2_S, IQ3_XXS: the groups that were off the grid, if any.
    OffGrid,
    /// IQ3_S: every group if any was off the grid (or no trial won).
    AllIfOffGrid,
}

/// One type's sub-block search over the grid `G`.
struct Search<G> {
    grid: G,
    /// `kMaxQ`: levels `0..kMaxQ`.
    kmaxq: i32,
    /// Trials `is` in `-trials..=trials` at `(2·kMaxQ − 1 + is·step) / max`.
    trials: i32,
    step: f32,
    start: Start,
    refit: Refit,
    /// A sub-block whose largest `xval` is below this is all zeros.
    eps: f32,
    /// Even-parity signs (7 bits stored).
    even: bool,
    /// The super-block scale's fudge factor (`d · fudge` is stored).
    fudge: f32,
    /// `sigma2` is `Σx² / 256` (IQ2_XXS, IQ2_XS) or twice that.
    sigma2_times: f32,
    /// The weights without an importance matrix, from `(sigma2, x)`.
    unweighted: fn(f32, f32) -> f32,
}

/// `x²`, the weights of IQ3 (and IQ1_M) without importance weights.
fn square(_: f32, x: f32) -> f32 {
    x * x
}

/// No weights: the types ggml requires them for.
fn none(_: f32, _: f32) -> f32 {
    0.0
}

/// `sigma2` of a super-block: `times · Σx² / 256`.
fn block_sigma2(x: &[f32; 256], times: f32) -> f32 {
    times * sum_squares(x) / 256.0
}

const IQ2_XXS: Search<Grid8> = Search {
    grid: Grid8::Iq2Xxs,
    kmaxq: 3,
    trials: 6,
    step: 0.1,
    start: Start::QpQuants,
    refit: Refit::All,
    eps: EPS,
    even: true,
    fudge: 1.0,
    sigma2_times: 1.0,
    unweighted: none,
};
const IQ2_XS: Search<Grid8> = Search {
    grid: Grid8::Iq2Xs,
    kmaxq: 3,
    trials: 9,
    step: 0.1,
    start: Start::Max,
    refit: Refit::OffGrid,
    eps: EPS,
    even: true,
    fudge: 1.0,
    sigma2_times: 1.0,
    unweighted: none,
};
const IQ2_S: Search<Grid8> = Search {
    grid: Grid8::Iq2S,
    kmaxq: 3,
    trials: 9,
    step: 0.1,
    start: Start::Max,
    refit: Refit::OffGrid,
    eps: EPS_1E8,
    even: false,
    fudge: 0.9875,
    sigma2_times: 2.0,
    unweighted: |s2, x| 0.25 * s2 + x * x,
};
const IQ3_XXS: Search<Grid4> = Search {
    grid: Grid4::Iq3Xxs,
    kmaxq: 8,
    trials: 15,
    step: 0.2,
    start: Start::Max,
    refit: Refit::OffGrid,
    eps: EPS_1E8,
    even: true,
    fudge: 1.0125,
    sigma2_times: 2.0,
    unweighted: square,
};
const IQ3_S: Search<Grid4> = Search {
    grid: Grid4::Iq3S,
    kmaxq: 8,
    trials: 9,
    step: 0.2,
    start: Start::Max,
    refit: Refit::AllIfOffGrid,
    eps: EPS_ZERO,
    even: false,
    fudge: 1.033,
    sigma2_times: 2.0,
    unweighted: square,
};

/// A quantized sub-block: its scale and each group's grid point.
struct Sub {
    scale: f32,
    index: [u16; 8],
}

/// One sub-block of `xb.len()` values (16 or 32) with their `weight`s: signs into `signs` (one
/// byte per 8 values), then the scale search. `None` for a sub-block ggml leaves at zero.
// Indexing: groups of `dims` within fixed arrays of 32, `k < 8`.
#[allow(clippy::indexing_slicing)]
fn grid_sub<const D: usize, G: Tables<D>>(
    isa: Isa,
    s: &Search<G>,
    xb: &[f32],
    weight: &[f32],
    signs: &mut [u8],
) -> Result<Option<Sub>, Fail> {
    let t = s.grid.tables();
    let n = xb.len();
    let dims = D;
    let groups = n / dims;
    let mut xval = [0f32; 32];
    let mut waux = [0f32; 32];
    for (a, &w) in waux.iter_mut().zip(weight) {
        *a = w.sqrt();
    }
    let xval = &mut xval[..n];
    fold_signs(xb, weight, xval, signs, s.even);
    let mut max = xval[0];
    for &v in &xval[1..] {
        max = c_max(max, v);
    }
    if max < s.eps {
        return Ok(None);
    }
    let kq = s.kmaxq;
    let top = (2 * kq - 1) as f32;
    let mut l = [0i8; 32];
    let l = &mut l[..n];
    let (mut scale, base) = match s.start {
        Start::QpQuants => {
            let mut lq = [0u8; 32];
            let scale = make_qp_quants(kq + 1, xval, &mut lq[..n], weight);
            for (a, &b) in l.iter_mut().zip(&lq) {
                *a = b as i8;
            }
            let eff_max = scale * kq as f32;
            if eff_max <= 0.0 {
                return Ok(None);
            }
            (scale, eff_max)
        }
        Start::Max => (max / top, max),
    };
    let mut on_grid = [s.refit != Refit::AllIfOffGrid; 8];
    let mut on_aux = [true; 8];
    let mut laux = [0i8; 32];
    let laux = &mut laux[..n];
    let mut best = 0f32;
    for is in -s.trials..=s.trials {
        let id = (top + is as f32 * s.step) / base;
        let this_scale = 1.0 / id;
        for k in 0..groups {
            let g = k * dims..(k + 1) * dims;
            for i in g.clone() {
                laux[i] = nearest_int(0.5 * (id * xval[i] - 1.0)).clamp(0, kq - 1) as i8;
            }
            on_aux[k] = true;
            match t.lookup(&laux[g.clone()]) {
                Lookup::On(_) => {}
                Lookup::Off(nb) => {
                    on_aux[k] = false;
                    best_grid_neighbour(isa, t, nb, (&xval[g.clone()], &waux[g.clone()]), this_scale, &mut laux[g])?;
                }
                Lookup::Outside => return Err(OFF_GRID),
            }
        }
        let (sumqx, sumq2) = fit(weight, xval, laux);
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            l.copy_from_slice(laux);
            on_grid = on_aux;
        }
    }
    let any_off = on_grid[..groups].iter().any(|&g| !g);
    if scale > 0.0 && (s.refit == Refit::All || any_off) {
        let id = 1.0 / scale;
        for k in 0..groups {
            if s.refit == Refit::OffGrid && on_grid[k] {
                continue;
            }
            let g = k * dims..(k + 1) * dims;
            for i in g.clone() {
                l[i] = nearest_int(0.5 * (id * xval[i] - 1.0)).clamp(0, kq - 1) as i8;
            }
            match t.lookup(&l[g.clone()]) {
                Lookup::On(_) => {}
                Lookup::Off(nb) => {
                    best_grid_neighbour(isa, t, nb, (&xval[g.clone()], &waux[g.clone()]), scale, &mut l[g])?;
                }
                Lookup::Outside => return Err(OFF_GRID),
            }
        }
        let (sumqx, sumq2) = fit(weight, xval, l);
        if sumq2 > 0.0 {
            scale = sumqx / sumq2;
        }
    }
    if scale < 0.0 {
        scale = -scale;
        let mask = if s.even { 127 } else { 255 };
        for sk in signs.iter_mut() {
            *sk = !*sk & mask;
        }
    }
    let mut index = [0u16; 8];
    for (k, ix) in index.iter_mut().enumerate().take(groups) {
        match t.lookup(&l[k * dims..(k + 1) * dims]) {
            Lookup::On(j) => *ix = j as u16,
            _ => return Err(OFF_GRID),
        }
    }
    if scale.is_nan() || scale < 0.0 {
        return Err(BAD_SCALE);
    }
    Ok(Some(Sub { scale, index }))
}

/// The super-block part shared by the IQ2/IQ3 types: each sub-block of `SUB` values searched
/// (`emit(ib, sub, signs)` stores it), then `d = max_scale / 31` (times the fudge factor) and the
/// 4-bit sub-block scales `nearest_int((scale/d − 1)/2)`, given to `scale(ib, l)`. Returns the
/// f16 `d` to store, or `None` when every sub-block is zero (ggml then leaves the block zero).
// Indexing: `ib < 256 / SUB <= 16` into arrays of 16.
#[allow(clippy::indexing_slicing)]
fn grid_block<const SUB: usize, const D: usize, G: Tables<D>>(
    isa: Isa,
    s: &Search<G>,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    mut emit: impl FnMut(usize, &Sub, &[u8]),
    mut scale: impl FnMut(usize, u8),
) -> Result<Option<f32>, Fail> {
    let sigma2 = block_sigma2(x, s.sigma2_times);
    let mut scales = [0f32; 16];
    let mut max_scale = 0f32;
    for (ib, xb) in x.chunks_exact(SUB).enumerate() {
        let mut weight = [0f32; 32];
        let weight = &mut weight[..SUB];
        sub_weights(xb, qw.and_then(|w| w.get(SUB * ib..SUB * (ib + 1))), sigma2, s.unweighted, weight);
        let mut signs = [0u8; 4];
        let signs = &mut signs[..SUB / 8];
        if let Some(sub) = grid_sub(isa, s, xb, weight, signs)? {
            emit(ib, &sub, signs);
            scales[ib] = sub.scale;
            max_scale = c_max(max_scale, sub.scale);
        }
    }
    if max_scale == 0.0 {
        return Ok(None);
    }
    let d = max_scale / 31.0;
    let id = 1.0 / d;
    for (ib, &sc) in scales.iter().enumerate().take(256 / SUB) {
        scale(ib, nearest_int(0.5 * (id * sc - 1.0)).clamp(0, 15) as u8);
    }
    Ok(Some(d * s.fudge))
}

/// IQ2_XXS (`quantize_row_iq2_xxs_impl`; ggml requires the weights).
// Indexing: `ib < 8`, `k < 4` into fixed arrays.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq2_xxs(
    isa: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq2_xxs,
) -> Result<(), Fail> {
    let qw = qw.ok_or(NO_WEIGHTS)?;
    let mut q2 = [0u32; 16];
    let mut sc = [0u32; 8];
    let d = grid_block::<32, _, _>(
        isa,
        &IQ2_XXS,
        x,
        Some(qw),
        |ib, sub, signs| {
            for k in 0..4 {
                q2[2 * ib] |= u32::from(sub.index[k]) << (8 * k);
                q2[2 * ib + 1] |= u32::from(signs[k]) << (7 * k);
            }
        },
        |ib, l| sc[ib] = u32::from(l) << 28,
    )?;
    b.d = F16::new(0.0);
    b.qs = [U32::from_bits(0); 16];
    if let Some(d) = d {
        b.d = F16::new(d);
        for ib in 0..8 {
            q2[2 * ib + 1] |= sc[ib];
        }
        b.qs = q2.map(U32::from_bits);
    }
    Ok(())
}

/// IQ2_XS (`quantize_row_iq2_xs_impl`; ggml requires the weights).
// Indexing: `ib < 16`, `k < 2` into fixed arrays.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq2_xs(
    isa: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq2_xs,
) -> Result<(), Fail> {
    let qw = qw.ok_or(NO_WEIGHTS)?;
    let mut q2 = [0u16; 32];
    let mut scales = [0u8; 8];
    let d = grid_block::<16, _, _>(
        isa,
        &IQ2_XS,
        x,
        Some(qw),
        |ib, sub, signs| {
            for k in 0..2 {
                q2[2 * ib + k] = sub.index[k] | (u16::from(signs[k]) << 9);
            }
        },
        |ib, l| scales[ib / 2] |= l << (4 * (ib % 2)),
    )?;
    b.d = F16::new(0.0);
    b.scales = [0; 8];
    b.qs = [U16::from_bits(0); 32];
    if let Some(d) = d {
        b.d = F16::new(d);
        b.scales = scales;
        b.qs = q2.map(U16::from_bits);
    }
    Ok(())
}

/// IQ2_S (`quantize_row_iq2_s_impl`; without weights `0.25·sigma2 + x²`).
// Indexing: `i8 < 32`, `i8 / 4 < 8`, `ib / 2 < 8`.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq2_s(isa: Isa, x: &[f32; 256], qw: Option<&[f32; 256]>, b: &mut block_iq2_s) -> Result<(), Fail> {
    let mut out = block_iq2_s { d: F16::new(0.0), qs: [0; 32], signs: [0; 32], qh: [0; 8], scales: [0; 8] };
    let d = grid_block::<16, _, _>(
        isa,
        &IQ2_S,
        x,
        qw,
        |ib, sub, signs| {
            for k in 0..2 {
                let i8 = 2 * ib + k;
                let g = sub.index[k];
                out.qs[i8] = g as u8;
                out.qh[i8 / 4] |= ((g >> 8) as u8) << (2 * (i8 % 4));
                out.signs[i8] = signs[k];
            }
        },
        |ib, l| out.scales[ib / 2] |= l << (4 * (ib % 2)),
    )?;
    if let Some(d) = d {
        out.d = F16::new(d);
    } else {
        out.scales = [0; 8];
    }
    *b = out;
    Ok(())
}

/// IQ3_XXS (`quantize_row_iq3_xxs_impl` with grid 256; without weights `x²`).
// Indexing: `8 * ib + k < 64`, `ib < 8`.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq3_xxs(
    isa: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq3_xxs,
) -> Result<(), Fail> {
    let mut qs = [0u8; 64];
    let mut ss = [0u32; 8];
    let mut sc = [0u32; 8];
    let d = grid_block::<32, _, _>(
        isa,
        &IQ3_XXS,
        x,
        qw,
        |ib, sub, signs| {
            for k in 0..8 {
                qs[8 * ib + k] = sub.index[k] as u8;
            }
            ss[ib] = u32::from(signs[0])
                | (u32::from(signs[1]) << 7)
                | (u32::from(signs[2]) << 14)
                | (u32::from(signs[3]) << 21);
        },
        |ib, l| sc[ib] = u32::from(l) << 28,
    )?;
    b.d = F16::new(0.0);
    b.qs = [0; 64];
    b.scales_and_signs = [U32::from_bits(0); 8];
    if let Some(d) = d {
        b.d = F16::new(d);
        b.qs = qs;
        for (s, c) in ss.iter_mut().zip(sc) {
            *s |= c;
        }
        b.scales_and_signs = ss.map(U32::from_bits);
    }
    Ok(())
}

/// IQ3_S (`quantize_row_iq3_s_impl` with block size 32; without weights `x²`).
// Indexing: `8 * stored + k < 64`, `4 * stored + 4 <= 32` (`stored <= ib < 8`), `ib / 2 < 4`.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq3_s(isa: Isa, x: &[f32; 256], qw: Option<&[f32; 256]>, b: &mut block_iq3_s) -> Result<(), Fail> {
    let mut out = block_iq3_s { d: F16::new(0.0), qs: [0; 64], qh: [0; 8], signs: [0; 32], scales: [0; 4] };
    let mut stored = 0;
    let d = grid_block::<32, _, _>(
        isa,
        &IQ3_S,
        x,
        qw,
        |ib, sub, signs| {
            // ggml advances its `qs` and `signs` pointers only past the sub-blocks it stores
            // (a zero sub-block `continue`s before), so they pack at the front; `qh` is indexed
            // by the sub-block.
            for k in 0..8 {
                let g = sub.index[k];
                out.qs[8 * stored + k] = g as u8;
                out.qh[ib] |= ((g >> 8) as u8) << k;
            }
            out.signs[4 * stored..4 * stored + 4].copy_from_slice(signs);
            stored += 1;
        },
        |ib, l| out.scales[ib / 2] |= l << (4 * (ib % 2)),
    )?;
    if let Some(d) = d {
        out.d = F16::new(d);
    } else {
        out.scales = [0; 4];
    }
    *b = out;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// IQ1_S, IQ1_M.

/// `x_p` and `x_m` of the IQ1 quantizers: the three levels `-1, 0, 1` shifted by `±IQ1S_DELTA`.
const X_P: [f32; 3] = [-1.0 + 0.125, 0.125, 1.0 + 0.125];
const X_M: [f32; 3] = [-1.0 - 0.125, -0.125, 1.0 - 0.125];

/// The order in which glibc's `qsort` (a top-down merge sort, `msort_with_tmp`) leaves the
/// pairs `(x_j, j)` under ggml's `iq1_sort_helper` (by value only; equal values and NaN compare
/// equal, so the merge order decides).
fn sorted_order<const N: usize>(x: &[f32]) -> [usize; N] {
    let mut idx = [0usize; N];
    for (j, v) in idx.iter_mut().enumerate() {
        *v = j;
    }
    msort(x, &mut idx);
    idx
}

/// `msort_with_tmp`: sort both halves, then merge, taking from the left half unless its value
/// compares greater; what is left of the right half stays in place.
// Indexing: `i < n1 <= n`, `j < n`, `o <= n <= 32` (IQ1 sub-blocks of 16 and 32), indices in `x`.
#[allow(clippy::indexing_slicing)]
fn msort(x: &[f32], b: &mut [usize]) {
    let n = b.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    {
        let (b1, b2) = b.split_at_mut(n1);
        msort(x, b1);
        msort(x, b2);
    }
    let mut tmp = [0usize; 32];
    let (mut i, mut j, mut o) = (0, n1, 0);
    while i < n1 && j < n {
        let (l, r) = (x[b[i]], x[b[j]]);
        let cmp = if l < r {
            -1
        } else if l > r {
            1
        } else {
            0
        };
        if cmp <= 0 {
            tmp[o] = b[i];
            i += 1;
        } else {
            tmp[o] = b[j];
            j += 1;
        }
        o += 1;
    }
    while i < n1 {
        tmp[o] = b[i];
        i += 1;
        o += 1;
    }
    b[..o].copy_from_slice(&tmp[..o]);
}

/// `fabsf` maximum as ggml's IQ1 quantizers take it (`MAX(max, fabsf(x))` from `|x_0|`).
fn max_abs(xb: &[f32]) -> f32 {
    let mut it = xb.iter();
    let mut max = it.next().map_or(0.0, |v| v.abs());
    for v in it {
        max = c_max(max, v.abs());
    }
    max
}

/// Levels `0, 1, 2` of each value from the split `(i1, i2)` of the sorted order; mirrored
/// (`2 − l`) when the scale came out negative, which is then flipped.
// Indexing: `order` holds indices below `l.len()`.
#[allow(clippy::indexing_slicing)]
fn split_levels(order: &[usize], i1: usize, i2: usize, l: &mut [i8]) {
    for (j, &i) in order.iter().enumerate() {
        l[i] = if j < i1 {
            0
        } else if j < i2 {
            1
        } else {
            2
        };
    }
}

/// Each group of 8 levels' grid point (its nearest neighbour off the grid); whether all were on it.
// Indexing: `k < groups <= 4` into an array of 4; `8 * k + 8 <= l.len()`.
#[allow(clippy::indexing_slicing)]
fn iq1_indices(
    t: &GridTables<8>,
    l: &mut [i8],
    xb: &[f32],
    weight: &[f32],
    scale: f32,
    xx_of: impl Fn(usize) -> &'static [f32; 3],
) -> Result<([u16; 4], bool), Fail> {
    let mut index = [0u16; 4];
    let mut all_on = true;
    for k in 0..l.len() / 8 {
        let g = 8 * k..8 * k + 8;
        index[k] = match t.lookup(&l[g.clone()]) {
            Lookup::On(j) => j as u16,
            Lookup::Off(nb) => {
                all_on = false;
                {
                    let xg = xx_of(k);
                    let q = |p: i8| xg.get(((p - 1) / 2) as usize).copied().unwrap_or(0.0);
                    best_neighbour(t, nb, (&xb[g.clone()], &weight[g.clone()]), scale, q, &mut l[g], NO_NEIGHBOUR_IQ1)?
                        as u16
                }
            }
            Lookup::Outside => return Err(OFF_GRID),
        };
    }
    Ok((index, all_on))
}

/// The refit of an IQ1 sub-block over its grid points: `(Σ w·q·x, Σ w·q²)`, `q = xx[l]`.
// Indexing: `8 * k + j < xb.len()`.
#[allow(clippy::indexing_slicing)]
fn iq1_refit(
    t: &GridTables<8>,
    index: &[u16],
    xb: &[f32],
    weight: &[f32],
    xx_of: impl Fn(usize) -> &'static [f32; 3],
) -> (f32, f32) {
    let (mut sumqx, mut sumq2) = (0f32, 0f32);
    for (k, &g) in index.iter().enumerate() {
        for (j, &p) in t.point(g as usize).iter().enumerate() {
            let w = weight[8 * k + j];
            let q = xx_of(k)[((p - 1) / 2) as usize];
            sumqx += w * q * xb[8 * k + j];
            sumq2 += w * q * q;
        }
    }
    (sumqx, sumq2)
}

/// IQ1_S (`quantize_row_iq1_s_impl`; ggml requires the weights).
// Indexing: `ib < 8`, `j <= 32` into arrays of 33, `k < 4`.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq1_s(_: Isa, x: &[f32; 256], qw: Option<&[f32; 256]>, b: &mut block_iq1_s) -> Result<(), Fail> {
    let qw = qw.ok_or(NO_WEIGHTS)?;
    const BS: usize = 32;
    let t = Grid8::Iq1.tables();
    let sigma2 = block_sigma2(x, 2.0);
    let mut qs = [0u8; 32];
    let mut qh = [0u16; 8];
    let mut scales = [0f32; 8];
    let mut shifts = [0i8; 8];
    let mut max_scale = 0f32;
    for (ib, xb) in x.chunks_exact(BS).enumerate() {
        let mut weight = [0f32; BS];
        sub_weights(xb, qw.get(BS * ib..BS * (ib + 1)), sigma2, none, &mut weight);
        let max = max_abs(xb);
        if max < EPS_IQ1_S {
            shifts[ib] = 1;
            continue;
        }
        let order = sorted_order::<BS>(xb);
        let (mut sumx, mut sumw) = ([0f32; BS + 1], [0f32; BS + 1]);
        for (j, &i) in order.iter().enumerate() {
            sumx[j + 1] = sumx[j] + weight[i] * xb[i];
            sumw[j + 1] = sumw[j] + weight[i];
        }
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let mut best: Option<(usize, usize, i8)> = None;
        for i1 in 0..=BS {
            for i2 in i1..=BS {
                for (xs, shift) in [(&X_P, 1i8), (&X_M, -1)] {
                    let sumqx =
                        (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] + (sumx[BS] - sumx[i2]) * xs[2];
                    let sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0]
                        + (sumw[i2] - sumw[i1]) * xs[1] * xs[1]
                        + (sumw[BS] - sumw[i2]) * xs[2] * xs[2];
                    if sumq2 > 0.0 && sumqx * sumqx > best_score * sumq2 {
                        scale = sumqx / sumq2;
                        best_score = scale * sumqx;
                        best = Some((i1, i2, shift));
                    }
                }
            }
        }
        let Some((i1, i2, mut shift)) = best else {
            shifts[ib] = 1;
            continue;
        };
        let mut l = [0i8; BS];
        split_levels(&order, i1, i2, &mut l);
        if scale < 0.0 {
            l.iter_mut().for_each(|v| *v = 2 - *v);
            scale = -scale;
            shift = -shift;
        }
        let xx: &'static [f32; 3] = if shift == 1 { &X_P } else { &X_M };
        let (index, all_on) = iq1_indices(t, &mut l, xb, &weight, scale, |_| xx)?;
        if !all_on {
            let (sumqx, sumq2) = iq1_refit(t, &index, xb, &weight, |_| xx);
            if sumqx > 0.0 && sumq2 > 0.0 {
                scale = sumqx / sumq2;
            }
        }
        let mut h = 0u16;
        for (k, &g) in index.iter().enumerate() {
            qs[4 * ib + k] = g as u8;
            h |= (g >> 8) << (3 * k);
        }
        qh[ib] = h;
        if scale.is_nan() || scale < 0.0 {
            return Err(BAD_SCALE);
        }
        scales[ib] = scale;
        shifts[ib] = shift;
        max_scale = c_max(max_scale, scale);
    }
    b.d = F16::new(0.0);
    b.qs = qs;
    if max_scale != 0.0 {
        let d = max_scale / 15.0;
        b.d = F16::new(d * 1.125);
        let id = 1.0 / d;
        for ib in 0..8 {
            let mut l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7) as u16;
            if shifts[ib] == -1 {
                l |= 8;
            }
            qh[ib] |= l << 12;
        }
    }
    b.qh = qh.map(U16::from_bits);
    Ok(())
}

/// IQ1_M (`quantize_row_iq1_m_impl`; without weights `x²`).
// Indexing: `ib < 16`, `j <= 16` into arrays of 17, `h < 2`, `k < 2`, `shifts < 4`.
#[allow(clippy::indexing_slicing)]
pub(super) fn quant_iq1_m(_: Isa, x: &[f32; 256], qw: Option<&[f32; 256]>, b: &mut block_iq1_m) -> Result<(), Fail> {
    const BS: usize = 16;
    const MASKS: [u8; 4] = [0x00, 0x80, 0x08, 0x88];
    let t = Grid8::Iq1.tables();
    let sigma2 = block_sigma2(x, 2.0);
    let mut qs = [0u8; 32];
    let mut qh = [0u8; 16];
    let mut sc = [0u16; 4];
    let mut scales = [0f32; 16];
    let mut shifts = [0usize; 16];
    let mut weights = [0f32; 256];
    let mut max_scale = 0f32;
    // Group `k` of a sub-block with sign combination `best_k` uses x_p or x_m.
    let xx_for = |best_k: usize, k: usize| -> &'static [f32; 3] {
        let plus = if k == 0 { best_k < 2 } else { best_k.is_multiple_of(2) };
        if plus {
            &X_P
        } else {
            &X_M
        }
    };
    for (ib, (xb, weight)) in x.chunks_exact(BS).zip(weights.chunks_exact_mut(BS)).enumerate() {
        sub_weights(xb, qw.and_then(|w| w.get(BS * ib..BS * (ib + 1))), sigma2, square, weight);
        let max = max_abs(xb);
        if max < EPS_IQ1_M {
            continue;
        }
        let order = sorted_order::<BS>(xb);
        let mut px = [[0f32; BS + 1]; 2];
        let mut pw = [[0f32; BS + 1]; 2];
        for (j, &i) in order.iter().enumerate() {
            let h = if i < BS / 2 { 0 } else { 1 };
            px[h][j + 1] = px[h][j] + weight[i] * xb[i];
            px[1 - h][j + 1] = px[1 - h][j];
            pw[h][j + 1] = pw[h][j] + weight[i];
            pw[1 - h][j + 1] = pw[1 - h][j];
        }
        let txs = [px[0][BS], px[1][BS]];
        let tws = [pw[0][BS], pw[1][BS]];
        let (p2, m2) = (X_P[2], X_M[2]);
        let cp1 = X_P[0] * X_P[0] - X_P[1] * X_P[1];
        let cp2 = X_P[1] * X_P[1] - X_P[2] * X_P[2];
        let cm1 = X_M[0] * X_M[0] - X_M[1] * X_M[1];
        let cm2 = X_M[1] * X_M[1] - X_M[2] * X_M[2];
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let mut best: Option<(usize, usize, usize)> = None;
        for i1 in 0..=BS {
            for i2 in i1..=BS {
                let (mut qx_p, mut qx_m, mut q2_p, mut q2_m) = ([0f32; 2], [0f32; 2], [0f32; 2], [0f32; 2]);
                for h in 0..2 {
                    let sx = px[h][i1] + px[h][i2];
                    qx_p[h] = txs[h] * p2 - sx;
                    qx_m[h] = txs[h] * m2 - sx;
                    q2_p[h] = tws[h] * p2 * p2 + pw[h][i1] * cp1 + pw[h][i2] * cp2;
                    q2_m[h] = tws[h] * m2 * m2 + pw[h][i1] * cm1 + pw[h][i2] * cm2;
                }
                let sumqx = [qx_p[0] + qx_p[1], qx_p[0] + qx_m[1], qx_m[0] + qx_p[1], qx_m[0] + qx_m[1]];
                let sumq2 = [q2_p[0] + q2_p[1], q2_p[0] + q2_m[1], q2_m[0] + q2_p[1], q2_m[0] + q2_m[1]];
                for k in 0..4 {
                    if sumq2[k] > 0.0 && sumqx[k] * sumqx[k] > best_score * sumq2[k] {
                        scale = sumqx[k] / sumq2[k];
                        best_score = scale * sumqx[k];
                        best = Some((i1, i2, k));
                    }
                }
            }
        }
        let Some((i1, i2, mut best_k)) = best else { continue };
        let mut l = [0i8; BS];
        split_levels(&order, i1, i2, &mut l);
        if scale < 0.0 {
            l.iter_mut().for_each(|v| *v = 2 - *v);
            scale = -scale;
            best_k = 3 - best_k;
        }
        let (index, all_on) = iq1_indices(t, &mut l, xb, weight, scale, |k| xx_for(best_k, k))?;
        if !all_on {
            let (sumqx, sumq2) = iq1_refit(t, &index[..2], xb, weight, |k| xx_for(best_k, k));
            if sumqx > 0.0 && sumq2 > 0.0 {
                scale = sumqx / sumq2;
            }
        }
        qs[2 * ib] = index[0] as u8;
        qs[2 * ib + 1] = index[1] as u8;
        qh[ib] = (index[0] >> 8) as u8 | (((index[1] >> 8) as u8) << 4);
        if scale.is_nan() || scale < 0.0 {
            return Err(BAD_SCALE);
        }
        scales[ib] = scale;
        shifts[ib] = best_k;
        max_scale = c_max(max_scale, scale);
    }
    if max_scale != 0.0 {
        let mut d = max_scale / 15.0;
        let id = 1.0 / d;
        let (mut sumqx, mut sumq2) = (0f32, 0f32);
        for ib in 0..16 {
            let l = nearest_int(0.5 * (id * scales[ib] - 1.0)).clamp(0, 7);
            sc[ib / 4] |= (l as u16) << (3 * (ib % 4));
            qh[ib] |= MASKS[shifts[ib]];
            let xb = &x[BS * ib..BS * (ib + 1)];
            let weight = &weights[BS * ib..BS * (ib + 1)];
            for k in 0..2 {
                let xx = xx_for(shifts[ib], k);
                let g = usize::from(qs[2 * ib + k]) | ((usize::from(qh[ib]) << (8 - 4 * k)) & 0x700);
                for (j, &p) in t.point(g).iter().enumerate() {
                    let w = weight[8 * k + j];
                    let q = xx[((p - 1) / 2) as usize] * (2 * l + 1) as f32;
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
        }
        if sumq2 > 0.0 {
            d = sumqx / sumq2;
        }
        let s = F16::new(d * 1.1125).bits();
        sc[0] |= (s & 0x000f) << 12;
        sc[1] |= (s & 0x00f0) << 8;
        sc[2] |= (s & 0x0f00) << 4;
        sc[3] |= s & 0xf000;
    }
    b.qs = qs;
    b.qh = qh;
    b.scales = sc.map(U16::from_bits);
    Ok(())
}

// Tests may unwrap, panic and index (the project's rule: only library code must not).
#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod neighbour_tests {
    use super::*;

    /// The vector neighbour search ([`best_grid_neighbour`]) chooses what the scalar one
    /// ([`best_neighbour`]) chooses, levels included, on every vector off each grid with
    /// pseudo-random values and weights: values on a half-unit lattice and weights with zeros and
    /// repeats, so that equal distances (decided by list order) are frequent, and some NaN and
    /// infinite inputs (no neighbour at a finite distance).
    fn check<const D: usize, G: Tables<D>>(grid: G) {
        let t = grid.tables();
        let mut st = 0x853c_49e6_748f_ea9bu64;
        let mut next = || {
            st = st.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (st >> 33) as u32
        };
        let (mut ties, mut offs) = (0, 0);
        let levels = if D == 8 { 4 } else { 8 };
        for trial in 0..20_000 {
            let l0: [i8; D] = std::array::from_fn(|_| (next() % levels) as i8);
            let Lookup::Off(nb) = t.lookup(&l0) else { continue };
            offs += 1;
            let mut xval: [f32; D] = std::array::from_fn(|_| (next() % 16) as f32 * 0.5);
            let mut w: [f32; D] = std::array::from_fn(|_| [0.0, 1.0, 1.0, 2.0, 0.5][(next() % 5) as usize]);
            match trial % 50 {
                0 => xval[0] = f32::NAN,
                1 => w[D - 1] = f32::INFINITY,
                _ => {}
            }
            let scale = [1.0, 0.5, 2.0, 0.37][(next() % 4) as usize];
            let (mut la, mut lb) = ([0i8; D], [0i8; D]);
            let a = best_grid_neighbour(Isa::detected(), t, nb, (&xval, &w), scale, &mut la);
            let b = best_neighbour(t, nb, (&xval, &w), scale, f32::from, &mut lb, NO_NEIGHBOUR);
            assert_eq!((a, la), (b, lb), "trial {trial}: levels {l0:?}, {} neighbours", nb.len());
            let d2: Vec<f32> = nb
                .iter()
                .map(|&j| {
                    let mut d = 0f32;
                    for ((&p, &x), &wi) in t.point(j as usize).iter().zip(&xval).zip(&w) {
                        let diff = scale * f32::from(p) - x;
                        d += wi * diff * diff;
                    }
                    d
                })
                .collect();
            let min = d2.iter().copied().fold(f32::MAX, f32::min);
            ties += usize::from(d2.iter().filter(|&&d| d == min).count() > 1);
        }
        assert!(offs > 1000 && ties > 100, "{offs} vectors off the grid, {ties} with equal nearest distances");
    }

    #[test]
    fn vector_neighbour_search_chooses_as_the_scalar_one() {
        check(Grid8::Iq2Xxs);
        check(Grid8::Iq2Xs);
        check(Grid8::Iq2S);
        check(Grid4::Iq3Xxs);
        check(Grid4::Iq3S);
    }
}
