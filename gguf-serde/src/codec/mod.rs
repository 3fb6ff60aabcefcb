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
//!   `Q3_K`, `Q4_K`, `Q5_K`, `Q6_K`, `Q8_K`, `IQ2_S`, `IQ3_XXS`, `IQ3_S`, `IQ1_M`, `IQ4_NL`,
//!   `IQ4_XS`, `TQ1_0`, `TQ2_0`, `MXFP4`, `NVFP4`, `Q1_0`, `Q2_0`. `IQ2_XXS`, `IQ2_XS` and `IQ1_S`
//!   are [`CodecError::ImportanceRequired`] (ggml asserts `quant_weights` for them); the integer
//!   types and `F64` are [`CodecError::UnsupportedQuantize`].
//! - Quantize with an importance matrix ([`quantize_with_importance`], ggml's `quantize_*` with
//!   `quant_weights`): Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ2_XXS, IQ2_XS,
//!   IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_NL, IQ4_XS (F32, F16, BF16, Q8_0 and Q8_1 ignore the
//!   weights, as in ggml).
//! - The grid i-quants (IQ1_*, IQ2_*, IQ3_*) follow ggml's `quantize_row_iq*_impl`, whose search
//!   ggml aborts on some blocks of NaN, infinite or huge values (or weights): there these
//!   functions return [`CodecError::QuantizeAbort`] naming the block, and the output is
//!   unspecified. Their search tables (ggml's `iq2xs_init_impl` / `iq3xs_init_impl`) are built
//!   on first use, once per process (IQ1 about a second, the others well under).
//!
//! # Byte order
//! GGUF files are little-endian unless the header says otherwise. A big-endian file, as ggml on a
//! big-endian host writes it, stores every multi-byte field of a block in big-endian order; the
//! `*_endian` functions swap exactly those fields (see [`swapped_fields`]) and nothing else.
//!
//! # The frame (how the codecs are organised)
//! - `table.rs` has one row per ggml type ([`GgmlType`] → `Codec`, a single exhaustive `match`):
//!   the block's size and elements, the fields a big-endian file swaps, and which kernels exist
//!   (dequantize, quantize, quantize with an importance matrix, or "ggml ignores the weights").
//!   [`can_quantize`], [`can_dequantize`], [`can_quantize_with_importance`] and every public
//!   function read the row; nothing probes by running a kernel.
//! - Each type's block is a `#[repr(C)]` struct of byte fields declared with `block!`
//!   (`block.rs`), named as in ggml's `ggml-common.h` (`block_q4_K`, …); the kernels read and
//!   write fields by name, over `&[block]` views of the bytes (any alignment, no copy). The
//!   big-endian swap list is derived from the field types (`F16`, `U32`, `[U16; 8]`, …).
//! - Kernels are trait impls on the block struct (`Dequantize`, `Quantize`, `QuantizeRow`), in
//!   the family files: `floats.rs` (plain types), `legacy/` (Q4_0…Q8_1), `kquants/` (one file per
//!   k-quant, the scale searches in `search.rs`, their 8-lane versions in `lanes.rs`),
//!   `iq/` (the i-quants, their grids and grid searches), `other.rs` (ternary, FP4, sign quants).
//! - SIMD: `isa.rs` detects the CPU's features once (`GGUF_CODEC_NO_SIMD` turns them off) and
//!   every kernel gets them as an `Isa` argument; a kernel picks its AVX2 code with the one
//!   `simd!` macro. AVX2 code computes exactly the portable expressions lane by lane (never a
//!   fused multiply-add), and a test runs every kernel both ways and compares bits.
//!   Shared AVX2 primitives live in `avx2.rs`, a type's own AVX2 kernel next to its portable one.
//!
//! To add a ggml type: declare its block with `block!` and implement the kernel traits in its
//! family file (or a new one), then add its row to `table::row` (the `match` does not compile
//! without it). The table's tests then check the row against [`GgmlType`]'s block size and
//! bytes, and run its kernels with and without SIMD; add the type to the expected lists of
//! `supported_operations` (table) and `swapped_fields_are_ggmls_layout` (here), and its
//! reference vectors to the tests.

mod block;
mod error;
mod isa;
mod scalar;
mod table;

#[cfg(target_arch = "x86_64")]
mod avx2;
mod floats;
mod iq;
mod kquants;
mod legacy;
mod other;

use crate::format::Endian;
use crate::format::GgmlType;
pub use error::CodecError;
use error::Result;
#[doc(hidden)]
pub use isa::Isa;
use table::Importance;

/// Elements per parallel work item of the `*_par` functions (rounded to whole blocks).
const PAR_CHUNK_ELEMS: usize = 1 << 16;

/// `f(i, s, d)` on each pair of the `i`-th chunk of `a` elements of `src` and the chunk of `b`
/// elements of `dst` at the same index: over rayon's thread pool with the `parallel` feature, in
/// order on the calling thread without it. Each chunk is computed the same way either way, so the
/// output is identical; on failure, the parallel run returns one chunk's error (not necessarily
/// the first).
fn zip_chunks<A: Sync, B: Send, E: Send>(
    src: &[A],
    a: usize,
    dst: &mut [B],
    b: usize,
    f: impl Fn(usize, &[A], &mut [B]) -> std::result::Result<(), E> + Sync + Send,
) -> std::result::Result<(), E> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        src.par_chunks(a).zip(dst.par_chunks_mut(b)).enumerate().try_for_each(|(i, (s, d))| f(i, s, d))
    }
    #[cfg(not(feature = "parallel"))]
    {
        src.chunks(a).zip(dst.chunks_mut(b)).enumerate().try_for_each(|(i, (s, d))| f(i, s, d))
    }
}

/// `(bytes, elements)` per block of `dtype`, from its row.
fn block_shape(dtype: GgmlType) -> (usize, usize) {
    let row = table::row(dtype);
    (row.block_bytes, row.block_elems)
}

/// One direction of the codec: what each side holds (stored block bytes or `f32` elements), how
/// many of each a block of `dtype` has, and the table's kernel for it. The checked, byte-order and
/// parallel entry points below are written once over it.
trait Direction {
    /// The input side: `u8` block bytes to decode, `f32` elements to encode.
    type Src: Sync;
    /// The output side.
    type Dst: Send;
    /// What an input length counts, and what the output length counts, for error messages.
    const WHAT: (&'static str, &'static str, &'static str);
    /// `(input units, output units)` per block of `dtype`.
    fn per_block(dtype: GgmlType) -> (usize, usize);
    /// Runs the table's kernel on little-endian blocks; lengths already checked. `first` is the
    /// index of `src`'s first block in the caller's input (for the error of a block a quantizer
    /// aborts on).
    fn run_le(isa: Isa, dtype: GgmlType, src: &[Self::Src], dst: &mut [Self::Dst], first: usize) -> Result<()>;
    /// Runs the kernel for blocks stored in byte order `endian`; lengths already checked.
    fn run_endian(
        isa: Isa,
        dtype: GgmlType,
        endian: Endian,
        src: &[Self::Src],
        dst: &mut [Self::Dst],
        first: usize,
    ) -> Result<()>;
}

/// Bytes to elements (dequantize).
struct Decode;
/// Elements to bytes (quantize).
struct Encode;

impl Direction for Decode {
    type Src = u8;
    type Dst = f32;
    const WHAT: (&'static str, &'static str, &'static str) = ("input bytes", "element count", "output elements");
    fn per_block(dtype: GgmlType) -> (usize, usize) {
        block_shape(dtype)
    }
    fn run_le(isa: Isa, dtype: GgmlType, src: &[u8], dst: &mut [f32], _first: usize) -> Result<()> {
        let f = table::row(dtype).dequantize.ok_or(CodecError::UnsupportedDequantize(dtype))?;
        f(isa, src, dst);
        Ok(())
    }
    /// Big-endian input is copied once to swap it.
    fn run_endian(isa: Isa, dtype: GgmlType, endian: Endian, src: &[u8], dst: &mut [f32], first: usize) -> Result<()> {
        match endian {
            Endian::Little => Self::run_le(isa, dtype, src, dst, first),
            Endian::Big => {
                let mut buf = src.to_vec();
                swap_blocks(dtype, &mut buf);
                Self::run_le(isa, dtype, &buf, dst, first)
            }
        }
    }
}

impl Direction for Encode {
    type Src = f32;
    type Dst = u8;
    const WHAT: (&'static str, &'static str, &'static str) = ("input elements", "byte count", "output bytes");
    fn per_block(dtype: GgmlType) -> (usize, usize) {
        let (ts, bs) = block_shape(dtype);
        (bs, ts)
    }
    fn run_le(isa: Isa, dtype: GgmlType, src: &[f32], dst: &mut [u8], first: usize) -> Result<()> {
        let f = table::row(dtype).quantize.ok_or_else(|| no_quantizer(dtype))?;
        f(isa, src, dst).map_err(|e| e.at(dtype, first))
    }
    /// Big-endian output is swapped in place after encoding.
    fn run_endian(isa: Isa, dtype: GgmlType, endian: Endian, src: &[f32], dst: &mut [u8], first: usize) -> Result<()> {
        Self::run_le(isa, dtype, src, dst, first)?;
        if endian == Endian::Big {
            swap_blocks(dtype, dst);
        }
        Ok(())
    }
}

/// The output length for `len` input units of direction `D`: [`CodecError::NotWholeBlocks`] if
/// `len` is not whole blocks, [`CodecError::CodecSizeMismatch`] if the count overflows `usize`.
fn out_len<D: Direction>(dtype: GgmlType, len: usize) -> Result<usize> {
    let (per_in, per_out) = D::per_block(dtype);
    let (what_in, what_count, _) = D::WHAT;
    if !len.is_multiple_of(per_in) {
        return Err(CodecError::NotWholeBlocks { dtype, what: what_in, len: len as u64, block: per_in as u64 });
    }
    (len / per_in).checked_mul(per_out).ok_or(CodecError::CodecSizeMismatch {
        dtype,
        what: what_count,
        expected: u64::MAX,
        found: len as u64,
    })
}

/// Checks that `src` is whole blocks and `dst` has exactly the length they give.
fn check<D: Direction>(dtype: GgmlType, src: &[D::Src], dst: &[D::Dst]) -> Result<()> {
    let n = out_len::<D>(dtype, src.len())?;
    if n != dst.len() {
        return Err(CodecError::CodecSizeMismatch {
            dtype,
            what: D::WHAT.2,
            expected: n as u64,
            found: dst.len() as u64,
        });
    }
    Ok(())
}

fn run_isa<D: Direction>(isa: Isa, dtype: GgmlType, src: &[D::Src], dst: &mut [D::Dst]) -> Result<()> {
    check::<D>(dtype, src, dst)?;
    D::run_le(isa, dtype, src, dst, 0)
}

fn run_endian_isa<D: Direction>(
    isa: Isa,
    dtype: GgmlType,
    endian: Endian,
    src: &[D::Src],
    dst: &mut [D::Dst],
) -> Result<()> {
    check::<D>(dtype, src, dst)?;
    D::run_endian(isa, dtype, endian, src, dst, 0)
}

/// [`run_endian_isa`] over chunks of whole blocks (about [`PAR_CHUNK_ELEMS`] elements each),
/// through [`zip_chunks`].
fn run_par<D: Direction>(dtype: GgmlType, endian: Endian, src: &[D::Src], dst: &mut [D::Dst]) -> Result<()> {
    check::<D>(dtype, src, dst)?;
    let isa = Isa::detected();
    let blocks_per_chunk = (PAR_CHUNK_ELEMS / block_shape(dtype).1).max(1);
    let (per_in, per_out) = D::per_block(dtype);
    zip_chunks(src, blocks_per_chunk * per_in, dst, blocks_per_chunk * per_out, |i, s, d| {
        D::run_endian(isa, dtype, endian, s, d, i * blocks_per_chunk)
    })
}

/// Why `dtype` has no quantizer without importance weights: ggml requires them
/// ([`CodecError::ImportanceRequired`]) or there is none here ([`CodecError::UnsupportedQuantize`]).
pub(crate) fn no_quantizer(dtype: GgmlType) -> CodecError {
    match table::row(dtype).importance {
        Importance::Row(_) => CodecError::ImportanceRequired(dtype),
        _ => CodecError::UnsupportedQuantize(dtype),
    }
}

fn elems_for_bytes(dtype: GgmlType, nbytes: usize) -> Result<usize> {
    out_len::<Decode>(dtype, nbytes)
}

fn bytes_for_elems(dtype: GgmlType, n: usize) -> Result<usize> {
    out_len::<Encode>(dtype, n)
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
    run_isa::<Decode>(Isa::detected(), dtype, src, dst)
}

/// [`dequantize`] with the SIMD features `isa` (for tests and benchmarks of the portable code).
///
/// # Errors
/// As [`dequantize`].
#[doc(hidden)]
pub fn dequantize_isa(isa: Isa, dtype: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<()> {
    run_isa::<Decode>(isa, dtype, src, dst)
}

/// As [`dequantize`], for blocks stored in byte order `endian` (see [`swapped_fields`] for what a
/// big-endian file swaps). Big-endian input is copied once to swap it.
///
/// # Errors
/// As [`dequantize`].
pub fn dequantize_endian(dtype: GgmlType, endian: Endian, src: &[u8], dst: &mut [f32]) -> Result<()> {
    run_endian_isa::<Decode>(Isa::detected(), dtype, endian, src, dst)
}

/// As [`dequantize_endian`], split over rayon's thread pool in chunks of whole blocks (about
/// 64 Ki elements each; on the calling thread without the `parallel` feature, with the same
/// result). Use it for whole tensors.
///
/// # Errors
/// As [`dequantize`].
pub fn dequantize_par(dtype: GgmlType, endian: Endian, src: &[u8], dst: &mut [f32]) -> Result<()> {
    run_par::<Decode>(dtype, endian, src, dst)
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
/// for types with no reference quantizer here, [`CodecError::ImportanceRequired`] for IQ2_XXS,
/// IQ2_XS and IQ1_S (ggml quantizes them only with importance weights),
/// [`CodecError::QuantizeAbort`] for a block ggml's grid quantizer (IQ2_S, IQ3_XXS, IQ3_S, IQ1_M)
/// aborts on.
pub fn quantize(dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    run_isa::<Encode>(Isa::detected(), dtype, src, dst)
}

/// [`quantize`] with the SIMD features `isa` (for tests and benchmarks of the portable code).
///
/// # Errors
/// As [`quantize`].
#[doc(hidden)]
pub fn quantize_isa(isa: Isa, dtype: GgmlType, src: &[f32], dst: &mut [u8]) -> Result<()> {
    run_isa::<Encode>(isa, dtype, src, dst)
}

/// As [`quantize`], writing blocks in byte order `endian` (see [`swapped_fields`]).
///
/// # Errors
/// As [`quantize`].
pub fn quantize_endian(dtype: GgmlType, endian: Endian, src: &[f32], dst: &mut [u8]) -> Result<()> {
    run_endian_isa::<Encode>(Isa::detected(), dtype, endian, src, dst)
}

/// As [`quantize_endian`], split over rayon's thread pool in chunks of whole blocks (on the calling
/// thread without the `parallel` feature). The output is the same as [`quantize_endian`]'s: every reference quantizer here works block by block.
///
/// # Errors
/// As [`quantize`].
pub fn quantize_par(dtype: GgmlType, endian: Endian, src: &[f32], dst: &mut [u8]) -> Result<()> {
    run_par::<Encode>(dtype, endian, src, dst)
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
/// Q6_K, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, IQ4_NL, IQ4_XS. F32, F16, BF16, Q8_0
/// and Q8_1 ignore the weights, as ggml does (see [`can_quantize_with_importance`]). Rows run in parallel (rayon; in order on the calling thread without the `parallel` feature, with the same bytes). `src` holds
/// `src.len() / n_per_row` rows one after another (shape outermost first: `[rows, n_per_row]`);
/// `dst` their blocks, little-endian.
///
/// # Errors
/// [`CodecError::NotWholeBlocks`] if `n_per_row` is not a multiple of the block size,
/// [`CodecError::CodecSizeMismatch`] if `src` is not whole rows, `importance.len() != n_per_row` or
/// `dst` has the wrong length, [`CodecError::UnsupportedQuantize`] for other types,
/// [`CodecError::QuantizeAbort`] for a block ggml's grid quantizer (IQ1/IQ2/IQ3) aborts on.
pub fn quantize_with_importance(
    dtype: GgmlType,
    src: &[f32],
    dst: &mut [u8],
    n_per_row: usize,
    importance: &[f32],
) -> Result<()> {
    quantize_with_importance_isa(Isa::detected(), dtype, src, dst, n_per_row, importance)
}

/// [`quantize_with_importance`] with the SIMD features `isa` (for tests and benchmarks).
///
/// # Errors
/// As [`quantize_with_importance`].
#[doc(hidden)]
pub fn quantize_with_importance_isa(
    isa: Isa,
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
    check::<Encode>(dtype, src, dst)?;
    let row = table::row(dtype);
    let blocks_per_row = n_per_row / row.block_elems;
    match (row.importance, row.quantize) {
        (Importance::Row(f), _) => zip_chunks(src, n_per_row, dst, row_bytes, |i, x, y| {
            f(isa, x, y, importance).map_err(|e| e.at(dtype, i * blocks_per_row))
        }),
        (Importance::Ignored, Some(f)) => zip_chunks(src, n_per_row, dst, row_bytes, |i, x, y| {
            f(isa, x, y).map_err(|e| e.at(dtype, i * blocks_per_row))
        }),
        _ => Err(CodecError::UnsupportedQuantize(dtype)),
    }
}

/// Whether [`quantize`] (and the `quantize_*` functions) support `dtype` (without importance
/// weights: not IQ2_XXS, IQ2_XS, IQ1_S, which [`quantize_with_importance`] takes).
pub fn can_quantize(dtype: GgmlType) -> bool {
    table::row(dtype).quantize.is_some()
}

/// Whether [`dequantize`] (and the `dequantize_*` functions) support `dtype`: every type today.
pub fn can_dequantize(dtype: GgmlType) -> bool {
    table::row(dtype).dequantize.is_some()
}

/// Whether [`quantize_with_importance`] accepts `dtype`: the types whose ggml quantizer uses
/// importance weights (including IQ2_XXS, IQ2_XS and IQ1_S, which need them), and those whose
/// quantizer ignores them (F32, F16, BF16, Q8_0, Q8_1).
pub fn can_quantize_with_importance(dtype: GgmlType) -> bool {
    match table::row(dtype).importance {
        Importance::Row(_) => true,
        Importance::Ignored => can_quantize(dtype),
        Importance::Unsupported => false,
    }
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
    let runs = table::row(dtype).swap.iter().filter(|s| s.width > 1);
    runs.flat_map(|s| (0..s.count).map(move |i| (s.offset + i * s.width, s.width))).collect()
}

/// Swaps, in place, the fields [`swapped_fields`] lists in every whole block of `bytes`
/// (a trailing partial block is left as is). Swapping twice restores the input.
pub fn swap_blocks(dtype: GgmlType, bytes: &mut [u8]) {
    let row = table::row(dtype);
    let runs = row.swap.iter().filter(|s| s.width > 1);
    if runs.clone().next().is_none() {
        return;
    }
    for block in bytes.chunks_exact_mut(row.block_bytes) {
        for s in runs.clone() {
            if let Some(run) = block.get_mut(s.offset..s.offset + s.width * s.count) {
                run.chunks_exact_mut(s.width).for_each(<[u8]>::reverse);
            }
        }
    }
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

    /// [`swapped_fields`] against its documented table, written from ggml's `ggml-common.h`
    /// (field C types, and the fields ggml reads through wider integers).
    #[test]
    fn swapped_fields_are_ggmls_layout() {
        use GgmlType::*;
        let h = |offs: &[usize]| offs.iter().map(|&o| (o, 2)).collect::<Vec<_>>();
        let run = |first: (usize, usize), at: usize, w: usize, n: usize| {
            std::iter::once(first).chain((0..n).map(|i| (at + w * i, w))).collect::<Vec<_>>()
        };
        for t in GgmlType::ALL {
            let want = match t {
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
                Q8_K => run((0, 4), 260, 2, 16),
                IQ2_XXS => run((0, 2), 2, 4, 16),
                IQ2_XS => run((0, 2), 2, 2, 32),
                IQ3_XXS => run((0, 2), 66, 4, 8),
                IQ1_S => run((0, 2), 34, 2, 8),
                IQ1_M => h(&[48, 50, 52, 54]),
                IQ4_XS => h(&[0, 2]),
                TQ1_0 => h(&[52]),
                TQ2_0 => h(&[64]),
            };
            assert_eq!(swapped_fields(t), want, "{t}");
        }
        // Swapping reverses each field's bytes: Q5_1's qh (u32 at 4) and d (f16 at 0).
        let mut b: Vec<u8> = (0..48).collect();
        swap_blocks(Q5_1, &mut b);
        assert_eq!(&b[..8], &[1, 0, 3, 2, 7, 6, 5, 4]);
        assert_eq!(&b[24..32], &[25, 24, 27, 26, 31, 30, 29, 28]);
        assert_eq!(&b[8..24], &(8..24).collect::<Vec<u8>>()[..]);
    }

    #[test]
    fn can_functions_read_the_table() {
        assert!(can_quantize(GgmlType::Q4_K) && can_quantize(GgmlType::IQ4_NL) && !can_quantize(GgmlType::IQ2_XXS));
        assert!(can_quantize(GgmlType::IQ3_S) && can_quantize(GgmlType::IQ1_M) && !can_quantize(GgmlType::IQ1_S));
        assert!(!can_quantize(GgmlType::I32) && can_dequantize(GgmlType::I32) && can_dequantize(GgmlType::IQ1_M));
        assert!(can_quantize_with_importance(GgmlType::Q6_K) && can_quantize_with_importance(GgmlType::Q8_0));
        assert!(can_quantize_with_importance(GgmlType::IQ4_NL) && can_quantize_with_importance(GgmlType::IQ4_XS));
        assert!(!can_quantize_with_importance(GgmlType::Q8_K) && can_quantize_with_importance(GgmlType::IQ2_XXS));
        // Without weights, the types ggml requires them for say so.
        assert_eq!(no_quantizer(GgmlType::IQ2_XS), CodecError::ImportanceRequired(GgmlType::IQ2_XS));
        assert_eq!(no_quantizer(GgmlType::I32), CodecError::UnsupportedQuantize(GgmlType::I32));
        let mut out = vec![0u8; 66];
        assert_eq!(
            quantize(GgmlType::IQ2_XXS, &[0.5; 256], &mut out),
            Err(CodecError::ImportanceRequired(GgmlType::IQ2_XXS))
        );
    }
}
