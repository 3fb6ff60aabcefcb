//! Legacy 32-element block types: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1.
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
//! Quantizers follow `quantize_row_{q4_0,q4_1,q5_0,q5_1,q8_0,q8_1}_ref` in `ggml-quants.c`.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::{cvtt_i32, f32_to_f16, half_at, round_cvt_i32};
use crate::format::GgmlType;

const QK: usize = 32;

/// Dequantizes whole blocks of `dtype` from `src` (little-endian block bytes) into `dst`
/// (`dst.len()` = blocks × block size, checked by the caller). Returns `false` if `dtype` is
/// not of this family.
pub(crate) fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> bool {
    match dtype {
        GgmlType::Q4_0 => q4_0_rows(src, dst),
        GgmlType::Q4_1 => simd_or!(q4_1_avx2, dequant_q4_1, src, dst),
        GgmlType::Q5_0 => q5_0_rows(src, dst),
        GgmlType::Q5_1 => simd_or!(q5_1_avx2, dequant_q5_1, src, dst),
        GgmlType::Q8_0 => q8_0_rows(src, dst),
        GgmlType::Q8_1 => simd_or!(q8_1_avx2, dequant_q8_1, src, dst),
        _ => return false,
    }
    true
}

/// Quantizes `src` (whole blocks) into `dst` (blocks × type size, checked by the caller).
/// Returns `false` if `dtype` is not quantized by this family.
pub(crate) fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> bool {
    match dtype {
        GgmlType::Q4_0 => quant_q4_0(src, dst),
        GgmlType::Q4_1 => quant_q4_1(src, dst),
        GgmlType::Q5_0 => quant_q5_0(src, dst),
        GgmlType::Q5_1 => quant_q5_1(src, dst),
        GgmlType::Q8_0 => quant_q8_0(src, dst),
        GgmlType::Q8_1 => quant_q8_1(src, dst),
        _ => return false,
    }
    true
}

// ------------------------------------------------------------------------------- dequantize

pub(crate) fn q4_0_rows(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            unsafe { super::simd::q4_0_avx2(src, dst) };
            return;
        }
    }
    dequant_q4_0(src, dst);
}

pub(crate) fn q5_0_rows(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            unsafe { super::simd::q5_0_avx2(src, dst) };
            return;
        }
    }
    dequant_q5_0(src, dst);
}

pub(crate) fn q8_0_rows(src: &[u8], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time.
            unsafe { super::simd::q8_0_avx2(src, dst) };
            return;
        }
    }
    dequant_q8_0(src, dst);
}

/// Portable Q4_0.
pub(crate) fn dequant_q4_0(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(18).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        let qs = &b[2..18];
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            lo[j] = ((qs[j] & 0x0F) as i32 - 8) as f32 * d;
            hi[j] = ((qs[j] >> 4) as i32 - 8) as f32 * d;
        }
    }
}

pub(crate) fn dequant_q4_1(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(20).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        let m = half_at(b, 2);
        let qs = &b[4..20];
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            lo[j] = (qs[j] & 0x0F) as f32 * d + m;
            hi[j] = (qs[j] >> 4) as f32 * d + m;
        }
    }
}

/// Portable Q5_0.
pub(crate) fn dequant_q5_0(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(22).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        let qs = &b[6..22];
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            let h0 = ((qh >> j) << 4) as u8 & 0x10;
            let h1 = (qh >> (j + 12)) as u8 & 0x10;
            lo[j] = (((qs[j] & 0x0F) | h0) as i32 - 16) as f32 * d;
            hi[j] = (((qs[j] >> 4) | h1) as i32 - 16) as f32 * d;
        }
    }
}

pub(crate) fn dequant_q5_1(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(24).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        let m = half_at(b, 2);
        let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let qs = &b[8..24];
        let (lo, hi) = y.split_at_mut(16);
        for j in 0..16 {
            let h0 = ((qh >> j) << 4) as u8 & 0x10;
            let h1 = (qh >> (j + 12)) as u8 & 0x10;
            lo[j] = ((qs[j] & 0x0F) | h0) as f32 * d + m;
            hi[j] = ((qs[j] >> 4) | h1) as f32 * d + m;
        }
    }
}

/// Portable Q8_0.
pub(crate) fn dequant_q8_0(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(34).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        for (o, &q) in y.iter_mut().zip(&b[2..34]) {
            *o = q as i8 as f32 * d;
        }
    }
}

pub(crate) fn dequant_q8_1(src: &[u8], dst: &mut [f32]) {
    for (b, y) in src.chunks_exact(36).zip(dst.chunks_exact_mut(QK)) {
        let d = half_at(b, 0);
        for (o, &q) in y.iter_mut().zip(&b[4..36]) {
            *o = q as i8 as f32 * d;
        }
    }
}

// --------------------------------------------------------------------------------- quantize

/// `cvtt_i32(((x[i] - sub) * mul) + add)` for a 32-element block, with AVX2 when available.
#[inline(always)]
fn affine_cvtt(x: &[f32], sub: f32, mul: f32, add: f32) -> [i32; 32] {
    let mut out = [0i32; 32];
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time; x is a 32-element block.
            #[allow(unsafe_code)]
            unsafe {
                super::simd::affine_cvtt_32(x, sub, mul, add, &mut out)
            };
            return out;
        }
    }
    for (o, &v) in out.iter_mut().zip(x) {
        *o = cvtt_i32((v - sub) * mul + add);
    }
    out
}

/// `round_cvt_i32(x[i] * mul)` for a 32-element block, with AVX2 when available.
#[inline(always)]
fn round_cvt(x: &[f32], mul: f32) -> [i32; 32] {
    let mut out = [0i32; 32];
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time; x is a 32-element block.
            #[allow(unsafe_code)]
            unsafe {
                super::simd::round_cvt_32(x, mul, &mut out)
            };
            return out;
        }
    }
    for (o, &v) in out.iter_mut().zip(x) {
        *o = round_cvt_i32(v * mul);
    }
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
fn signed_absmax(x: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time; x is a 32-element block.
            #[allow(unsafe_code)]
            let amax = unsafe { super::simd::abs_max_32(x) };
            // The reference keeps the first element whose |v| beats every earlier one: the
            // first with |v| == amax (none if amax is 0).
            if amax > 0.0 {
                return x.iter().copied().find(|v| v.abs() == amax).unwrap_or(0.0);
            }
            return 0.0;
        }
    }
    let mut amax = 0f32;
    let mut max = 0f32;
    for &v in x {
        if amax < v.abs() {
            amax = v.abs();
            max = v;
        }
    }
    max
}

/// `min` and `max` as the reference finds them (`v < min`, `v > max` from `FLT_MAX`,
/// `-FLT_MAX`; the first of equal values stays).
#[inline(always)]
fn min_max(x: &[f32]) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if super::simd::has_avx2() {
            // SAFETY: AVX2 checked at run time; x is a 32-element block.
            #[allow(unsafe_code)]
            let (min, max) = unsafe { super::simd::min_max_32(x) };
            // Values that compare equal have equal bits except +0 and -0, where the reference
            // keeps whichever came first: settle those rare cases the scalar way.
            if min != 0.0 && max != 0.0 {
                return (min, max);
            }
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

#[inline(always)]
fn inv(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

fn quant_q4_0(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(18)) {
        let max = signed_absmax(x);
        let d = max / -8.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        // x - 0.0 is x bit for bit, so this is `x * id + 8.5` as in the reference.
        let q = affine_cvtt(x, 0.0, id, 8.5);
        for j in 0..16 {
            b[2 + j] = min_i8_of(15, q[j]) | (min_i8_of(15, q[j + 16]) << 4);
        }
    }
}

fn quant_q4_1(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(20)) {
        let (min, max) = min_max(x);
        let d = (max - min) / 15.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        b[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        let q = affine_cvtt(x, min, id, 0.5);
        for j in 0..16 {
            b[4 + j] = min_i8_of(15, q[j]) | (min_i8_of(15, q[j + 16]) << 4);
        }
    }
}

fn quant_q5_0(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(22)) {
        let max = signed_absmax(x);
        let d = max / -16.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let mut qh = 0u32;
        let q = affine_cvtt(x, 0.0, id, 16.5);
        for j in 0..16 {
            let x0 = min_i8_of(31, q[j]);
            let x1 = min_i8_of(31, q[j + 16]);
            b[6 + j] = (x0 & 0x0F) | ((x1 & 0x0F) << 4);
            qh |= (((x0 & 0x10) >> 4) as u32) << j;
            qh |= (((x1 & 0x10) >> 4) as u32) << (j + 16);
        }
        b[2..6].copy_from_slice(&qh.to_le_bytes());
    }
}

fn quant_q5_1(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(24)) {
        let (min, max) = min_max(x);
        let d = (max - min) / 31.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        b[2..4].copy_from_slice(&f32_to_f16(min).to_le_bytes());
        let mut qh = 0u32;
        let q = affine_cvtt(x, min, id, 0.5);
        for j in 0..16 {
            // `(uint8_t)(float)`: no clamp in the reference.
            let x0 = q[j] as u8;
            let x1 = q[j + 16] as u8;
            b[8 + j] = (x0 & 0x0F) | ((x1 & 0x0F) << 4);
            qh |= (((x0 & 0x10) >> 4) as u32) << j;
            qh |= (((x1 & 0x10) >> 4) as u32) << (j + 16);
        }
        b[4..8].copy_from_slice(&qh.to_le_bytes());
    }
}

/// `amax = MAX(amax, fabsf(v))` with C's `MAX(a, b) = a > b ? a : b` (a NaN resets it).
#[inline(always)]
fn absmax_c(x: &[f32]) -> f32 {
    let mut amax = 0f32;
    for &v in x {
        let a = v.abs();
        amax = if amax > a { amax } else { a };
    }
    amax
}

fn quant_q8_0(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(34)) {
        let amax = absmax_c(x);
        let d = amax / 127.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let q = round_cvt(x, id);
        for (o, &v) in b[2..34].iter_mut().zip(&q) {
            *o = v as u8;
        }
    }
}

fn quant_q8_1(src: &[f32], dst: &mut [u8]) {
    for (x, b) in src.chunks_exact(QK).zip(dst.chunks_exact_mut(36)) {
        let amax = absmax_c(x);
        let d = amax / 127.0;
        let id = inv(d);
        b[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
        let mut sum = 0i32;
        let q = round_cvt(x, id);
        for j in 0..16 {
            let q0 = q[j] as i8;
            let q1 = q[j + 16] as i8;
            b[4 + j] = q0 as u8;
            b[4 + j + 16] = q1 as u8;
            sum += q0 as i32 + q1 as i32;
        }
        b[2..4].copy_from_slice(&f32_to_f16(sum as f32 * d).to_le_bytes());
    }
}

// ------------------------------------------------------------- quantize with importance weights

/// Quantizes one row (`x.len()` = `n_per_row`, whole blocks) with importance weights `qw` (one per
/// column), as ggml's `quantize_row_q{4_0,4_1,5_0,5_1}_impl`. Q8_0 and Q8_1 ignore the weights,
/// as ggml does. Returns `false` for other types.
pub(crate) fn quantize_row_imatrix(dtype: GgmlType, x: &[f32], dst: &mut [u8], qw: &[f32]) -> bool {
    let (nmax, ts, with_min) = match dtype {
        GgmlType::Q4_0 => (8, 18, false),
        GgmlType::Q5_0 => (16, 22, false),
        GgmlType::Q4_1 => (15, 20, true),
        GgmlType::Q5_1 => (31, 24, true),
        GgmlType::Q8_0 | GgmlType::Q8_1 => return quantize(dtype, x, dst),
        _ => return false,
    };
    let mut sum_x2 = 0f32;
    for &v in x {
        sum_x2 += v * v;
    }
    let sigma2 = sum_x2 / x.len() as f32;
    let mut weight = [0f32; QK];
    for ((xb, y), qwb) in x.chunks_exact(QK).zip(dst.chunks_exact_mut(ts)).zip(qw.chunks_exact(QK)) {
        for j in 0..QK {
            weight[j] = qwb[j] * (sigma2 + xb[j] * xb[j]).sqrt();
        }
        let mut l = [0u8; QK];
        let qs_at;
        if with_min {
            let mut laux = [0u8; QK];
            let (d, the_min) =
                super::kquants::make_qkx_quants(nmax, xb, &weight, &mut l, &mut laux, -0.9, 0.05, 36, false, true);
            y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
            y[2..4].copy_from_slice(&f32_to_f16(-the_min).to_le_bytes());
            qs_at = 4;
        } else {
            let mut li = [0i8; QK];
            let d = super::kquants::make_qx_quants(nmax, xb, &mut li, Some(&weight));
            l = li.map(|v| v as u8);
            y[0..2].copy_from_slice(&f32_to_f16(d).to_le_bytes());
            qs_at = 2;
        }
        if nmax < 16 {
            for j in 0..16 {
                y[qs_at + j] = l[j] | (l[j + 16] << 4);
            }
        } else {
            let mut qh = 0u32;
            for j in 0..16 {
                let (x0, x1) = (l[j], l[j + 16]);
                y[qs_at + 4 + j] = (x0 & 0x0F) | ((x1 & 0x0F) << 4);
                qh |= (((x0 & 0x10) >> 4) as u32) << j;
                qh |= (((x1 & 0x10) >> 4) as u32) << (j + 16);
            }
            y[qs_at..qs_at + 4].copy_from_slice(&qh.to_le_bytes());
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::f16_to_f32;

    /// The reference keeps the first of +0 and -0 as the block minimum (`v < min` is false for
    /// equal values); Q4_1 stores it in `m`. Worked out by hand.
    #[test]
    fn q4_1_min_keeps_the_first_signed_zero() {
        for (first, second, want_m) in [(0.0f32, -0.0f32, 0x0000u16), (-0.0, 0.0, 0x8000)] {
            let mut x = [1.0f32; 32];
            x[5] = first;
            x[20] = second;
            let mut b = [0u8; 20];
            assert!(quantize(GgmlType::Q4_1, &x, &mut b));
            assert_eq!(u16::from_le_bytes([b[2], b[3]]), want_m);
        }
        // And the largest magnitude's sign for Q4_0: the first of equal |v| wins.
        let mut x = [0.5f32; 32];
        x[3] = -2.0;
        x[9] = 2.0;
        let mut b = [0u8; 18];
        assert!(quantize(GgmlType::Q4_0, &x, &mut b));
        assert_eq!(f16_to_f32(u16::from_le_bytes([b[0], b[1]])), 0.25); // d = -2 / -8
    }
}
