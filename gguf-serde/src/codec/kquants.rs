//! Codec family `kquants` (to be filled in).

use crate::dtype::GgmlType;

/// Dequantizes whole blocks of `dtype` from `src` (little-endian block bytes) into `dst`
/// (`dst.len()` = blocks × block size, checked by the caller). Returns `false` if `dtype` is
/// not of this family.
#[allow(dead_code)]
pub(crate) fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> bool {
    let _ = (dtype, src, dst);
    false
}

/// Quantizes `src` (whole blocks) into `dst` (blocks × type size, checked by the caller).
/// Returns `false` if `dtype` is not quantized by this family.
#[allow(dead_code)]
pub(crate) fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> bool {
    let _ = (dtype, src, dst);
    false
}
