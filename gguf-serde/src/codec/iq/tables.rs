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

/// One grid's search tables (ggml's `iq2_entry_t` / `iq3_entry_t`).
pub(super) struct GridTables {
    /// Coordinates per point (8 or 4).
    dims: usize,
    /// Bits per level in a vector's index (2 or 3).
    bits: u32,
    /// `2l + 1` per coordinate, `dims` per point.
    pos: Vec<i8>,
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

impl GridTables {
    /// Builds the tables of the grid `packed` (levels `bits` wide, `dims` per point), keeping the
    /// points at the `nwant` nearest distances for each vector off the grid.
    // Indices are in range by construction: `pos` has `dims` entries per grid point, `j < grid`,
    // the packed values are below `map_size` (checked by the tests), `d < counts.len()`.
    #[allow(clippy::indexing_slicing)]
    fn build(packed: &[u16], dims: usize, bits: u32, map_size: usize, nwant: usize) -> GridTables {
        let mask = (1u32 << bits) - 1;
        let levels = |v: u32, k: usize| ((v >> (bits * k as u32)) & mask) as i32;
        let grid = packed.len();
        let mut pos = Vec::with_capacity(grid * dims);
        for &p in packed {
            pos.extend((0..dims).map(|k| (2 * levels(u32::from(p), k) + 1) as i8));
        }
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
            let here: Vec<i32> = (0..dims).map(|k| 2 * levels(i as u32, k) + 1).collect();
            for (j, dj) in d2.iter_mut().enumerate() {
                let p = &pos[j * dims..(j + 1) * dims];
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
        GridTables { dims, bits, pos, map, neighbours }
    }

    /// The vector of levels `l` (`dims` of them, as ggml's `int8_t` levels): its index as ggml
    /// forms it in a `uint16_t` (`u |= l << bits·k`), looked up.
    pub(super) fn lookup(&self, l: &[i8]) -> Lookup<'_> {
        let mut u = 0u16;
        for (k, &v) in l.iter().enumerate().take(self.dims) {
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

    /// Grid point `j`'s coordinates (`2l + 1` each); empty past the grid.
    pub(super) fn point(&self, j: usize) -> &[i8] {
        self.pos.get(j * self.dims..(j + 1) * self.dims).unwrap_or(&[])
    }
}

/// The tables of each grid, as `ggml_quantize_init` selects them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Grid {
    /// IQ2_XXS: 256 points, 2 nearest distances.
    Iq2Xxs,
    /// IQ2_XS: 512 points, 2 nearest distances.
    Iq2Xs,
    /// IQ2_S: 1024 points, the nearest distance only.
    Iq2S,
    /// IQ1_S and IQ1_M: 2048 points of 3 levels, 3 nearest distances.
    Iq1,
    /// IQ3_XXS: 256 points of 4, 2 nearest distances.
    Iq3Xxs,
    /// IQ3_S: 512 points of 4, 3 nearest distances.
    Iq3S,
}

impl Grid {
    /// The tables, built on first use.
    pub(super) fn tables(self) -> &'static GridTables {
        static T: [OnceLock<GridTables>; 6] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
        const IQ2_MAP: usize = 43_692;
        const IQ3_MAP: usize = 4_096;
        let (cell, packed, dims, bits, size, nwant): (_, &[u16], _, _, _, _) = match self {
            Grid::Iq2Xxs => (&T[0], &IQ2XXS_PACKED, 8, 2, IQ2_MAP, 2),
            Grid::Iq2Xs => (&T[1], &IQ2XS_PACKED, 8, 2, IQ2_MAP, 2),
            Grid::Iq2S => (&T[2], &IQ2S_PACKED, 8, 2, IQ2_MAP, 1),
            Grid::Iq1 => (&T[3], &IQ1S_PACKED, 8, 2, IQ2_MAP, 3),
            Grid::Iq3Xxs => (&T[4], &IQ3XXS_PACKED, 4, 3, IQ3_MAP, 2),
            Grid::Iq3S => (&T[5], &IQ3S_PACKED, 4, 3, IQ3_MAP, 3),
        };
        cell.get_or_init(|| GridTables::build(packed, dims, bits, size, nwant))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packed grid point is below ggml's map size and distinct, so the map holds each.
    #[test]
    fn grid_points_fit_the_map() {
        for g in [Grid::Iq2Xxs, Grid::Iq2Xs, Grid::Iq2S, Grid::Iq1, Grid::Iq3Xxs, Grid::Iq3S] {
            let t = g.tables();
            let on = t.map.iter().filter(|&&v| v >= 0).count();
            assert_eq!(on * t.dims, t.pos.len(), "{g:?}");
            // Every vector off the grid has a nonempty neighbour list of grid points.
            for &v in t.map.iter().filter(|&&v| v < 0) {
                let at = (-(v + 1)) as usize;
                let n = t.neighbours[at] as usize;
                assert!(n > 0 && t.neighbours[at + 1..at + 1 + n].iter().all(|&j| (j as usize) * t.dims < t.pos.len()));
            }
        }
    }
}
