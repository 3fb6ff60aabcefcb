//! Tensor codecs: dequantize stored blocks to `f32`, quantize `f32` to stored blocks.
//!
//! Block layouts follow ggml's `ggml-common.h`, algorithms ggml's reference `ggml-quants.c`
//! (`dequantize_row_*`, `quantize_row_*_ref`). Each family lives in its own module; this module
//! checks lengths and dispatches.
//!
//! (Skeleton: families are filled in by the codec work.)

pub(crate) mod floats;
pub(crate) mod iquants;
pub(crate) mod kquants;
pub(crate) mod legacy;
pub(crate) mod other;
