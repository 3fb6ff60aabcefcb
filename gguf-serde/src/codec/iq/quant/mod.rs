//! Quantization of the grid i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, as
//! ggml's `quantize_row_iq2_xxs_impl`, `quantize_row_iq2_xs_impl`, `quantize_row_iq2_s_impl`,
//! `quantize_row_iq3_xxs_impl` (grid 256), `quantize_row_iq3_s_impl`, `quantize_row_iq1_s_impl`
//! and `quantize_row_iq1_m_impl` (`ggml-quants.c`), which `quantize_iq*` and
//! `ggml_quantize_chunk` run. Every float expression is evaluated in the reference's order, so
//! the bytes are identical to ggml's (without FMA contraction).
//!
//! The five IQ2/IQ3 types share one sub-block search ([`grid`]): signs folded out, a scan
//! of trial scales snapping each group of levels to the grid (or its nearest grid point,
//! [`neighbour`]), then a refit. The IQ1 types split each sub-block's sorted values into
//! three groups exhaustively ([`iq1`]).
//!
//! Where ggml aborts the process (`GGML_ASSERT`, `GGML_ABORT`) or reads out of bounds, these
//! functions fail with a reason instead; that only happens for blocks with NaN, infinite or
//! huge values, or NaN/infinite weights.

// Index loops mirror the reference's, which keeps the evaluation order easy to check.
#![allow(clippy::needless_range_loop)]

use super::{block_iq1_m, block_iq1_s, block_iq2_s, block_iq2_xs, block_iq2_xxs, block_iq3_s, block_iq3_xxs};
use crate::codec::block::{F16, U16, U32};
use crate::codec::isa::Isa;
use crate::codec::kquants::search::make_qp_quants;
use crate::codec::scalar::nearest_int;

/// Why ggml's quantizer would abort on a block.
pub(crate) type Fail = &'static str;

const NO_NEIGHBOUR: Fail =
    "no grid point at a finite weighted distance (ggml: GGML_ASSERT(grid_index >= 0) in iq*_find_best_neighbour)";
const NO_NEIGHBOUR_IQ1: Fail = "no grid point at a finite weighted distance (ggml's iq1_find_best_neighbour2 then \
                                searches the whole grid reading past the block, and asserts)";
const OFF_GRID: Fail = "levels not on the grid (ggml: \"Oops: found point not on grid\", GGML_ABORT)";
const BAD_SCALE: Fail = "NaN sub-block scale (ggml: GGML_ASSERT(scale >= 0))";
const NO_WEIGHTS: Fail = "no importance weights (ggml: GGML_ASSERT(quant_weights))";

/// `GROUP_MAX_EPS` (IQ2_XXS, IQ2_XS).
const EPS: f32 = 1e-15;
/// `GROUP_MAX_EPS_IQ2_S` and `GROUP_MAX_EPS_IQ3_XXS`.
const EPS_1E8: f32 = 1e-8;
/// IQ3_S skips a sub-block only when its maximum is 0 (`!max`): for a maximum that is not
/// negative, the same as `max <` the smallest subnormal.
const EPS_ZERO: f32 = f32::from_bits(1);
/// `GROUP_MAX_EPS_IQ1_S`, `GROUP_MAX_EPS_IQ1_M`.
const EPS_IQ1_S: f32 = 1e-12;
const EPS_IQ1_M: f32 = 1e-7;

/// C's `MAX(a, b)`: `a > b ? a : b` (a NaN `b` replaces `a`).
#[inline(always)]
fn c_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// `Σ x²` in order.
fn sum_squares(x: &[f32]) -> f32 {
    let mut s = 0f32;
    for &v in x {
        s += v * v;
    }
    s
}

/// The importance weights of one sub-block: `qw · sqrt(sigma2 + x²)` with weights, else
/// `unweighted(sigma2, x)` (ggml's fallback of each type).
fn sub_weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, unweighted: fn(f32, f32) -> f32, out: &mut [f32]) {
    match qw {
        Some(qw) => {
            for ((w, &q), &x) in out.iter_mut().zip(qw).zip(xb) {
                *w = q * (sigma2 + x * x).sqrt();
            }
        }
        None => {
            for (w, &x) in out.iter_mut().zip(xb) {
                *w = unweighted(sigma2, x);
            }
        }
    }
}

/// `x²`, the weights of IQ3 (and IQ1_M) without importance weights.
fn square(_: f32, x: f32) -> f32 {
    x * x
}

/// No weights: the types ggml requires them for.
fn none(_: f32, _: f32) -> f32 {
    0.0
}

/// `sigma2` of a super-block: `times · Σx² / 256`.
fn block_sigma2(x: &[f32; 256], times: f32) -> f32 {
    times * sum_squares(x) / 256.0
}

mod grid;
mod iq1;
mod neighbour;

pub(super) use grid::{quant_iq2_s, quant_iq2_xs, quant_iq2_xxs, quant_iq3_s, quant_iq3_xxs};
pub(super) use iq1::{quant_iq1_m, quant_iq1_s};
