//! Codec family `iquants`: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_NL, IQ4_XS.
//!
//! Block layouts follow ggml's `ggml-common.h` (`block_iq*`), dequantization ggml's
//! `dequantize_row_iq*` in `ggml-quants.c`, quantization of IQ4_NL and IQ4_XS ggml's
//! `quantize_iq4_nl` / `quantize_iq4_xs` (the functions `ggml_quantize_chunk` calls). Every
//! floating-point operation is done in the reference's order, without fused multiply-add, so the
//! results are bit-identical to the reference compiled without FMA contraction.
//!
//! The grid tables live in [`grids`] as data.

// Decoding code that file bytes reach: no unwrap/expect/panic/indexing (issue 7); every exception
// is an `#[allow]` with its reason next to it. Applies to the grids and reference tests below.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::{f16_to_f32, f32_to_f16, nearest_int};
use crate::format::GgmlType;

#[path = "iq/grids.rs"]
mod grids;

// Tests may unwrap, panic and index (the project's rule: only library code must not).
#[cfg(test)]
#[path = "iq/reference_tests.rs"]
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

/// The little-endian f16 with bytes `b0`, `b1` as f32 (exact; NaN payloads kept, quieted, as
/// ggml does).
#[inline(always)]
pub(crate) fn f16_le(b0: u8, b1: u8) -> f32 {
    f16_to_f32(u16::from_le_bytes([b0, b1]))
}

/// Runs `f` over whole blocks: `B` bytes in, `N` values out. The caller guarantees that `src`
/// and `dst` hold the same whole number of blocks.
#[inline(always)]
pub(super) fn blocks<const B: usize, const N: usize>(src: &[u8], dst: &mut [f32], f: impl Fn(&[u8; B], &mut [f32; N])) {
    debug_assert_eq!(src.len() / B * N, dst.len());
    for (b, y) in src.chunks_exact(B).zip(dst.chunks_exact_mut(N)) {
        if let (Ok(b), Ok(y)) = (<&[u8; B]>::try_from(b), <&mut [f32; N]>::try_from(y)) {
            f(b, y);
        }
    }
}

/// Runs `f` over whole blocks: `N` values in, `B` bytes out.
#[inline(always)]
pub(super) fn blocks_q<const N: usize, const B: usize>(
    src: &[f32],
    dst: &mut [u8],
    mut f: impl FnMut(&[f32; N], &mut [u8; B]),
) {
    debug_assert_eq!(src.len() / N * B, dst.len());
    for (x, b) in src.chunks_exact(N).zip(dst.chunks_exact_mut(B)) {
        if let (Ok(x), Ok(b)) = (<&[f32; N]>::try_from(x), <&mut [u8; B]>::try_from(b)) {
            f(x, b);
        }
    }
}

/// Dequantizes whole blocks of `dtype` from `src` (little-endian block bytes) into `dst`
/// (`dst.len()` = blocks × block size, checked by the caller). Returns `false` if `dtype` is
/// not of this family.
#[allow(dead_code)] // called from `codec/mod.rs` once wired
pub(crate) fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> bool {
    match dtype {
        GgmlType::IQ2_XXS => blocks::<66, 256>(src, dst, dequant_iq2_xxs),
        GgmlType::IQ2_XS => blocks::<74, 256>(src, dst, dequant_iq2_xs),
        GgmlType::IQ2_S => blocks::<82, 256>(src, dst, dequant_iq2_s),
        GgmlType::IQ3_XXS => blocks::<98, 256>(src, dst, dequant_iq3_xxs),
        GgmlType::IQ3_S => blocks::<110, 256>(src, dst, dequant_iq3_s),
        GgmlType::IQ1_S => blocks::<50, 256>(src, dst, dequant_iq1_s),
        GgmlType::IQ1_M => blocks::<56, 256>(src, dst, dequant_iq1_m),
        GgmlType::IQ4_NL => blocks::<18, 32>(src, dst, dequant_iq4_nl),
        GgmlType::IQ4_XS => blocks::<136, 256>(src, dst, dequant_iq4_xs),
        _ => return false,
    }
    true
}

/// Quantizes `src` (whole blocks) into `dst` (blocks × type size, checked by the caller).
/// Returns `false` if `dtype` is not quantized by this family.
///
/// IQ4_NL and IQ4_XS follow ggml's `quantize_iq4_nl` / `quantize_iq4_xs` without importance
/// weights (7 scale trials per 32-element block), which is what `ggml_quantize_chunk` runs.
/// (`quantize_row_iq4_xs_ref` is the same function; `quantize_row_iq4_nl_ref` tries no scales
/// and leaves the levels of an all-small block to whatever its buffer held, so it is not
/// followed.)
#[allow(dead_code)] // called from `codec/mod.rs` once wired
pub(crate) fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> bool {
    quantize_weighted(dtype, src, None, dst)
}

/// [`quantize`] with optional importance weights (`quant_weights` of ggml's `quantize_iq4_*`),
/// one per element of `src` (same length, checked by the caller; a block without its full
/// weights is quantized unweighted). ggml's importance matrix has one weight per column, shared
/// by all rows: quantize a tensor row by row with the same `weights`. Returns `false` if `dtype`
/// is not quantized by this family.
#[allow(dead_code)] // called from `codec/mod.rs` once wired
pub(crate) fn quantize_weighted(dtype: GgmlType, src: &[f32], weights: Option<&[f32]>, dst: &mut [u8]) -> bool {
    match dtype {
        GgmlType::IQ4_NL => {
            let mut i = 0;
            blocks_q::<32, 18>(src, dst, |x, b| {
                let qw = weights.and_then(|w| w.get(i * 32..i * 32 + 32));
                quant_iq4_nl(x, qw, b);
                i += 1;
            });
        }
        GgmlType::IQ4_XS => {
            let mut i = 0;
            blocks_q::<256, 136>(src, dst, |x, b| {
                let qw = weights.and_then(|w| w.get(i * 256..i * 256 + 256));
                quant_iq4_xs(x, qw, b);
                i += 1;
            });
        }
        _ => return false,
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Dequantization, one block at a time.

/// IQ2_XXS, 66 bytes: f16 `d`; 8 groups of 32 elements, each two u32: four grid indices (bytes of
/// the first), four 7-bit sign indices and a 4-bit scale (the second).
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq2_xxs(b: &[u8; 66], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    for (q, y) in b[2..].chunks_exact(8).zip(y.chunks_exact_mut(32)) {
        let aux1 = u32::from_le_bytes([q[4], q[5], q[6], q[7]]);
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let grid = &IQ2XXS_GRID[q[l] as usize];
            let signs = KSIGNS[((aux1 >> (7 * l)) & 127) as usize];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(db * g as f32, signs, j);
            }
        }
    }
}

/// IQ2_XS, 74 bytes: f16 `d`, 32 u16 (9-bit grid index, 7-bit sign index), 8 bytes of two 4-bit
/// scales.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq2_xs(b: &[u8; 74], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let (qs, scales) = b[2..].split_at(64);
    for ((q, &sc), y) in qs.chunks_exact(8).zip(scales).zip(y.chunks_exact_mut(32)) {
        let db = [d * (0.5 + (sc & 0xf) as f32) * 0.25, d * (0.5 + (sc >> 4) as f32) * 0.25];
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let v = u16::from_le_bytes([q[2 * l], q[2 * l + 1]]);
            let grid = &IQ2XS_GRID[(v & 511) as usize];
            let signs = KSIGNS[(v >> 9) as usize];
            let dl = db[l / 2];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(dl * g as f32, signs, j);
            }
        }
    }
}

/// IQ2_S, 82 bytes: f16 `d`, 32 low grid index bytes, 32 sign bytes, 8 bytes of high index bits,
/// 8 bytes of two 4-bit scales.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq2_s(b: &[u8; 82], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let (qs, rest) = b[2..].split_at(32);
    let (signs, rest) = rest.split_at(32);
    let (qh, scales) = rest.split_at(8);
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let sc = scales[ib];
        let db = [d * (0.5 + (sc & 0xf) as f32) * 0.25, d * (0.5 + (sc >> 4) as f32) * 0.25];
        let h = qh[ib] as usize;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let idx = qs[4 * ib + l] as usize | ((h << (8 - 2 * l)) & 0x300);
            let grid = &IQ2S_GRID[idx];
            let s = signs[4 * ib + l];
            let dl = db[l / 2];
            for (j, (yv, &g)) in y.iter_mut().zip(grid).enumerate() {
                *yv = signed(dl * g as f32, s, j);
            }
        }
    }
}

/// IQ3_XXS, 98 bytes: f16 `d`, 64 grid index bytes, 8 u32 of four 7-bit sign indices and a 4-bit
/// scale.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq3_xxs(b: &[u8; 98], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let (qs, ss) = b[2..].split_at(64);
    for ((q, s), y) in qs.chunks_exact(8).zip(ss.chunks_exact(4)).zip(y.chunks_exact_mut(32)) {
        let aux = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
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

/// IQ3_S, 110 bytes: f16 `d`, 64 low grid index bytes, 8 bytes of high index bits, 32 sign bytes,
/// 4 bytes of two 4-bit scales.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq3_s(b: &[u8; 110], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let (qs, rest) = b[2..].split_at(64);
    let (qh, rest) = rest.split_at(8);
    let (signs, scales) = rest.split_at(32);
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let sc = scales[ib / 2];
        let nibble = if ib % 2 == 0 { sc & 0xf } else { sc >> 4 };
        let db = d * (1 + 2 * i32::from(nibble)) as f32;
        let h = qh[ib] as usize;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let g1 = &IQ3S_GRID[qs[8 * ib + 2 * l] as usize | ((h << (8 - 2 * l)) & 256)];
            let g2 = &IQ3S_GRID[qs[8 * ib + 2 * l + 1] as usize | ((h << (7 - 2 * l)) & 256)];
            let s = signs[4 * ib + l];
            for j in 0..4 {
                y[j] = signed(db * g1[j] as f32, s, j);
                y[j + 4] = signed(db * g2[j] as f32, s, j + 4);
            }
        }
    }
}

/// IQ1_S, 50 bytes: f16 `d`, 32 low grid index bytes, 8 u16 of four 3-bit high index parts, a
/// 3-bit scale and the delta sign.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq1_s(b: &[u8; 50], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let (qs, qh) = b[2..].split_at(32);
    for ((q, h), y) in qs.chunks_exact(4).zip(qh.chunks_exact(2)).zip(y.chunks_exact_mut(32)) {
        let h = u16::from_le_bytes([h[0], h[1]]) as usize;
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

/// IQ1_M, 56 bytes: 32 low grid index bytes, 16 bytes of two (3-bit high index, delta sign)
/// nibbles, 4 u16 of 3-bit scales whose top nibbles together are the f16 super-block scale.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq1_m(b: &[u8; 56], y: &mut [f32; 256]) {
    let (qs, rest) = b.split_at(32);
    let (qh, scales) = rest.split_at(16);
    let sc = [
        u16::from_le_bytes([scales[0], scales[1]]),
        u16::from_le_bytes([scales[2], scales[3]]),
        u16::from_le_bytes([scales[4], scales[5]]),
        u16::from_le_bytes([scales[6], scales[7]]),
    ];
    let scale = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    let d = f16_to_f32(scale);
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let s = sc[ib / 2] as usize;
        let shift = 6 * (ib % 2);
        let dl1 = d * (2 * ((s >> shift) & 7) + 1) as f32;
        let dl2 = d * (2 * ((s >> (shift + 3)) & 7) + 1) as f32;
        let (h0, h1) = (qh[2 * ib] as usize, qh[2 * ib + 1] as usize);
        let q = &qs[4 * ib..4 * ib + 4];
        let idx = [
            q[0] as usize | ((h0 << 8) & 0x700),
            q[1] as usize | ((h0 << 4) & 0x700),
            q[2] as usize | ((h1 << 8) & 0x700),
            q[3] as usize | ((h1 << 4) & 0x700),
        ];
        let delta = |bit: bool| if bit { -IQ1_DELTA } else { IQ1_DELTA };
        let deltas = [delta(h0 & 0x08 != 0), delta(h0 & 0x80 != 0), delta(h1 & 0x08 != 0), delta(h1 & 0x80 != 0)];
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let grid = &IQ1S_GRID[idx[l]];
            let dl = if l < 2 { dl1 } else { dl2 };
            for j in 0..8 {
                y[j] = dl * (grid[j] as f32 + deltas[l]);
            }
        }
    }
}

/// IQ4_NL, 18 bytes: f16 `d`, 16 bytes of two 4-bit level indices (elements `j` and `j + 16`).
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq4_nl(b: &[u8; 18], y: &mut [f32; 32]) {
    let d = f16_le(b[0], b[1]);
    let (lo, hi) = y.split_at_mut(16);
    for ((&q, lo), hi) in b[2..].iter().zip(lo).zip(hi) {
        *lo = d * KVALUES_IQ4NL[(q & 0xf) as usize] as f32;
        *hi = d * KVALUES_IQ4NL[(q >> 4) as usize] as f32;
    }
}

/// IQ4_XS, 136 bytes: f16 `d`, u16 of 2-bit high scale parts, 4 bytes of 4-bit low scale parts,
/// 128 bytes of 4-bit level indices.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed
// by loop counters over the block's fixed layout, and every table index taken from file bytes
// is a `u8`, a masked or shifted value no larger than its table (256/512/1024/2048-entry grids,
// 128 KSIGNS, 16 levels). Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_iq4_xs(b: &[u8; 136], y: &mut [f32; 256]) {
    let d = f16_le(b[0], b[1]);
    let scales_h = u16::from_le_bytes([b[2], b[3]]) as i32;
    let scales_l = &b[4..8];
    for (ib, (q, y)) in b[8..].chunks_exact(16).zip(y.chunks_exact_mut(32)).enumerate() {
        let ls = ((scales_l[ib / 2] as i32 >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
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

/// Finds the best scale of one 32-element sub-block (levels go to `l`); returns 0 for a
/// sub-block below [`GROUP_MAX_EPS`]. `sigma2` is only used with importance weights.
// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn iq4_subblock_scale(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, l: &mut [u8]) -> f32 {
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
    let (mut amax, mut max) = (0f32, 0f32);
    for &x in xb {
        let ax = x.abs();
        if ax > amax {
            amax = ax;
            max = x;
        }
    }
    if amax < GROUP_MAX_EPS {
        return 0.0;
    }
    let v0 = KVALUES_IQ4NL[0] as f32;
    let mut d = -max / v0;
    let mut id = 1.0 / d;
    let (mut sumqx, mut sumq2) = (0f32, 0f32);
    for ((&x, &w), lj) in xb.iter().zip(&weight).zip(l.iter_mut()) {
        let al = id * x;
        let li = best_index_iq4nl(al);
        *lj = li;
        let q = KVALUES_IQ4NL[li as usize] as f32;
        sumqx += w * q * x;
        sumq2 += w * q * q;
    }
    d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        id = (itry + KVALUES_IQ4NL[0] as i32) as f32 / max;
        sumqx = 0.0;
        sumq2 = 0.0;
        for (&x, &w) in xb.iter().zip(&weight) {
            let al = id * x;
            let q = KVALUES_IQ4NL[best_index_iq4nl(al) as usize] as f32;
            sumqx += w * q * x;
            sumq2 += w * q * q;
        }
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    d
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

fn quant_iq4_nl(x: &[f32; 32], qw: Option<&[f32]>, b: &mut [u8; 18]) {
    let s2 = if qw.is_some() { sigma2(x) } else { 0.0 };
    let mut l = [0u8; 32];
    let d = iq4_subblock_scale(x, qw, s2, &mut l);
    b[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
    // With a single sub-block the levels are recomputed from the f32 scale.
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    for (lj, &xj) in l.iter_mut().zip(x) {
        *lj = best_index_iq4nl(id * xj);
    }
    pack_levels(&l, &mut b[2..]);
}

// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_iq4_xs(x: &[f32; 256], qw: Option<&[f32]>, b: &mut [u8; 136]) {
    let s2 = if qw.is_some() { sigma2(x) } else { 0.0 };
    let mut l = [0u8; 256];
    let mut scales = [0f32; 8];
    let (mut max_scale, mut amax_scale) = (0f32, 0f32);
    for (ib, (xb, lb)) in x.chunks_exact(32).zip(l.chunks_exact_mut(32)).enumerate() {
        let qwb = qw.and_then(|w| w.get(32 * ib..32 * ib + 32));
        let d = iq4_subblock_scale(xb, qwb, s2, lb);
        scales[ib] = d;
        let abs_d = d.abs();
        if abs_d > amax_scale {
            amax_scale = abs_d;
            max_scale = d;
        }
    }
    let d = -max_scale / 32.0;
    b[..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut scales_h = 0u16;
    let mut scales_l = [0u8; 4];
    for (ib, (xb, lb)) in x.chunks_exact(32).zip(l.chunks_exact_mut(32)).enumerate() {
        let ls = nearest_int(id * scales[ib]).clamp(-32, 31);
        let dl = d * ls as f32;
        let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
        for (lj, &xj) in lb.iter_mut().zip(xb) {
            *lj = best_index_iq4nl(idl * xj);
        }
        let ls = (ls + 32) as u8;
        scales_l[ib / 2] |= (ls & 0xf) << (4 * (ib % 2));
        scales_h |= u16::from(ls >> 4) << (2 * ib);
    }
    b[2..4].copy_from_slice(&scales_h.to_le_bytes());
    b[4..8].copy_from_slice(&scales_l);
    pack_levels(&l, &mut b[8..]);
}
