//! k-quants: 256-element super-blocks Q2_K (`q2_k.rs`), Q3_K (`q3_k.rs`), Q4_K and Q5_K
//! (`q4_k.rs`, which share their scale layout), Q6_K (`q6_k.rs`) and Q8_K (`q8_k.rs`).
//!
//! Layouts (`ggml-common.h`, offsets in bytes, little-endian):
//! - Q2_K (84): `scales[16]` (low nibble scale, high nibble min, per 16 elements) at 0, `qs[64]`
//!   (2 bits) at 16, `d` f16 at 80, `dmin` f16 at 82.
//! - Q3_K (110): `hmask[32]` (high bit) at 0, `qs[64]` (low 2 bits) at 32, `scales[12]` (16
//!   6-bit scales) at 96, `d` f16 at 108.
//! - Q4_K (144): `d` f16 at 0, `dmin` f16 at 2, `scales[12]` (8 6-bit scales and 8 6-bit mins)
//!   at 4, `qs[128]` (4 bits) at 16.
//! - Q5_K (176): `d`, `dmin`, `scales[12]` at 4, `qh[32]` (5th bit) at 16, `qs[128]` at 48.
//! - Q6_K (210): `ql[128]` (low 4 bits) at 0, `qh[64]` (high 2 bits) at 128, `scales[16]` i8 at
//!   192, `d` f16 at 208.
//! - Q8_K (292): `d` f32 at 0, `qs[256]` i8 at 4, `bsums[16]` i16 at 260.
//!
//! Dequantizers follow `dequantize_row_q{2..6,8}_K`, quantizers `quantize_row_q{2..6}_K_ref` and
//! `quantize_row_q8_K_ref`, the importance paths `quantize_row_q{2..6}_K_impl` (`ggml-quants.c`),
//! with every float expression in the reference's order. Their scale searches live in
//! [`search`] (one sub-block at a time) and `lanes.rs` (eight side by side, bit-identical).

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

pub(crate) mod lanes;
mod q2_k;
mod q3_k;
mod q4_k;
mod q6_k;
mod q8_k;
pub(crate) mod search;

pub(crate) use q2_k::block_q2_K;
pub(crate) use q3_k::block_q3_K;
pub(crate) use q4_k::{block_q4_K, block_q5_K};
pub(crate) use q6_k::block_q6_K;
pub(crate) use q8_k::block_q8_K;

/// Elements per super-block.
const QK_K: usize = 256;
/// ggml's `GROUP_MAX_EPS`.
const GROUP_MAX_EPS: f32 = 1e-15;

/// Packs 2-bit values `l[256]` the way Q2_K and Q3_K store `qs[64]`.
#[inline(always)]
fn pack_2bit(l: &[u8; QK_K]) -> [u8; 64] {
    let mut qs = [0u8; 64];
    for j in (0..QK_K).step_by(128) {
        for i in 0..32 {
            qs[j / 4 + i] = l[j + i] | (l[j + i + 32] << 2) | (l[j + i + 64] << 4) | (l[j + i + 96] << 6);
        }
    }
    qs
}

/// `factor × Σx² / 256`: the `sigma2` of the importance quantizers.
fn block_sigma2(x: &[f32; QK_K], factor: f32) -> f32 {
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    factor * sumx2 / QK_K as f32
}

/// The importance weights of sub-block `j` (`S` elements): `qw[i] × sqrt(sigma2 + x[i]²)`.
#[inline(always)]
fn subblock_weights<const S: usize>(x: &[f32; QK_K], qw: &[f32; QK_K], sigma2: f32, j: usize) -> [f32; S] {
    let mut weight = [0f32; S];
    for i in 0..S {
        let v = x[S * j + i];
        weight[i] = qw[S * j + i] * (sigma2 + v * v).sqrt();
    }
    weight
}
