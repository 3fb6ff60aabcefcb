//! The IQ1_S and IQ1_M quantizers: each sub-block's values sorted (as glibc's `qsort` leaves
//! them) and split exhaustively into three groups of levels, then snapped to the IQ1 grid.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::neighbour::best_neighbour;
use super::*;
use crate::codec::iq::tables::{Grid8, GridTables, Lookup, Tables};

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
pub(in crate::codec::iq) fn quant_iq1_s(
    _: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq1_s,
) -> Result<(), Fail> {
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
pub(in crate::codec::iq) fn quant_iq1_m(
    _: Isa,
    x: &[f32; 256],
    qw: Option<&[f32; 256]>,
    b: &mut block_iq1_m,
) -> Result<(), Fail> {
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
