//! The search tables of the grid quantizers, as ggml's `iq2xs_init_impl` / `iq3xs_init_impl`
//! build them (`ggml-quants.c`), each built once on first use ([`OnceLock`]) from the packed
//! grids of [`super::grids`].
//!
//! For a grid of `G` points of `D` coordinates (`D` = 8 for IQ2/IQ1, 4 for IQ3) with levels
//! `l` in `0..L`, each point is stored as ggml's quantizer sees it: coordinate `2l + 1`. Every
//! vector of levels is named by its index `Σ l_k · L^k` in bits (`l_k << bits·k`); `map` has one
//! entry per index below ggml's `kmap_size` (43,692 for 2 bits, 4,096 for 3): the grid point's
//! number when the vector is a grid point, else `-(offset + 1)` into `neighbours`, where a count
//! `n` is followed by the `n` grid points nearest the vector: all points at the `nwant` smallest
//! squared distances, ordered by distance then number (ggml sorts `(d2, j)` pairs; the order
//! decides ties in the searches, so it is kept).

use std::sync::OnceLock;

use super::grids::{IQ1S_PACKED, IQ2S_PACKED, IQ2XS_PACKED, IQ2XXS_PACKED, IQ3S_PACKED, IQ3XXS_PACKED};

/// One grid's search tables (ggml's `iq2_entry_t` / `iq3_entry_t`), points of `D` coordinates.
pub(super) struct GridTables<const D: usize> {
    /// Bits per level in a vector's index (2 or 3).
    bits: u32,
    /// `2l + 1` per coordinate.
    pos: Vec<[i8; D]>,
    /// `pos` as `f32`, point after point (`D` values each): the rows the vector neighbour search
    /// loads.
    pos_f32: Vec<f32>,
    /// Index → grid point, or `-(offset + 1)` into `neighbours`.
    map: Vec<i32>,
    /// Per vector off the grid: a count, then that many grid point numbers.
    neighbours: Vec<u16>,
}

/// Where a vector of levels lies: on the grid, or off it with its nearest grid points.
pub(super) enum Lookup<'a> {
    /// Its grid point number.
    On(usize),
    /// The nearest grid points (nonempty), in ggml's order.
    Off(&'a [u16]),
    /// An index past ggml's map (levels out of range; ggml reads out of bounds).
    Outside,
}

impl<const D: usize> GridTables<D> {
    /// Builds the tables of the grid `packed` (levels `bits` wide, `D` per point), keeping the
    /// points at the `nwant` nearest distances for each vector off the grid.
    // Indices are in range by construction: `j < grid`, the packed values are below `map_size`
    // (checked by the tests), `d < counts.len()`.
    #[allow(clippy::indexing_slicing)]
    fn build(packed: &[u16], bits: u32, map_size: usize, nwant: usize) -> GridTables<D> {
        let dims = D;
        let mask = (1u32 << bits) - 1;
        let levels = |v: u32, k: usize| ((v >> (bits * k as u32)) & mask) as i32;
        let grid = packed.len();
        let pos: Vec<[i8; D]> =
            packed.iter().map(|&p| std::array::from_fn(|k| (2 * levels(u32::from(p), k) + 1) as i8)).collect();
        let mut map = vec![-1i32; map_size];
        for (j, &p) in packed.iter().enumerate() {
            map[p as usize] = j as i32;
        }
        let max_d2 = dims * (2 * mask as usize) * (2 * mask as usize);
        let mut neighbours = Vec::new();
        let mut d2 = vec![0usize; grid];
        let mut counts = vec![0u32; max_d2 + 1];
        for (i, slot) in map.iter_mut().enumerate() {
            if *slot >= 0 {
                continue;
            }
            counts.iter_mut().for_each(|c| *c = 0);
            let here: [i32; D] = std::array::from_fn(|k| 2 * levels(i as u32, k) + 1);
            for (dj, p) in d2.iter_mut().zip(&pos) {
                *dj = p.iter().zip(&here).map(|(&a, &b)| ((i32::from(a) - b) * (i32::from(a) - b)) as usize).sum();
                counts[*dj] += 1;
            }
            *slot = -(neighbours.len() as i32 + 1);
            let start = neighbours.len();
            neighbours.push(0);
            let wanted = (0..=max_d2).filter(|&d| counts[d] > 0).take(nwant);
            for d in wanted {
                neighbours.extend((0..grid).filter(|&j| d2[j] == d).map(|j| j as u16));
            }
            neighbours[start] = (neighbours.len() - start - 1) as u16;
        }
        let pos_f32 = pos.iter().flat_map(|p| p.map(f32::from)).collect();
        GridTables { bits, pos, pos_f32, map, neighbours }
    }

    /// The vector of levels `l` (`D` of them, as ggml's `int8_t` levels): its index as ggml
    /// forms it in a `uint16_t` (`u |= l << bits·k`), looked up.
    #[inline]
    pub(super) fn lookup(&self, l: &[i8]) -> Lookup<'_> {
        let mut u = 0u16;
        for (k, &v) in l.iter().enumerate().take(D) {
            u |= (i32::from(v) << (self.bits * k as u32)) as u16;
        }
        match self.map.get(u as usize) {
            None => Lookup::Outside,
            Some(&g) if g >= 0 => Lookup::On(g as usize),
            Some(&g) => {
                let at = (-(g + 1)) as usize;
                let n = self.neighbours.get(at).copied().unwrap_or(0) as usize;
                match self.neighbours.get(at + 1..at + 1 + n) {
                    Some(list) if n > 0 => Lookup::Off(list),
                    _ => Lookup::Outside,
                }
            }
        }
    }

    /// Grid point `j`'s coordinates as `f32` (`D` values), `None` past the grid.
    #[inline]
    pub(super) fn point_f32(&self, j: usize) -> Option<&[f32]> {
        self.pos_f32.get(D * j..D * j + D)
    }

    /// Grid point `j`'s coordinates (`2l + 1` each); all 1 (levels 0) past the grid, which no
    /// caller asks for (grid numbers come from the tables).
    #[inline]
    pub(super) fn point(&self, j: usize) -> &[i8; D] {
        self.pos.get(j).unwrap_or(&[1; D])
    }
}

/// The grids of 8 coordinates, as `ggml_quantize_init` selects them (`iq2xs_init_impl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grid8 {
    /// IQ2_XXS: 256 points, 2 nearest distances.
    Iq2Xxs,
    /// IQ2_XS: 512 points, 2 nearest distances.
    Iq2Xs,
    /// IQ2_S: 1024 points, the nearest distance only.
    Iq2S,
    /// IQ1_S and IQ1_M: 2048 points of 3 levels, 3 nearest distances.
    Iq1,
}

/// The grids of 4 coordinates (`iq3xs_init_impl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grid4 {
    /// IQ3_XXS: 256 points, 2 nearest distances.
    Iq3Xxs,
    /// IQ3_S: 512 points, 3 nearest distances.
    Iq3S,
}

/// ggml's `kmap_size` of the 2-bit and 3-bit grids.
const IQ2_MAP: usize = 43_692;
const IQ3_MAP: usize = 4_096;

/// A grid's tables, built on first use.
pub(super) trait Tables<const D: usize>: Copy {
    fn tables(self) -> &'static GridTables<D>;
}

impl Tables<8> for Grid8 {
    fn tables(self) -> &'static GridTables<8> {
        static T: [OnceLock<GridTables<8>>; 4] = [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let (cell, packed, nwant): (_, &[u16], _) = match self {
            Grid8::Iq2Xxs => (&T[0], &IQ2XXS_PACKED, 2),
            Grid8::Iq2Xs => (&T[1], &IQ2XS_PACKED, 2),
            Grid8::Iq2S => (&T[2], &IQ2S_PACKED, 1),
            Grid8::Iq1 => (&T[3], &IQ1S_PACKED, 3),
        };
        cell.get_or_init(|| GridTables::build(packed, 2, IQ2_MAP, nwant))
    }
}

impl Tables<4> for Grid4 {
    fn tables(self) -> &'static GridTables<4> {
        static T: [OnceLock<GridTables<4>>; 2] = [OnceLock::new(), OnceLock::new()];
        let (cell, packed, nwant): (_, &[u16], _) = match self {
            Grid4::Iq3Xxs => (&T[0], &IQ3XXS_PACKED, 2),
            Grid4::Iq3S => (&T[1], &IQ3S_PACKED, 3),
        };
        cell.get_or_init(|| GridTables::build(packed, 3, IQ3_MAP, nwant))
    }
}

// Tests may unwrap, panic and index (the project's rule: only library code must not).
#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Every packed grid point is below ggml's map size and distinct, so the map holds each, and
    /// every vector off the grid has a nonempty neighbour list of grid points.
    fn check<const D: usize>(t: &GridTables<D>, what: &str) {
        let on = t.map.iter().filter(|&&v| v >= 0).count();
        assert_eq!(on, t.pos.len(), "{what}");
        for &v in t.map.iter().filter(|&&v| v < 0) {
            let at = (-(v + 1)) as usize;
            let n = t.neighbours[at] as usize;
            assert!(n > 0 && t.neighbours[at + 1..at + 1 + n].iter().all(|&j| (j as usize) < t.pos.len()), "{what}");
        }
    }

    #[test]
    fn grid_points_fit_the_map() {
        for g in [Grid8::Iq2Xxs, Grid8::Iq2Xs, Grid8::Iq2S, Grid8::Iq1] {
            check(g.tables(), &format!("{g:?}"));
        }
        for g in [Grid4::Iq3Xxs, Grid4::Iq3S] {
            check(g.tables(), &format!("{g:?}"));
        }
    }
}
