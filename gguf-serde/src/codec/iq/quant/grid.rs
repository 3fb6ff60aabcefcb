//! The sub-block grid search shared by IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S ([`grid_sub`]:
//! trial scales snapping each group of levels to the grid or its nearest neighbour, then a
//! refit), each type's search parameters, and the five block quantizers.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::neighbour::{best_grid_neighbour, fold_signs};
use super::*;
use crate::codec::iq::tables::{Grid4, Grid8, Lookup, Tables};

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
pub(in crate::codec::iq) fn quant_iq2_xxs(
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
pub(in crate::codec::iq) fn quant_iq2_xs(
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
pub(in crate::codec::iq) fn quant_iq2_s(
    isa: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq2_s,
) -> Result<(), Fail> {
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
pub(in crate::codec::iq) fn quant_iq3_xxs(
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
pub(in crate::codec::iq) fn quant_iq3_s(
    isa: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq3_s,
) -> Result<(), Fail> {
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
