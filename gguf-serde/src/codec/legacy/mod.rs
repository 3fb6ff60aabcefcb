//! Legacy 32-element block types: Q4_0, Q4_1 (`q4.rs`), Q5_0, Q5_1 (`q5.rs`), Q8_0, Q8_1 (`q8.rs`).
//!
//! Layouts (`ggml-common.h`, all little-endian):
//! - Q4_0 (18 bytes): `d` f16, `qs[16]` — element `j` is the low nibble of `qs[j]`, element
//!   `j + 16` the high nibble; value `(q - 8) × d`.
//! - Q4_1 (20): `d` f16, `m` f16, `qs[16]`; value `q × d + m`.
//! - Q5_0 (22): `d` f16, `qh` u32 (bit `j` = 5th bit of element `j`), `qs[16]`; value `(q - 16) × d`.
//! - Q5_1 (24): `d`, `m`, `qh`, `qs[16]`; value `q × d + m`.
//! - Q8_0 (34): `d` f16, `qs[32]` i8; value `q × d`.
//! - Q8_1 (36): `d` f16, `s` f16 (= `d × Σq`), `qs[32]` i8; value `q × d`. ggml has no
//!   `dequantize_row_q8_1` (Q8_1 is an intermediate type of its dot products); this is the value
//!   the block encodes.
//!
//! Quantizers follow `quantize_row_{q4_0,q4_1,q5_0,q5_1,q8_0,q8_1}_ref` in `ggml-quants.c`, the
//! importance paths `quantize_row_q{4_0,4_1,5_0,5_1}_impl`. This file holds what they share.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

mod q4;
mod q5;
mod q8;

pub(crate) use q4::{block_q4_0, block_q4_1};
pub(crate) use q5::{block_q5_0, block_q5_1};
pub(crate) use q8::{block_q8_0, block_q8_1};

use super::isa::{simd, Isa};
use super::kquants::lanes::{make_qkx2_quants_x8, make_qx_quants_x8, LANES};
use super::kquants::search::{make_qkx3_quants, make_qx_quants};
use super::scalar::{cvtt_i32, max_by_abs, round_cvt_i32};

/// Elements per block.
const QK: usize = 32;

/// `cvtt_i32(((x[i] - sub) * mul) + add)` for a 32-element block.
#[inline(always)]
fn affine_cvtt(isa: Isa, x: &[f32; QK], sub: f32, mul: f32, add: f32) -> [i32; QK] {
    let mut out = [0i32; QK];
    simd!(if isa.avx2() {
        super::avx2::affine_cvtt_32(x, sub, mul, add, &mut out)
    } else {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = cvtt_i32((v - sub) * mul + add);
        }
    });
    out
}

/// `round_cvt_i32(x[i] * mul)` for a 32-element block.
#[inline(always)]
fn round_cvt(isa: Isa, x: &[f32; QK], mul: f32) -> [i32; QK] {
    let mut out = [0i32; QK];
    simd!(if isa.avx2() {
        super::avx2::round_cvt_32(x, mul, &mut out)
    } else {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = round_cvt_i32(v * mul);
        }
    });
    out
}

/// `MIN(hi, (int8_t)v)` stored to `uint8_t`, from the 32-bit conversion result `v`.
#[inline(always)]
fn min_i8_of(hi: i32, v: i32) -> u8 {
    let v = v as i8 as i32;
    (if hi < v { hi } else { v }) as u8
}

/// Absolute max and the signed value that has it (the first one, strict `<`), as the reference.
#[inline(always)]
fn signed_absmax(isa: Isa, x: &[f32; QK]) -> f32 {
    let simd_amax = simd!(if isa.avx2() { Some(super::avx2::abs_max_32(x)) } else { None });
    if let Some(amax) = simd_amax {
        // The reference keeps the first element whose |v| beats every earlier one: the first
        // with |v| == amax (none if amax is 0).
        if amax > 0.0 {
            return x.iter().copied().find(|v| v.abs() == amax).unwrap_or(0.0);
        }
        return 0.0;
    }
    max_by_abs(x).1
}

/// `min` and `max` as the reference finds them (`v < min`, `v > max` from `FLT_MAX`,
/// `-FLT_MAX`; the first of equal values stays).
#[inline(always)]
fn min_max(isa: Isa, x: &[f32; QK]) -> (f32, f32) {
    let simd_min_max = simd!(if isa.avx2() { Some(super::avx2::min_max_32(x)) } else { None });
    if let Some((min, max)) = simd_min_max {
        // Values that compare equal have equal bits except +0 and -0, where the reference
        // keeps whichever came first: settle those rare cases the scalar way.
        if min != 0.0 && max != 0.0 {
            return (min, max);
        }
    }
    let mut min = f32::MAX;
    let mut max = -f32::MAX;
    for &v in x {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    (min, max)
}

/// `1 / d`, or 0 for `d == 0`.
#[inline(always)]
fn inv(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

/// The levels `level(q[j])`, element `j` in the low nibble of byte `j`, element `j + 16` in the
/// high nibble, unmasked (`qs[j] = xi0; qs[j] |= xi1 << 4` in the reference).
#[inline(always)]
fn pack_nibbles<T: Copy>(q: &[T; QK], level: impl Fn(T) -> u8) -> [u8; 16] {
    let mut qs = [0u8; 16];
    for j in 0..16 {
        qs[j] = level(q[j]) | (level(q[j + 16]) << 4);
    }
    qs
}

/// The 5-bit levels `level(q[j])` as Q5_0/Q5_1 store them: the low 4 bits as [`pack_nibbles`]
/// (masked), bit 4 of element `j` in bit `j` of `qh`.
#[inline(always)]
fn pack_5bit<T: Copy>(q: &[T; QK], level: impl Fn(T) -> u8) -> ([u8; 16], u32) {
    let mut l = [0u8; QK];
    for j in 0..QK {
        l[j] = level(q[j]);
    }
    let mut qs = [0u8; 16];
    for j in 0..16 {
        qs[j] = (l[j] & 0x0F) | ((l[j + 16] & 0x0F) << 4);
    }
    let mut qh = 0u32;
    for j in 0..QK {
        qh |= (((l[j] & 0x10) >> 4) as u32) << j;
    }
    (qs, qh)
}

/// The levels of one row with importance weights `qw` (one per element), as
/// `quantize_row_q{4_0,4_1,5_0,5_1}_impl`: for each block `i`, `emit(i, d, min, levels)` with the
/// block's scale, its min (`WITH_MIN`, already negated as `m` is stored; else 0) and its levels
/// in `0..=2 nmax`. Each block's search is the reference's (`make_qkx3_quants` with a min,
/// `make_qx_quants` without), run on eight blocks at a time side by side in SIMD lanes
/// ([`make_qkx2_quants_x8`], [`make_qx_quants_x8`]: the scalar searches' results bit for bit),
/// the blocks left over one by one.
fn imatrix_levels<const WITH_MIN: bool>(
    isa: Isa,
    x: &[[f32; QK]],
    qw: &[[f32; QK]],
    nmax: i32,
    mut emit: impl FnMut(usize, f32, f32, &[u8; QK]),
) {
    let mut sum_x2 = 0f32;
    for &v in x.as_flattened() {
        sum_x2 += v * v;
    }
    let sigma2 = sum_x2 / (x.len() * QK) as f32;
    let weight = |xb: &[f32; QK], qwb: &[f32; QK]| -> [f32; QK] {
        let mut w = [0f32; QK];
        for j in 0..QK {
            w[j] = qwb[j] * (sigma2 + xb[j] * xb[j]).sqrt();
        }
        w
    };
    let whole = x.len() / LANES * LANES;
    for g in (0..whole).step_by(LANES) {
        // Block g + k's element j at [j][k].
        let mut xt = [[0f32; LANES]; QK];
        let mut wt = [[0f32; LANES]; QK];
        for k in 0..LANES {
            let w = weight(&x[g + k], &qw[g + k]);
            for j in 0..QK {
                xt[j][k] = x[g + k][j];
                wt[j][k] = w[j];
            }
        }
        if WITH_MIN {
            let mut lt = [[0u8; LANES]; QK];
            let (d, the_min) = make_qkx2_quants_x8::<QK, false>(isa, nmax, &xt, &wt, &mut lt, -0.9, 0.05, 36);
            for k in 0..LANES {
                let l: [u8; QK] = std::array::from_fn(|j| lt[j][k]);
                emit(g + k, d[k], -the_min[k], &l);
            }
        } else {
            let mut lt = [[0i8; LANES]; QK];
            let d = make_qx_quants_x8::<QK>(isa, nmax, &xt, &wt, &mut lt);
            for k in 0..LANES {
                let l: [u8; QK] = std::array::from_fn(|j| lt[j][k] as u8);
                emit(g + k, d[k], 0.0, &l);
            }
        }
    }
    for (i, (xb, qwb)) in x.iter().zip(qw).enumerate().skip(whole) {
        let w = weight(xb, qwb);
        let mut l = [0u8; QK];
        if WITH_MIN {
            let mut laux = [0u8; QK];
            let (d, the_min) = make_qkx3_quants(nmax, xb, &w, &mut l, &mut laux);
            emit(i, d, -the_min, &l);
        } else {
            let mut li = [0i8; QK];
            let d = make_qx_quants(nmax, xb, &mut li, Some(&w));
            emit(i, d, 0.0, &li.map(|v| v as u8));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::scalar::f16_to_f32;
    use crate::codec::{quantize, GgmlType};

    /// The reference keeps the first of +0 and -0 as the block minimum (`v < min` is false for
    /// equal values); Q4_1 stores it in `m`. Worked out by hand.
    #[test]
    fn q4_1_min_keeps_the_first_signed_zero() {
        for (first, second, want_m) in [(0.0f32, -0.0f32, 0x0000u16), (-0.0, 0.0, 0x8000)] {
            let mut x = [1.0f32; 32];
            x[5] = first;
            x[20] = second;
            let mut b = [0u8; 20];
            quantize(GgmlType::Q4_1, &x, &mut b).unwrap();
            assert_eq!(u16::from_le_bytes([b[2], b[3]]), want_m);
        }
        // And the largest magnitude's sign for Q4_0: the first of equal |v| wins.
        let mut x = [0.5f32; 32];
        x[3] = -2.0;
        x[9] = 2.0;
        let mut b = [0u8; 18];
        quantize(GgmlType::Q4_0, &x, &mut b).unwrap();
        assert_eq!(f16_to_f32(u16::from_le_bytes([b[0], b[1]])), 0.25); // d = -2 / -8
    }
}
