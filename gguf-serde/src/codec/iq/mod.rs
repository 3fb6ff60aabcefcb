//! Codec family `iq` (the i-quants): IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_NL, IQ4_XS.
//!
//! Block layouts follow ggml's `ggml-common.h` (`block_iq*`), dequantization ggml's
//! `dequantize_row_iq*` in `ggml-quants.c`, quantization ggml's `quantize_iq*` (the functions
//! `ggml_quantize_chunk` calls): IQ4_NL and IQ4_XS here, the grid types in `quant/`. Every
//! floating-point operation is done in the reference's order, without fused multiply-add, so the
//! results are bit-identical to the reference compiled without FMA contraction.
//!
//! | type | quantizer (ggml) | importance weights | tested against |
//! |---|---|---|---|
//! | IQ2_XXS | `quantize_row_iq2_xxs_impl` | required | `IQ2_XXS.qw.*` |
//! | IQ2_XS | `quantize_row_iq2_xs_impl` | required | `IQ2_XS.qw.*` |
//! | IQ2_S | `quantize_row_iq2_s_impl` | optional | `IQ2_S.q.*`, `.qw.*` |
//! | IQ3_XXS | `quantize_row_iq3_xxs_impl` (grid 256) | optional | `IQ3_XXS.q.*`, `.qw.*` |
//! | IQ3_S | `quantize_row_iq3_s_impl` (block 32) | optional | `IQ3_S.q.*`, `.qw.*` |
//! | IQ1_S | `quantize_row_iq1_s_impl` | required | `IQ1_S.qw.*` |
//! | IQ1_M | `quantize_row_iq1_m_impl` | optional | `IQ1_M.q.*`, `.qw.*` |
//! | IQ4_NL, IQ4_XS | `quantize_iq4_nl` / `quantize_iq4_xs` | optional | `IQ4_*.q.*`, `.qw.*`, `.imat.*` |
//!
//! The grid tables live in [`grids`] as data; the grid quantizers' search tables (ggml's maps
//! and neighbour lists) are built from them on first use (`tables.rs`).
//!
//! Indexing: the kernels index fixed-size block fields and outputs with loop counters over the
//! block's fixed layout, and every table index taken from file bytes is a `u8`, a masked or
//! shifted value no larger than its table (256/512/1024/2048-entry grids, 128 KSIGNS, 16
//! levels), so every index is in range by the types. Fuzzed by the codec no-panic property
//! tests on arbitrary bytes. Each such function says `#[allow(clippy::indexing_slicing)]`.

// Decoding code that file bytes reach: no unwrap/expect/panic/indexing; every exception
// is an `#[allow]` with its reason next to it. Applies to the grids and reference tests below.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::block::{block, F16, U16, U32};
use super::error::Abort;
use super::isa::{simd, Isa};
use super::scalar::{f16_to_f32, max_by_abs, nearest_int};
use super::table::{per_block, GridQuantize, QuantizeRow};

mod grids;
mod quant;
mod tables;

// Tests may unwrap, panic and index (the project's rule: only library code must not).
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
mod reference_tests;

use grids::{IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID};

/// `kvalues_iq4nl`: the 16 non-linear levels of IQ4_NL and IQ4_XS.
pub(crate) const KVALUES_IQ4NL: [i8; 16] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

/// `IQ1S_DELTA` / `IQ1M_DELTA`: the shift added to every IQ1 grid value.
const IQ1_DELTA: f32 = 0.125;

/// `ksigns_iq2xs`: 7 stored sign bits plus an 8th bit that makes the count of set bits even.
// Evaluated at compile time only (it builds a const/static table): an index out of range is a
// compile error, never a runtime panic.
#[allow(clippy::indexing_slicing)]
const KSIGNS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = i as u8 | (((i as u32).count_ones() as u8 & 1) << 7);
        i += 1;
    }
    t
};

/// `v` negated when bit `j` of `bits` is set: the reference's `v * (bits & kmask_iq2xs[j] ? -1.f
/// : 1.f)`. A compiler may (and gcc at `-O2` does) turn that product into a sign flip, which only
/// differs from a multiplication for NaN; the flip is what the compiled reference gives.
#[inline(always)]
fn signed(v: f32, bits: u8, j: usize) -> f32 {
    f32::from_bits(v.to_bits() ^ (u32::from((bits >> j) & 1) << 31))
}

block! {
    /// `block_iq2_xxs`: `qs` as ggml reads it, pairs of `uint32_t` per 32 elements (four grid
    /// indices in the bytes of the first; four 7-bit sign indices and a 4-bit scale in the second).
    pub(crate) struct block_iq2_xxs [66 bytes] {
        d: F16,
        qs: [U32; 16],
    }
}

block! {
    /// `block_iq2_xs`: `qs` 9-bit grid index and 7-bit sign index per `uint16_t`, two 4-bit
    /// scales per byte.
    pub(crate) struct block_iq2_xs [74 bytes] {
        d: F16,
        qs: [U16; 32],
        scales: [u8; 8],
    }
}

block! {
    /// `block_iq2_s`: low grid index bytes, sign bytes (ggml's `qs[64]`), 2 high index bits per
    /// group in `qh`, two 4-bit scales per byte.
    pub(crate) struct block_iq2_s [82 bytes] {
        d: F16,
        qs: [u8; 32],
        signs: [u8; 32],
        qh: [u8; 8],
        scales: [u8; 8],
    }
}

block! {
    /// `block_iq3_xxs`: 64 grid index bytes, then (ggml's `qs[64..96]`, read as `uint32_t`) per 32
    /// elements four 7-bit sign indices and a 4-bit scale.
    pub(crate) struct block_iq3_xxs [98 bytes] {
        d: F16,
        qs: [u8; 64],
        scales_and_signs: [U32; 8],
    }
}

block! {
    /// `block_iq3_s`: low grid index bytes, high index bits, sign bytes, two 4-bit scales per byte.
    pub(crate) struct block_iq3_s [110 bytes] {
        d: F16,
        qs: [u8; 64],
        qh: [u8; 8],
        signs: [u8; 32],
        scales: [u8; 4],
    }
}

block! {
    /// `block_iq1_s`: low grid index bytes; per 32 elements a `uint16_t` of four 3-bit high index
    /// parts, a 3-bit scale and the delta sign.
    pub(crate) struct block_iq1_s [50 bytes] {
        d: F16,
        qs: [u8; 32],
        qh: [U16; 8],
    }
}

block! {
    /// `block_iq1_m`: low grid index bytes, two (3-bit high index, delta sign) nibbles per byte,
    /// 3-bit scales read as `uint16_t` whose top nibbles together are the f16 super-block scale.
    pub(crate) struct block_iq1_m [56 bytes] {
        qs: [u8; 32],
        qh: [u8; 16],
        scales: [U16; 4],
    }
}

block! {
    /// `block_iq4_nl`: two 4-bit level indices per byte (elements `j` and `j + 16`).
    pub(crate) struct block_iq4_nl [18 bytes] {
        d: F16,
        qs: [u8; 16],
    }
}

block! {
    /// `block_iq4_xs`: 2-bit high scale parts, 4-bit low scale parts, 4-bit level indices.
    pub(crate) struct block_iq4_xs [136 bytes] {
        d: F16,
        scales_h: U16,
        scales_l: [u8; 4],
        qs: [u8; 128],
    }
}

per_block!(Dequantize<256> for block_iq2_xxs => dequant_iq2_xxs);
per_block!(Dequantize<256> for block_iq2_xs => dequant_iq2_xs);
per_block!(Dequantize<256> for block_iq2_s => dequant_iq2_s);
per_block!(Dequantize<256> for block_iq3_xxs => dequant_iq3_xxs);
per_block!(Dequantize<256> for block_iq3_s => dequant_iq3_s);
per_block!(Dequantize<256> for block_iq1_s => dequant_iq1_s);
per_block!(Dequantize<256> for block_iq1_m => dequant_iq1_m);
per_block!(Dequantize<32> for block_iq4_nl => dequant_iq4_nl);
per_block!(Dequantize<256> for block_iq4_xs => dequant_iq4_xs);
// IQ4_NL and IQ4_XS follow ggml's `quantize_iq4_nl` / `quantize_iq4_xs` without importance
// weights (7 scale trials per 32-element block), which is what `ggml_quantize_chunk` runs.
// (`quantize_row_iq4_xs_ref` is the same function; `quantize_row_iq4_nl_ref` tries no scales and
// leaves the levels of an all-small block to whatever its buffer held, so it is not followed.)
impl super::table::Quantize<32> for block_iq4_nl {
    fn quantize(isa: Isa, src: &[[f32; 32]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            quant_iq4_nl_weighted(isa, x, None, b);
        }
    }
}

impl super::table::Quantize<256> for block_iq4_xs {
    fn quantize(isa: Isa, src: &[[f32; 256]], dst: &mut [Self]) {
        for (x, b) in src.iter().zip(dst) {
            quant_iq4_xs_weighted(isa, x, None, b);
        }
    }
}

/// With importance weights (`quant_weights` of ggml's `quantize_iq4_nl`), one per element of the
/// row: the codec table's importance path for IQ4_NL (`quantize_with_importance`), tested against
/// ggml's C output (`*.imat.*` and `*.qw.*` vectors).
impl QuantizeRow<32> for block_iq4_nl {
    fn quantize_row(isa: Isa, src: &[[f32; 32]], dst: &mut [Self], weights: &[[f32; 32]]) {
        for ((x, b), qw) in src.iter().zip(dst).zip(weights) {
            quant_iq4_nl_weighted(isa, x, Some(qw), b);
        }
    }
}

/// As for [`block_iq4_nl`], with `quantize_iq4_xs`.
impl QuantizeRow<256> for block_iq4_xs {
    fn quantize_row(isa: Isa, src: &[[f32; 256]], dst: &mut [Self], weights: &[[f32; 256]]) {
        for ((x, b), qw) in src.iter().zip(dst).zip(weights) {
            quant_iq4_xs_weighted(isa, x, Some(qw), b);
        }
    }
}

/// The grid types' quantizers (`quant/`), one block at a time: `$f(isa, x, weights, block)`
/// with the block's weights (`&[f32; 256]`) if any, failing with the block's index where ggml
/// aborts (for IQ2_XXS, IQ2_XS and IQ1_S also on every block without weights).
macro_rules! grid_quantize {
    ($block:ty => $f:path) => {
        impl GridQuantize<256> for $block {
            fn quantize_grid(
                isa: Isa,
                src: &[[f32; 256]],
                dst: &mut [Self],
                weights: Option<&[[f32; 256]]>,
            ) -> Result<(), Abort> {
                for (block, (x, b)) in src.iter().zip(dst).enumerate() {
                    let qw = weights.and_then(|w| w.get(block));
                    $f(isa, x, qw, b).map_err(|reason| Abort { block, reason })?;
                }
                Ok(())
            }
        }
    };
}

grid_quantize!(block_iq2_xxs => quant::quant_iq2_xxs);
grid_quantize!(block_iq2_xs => quant::quant_iq2_xs);
grid_quantize!(block_iq2_s => quant::quant_iq2_s);
grid_quantize!(block_iq3_xxs => quant::quant_iq3_xxs);
grid_quantize!(block_iq3_s => quant::quant_iq3_s);
grid_quantize!(block_iq1_s => quant::quant_iq1_s);
grid_quantize!(block_iq1_m => quant::quant_iq1_m);

// ---------------------------------------------------------------------------------------------
// Dequantization, one block at a time.

/// IQ2_XXS: per 32 elements, four grid rows with their signs and one scale.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq2_xxs(b: &block_iq2_xxs, y: &mut [f32; 256]) {
    let d = b.d.get();
    for ([grid_idx, aux1], y) in b.qs.as_chunks::<2>().0.iter().zip(y.chunks_exact_mut(32)) {
        let aux1 = aux1.bits();
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let grid = &IQ2XXS_GRID[grid_idx.0[l] as usize];
            let signs = KSIGNS[((aux1 >> (7 * l)) & 127) as usize];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(db * g as f32, signs, j);
            }
        }
    }
}

/// IQ2_XS: per 8 elements a 9-bit grid index and a 7-bit sign index; a 4-bit scale per 16.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq2_xs(b: &block_iq2_xs, y: &mut [f32; 256]) {
    let d = b.d.get();
    for ((q, &sc), y) in b.qs.chunks_exact(4).zip(&b.scales).zip(y.chunks_exact_mut(32)) {
        let db = [d * (0.5 + (sc & 0xf) as f32) * 0.25, d * (0.5 + (sc >> 4) as f32) * 0.25];
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let v = q[l].bits();
            let grid = &IQ2XS_GRID[(v & 511) as usize];
            let signs = KSIGNS[(v >> 9) as usize];
            let dl = db[l / 2];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(dl * g as f32, signs, j);
            }
        }
    }
}

/// IQ2_S: per 8 elements a 10-bit grid index (low byte, 2 high bits) and a sign byte; a 4-bit
/// scale per 16.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq2_s(b: &block_iq2_s, y: &mut [f32; 256]) {
    let d = b.d.get();
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let sc = b.scales[ib];
        let db = [d * (0.5 + (sc & 0xf) as f32) * 0.25, d * (0.5 + (sc >> 4) as f32) * 0.25];
        let h = b.qh[ib] as usize;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let idx = b.qs[4 * ib + l] as usize | ((h << (8 - 2 * l)) & 0x300);
            let grid = &IQ2S_GRID[idx];
            let s = b.signs[4 * ib + l];
            let dl = db[l / 2];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(dl * g as f32, s, j);
            }
        }
    }
}

/// IQ3_XXS: per 32 elements eight grid rows of 4, four sign indices and a scale.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq3_xxs(b: &block_iq3_xxs, y: &mut [f32; 256]) {
    let d = b.d.get();
    for ((q, s), y) in b.qs.chunks_exact(8).zip(&b.scales_and_signs).zip(y.chunks_exact_mut(32)) {
        let aux = s.bits();
        let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let signs = KSIGNS[((aux >> (7 * l)) & 127) as usize];
            let g1 = &IQ3XXS_GRID[q[2 * l] as usize];
            let g2 = &IQ3XXS_GRID[q[2 * l + 1] as usize];
            for j in 0..4 {
                y[j] = signed(db * g1[j] as f32, signs, j);
                y[j + 4] = signed(db * g2[j] as f32, signs, j + 4);
            }
        }
    }
}

/// IQ3_S: per 4 elements a 9-bit grid index (low byte, high bit); a sign byte per 8, a 4-bit
/// scale per 32.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq3_s(b: &block_iq3_s, y: &mut [f32; 256]) {
    let d = b.d.get();
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let sc = b.scales[ib / 2];
        let nibble = if ib % 2 == 0 { sc & 0xf } else { sc >> 4 };
        let db = d * (1 + 2 * i32::from(nibble)) as f32;
        let h = b.qh[ib] as usize;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let g1 = &IQ3S_GRID[b.qs[8 * ib + 2 * l] as usize | ((h << (8 - 2 * l)) & 256)];
            let g2 = &IQ3S_GRID[b.qs[8 * ib + 2 * l + 1] as usize | ((h << (7 - 2 * l)) & 256)];
            let s = b.signs[4 * ib + l];
            for j in 0..4 {
                y[j] = signed(db * g1[j] as f32, s, j);
                y[j + 4] = signed(db * g2[j] as f32, s, j + 4);
            }
        }
    }
}

/// IQ1_S: per 8 elements an 11-bit grid index; a scale and the delta sign per 32.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq1_s(b: &block_iq1_s, y: &mut [f32; 256]) {
    let d = b.d.get();
    for ((q, h), y) in b.qs.chunks_exact(4).zip(&b.qh).zip(y.chunks_exact_mut(32)) {
        let h = h.bits() as usize;
        let dl = d * (2 * ((h >> 12) & 7) + 1) as f32;
        let delta = if h & 0x8000 != 0 { -IQ1_DELTA } else { IQ1_DELTA };
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let grid = &IQ1S_GRID[q[l] as usize | (((h >> (3 * l)) & 7) << 8)];
            for j in 0..8 {
                y[j] = dl * (grid[j] as f32 + delta);
            }
        }
    }
}

/// IQ1_M: per 8 elements an 11-bit grid index and a delta sign; a 3-bit scale per 16; the f16
/// super-block scale in the scale words' top nibbles.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq1_m(b: &block_iq1_m, y: &mut [f32; 256]) {
    let sc = [b.scales[0].bits(), b.scales[1].bits(), b.scales[2].bits(), b.scales[3].bits()];
    let scale = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    let d = f16_to_f32(scale);
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let s = sc[ib / 2] as usize;
        let shift = 6 * (ib % 2);
        let dl1 = d * (2 * ((s >> shift) & 7) + 1) as f32;
        let dl2 = d * (2 * ((s >> (shift + 3)) & 7) + 1) as f32;
        let (h0, h1) = (b.qh[2 * ib] as usize, b.qh[2 * ib + 1] as usize);
        let q = &b.qs[4 * ib..4 * ib + 4];
        let idx = [
            q[0] as usize | ((h0 << 8) & 0x700),
            q[1] as usize | ((h0 << 4) & 0x700),
            q[2] as usize | ((h1 << 8) & 0x700),
            q[3] as usize | ((h1 << 4) & 0x700),
        ];
        let delta = |bit: bool| if bit { -IQ1_DELTA } else { IQ1_DELTA };
        let deltas = [delta(h0 & 0x08 != 0), delta(h0 & 0x80 != 0), delta(h1 & 0x08 != 0), delta(h1 & 0x80 != 0)];
        let dls = [dl1, dl1, dl2, dl2];
        let grids = [&IQ1S_GRID[idx[0]], &IQ1S_GRID[idx[1]], &IQ1S_GRID[idx[2]], &IQ1S_GRID[idx[3]]];
        for (((y, grid), &dl), &delta) in y.chunks_exact_mut(8).zip(grids).zip(&dls).zip(&deltas) {
            for j in 0..8 {
                y[j] = dl * (grid[j] as f32 + delta);
            }
        }
    }
}

/// IQ4_NL: `d × kvalues_iq4nl[q]`.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq4_nl(b: &block_iq4_nl, y: &mut [f32; 32]) {
    let d = b.d.get();
    let (lo, hi) = y.split_at_mut(16);
    for ((&q, lo), hi) in b.qs.iter().zip(lo).zip(hi) {
        *lo = d * KVALUES_IQ4NL[(q & 0xf) as usize] as f32;
        *hi = d * KVALUES_IQ4NL[(q >> 4) as usize] as f32;
    }
}

/// IQ4_XS: `d × (ls − 32) × kvalues_iq4nl[q]` with a 6-bit `ls` per 32 elements.
#[allow(clippy::indexing_slicing)] // in range by the types (module docs)
fn dequant_iq4_xs(b: &block_iq4_xs, y: &mut [f32; 256]) {
    let d = b.d.get();
    let scales_h = b.scales_h.bits() as i32;
    for (ib, (q, y)) in b.qs.chunks_exact(16).zip(y.chunks_exact_mut(32)).enumerate() {
        let ls = ((b.scales_l[ib / 2] as i32 >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
        let dl = d * (ls - 32) as f32;
        let (lo, hi) = y.split_at_mut(16);
        for ((&q, lo), hi) in q.iter().zip(lo).zip(hi) {
            *lo = dl * KVALUES_IQ4NL[(q & 0xf) as usize] as f32;
            *hi = dl * KVALUES_IQ4NL[(q >> 4) as usize] as f32;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Quantization (IQ4_NL, IQ4_XS): ggml's `quantize_row_iq4_nl_impl` with `ntry = 7`.

/// `GROUP_MAX_EPS`: sub-blocks whose largest magnitude is below this get scale 0.
const GROUP_MAX_EPS: f32 = 1e-15;

/// ggml's `best_index_int8` over `KVALUES_IQ4NL`: the index of the level nearest `x` (ties and
/// NaN as the reference's comparisons decide).
#[inline(always)]
// A binary search over the 16 levels: `ml < mav < mu <= 15` and `mu >= 1` throughout.
#[allow(clippy::indexing_slicing)]
fn best_index_iq4nl(x: f32) -> u8 {
    let val = &KVALUES_IQ4NL;
    if x <= val[0] as f32 {
        return 0;
    }
    if x >= val[15] as f32 {
        return 15;
    }
    let (mut ml, mut mu) = (0usize, 15usize);
    while mu - ml > 1 {
        let mav = (ml + mu) / 2;
        if x < val[mav] as f32 {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - (val[mu - 1] as f32) < val[mu] as f32 - x {
        (mu - 1) as u8
    } else {
        mu as u8
    }
}

/// The scales the search of [`iq4_subblock_scale`] tries, as inverses (`id`): lane 0 the first
/// guess `1 / (−max / kvalues[0])`, lane `1 + k` the try `itry = k − 7` (`(itry + kvalues[0]) /
/// max`), in the reference's order.
type Iq4Tries = [f32; 16];

/// Finds the best scale of one 32-element sub-block; returns 0 for a sub-block below
/// [`GROUP_MAX_EPS`]. `sigma2` is only used with importance weights. (The reference also leaves
/// the levels of its first guess in `L`, which both callers recompute from the scale.)
fn iq4_subblock_scale(isa: Isa, xb: &[f32; 32], qw: Option<&[f32]>, sigma2: f32) -> f32 {
    const NTRY: i32 = 7;
    let mut weight = [0f32; 32];
    match qw {
        Some(qw) => {
            for ((w, &q), &x) in weight.iter_mut().zip(qw).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
        }
        None => {
            for (w, &x) in weight.iter_mut().zip(xb) {
                *w = x * x;
            }
        }
    }
    let (amax, max) = max_by_abs(xb);
    if amax < GROUP_MAX_EPS {
        return 0.0;
    }
    let v0 = KVALUES_IQ4NL[0] as f32;
    let mut ids: Iq4Tries = [0.0; 16];
    ids[0] = 1.0 / (-max / v0);
    for (id, itry) in ids[1..].iter_mut().zip(-NTRY..=NTRY) {
        *id = (itry + KVALUES_IQ4NL[0] as i32) as f32 / max;
    }
    // Each lane's sums are accumulated over the elements in order, as the reference's loops do.
    let (sumqx, sumq2) =
        simd!(if isa.avx2() { avx2::iq4_sums(xb, &weight, &ids) } else { iq4_sums(xb, &weight, &ids) });
    let mut d = if sumq2[0] > 0.0 { sumqx[0] / sumq2[0] } else { 0.0 };
    let mut best = d * sumqx[0];
    for (&sx, &s2) in sumqx.iter().zip(&sumq2).skip(1) {
        if s2 > 0.0 && sx * sx > best * s2 {
            d = sx / s2;
            best = d * sx;
        }
    }
    d
}

/// For each inverse scale `id` of `ids`: `Σ w·q·x` and `Σ w·q·q` over the sub-block, `q` the level
/// nearest `id·x`, summed in element order.
// `best_index_iq4nl` is below 16 (and masked).
#[allow(clippy::indexing_slicing)]
fn iq4_sums(xb: &[f32; 32], weight: &[f32; 32], ids: &Iq4Tries) -> (Iq4Tries, Iq4Tries) {
    let (mut sumqx, mut sumq2) = ([0f32; 16], [0f32; 16]);
    for ((&id, sx), s2) in ids.iter().zip(&mut sumqx).zip(&mut sumq2) {
        for (&x, &w) in xb.iter().zip(weight) {
            let q = KVALUES_IQ4NL[usize::from(best_index_iq4nl(id * x)) & 15] as f32;
            *sx += w * q * x;
            *s2 += w * q * q;
        }
    }
    (sumqx, sumq2)
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::{Iq4Tries, KVALUES_IQ4NL};
    use std::arch::x86_64::*;

    /// The IQ4 levels as floats, and the 14 inner ones broadcast.
    struct Levels {
        lo: __m256,
        hi: __m256,
        inner: [__m256; 14],
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn levels() -> Levels {
        let v: [f32; 16] = KVALUES_IQ4NL.map(f32::from);
        let mut inner = [_mm256_setzero_ps(); 14];
        for (t, &k) in inner.iter_mut().zip(&v[1..15]) {
            *t = _mm256_set1_ps(k);
        }
        Levels { lo: _mm256_loadu_ps(v.as_ptr()), hi: _mm256_loadu_ps(v.as_ptr().add(8)), inner }
    }

    /// `kvalues[i]` for 8 indices in 0..16.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup(l: &Levels, i: __m256i) -> __m256 {
        let a = _mm256_permutevar8x32_ps(l.lo, i);
        let b = _mm256_permutevar8x32_ps(l.hi, i);
        _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(7))))
    }

    /// The level `best_index_iq4nl` picks for each lane of `x` (its index and value). The binary
    /// search ends at the `mu` with `kvalues[mu − 1] ≤ x < kvalues[mu]`: `mu` = 1 + the number of
    /// inner levels (1..=14) that `x` is not below (a NaN is below none: `mu` = 15, as the
    /// search's comparisons give); the early returns for `x ≤ kvalues[0]` and `x ≥ kvalues[15]`
    /// agree with the final comparison there (including ±∞), so it is used for every lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn nearest(l: &Levels, x: __m256) -> (__m256i, __m256) {
        let mut mu = _mm256_set1_epi32(1);
        for &t in &l.inner {
            // All-ones (−1) where !(x < t).
            mu = _mm256_sub_epi32(mu, _mm256_castps_si256(_mm256_cmp_ps::<_CMP_NLT_UQ>(x, t)));
        }
        let below = _mm256_sub_epi32(mu, _mm256_set1_epi32(1));
        let (vl, vu) = (lookup(l, below), lookup(l, mu));
        let take_below = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_sub_ps(x, vl), _mm256_sub_ps(vu, x));
        (_mm256_blendv_epi8(mu, below, _mm256_castps_si256(take_below)), _mm256_blendv_ps(vu, vl, take_below))
    }

    /// [`super::iq4_sums`], 8 tries per vector.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn iq4_sums(xb: &[f32; 32], weight: &[f32; 32], ids: &Iq4Tries) -> (Iq4Tries, Iq4Tries) {
        let l = levels();
        let (ida, idb) = (_mm256_loadu_ps(ids.as_ptr()), _mm256_loadu_ps(ids.as_ptr().add(8)));
        let (mut sxa, mut sxb, mut s2a, mut s2b) =
            (_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps());
        for (&x, &w) in xb.iter().zip(weight) {
            let (x, w) = (_mm256_set1_ps(x), _mm256_set1_ps(w));
            let (_, qa) = nearest(&l, _mm256_mul_ps(ida, x));
            let (_, qb) = nearest(&l, _mm256_mul_ps(idb, x));
            let (wqa, wqb) = (_mm256_mul_ps(w, qa), _mm256_mul_ps(w, qb));
            sxa = _mm256_add_ps(sxa, _mm256_mul_ps(wqa, x));
            sxb = _mm256_add_ps(sxb, _mm256_mul_ps(wqb, x));
            s2a = _mm256_add_ps(s2a, _mm256_mul_ps(wqa, qa));
            s2b = _mm256_add_ps(s2b, _mm256_mul_ps(wqb, qb));
        }
        let (mut sumqx, mut sumq2) = ([0f32; 16], [0f32; 16]);
        _mm256_storeu_ps(sumqx.as_mut_ptr(), sxa);
        _mm256_storeu_ps(sumqx.as_mut_ptr().add(8), sxb);
        _mm256_storeu_ps(sumq2.as_mut_ptr(), s2a);
        _mm256_storeu_ps(sumq2.as_mut_ptr().add(8), s2b);
        (sumqx, sumq2)
    }

    /// `l[j] = best_index_iq4nl(id · x[j])` for the 32 values of a sub-block.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn iq4_levels(id: f32, x: &[f32; 32], out: &mut [u8; 32]) {
        let l = levels();
        let id = _mm256_set1_ps(id);
        let mut idx = [0i32; 32];
        for k in 0..4 {
            let (i, _) = nearest(&l, _mm256_mul_ps(id, _mm256_loadu_ps(x.as_ptr().add(8 * k))));
            _mm256_storeu_si256(idx.as_mut_ptr().add(8 * k).cast(), i);
        }
        for (o, &i) in out.iter_mut().zip(&idx) {
            *o = i as u8;
        }
    }
}

/// `l[j] = best_index_iq4nl(id · x[j])` for a 32-value sub-block.
fn iq4_levels(isa: Isa, id: f32, x: &[f32; 32], l: &mut [u8; 32]) {
    simd!(if isa.avx2() {
        avx2::iq4_levels(id, x, l)
    } else {
        for (lj, &xj) in l.iter_mut().zip(x) {
            *lj = best_index_iq4nl(id * xj);
        }
    })
}

/// `sigma2` of the reference: 2 × mean of squares (only used with importance weights).
fn sigma2(x: &[f32]) -> f32 {
    let mut s = 0f32;
    for &v in x {
        s += v * v;
    }
    s * (2.0 / x.len() as f32)
}

/// Packs 32-element groups of levels: byte `j` holds element `j` (low nibble) and `j + 16`.
// `j < 16` in a 16-byte chunk, `j + 16 < 32` in a 32-byte chunk (chunks_exact).
#[allow(clippy::indexing_slicing)]
fn pack_levels(l: &[u8], q4: &mut [u8]) {
    for (lg, qg) in l.chunks_exact(32).zip(q4.chunks_exact_mut(16)) {
        for j in 0..16 {
            qg[j] = lg[j] | (lg[j + 16] << 4);
        }
    }
}

/// IQ4_NL with optional importance weights for the block.
fn quant_iq4_nl_weighted(isa: Isa, x: &[f32; 32], qw: Option<&[f32; 32]>, b: &mut block_iq4_nl) {
    let s2 = if qw.is_some() { sigma2(x) } else { 0.0 };
    let mut l = [0u8; 32];
    let d = iq4_subblock_scale(isa, x, qw.map(|w| &w[..]), s2);
    b.d = F16::new(d);
    // With a single sub-block the levels are computed from the f32 scale.
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    iq4_levels(isa, id, x, &mut l);
    pack_levels(&l, &mut b.qs);
}

/// IQ4_XS with optional importance weights for the block.
// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_iq4_xs_weighted(isa: Isa, x: &[f32; 256], qw: Option<&[f32; 256]>, b: &mut block_iq4_xs) {
    let s2 = if qw.is_some() { sigma2(x) } else { 0.0 };
    let mut l = [0u8; 256];
    let mut scales = [0f32; 8];
    for (ib, xb) in x.as_chunks::<32>().0.iter().enumerate() {
        let qwb = qw.and_then(|w| w.get(32 * ib..32 * ib + 32));
        scales[ib] = iq4_subblock_scale(isa, xb, qwb, s2);
    }
    let (_, max_scale) = max_by_abs(&scales);
    let d = -max_scale / 32.0;
    b.d = F16::new(d);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut scales_h = 0u16;
    let mut scales_l = [0u8; 4];
    for (ib, (xb, lb)) in x.as_chunks::<32>().0.iter().zip(l.as_chunks_mut::<32>().0).enumerate() {
        let ls = nearest_int(id * scales[ib]).clamp(-32, 31);
        let dl = d * ls as f32;
        let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
        iq4_levels(isa, idl, xb, lb);
        let ls = (ls + 32) as u8;
        scales_l[ib / 2] |= (ls & 0xf) << (4 * (ib % 2));
        scales_h |= u16::from(ls >> 4) << (2 * ib);
    }
    b.scales_h = U16::from_bits(scales_h);
    b.scales_l = scales_l;
    pack_levels(&l, &mut b.qs);
}
