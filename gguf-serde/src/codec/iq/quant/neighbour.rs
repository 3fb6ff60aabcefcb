//! The grid neighbour search of the IQ2/IQ3 (and IQ1) quantizers: signs folded out of each group
//! of 8, and the nearest grid point among a point's neighbours, scalar ([`best_neighbour`]) and in
//! AVX2 lanes ([`best_grid_neighbour`]).

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::{Fail, NO_NEIGHBOUR};
use crate::codec::iq::tables::GridTables;
use crate::codec::isa::Isa;

/// Folds the signs out of each group of 8: `xval = |x|` (ggml's `x >= 0 ? x : -x`), sign bit `i`
/// set for a negative `x_i`. With `even` (IQ2_XXS, IQ2_XS, IQ3_XXS: 7 stored bits, the 8th
/// implied by even parity), an odd count of negatives flips back the value of least `w·x²`.
// Indexing: `8 * k + i < 8 * signs.len() <= xb.len()` (callers pass matching sizes).
#[allow(clippy::indexing_slicing)]
pub(super) fn fold_signs(xb: &[f32], weight: &[f32], xval: &mut [f32], signs: &mut [u8], even: bool) {
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
pub(super) fn best_neighbour<const D: usize>(
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
pub(super) fn best_grid_neighbour<const D: usize>(
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

// Tests may unwrap, panic and index (the project's rule: only library code must not).
#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod neighbour_tests {
    use super::*;
    use crate::codec::iq::tables::{Grid4, Grid8, Lookup, Tables};

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
