//! Tensor codecs: dequantize stored blocks to `f32`, quantize `f32` to stored blocks.
//!
//! Block layouts follow ggml's `ggml-common.h`, algorithms ggml's reference `ggml-quants.c`
//! (`dequantize_row_*`, `quantize_row_*_ref`, and `quantize_*` without an importance matrix,
//! which for every type here is the same as `quantize_row_*_ref`). Results are bit-identical to
//! that reference compiled without fused multiply-add (`-ffp-contract=off`) on x86-64: this module
//! evaluates every float expression in the reference's order, and where the reference converts a
//! float to an integer type the way only x86 defines (NaN or out of range), it does what x86's
//! `cvttss2si` does. One thing no one can pin down: when both operands of one float operation are
//! NaN (say a block whose scale and min are both NaN), IEEE 754 leaves open whose payload the
//! result carries, and compilers (ggml's and this crate's) swap operands freely; the result is a
//! NaN either way.
//!
//! All functions work on flat slices of whole blocks: `src` of a quantized type holds
//! `n / block_size` blocks of [`GgmlType::type_size`] bytes for `n` elements; a tensor's rows
//! follow each other, so a whole tensor is one slice (shape does not matter, only the element
//! count, which must be a multiple of the block size).
//!
//! ```
//! use gguf_serde::{codec, GgmlType};
//!
//! let x: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) / 8.0).collect();
//! let q = codec::quantize_to_vec(GgmlType::Q8_0, &x)?; // 2 blocks of 34 bytes
//! assert_eq!(q.len(), 68);
//! let y = codec::dequantize_to_vec(GgmlType::Q8_0, &q)?;
//! assert!(x.iter().zip(&y).all(|(a, b)| (a - b).abs() < 0.02));
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! # Which types
//! - Dequantize: every [`GgmlType`] (floats, integers, legacy, k-quants, i-quants and the rest).
//!   Integer types convert to the nearest `f32` (`I32`/`I64` values above 2^24 round), `F64`
//!   rounds to nearest `f32`.
//! - Quantize: `F32`, `F16`, `BF16`, `Q4_0`, `Q4_1`, `Q5_0`, `Q5_1`, `Q8_0`, `Q8_1`, `Q2_K`,
//!   `Q3_K`, `Q4_K`, `Q5_K`, `Q6_K`, `Q8_K`, plus those of the i-quant and other families that
//!   ggml quantizes without an importance matrix; anything else is
//!   [`CodecError::UnsupportedQuantize`].
//! - Quantize with an importance matrix ([`quantize_with_importance`], ggml's `quantize_*` with
//!   `quant_weights`): Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (F16, BF16, Q8_0 and
//!   Q8_1 ignore the weights, as in ggml).
//!
//! # Byte order
//! GGUF files are little-endian unless the header says otherwise. A big-endian file, as ggml on a
//! big-endian host writes it, stores every multi-byte field of a block in big-endian order; the
//! `*_endian` functions swap exactly those fields (see [`swapped_fields`]) and nothing else.

use rayon::prelude::*;

mod error;
use crate::format::Endian;
use crate::format::GgmlType;
pub use error::CodecError;
use error::Result;

/// Calls the AVX2 version `$simd` when the CPU has AVX2, else the portable `$portable`.
macro_rules! simd_or {
    ($simd:ident, $portable:ident, $src:expr, $dst:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if super::simd::has_avx2() {
                // SAFETY: AVX2 is available (checked at run time).
                unsafe { super::simd::$simd($src, $dst) }
            } else {
                $portable($src, $dst)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $portable($src, $dst)
        }
    }};
}

pub(crate) mod floats;
pub(crate) mod iquants;
pub(crate) mod kquants;
pub(crate) mod legacy;
pub(crate) mod other;
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd;

/// Elements per parallel work item of the `*_par` functions (rounded to whole blocks).
const PAR_CHUNK_ELEMS: usize = 1 << 16;

fn elems_for_bytes(dtype: GgmlType, nbytes: usize) -> Result<usize> {
    let ts = dtype.type_size() as usize;
    let bs = dtype.block_size() as usize;
    if !nbytes.is_multiple_of(ts) {
        return Err(CodecError::NotWholeBlocks { dtype, what: "input bytes", len: nbytes as u64, block: ts as u64 });
    }
    (nbytes / ts).checked_mul(bs).ok_or(CodecError::CodecSizeMismatch {
        dtype,
        what: "element count",
        expected: u64::MAX,
        found: nbytes as u64,
    })
}

fn bytes_for_elems(dtype: GgmlType, n: usize) -> Result<usize> {
    let bs = dtype.block_size() as usize;
    if !n.is_multiple_of(bs) {
        return Err(CodecError::NotWholeBlocks { dtype, what: "input elements", len: n as u64, block: bs as u64 });
    }
    (n / bs).checked_mul(dtype.type_size() as usize).ok_or(CodecError::CodecSizeMismatch {
        dtype,
        what: "byte count",
        expected: u64::MAX,
        found: n as u64,
    })
}

fn check_dequant(dtype: GgmlType, src: &[u8], dst: &[f32]) -> Result<()> {
    let n = elems_for_bytes(dtype, src.len())?;
    if n != dst.len() {
        return Err(CodecError::CodecSizeMismatch {
            dtype,
            what: "output elements",
            expected: n as u64,
            found: dst.len() as u64,
        });
    }
    Ok(())
}

fn check_quant(dtype: GgmlType, src: &[f32], dst: &[u8]) -> Result<()> {
    let nb = bytes_for_elems(dtype, src.len())?;
    if nb != dst.len() {
        return Err(CodecError::CodecSizeMismatch {
            dtype,
            what: "output bytes",
            expected: nb as u64,
            found: dst.len() as u64,
        });
    }
    Ok(())
}

/// Dispatches to the families; lengths already checked, bytes little-endian.
fn dequant_le(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<()> {
    let done = floats::dequantize(dtype, src, dst)
        || legacy::dequantize(dtype, src, dst)
        || kquants::dequantize(dtype, src, dst)
        || iquants::dequantize(dtype, src, dst)
        || other::dequantize(dtype, src, dst);
    if done {
        Ok(())
    } else {
        Err(CodecError::UnsupportedDequantize(dtype))
    }
}

/// Dispatches to the families; lengths already checked, output little-endian.
fn quant_le(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    let done = floats::quantize(dtype, src, dst)
        || legacy::quantize(dtype, src, dst)
        || kquants::quantize(dtype, src, dst)
        || iquants::quantize(dtype, src, dst)
        || other::quantize(dtype, src, dst);
    if done {
        Ok(())
    } else {
        Err(CodecError::UnsupportedQuantize(dtype))
    }
}

/// Dequantizes `src`, whole blocks of `dtype` in little-endian byte order (as stored in a usual
/// GGUF file), into `dst`, on the calling thread.
///
/// `dst.len()` must be the number of elements `src` holds: `src.len() / type_size × block_size`.
/// Results are bit-identical to ggml's `dequantize_row_*` (for `F16`/`BF16`, `ggml_fp16_to_fp32_row`
/// / `ggml_bf16_to_fp32_row`).
///
/// # Errors
/// [`CodecError::NotWholeBlocks`] if `src` is not whole blocks, [`CodecError::CodecSizeMismatch`] if `dst`
/// has the wrong length, [`CodecError::UnsupportedDequantize`] if the type has no decoder here.
pub fn dequantize(dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<()> {
    check_dequant(dtype, src, dst)?;
    dequant_le(dtype, src, dst)
}

/// As [`dequantize`], for blocks stored in byte order `endian` (see [`swapped_fields`] for what a
/// big-endian file swaps). Big-endian input is copied once to swap it.
///
/// # Errors
/// As [`dequantize`].
pub fn dequantize_endian(dtype: GgmlType, endian: Endian, src: &[u8], dst: &mut [f32]) -> Result<()> {
    check_dequant(dtype, src, dst)?;
    match endian {
        Endian::Little => dequant_le(dtype, src, dst),
        Endian::Big => {
            let mut buf = src.to_vec();
            swap_blocks(dtype, &mut buf);
            dequant_le(dtype, &buf, dst)
        }
    }
}

/// As [`dequantize_endian`], split over rayon's thread pool in chunks of whole blocks (about
/// 64 Ki elements each). Use it for whole tensors.
///
/// # Errors
/// As [`dequantize`].
pub fn dequantize_par(dtype: GgmlType, endian: Endian, src: &[u8], dst: &mut [f32]) -> Result<()> {
    check_dequant(dtype, src, dst)?;
    let bs = dtype.block_size() as usize;
    let ts = dtype.type_size() as usize;
    let blocks_per_chunk = (PAR_CHUNK_ELEMS / bs).max(1);
    src.par_chunks(blocks_per_chunk * ts)
        .zip(dst.par_chunks_mut(blocks_per_chunk * bs))
        .try_for_each(|(s, d)| dequantize_endian(dtype, endian, s, d))
}

/// Dequantizes a whole tensor's little-endian bytes into a new vector, in parallel
/// ([`dequantize_par`]). The vector has `src.len() / type_size × block_size` elements, in stored
/// order (rows of the innermost dimension one after another).
///
/// # Errors
/// As [`dequantize`].
pub fn dequantize_to_vec(dtype: GgmlType, src: &[u8]) -> Result<Vec<f32>> {
    let n = elems_for_bytes(dtype, src.len())?;
    let mut out = vec![0f32; n];
    dequantize_par(dtype, Endian::Little, src, &mut out)?;
    Ok(out)
}

/// Quantizes `src` (a whole number of blocks of `dtype`) into `dst`, little-endian, on the calling
/// thread, as ggml's `quantize_row_*_ref` (equal to `quantize_*` with no importance matrix): the
/// bytes are identical to that reference built without fused multiply-add.
///
/// `dst.len()` must be `src.len() / block_size × type_size`.
///
/// # Errors
/// [`CodecError::NotWholeBlocks`] if `src.len()` is not a multiple of the block size,
/// [`CodecError::CodecSizeMismatch`] if `dst` has the wrong length, [`CodecError::UnsupportedQuantize`]
/// for types with no reference quantizer here.
pub fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    check_quant(dtype, src, dst)?;
    quant_le(dtype, src, dst)
}

/// As [`quantize`], writing blocks in byte order `endian` (see [`swapped_fields`]).
///
/// # Errors
/// As [`quantize`].
pub fn quantize_endian(dtype: GgmlType, endian: Endian, src: &[f32], dst: &mut [u8]) -> Result<()> {
    check_quant(dtype, src, dst)?;
    quant_le(dtype, src, dst)?;
    if endian == Endian::Big {
        swap_blocks(dtype, dst);
    }
    Ok(())
}

/// As [`quantize_endian`], split over rayon's thread pool in chunks of whole blocks. The output is
/// the same as [`quantize_endian`]'s: every reference quantizer here works block by block.
///
/// # Errors
/// As [`quantize`].
pub fn quantize_par(dtype: GgmlType, endian: Endian, src: &[f32], dst: &mut [u8]) -> Result<()> {
    check_quant(dtype, src, dst)?;
    let bs = dtype.block_size() as usize;
    let ts = dtype.type_size() as usize;
    let blocks_per_chunk = (PAR_CHUNK_ELEMS / bs).max(1);
    src.par_chunks(blocks_per_chunk * bs)
        .zip(dst.par_chunks_mut(blocks_per_chunk * ts))
        .try_for_each(|(s, d)| quantize_endian(dtype, endian, s, d))
}

/// Quantizes a whole tensor into a new little-endian byte vector, in parallel ([`quantize_par`]).
///
/// # Errors
/// As [`quantize`].
pub fn quantize_to_vec(dtype: GgmlType, src: &[f32]) -> Result<Vec<u8>> {
    let nb = bytes_for_elems(dtype, src.len())?;
    let mut out = vec![0u8; nb];
    quantize_par(dtype, Endian::Little, src, &mut out)?;
    Ok(out)
}

/// Quantizes whole rows of `n_per_row` elements with an importance matrix (`importance`: one
/// non-negative weight per column, as llama.cpp's imatrix gives), as ggml's `quantize_*` with
/// `quant_weights` (`quantize_row_*_impl`): for Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K,
/// Q6_K. F16, BF16, Q8_0 and Q8_1 ignore the weights, as ggml does. Rows run in parallel
/// (rayon). `src` holds `src.len() / n_per_row` rows one after another (shape outermost first:
/// `[rows, n_per_row]`); `dst` their blocks, little-endian.
///
/// # Errors
/// [`CodecError::NotWholeBlocks`] if `n_per_row` is not a multiple of the block size,
/// [`CodecError::CodecSizeMismatch`] if `src` is not whole rows, `importance.len() != n_per_row` or
/// `dst` has the wrong length, [`CodecError::UnsupportedQuantize`] for other types.
pub fn quantize_with_importance(
    dtype: GgmlType,
    src: &[f32],
    dst: &mut [u8],
    n_per_row: usize,
    importance: &[f32],
) -> Result<()> {
    let row_bytes = bytes_for_elems(dtype, n_per_row)?;
    let mismatch = |what, expected: usize, found: usize| CodecError::CodecSizeMismatch {
        dtype,
        what,
        expected: expected as u64,
        found: found as u64,
    };
    if importance.len() != n_per_row {
        return Err(mismatch("importance weights", n_per_row, importance.len()));
    }
    if n_per_row == 0 || !src.len().is_multiple_of(n_per_row) {
        return Err(mismatch("input elements (whole rows)", n_per_row, src.len()));
    }
    check_quant(dtype, src, dst)?;
    let plain = matches!(dtype, GgmlType::F16 | GgmlType::BF16 | GgmlType::F32);
    if !plain
        && !legacy::quantize_row_imatrix(dtype, &[], &mut [], &[])
        && !kquants::quantize_row_imatrix(dtype, &[], &mut [], &[])
    {
        return Err(CodecError::UnsupportedQuantize(dtype));
    }
    src.par_chunks(n_per_row).zip(dst.par_chunks_mut(row_bytes)).for_each(|(x, y)| {
        let _ = plain && quant_le(dtype, x, y).is_ok()
            || legacy::quantize_row_imatrix(dtype, x, y, importance)
            || kquants::quantize_row_imatrix(dtype, x, y, importance);
    });
    Ok(())
}

/// Makes every codec function use its portable (non-SIMD) code from now on (`true`), or the
/// runtime-detected SIMD code again (`false`). Both give the same bits; this exists so that tests
/// and benchmarks can run the portable paths on a machine with AVX2. The environment variable
/// `GGUF_CODEC_NO_SIMD` (read once) has the same effect for a whole process.
#[doc(hidden)]
pub fn force_portable(portable: bool) {
    #[cfg(target_arch = "x86_64")]
    simd::FORCE_PORTABLE.store(portable, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = portable;
}

/// Whether [`quantize`] supports `dtype`.
pub fn can_quantize(dtype: GgmlType) -> bool {
    let bs = dtype.block_size() as usize;
    let src = vec![0f32; bs];
    let mut dst = vec![0u8; dtype.type_size() as usize];
    quant_le(dtype, &src, &mut dst).is_ok()
}

/// The multi-byte fields of one block of `dtype` that a big-endian file stores byte-swapped, as
/// `(byte offset in the block, width in bytes)`, each field swapped on its own.
///
/// This is how ggml lays a block out in memory on a big-endian host (and so what it would write):
/// each field in its declared C type, and fields that ggml reads and writes through a wider
/// integer (`memcpy` into a `uint32_t`, or a `uint16_t` pointer) at that width.
///
/// | type | swapped |
/// |---|---|
/// | F16, BF16, I16 | the element (2 bytes) |
/// | F32, I32 | the element (4) |
/// | F64, I64 | the element (8) |
/// | I8, MXFP4, NVFP4 | nothing |
/// | Q4_0, Q8_0, IQ4_NL, Q1_0, Q2_0 | `d` (f16 at 0) |
/// | Q4_1 | `d`, `m` (f16 at 0, 2) |
/// | Q5_0 | `d` (f16 at 0); `qh` (4 bytes at 2, a `uint32_t` in ggml's code) |
/// | Q5_1 | `d`, `m` (f16 at 0, 2); `qh` (u32 at 4) |
/// | Q8_1 | `d`, `s` (f16 at 0, 2) |
/// | Q2_K | `d`, `dmin` (f16 at 80, 82) |
/// | Q3_K | `d` (f16 at 108); the 12 scale bytes are byte-wise in ggml and stay |
/// | Q4_K, Q5_K | `d`, `dmin` (f16 at 0, 2) |
/// | Q6_K | `d` (f16 at 208) |
/// | Q8_K | `d` (f32 at 0), `bsums` (16 × i16 at 260) |
/// | IQ2_XXS | `d` (f16 at 0); `qs` as 16 u32 (ggml reads it with `memcpy` into `uint32_t[2]`) |
/// | IQ2_XS | `d` (f16 at 0); `qs` as 32 u16 |
/// | IQ2_S, IQ3_S | `d` (f16 at 0) |
/// | IQ3_XXS | `d` (f16 at 0); the 8 scale-and-sign words after `qs[64]` as u32 |
/// | IQ1_S | `d` (f16 at 0); `qh` as 8 u16 at 34 |
/// | IQ1_M | the 8 `scales` bytes as 4 u16 at 48 (ggml reads them through a `uint16_t` pointer; `d` lives in their top bits) |
/// | IQ4_XS | `d` (f16 at 0), `scales_h` (u16 at 2) |
/// | TQ1_0 | `d` (f16 at 52) |
/// | TQ2_0 | `d` (f16 at 64) |
///
/// gguf-py's `gguf_convert_endian.py` swaps the same fields for the types it handles (F16, BF16,
/// F32, Q4_0, Q8_0, Q4_K, Q6_K; nothing for MXFP4 and NVFP4).
pub fn swapped_fields(dtype: GgmlType) -> Vec<(usize, usize)> {
    use GgmlType::*;
    let h = |offs: &[usize]| offs.iter().map(|&o| (o, 2)).collect::<Vec<_>>();
    match dtype {
        F16 | BF16 | I16 => vec![(0, 2)],
        F32 | I32 => vec![(0, 4)],
        F64 | I64 => vec![(0, 8)],
        I8 | MXFP4 | NVFP4 => vec![],
        Q4_0 | Q8_0 | IQ4_NL | Q1_0 | Q2_0 | IQ2_S | IQ3_S => h(&[0]),
        Q4_1 | Q8_1 | Q4_K | Q5_K => h(&[0, 2]),
        Q5_0 => vec![(0, 2), (2, 4)],
        Q5_1 => vec![(0, 2), (2, 2), (4, 4)],
        Q2_K => h(&[80, 82]),
        Q3_K => h(&[108]),
        Q6_K => h(&[208]),
        Q8_K => std::iter::once((0, 4)).chain((0..16).map(|i| (260 + 2 * i, 2))).collect(),
        IQ2_XXS => std::iter::once((0, 2)).chain((0..16).map(|i| (2 + 4 * i, 4))).collect(),
        IQ2_XS => std::iter::once((0, 2)).chain((0..32).map(|i| (2 + 2 * i, 2))).collect(),
        IQ3_XXS => std::iter::once((0, 2)).chain((0..8).map(|i| (66 + 4 * i, 4))).collect(),
        IQ1_S => std::iter::once((0, 2)).chain((0..8).map(|i| (34 + 2 * i, 2))).collect(),
        IQ1_M => h(&[48, 50, 52, 54]),
        IQ4_XS => h(&[0, 2]),
        TQ1_0 => h(&[52]),
        TQ2_0 => h(&[64]),
    }
}

/// Swaps, in place, the fields [`swapped_fields`] lists in every whole block of `bytes`
/// (a trailing partial block is left as is). Swapping twice restores the input.
pub fn swap_blocks(dtype: GgmlType, bytes: &mut [u8]) {
    let fields = swapped_fields(dtype);
    if fields.is_empty() {
        return;
    }
    for block in bytes.chunks_exact_mut(dtype.type_size() as usize) {
        for &(off, w) in &fields {
            if let Some(f) = block.get_mut(off..off + w) {
                f.reverse();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar helpers shared by the families: conversions with exactly ggml's reference semantics.

/// f16 bits → f32, as ggml's `GGML_FP16_TO_FP32` (exact for every finite value; NaN stays NaN
/// with its payload, quieted).
#[inline(always)]
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// The little-endian f16 at `b[off..off + 2]` as f32 ([`f16_to_f32`]). The caller guarantees
/// that `b` holds those two bytes (block sizes are checked before any kernel runs).
#[inline(always)]
pub(crate) fn half_at(b: &[u8], off: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[off], b[off + 1]]))
}

/// f32 → f16 bits as ggml's `GGML_FP32_TO_FP16` (`ggml_compute_fp32_to_fp16`): round to nearest
/// even, overflow to infinity, every NaN to the quiet NaN `0x7E00` with the input's sign.
#[inline(always)]
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    if x.is_nan() {
        ((x.to_bits() >> 16) as u16 & 0x8000) | 0x7E00
    } else {
        half::f16::from_f32(x).to_bits()
    }
}

/// ggml's `nearest_int`: round to nearest (ties to even) by adding 1.5 × 2^23 and reading the low
/// mantissa bits; meaningful for |x| ≤ 2^22, and like the reference it never fails outside that.
#[inline(always)]
pub(crate) fn nearest_int(x: f32) -> i32 {
    let v = x + 12_582_912.0f32;
    (v.to_bits() as i32 & 0x007f_ffff) - 0x0040_0000
}

/// C's float → 32-bit int conversion as x86-64 does it (`cvttss2si`): truncate toward zero, and
/// `i32::MIN` for NaN and values out of range. ggml converts floats to `int8_t`/`uint8_t` with a
/// cast that compiles to this, keeping the low byte.
#[inline(always)]
pub(crate) fn cvtt_i32(x: f32) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE is part of the x86-64 baseline; this is the instruction itself.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_cvtt_ss2si(std::arch::x86_64::_mm_set_ss(x))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // `as` saturates; x86 gives i32::MIN for anything out of range or NaN.
        if x.is_nan() || !(-2_147_483_648.0f32..2_147_483_648.0f32).contains(&x) {
            i32::MIN
        } else {
            x as i32
        }
    }
}

/// `(int)roundf(x)` as the reference computes it on x86-64 (round half away from zero, then
/// `cvttss2si`), without a call to `roundf`.
#[inline(always)]
pub(crate) fn round_cvt_i32(x: f32) -> i32 {
    let q = cvtt_i32(x);
    if q == i32::MIN {
        // NaN, out of range, or exactly -2^31 (already integral): roundf changes nothing.
        return q;
    }
    // Exact: |x| < 2^31 and q = trunc(x), so x - q is representable.
    let f = x - q as f32;
    q + (f >= 0.5) as i32 - (f <= -0.5) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_checked() {
        let mut out = vec![0f32; 32];
        assert!(matches!(dequantize(GgmlType::Q8_0, &[0u8; 33], &mut out), Err(CodecError::NotWholeBlocks { .. })));
        assert!(matches!(dequantize(GgmlType::Q8_0, &[0u8; 68], &mut out), Err(CodecError::CodecSizeMismatch { .. })));
        let mut q = vec![0u8; 34];
        assert!(matches!(quantize(GgmlType::Q8_0, &[0f32; 31], &mut q), Err(CodecError::NotWholeBlocks { .. })));
        assert!(matches!(quantize(GgmlType::Q8_0, &[0f32; 64], &mut q), Err(CodecError::CodecSizeMismatch { .. })));
        assert!(matches!(dequantize_to_vec(GgmlType::Q4_K, &[0u8; 145]), Err(CodecError::NotWholeBlocks { .. })));
        assert!(matches!(quantize_to_vec(GgmlType::Q4_K, &[0f32; 255]), Err(CodecError::NotWholeBlocks { .. })));
        let e = dequantize(GgmlType::Q8_0, &[0u8; 33], &mut out).unwrap_err().to_string();
        assert_eq!(e, "Q8_0: input bytes of 33 is not a whole number of blocks of 34");
    }

    #[test]
    fn swapped_fields_lie_inside_the_block_and_do_not_overlap() {
        for t in GgmlType::ALL {
            let mut used = vec![false; t.type_size() as usize];
            for (off, w) in swapped_fields(t) {
                assert!(off + w <= used.len(), "{t}");
                for u in &mut used[off..off + w] {
                    assert!(!*u, "{t} overlap at {off}");
                    *u = true;
                }
            }
        }
    }

    #[test]
    fn nearest_int_and_cvtt() {
        assert_eq!([0.5, 1.5, 2.5, -0.5, -1.5, 3.7, -3.7].map(nearest_int), [0, 2, 2, 0, -2, 4, -4]);
        assert_eq!(
            [1.9, -1.9, f32::NAN, 3e9, -3e9, f32::INFINITY].map(cvtt_i32),
            [1, -1, i32::MIN, i32::MIN, i32::MIN, i32::MIN]
        );
        assert_eq!(cvtt_i32(-2_147_483_648.0), i32::MIN);
        for x in [0.5f32, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 126.5, 1e9, -1e9, 3e9, f32::NAN, 8388607.5] {
            let want = if x.is_nan() || x.abs() >= 2_147_483_648.0 { i32::MIN } else { x.round() as i32 };
            assert_eq!(round_cvt_i32(x), want, "{x}");
        }
    }

    #[test]
    fn f16_conversions_match_ggml_on_special_values() {
        // Values worked out by hand from IEEE 754 binary16.
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(65520.0), 0x7C00); // rounds up to infinity
        assert_eq!(f32_to_f16(-f32::INFINITY), 0xFC00);
        assert_eq!(f32_to_f16(f32::from_bits(0x7FC1_2345)), 0x7E00);
        assert_eq!(f32_to_f16(f32::from_bits(0xFF80_0001)), 0xFE00);
        assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0x0000); // tie to even
        assert_eq!(f32_to_f16(1.5 * 2f32.powi(-25)), 0x0001);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0xFC00), f32::NEG_INFINITY);
        assert_eq!(f16_to_f32(0x7D00).to_bits(), 0x7FE0_0000); // signalling NaN comes out quiet
    }
}
