//! Codec family `other`: the ternary quants TQ1_0 and TQ2_0, the FP4 types MXFP4 and NVFP4, and
//! the sign quants Q1_0 and Q2_0.
//!
//! Block layouts follow ggml's `ggml-common.h` (`block_tq1_0`, `block_tq2_0`, `block_mxfp4`,
//! `block_nvfp4`, `block_q1_0`, `block_q2_0`), the algorithms ggml's `ggml-quants.c`
//! (`dequantize_row_*`, `quantize_row_*_ref`) and the scale conversions of `ggml-impl.h`
//! (`ggml_e8m0_to_fp32_half`, `ggml_ue4m3_to_fp32`, `ggml_fp32_to_ue4m3`). Floating-point
//! operations run in the reference's order without fused multiply-add. Where the reference relies
//! on what x86-64 does with an out-of-range float-to-integer conversion (NaN or infinite input),
//! the same result is produced on every platform.

// Decoding code that file bytes reach: no unwrap/expect/panic/indexing; every exception
// is an `#[allow]` with its reason next to it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::block::{block, F16};
use super::scalar::max_abs_c;
use super::table::per_block;

/// `kvalues_mxfp4`: the E2M1 (FP4) values, doubled, indexed by the 4-bit code.
const KVALUES_FP4: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

block! {
    /// `block_tq1_0`: five base-3 digits per byte of `qs` (elements 0..160 in 32-byte rows,
    /// 160..240 in 16-byte rows), four per byte of `qh` (elements 240..256).
    pub(crate) struct block_tq1_0 [54 bytes] {
        qs: [u8; 48],
        qh: [u8; 4],
        d: F16,
    }
}

block! {
    /// `block_tq2_0`: four 2-bit codes per byte (element `32·4·g + 32·l + m` in bits `2l` of byte
    /// `32g + m`).
    pub(crate) struct block_tq2_0 [66 bytes] {
        qs: [u8; 64],
        d: F16,
    }
}

block! {
    /// `block_mxfp4`: an E8M0 exponent, two E2M1 codes per byte (elements `j`, `j + 16`).
    pub(crate) struct block_mxfp4 [17 bytes] {
        e: u8,
        qs: [u8; 16],
    }
}

block! {
    /// `block_nvfp4`: four UE4M3 scales (one per 16 elements), then per 16 elements 8 bytes of two
    /// E2M1 codes (elements `j`, `j + 8`).
    pub(crate) struct block_nvfp4 [36 bytes] {
        d: [u8; 4],
        qs: [u8; 32],
    }
}

block! {
    /// `block_q1_0`: sign bits (bit `j % 8` of byte `j / 8`): `+d` or `-d`.
    pub(crate) struct block_q1_0 [18 bytes] {
        d: F16,
        qs: [u8; 16],
    }
}

block! {
    /// `block_q2_0`: 2-bit codes (bits `2(j % 4)` of byte `j / 4`): `(code − 1)·d`.
    pub(crate) struct block_q2_0 [18 bytes] {
        d: F16,
        qs: [u8; 16],
    }
}

per_block!(Dequantize<256> for block_tq1_0 => dequant_tq1_0);
per_block!(Dequantize<256> for block_tq2_0 => dequant_tq2_0);
per_block!(Dequantize<32> for block_mxfp4 => dequant_mxfp4);
per_block!(Dequantize<64> for block_nvfp4 => dequant_nvfp4);
per_block!(Dequantize<128> for block_q1_0 => dequant_q1_0);
per_block!(Dequantize<64> for block_q2_0 => dequant_q2_0);
// ggml's `quantize_row_*_ref` (ggml's `quantize_*` for these types ignore importance weights).
per_block!(Quantize<256> for block_tq1_0 => quant_tq1_0);
per_block!(Quantize<256> for block_tq2_0 => quant_tq2_0);
per_block!(Quantize<32> for block_mxfp4 => quant_mxfp4);
per_block!(Quantize<64> for block_nvfp4 => quant_nvfp4);
per_block!(Quantize<128> for block_q1_0 => quant_q1_0);
per_block!(Quantize<64> for block_q2_0 => quant_q2_0);

// ---------------------------------------------------------------------------------------------
// Scalar helpers.

/// `ggml_e8m0_to_fp32_half`: 2^(e − 128), with e = 0 and 1 as the subnormals 2^-128, 2^-127.
#[inline(always)]
fn e8m0_to_f32_half(e: u8) -> f32 {
    if e < 2 {
        f32::from_bits(0x0020_0000 << e)
    } else {
        f32::from_bits(u32::from(e - 1) << 23)
    }
}

/// `ggml_ue4m3_to_fp32`: an unsigned E4M3 scale (bias 7, bit 7 ignored) times 0.5; `0x00` and
/// `0x7F` are 0. Every value is exact: (8 + m) · 2^(e − 11), or m · 2^-10 when e = 0.
#[inline(always)]
fn ue4m3_to_f32_half(x: u8) -> f32 {
    if x == 0 || x == 0x7f {
        return 0.0;
    }
    let exp = i32::from((x >> 3) & 0xf);
    let man = i32::from(x & 7);
    let (m, e) = if exp == 0 { (man, -10) } else { (8 + man, exp - 11) };
    // 2^e for e in -11..=4 is a normal f32.
    m as f32 * f32::from_bits(((e + 127) as u32) << 23)
}

/// `ggml_fp32_to_ue4m3`: round an f32 to the unsigned E4M3 code (NaN and values ≤ 0 give 0,
/// large values saturate at `0x7E` = 448).
fn f32_to_ue4m3(x: f32) -> u8 {
    // `!(x > 0)` in the reference: NaN too.
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let x = if x > 448.0 { 448.0 } else { x };
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 7;
    if exp <= 0 {
        // Subnormal: the reference truncates x · 512 + 0.5 to int.
        let man = (x * 512.0 + 0.5) as i32;
        return if man < 1 { 0 } else { man.min(7) as u8 };
    }
    if exp >= 15 {
        return 0x7e;
    }
    let mut man = ((bits >> 20) & 7) as i32 + ((bits >> 19) & 1) as i32;
    let mut exp = exp;
    if man > 7 {
        man = 0;
        exp += 1;
        if exp >= 15 {
            return 0x7e;
        }
    }
    ((exp << 3) | man) as u8
}

/// C's `(int)x` as x86-64 does it: truncation, with NaN and out-of-range values giving
/// `i32::MIN` (the "integer indefinite" value).
#[inline(always)]
fn trunc_i32_x86(x: f32) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// Round half away from zero for |x| < 2^31 (exact: `x - trunc(x)` is exact in f32).
#[inline(always)]
fn round_away_small(x: f32) -> i32 {
    let t = x as i32;
    let frac = x - t as f32;
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// `lroundf` as glibc on x86-64 gives it: round half away from zero; NaN and values outside the
/// range of `long` give `i64::MIN`.
#[inline(always)]
fn lroundf(x: f32) -> i64 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        // Rounding can reach ±2^31 only from values that already are integers, so this fits.
        i64::from(round_away_small(x))
    } else if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        // Integral already (|x| ≥ 2^23).
        x as i64
    } else {
        i64::MIN
    }
}

/// The reference's `int xi = lroundf(v) + 1` (a `long` sum narrowed to `int`).
#[inline(always)]
fn ternary_code(v: f32) -> i32 {
    lroundf(v).wrapping_add(1) as i32
}

// ---------------------------------------------------------------------------------------------
// Ternary quants.

/// Trit `n` (0 = most significant of 5) of a TQ1_0 byte `q`, minus one: the reference's
/// `((uint8_t)(q * 3^n) * 3) >> 8`, then `- 1`.
#[inline(always)]
fn tq1_trit(q: u8, pow3: u8) -> f32 {
    let q = q.wrapping_mul(pow3);
    (((u16::from(q) * 3) >> 8) as i16 - 1) as f32
}

/// 3^n for the five trits of a TQ1_0 byte.
const POW3: [u8; 5] = [1, 3, 9, 27, 81];

/// TQ1_0: `(trit − 1) × d`.
// Indexing is in range by the types: the block and the output are fixed-size arrays indexed by
// loop counters over the block's fixed layout, and every table index is a loop counter below 5.
// Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_tq1_0(b: &block_tq1_0, y: &mut [f32; 256]) {
    let d = b.d.get();
    let (y0, rest) = y.split_at_mut(160);
    let (y1, y2) = rest.split_at_mut(80);
    for (n, y) in y0.chunks_exact_mut(32).enumerate() {
        for (yv, &q) in y.iter_mut().zip(&b.qs[..32]) {
            *yv = tq1_trit(q, POW3[n]) * d;
        }
    }
    for (n, y) in y1.chunks_exact_mut(16).enumerate() {
        for (yv, &q) in y.iter_mut().zip(&b.qs[32..48]) {
            *yv = tq1_trit(q, POW3[n]) * d;
        }
    }
    for (n, y) in y2.chunks_exact_mut(4).enumerate() {
        for (yv, &q) in y.iter_mut().zip(&b.qh) {
            *yv = tq1_trit(q, POW3[n]) * d;
        }
    }
}

/// TQ2_0: `(code − 1) × d`.
fn dequant_tq2_0(b: &block_tq2_0, y: &mut [f32; 256]) {
    let d = b.d.get();
    for (q, y) in b.qs.chunks_exact(32).zip(y.chunks_exact_mut(128)) {
        for (l, y) in y.chunks_exact_mut(32).enumerate() {
            for (yv, &qb) in y.iter_mut().zip(q) {
                *yv = (((qb >> (2 * l)) & 3) as i32 - 1) as f32 * d;
            }
        }
    }
}

/// Base-3 code of up to five ternary digits as the reference packs them: `q = q·3 + xi` in `u8`
/// arithmetic, then the ceiling of `q · 256 / 243`.
#[inline(always)]
fn tq1_pack(digits: impl Iterator<Item = f32>, id: f32, extra_shift: bool) -> u8 {
    let mut q: u8 = 0;
    for v in digits {
        let xi = ternary_code(v * id);
        q = q.wrapping_mul(3).wrapping_add(xi as u8);
    }
    if extra_shift {
        q = q.wrapping_mul(3);
    }
    (u32::from(q) * 256).div_ceil(243) as u8
}

// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_tq1_0(x: &[f32; 256], b: &mut block_tq1_0) {
    let d = max_abs_c(x);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let (x0, rest) = x.split_at(160);
    let (x1, x2) = rest.split_at(80);
    for m in 0..32 {
        b.qs[m] = tq1_pack((0..5).map(|n| x0[m + 32 * n]), id, false);
    }
    for m in 0..16 {
        b.qs[32 + m] = tq1_pack((0..5).map(|n| x1[m + 16 * n]), id, false);
    }
    for j in 0..4 {
        b.qh[j] = tq1_pack((0..4).map(|m| x2[j + 4 * m]), id, true);
    }
    b.d = F16::new(d);
}

// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_tq2_0(x: &[f32; 256], b: &mut block_tq2_0) {
    let d = max_abs_c(x);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    for (xg, qg) in x.chunks_exact(128).zip(b.qs.chunks_exact_mut(32)) {
        for (m, q) in qg.iter_mut().enumerate() {
            let mut v = 0u8;
            for n in 0..4 {
                let xi = ternary_code(xg[m + 32 * n] * id);
                v = v.wrapping_add(((xi & 3) << (2 * n)) as u8);
            }
            *q = v;
        }
    }
    b.d = F16::new(d);
}

// ---------------------------------------------------------------------------------------------
// FP4 types.

/// MXFP4: `kvalues_mxfp4[q] × 2^(e − 128)`.
// Indexing is in range by the types: every table index taken from file bytes is a nibble of a
// 16-entry table. Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_mxfp4(b: &block_mxfp4, y: &mut [f32; 32]) {
    let d = e8m0_to_f32_half(b.e);
    let (lo, hi) = y.split_at_mut(16);
    for ((&q, lo), hi) in b.qs.iter().zip(lo).zip(hi) {
        *lo = KVALUES_FP4[(q & 0xf) as usize] as f32 * d;
        *hi = KVALUES_FP4[(q >> 4) as usize] as f32 * d;
    }
}

/// NVFP4: `kvalues_mxfp4[q] × ue4m3(d) / 2` per 16 elements.
// Indexing is in range by the types: every table index taken from file bytes is a nibble of a
// 16-entry table. Fuzzed by the codec no-panic property tests on arbitrary bytes.
#[allow(clippy::indexing_slicing)]
fn dequant_nvfp4(b: &block_nvfp4, y: &mut [f32; 64]) {
    for ((&s, q), y) in b.d.iter().zip(b.qs.chunks_exact(8)).zip(y.chunks_exact_mut(16)) {
        let d = ue4m3_to_f32_half(s);
        let (lo, hi) = y.split_at_mut(8);
        for ((&q, lo), hi) in q.iter().zip(lo).zip(hi) {
            *lo = KVALUES_FP4[(q & 0xf) as usize] as f32 * d;
            *hi = KVALUES_FP4[(q >> 4) as usize] as f32 * d;
        }
    }
}

/// `best_index_mxfp4`: the code whose value times `e` is nearest `x` (first one on ties; NaN
/// gives 0).
#[inline(always)]
fn best_index_fp4(x: f32, e: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = (KVALUES_FP4[0] as f32 * e - x).abs();
    for (i, &k) in KVALUES_FP4.iter().enumerate().skip(1) {
        let err = (k as f32 * e - x).abs();
        if err < best_err {
            best = i as u8;
            best_err = err;
        }
    }
    best
}

/// The reference's `(uint8_t)(floorf(log2f(amax)) - 2 + 127)`.
fn mxfp4_exponent(amax: f32) -> u8 {
    // floor(log2f(amax)), computed through f64 so that it does not depend on the platform's
    // `log2f`; checked equal to glibc's `floorf(log2f(x))` for every positive finite f32.
    let l = ((amax as f64).log2() as f32).floor();
    // float → uint8_t goes through a 32-bit conversion on x86-64.
    trunc_i32_x86(l - 2.0 + 127.0) as u8
}

// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_mxfp4(x: &[f32; 32], b: &mut block_mxfp4) {
    let mut amax = 0f32;
    for &v in x {
        if amax < v.abs() {
            amax = v.abs();
        }
    }
    let e = if amax > 0.0 { mxfp4_exponent(amax) } else { 0 };
    let d = e8m0_to_f32_half(e);
    b.e = e;
    for j in 0..16 {
        b.qs[j] = best_index_fp4(x[j], d) | (best_index_fp4(x[16 + j], d) << 4);
    }
}

// Indexing is in range by the types: fixed-size input and block arrays indexed by loop
// counters over the block's fixed layout (no file bytes reach this; it quantizes floats).
#[allow(clippy::indexing_slicing)]
fn quant_nvfp4(x: &[f32; 64], b: &mut block_nvfp4) {
    for (s, xb) in x.chunks_exact(16).enumerate() {
        let mut amax = 0f32;
        for &v in xb {
            if amax < v.abs() {
                amax = v.abs();
            }
        }
        let ue = f32_to_ue4m3(amax / 6.0);
        b.d[s] = ue;
        let d = ue4m3_to_f32_half(ue);
        for j in 0..8 {
            b.qs[8 * s + j] = best_index_fp4(xb[j], d) | (best_index_fp4(xb[8 + j], d) << 4);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sign quants.

/// Q1_0: `+d` or `-d` by the sign bit.
fn dequant_q1_0(b: &block_q1_0, y: &mut [f32; 128]) {
    let d = b.d.get();
    let neg_d = -d;
    for (&q, y) in b.qs.iter().zip(y.chunks_exact_mut(8)) {
        for (j, yv) in y.iter_mut().enumerate() {
            *yv = if (q >> j) & 1 != 0 { d } else { neg_d };
        }
    }
}

/// Q2_0: `(code − 1)·d`.
fn dequant_q2_0(b: &block_q2_0, y: &mut [f32; 64]) {
    let d = b.d.get();
    for (&q, y) in b.qs.iter().zip(y.chunks_exact_mut(4)) {
        for (j, yv) in y.iter_mut().enumerate() {
            *yv = (((q >> (2 * j)) & 3) as i32 - 1) as f32 * d;
        }
    }
}

fn quant_q1_0(x: &[f32; 128], b: &mut block_q1_0) {
    let mut sum_abs = 0f32;
    for &v in x {
        sum_abs += v.abs();
    }
    let d = sum_abs / 128.0;
    b.d = F16::new(d);
    for (q, xg) in b.qs.iter_mut().zip(x.chunks_exact(8)) {
        let mut v = 0u8;
        for (j, &xv) in xg.iter().enumerate() {
            if xv >= 0.0 {
                v |= 1 << j;
            }
        }
        *q = v;
    }
}

fn quant_q2_0(x: &[f32; 64], b: &mut block_q2_0) {
    let mut amax = 0f32;
    for &v in x {
        let a = v.abs();
        if a > amax {
            amax = a;
        }
    }
    let d = amax;
    let id = if d > 0.0 { 1.0 / d } else { 0.0 };
    b.d = F16::new(d);
    for (q, xg) in b.qs.iter_mut().zip(x.chunks_exact(4)) {
        let mut v = 0u8;
        for (j, &w) in xg.iter().enumerate() {
            let a = w * id;
            // (int)roundf(a): in range, round half away; otherwise x86's integer indefinite.
            let r = if (-2_147_483_648.0..2_147_483_648.0).contains(&a) { round_away_small(a) } else { i32::MIN };
            let c = r.wrapping_add(1).clamp(0, 3);
            v |= (c as u8) << (2 * j);
        }
        *q = v;
    }
}
