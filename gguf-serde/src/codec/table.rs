//! The codec table: one [`Codec`] row per ggml type, and the one `match` from [`GgmlType`] to its
//! row ([`row`]). Everything the public functions know about a type comes from its row: block
//! size and elements, which fields a big-endian file swaps, and which kernels exist.
//!
//! A kernel is a trait impl on the type's block struct ([`Dequantize`], [`Quantize`],
//! [`QuantizeRow`]); the row holds type-erased adapters (bytes in, bytes out) that view the
//! buffers as blocks and call it.

use super::block::{as_blocks, as_blocks_mut, Block, Swap, BF16, F16, F32, F64, I16, I32, I64};
use super::error::Abort;
use super::isa::Isa;
use super::{iq, kquants as k, legacy as l, other as o};
use crate::format::GgmlType;

/// Decodes blocks of `Self`, `N` elements each.
pub(crate) trait Dequantize<const N: usize>: Block {
    /// Decodes `src[i]` into `dst[i]` (the frame passes as many blocks as output arrays), as
    /// ggml's `dequantize_row_*`; may use the SIMD features in `isa`.
    fn dequantize(isa: Isa, src: &[Self], dst: &mut [[f32; N]]);
}

/// Encodes blocks of `Self` without an importance matrix.
pub(crate) trait Quantize<const N: usize>: Block {
    /// Encodes `src[i]` into `dst[i]` (as many of each), as ggml's `quantize_row_*_ref` (or the
    /// `quantize_*` without weights, for the types whose doc says so).
    fn quantize(isa: Isa, src: &[[f32; N]], dst: &mut [Self]);
}

/// Encodes one row of blocks of `Self` with an importance matrix.
pub(crate) trait QuantizeRow<const N: usize>: Block {
    /// Encodes the row `src` (whole blocks) into `dst` with `weights`, one per element of the row
    /// (the imatrix column weights), as ggml's `quantize_*` given `quant_weights`.
    fn quantize_row(isa: Isa, src: &[[f32; N]], dst: &mut [Self], weights: &[[f32; N]]);
}

/// Encodes blocks of `Self` by a grid search (the IQ1/IQ2/IQ3 types), with or without importance
/// weights, failing where ggml's quantizer aborts.
pub(crate) trait GridQuantize<const N: usize>: Block {
    /// Encodes `src[i]` into `dst[i]`, with `weights[i]` (the imatrix column weights of the
    /// block's place in its row) when given, as ggml's `quantize_row_iq*_impl`; `isa` chooses the
    /// SIMD kernels of the searches (the same bytes either way).
    ///
    /// # Errors
    /// [`Abort`] naming the first block (index into `src`) on which ggml would abort, including
    /// a type whose ggml quantizer requires weights called without them.
    fn quantize_grid(isa: Isa, src: &[[f32; N]], dst: &mut [Self], weights: Option<&[[f32; N]]>) -> Result<(), Abort>;
}

/// Implements [`Dequantize`] or [`Quantize`] for a block type whose kernel works one block at a
/// time (and uses no SIMD): `per_block!(Dequantize<256> for block_iq2_xxs => dequant_iq2_xxs);`
/// with `fn dequant_iq2_xxs(&block_iq2_xxs, &mut [f32; 256])`, or
/// `per_block!(Quantize<32> for block_mxfp4 => quant_mxfp4);` with `fn(&[f32; 32], &mut block_mxfp4)`.
macro_rules! per_block {
    (Dequantize<$n:literal> for $block:ty => $f:path) => {
        impl $crate::codec::table::Dequantize<$n> for $block {
            fn dequantize(_: $crate::codec::isa::Isa, src: &[Self], dst: &mut [[f32; $n]]) {
                for (b, y) in src.iter().zip(dst) {
                    $f(b, y);
                }
            }
        }
    };
    (Quantize<$n:literal> for $block:ty => $f:path) => {
        impl $crate::codec::table::Quantize<$n> for $block {
            fn quantize(_: $crate::codec::isa::Isa, src: &[[f32; $n]], dst: &mut [Self]) {
                for (x, b) in src.iter().zip(dst) {
                    $f(x, b);
                }
            }
        }
    };
}
pub(crate) use per_block;

/// A dequantizer over bytes: whole blocks in, `f32` out, lengths checked by the caller.
pub(crate) type DequantizeFn = fn(Isa, &[u8], &mut [f32]);
/// A quantizer over bytes: whole blocks of `f32` in, block bytes out, lengths checked by the
/// caller; fails (grid types only) where ggml aborts.
pub(crate) type QuantizeFn = fn(Isa, &[f32], &mut [u8]) -> Result<(), Abort>;
/// An importance quantizer of one row: values, block bytes out, one weight per value.
pub(crate) type QuantizeRowFn = fn(Isa, &[f32], &mut [u8], &[f32]) -> Result<(), Abort>;

/// How a type quantizes with an importance matrix.
#[derive(Clone, Copy)]
pub(crate) enum Importance {
    /// It does not: [`crate::codec::quantize_with_importance`] is `UnsupportedQuantize`.
    Unsupported,
    /// ggml's quantizer ignores the weights: the plain quantizer.
    Ignored,
    /// This row quantizer uses them.
    Row(QuantizeRowFn),
}

/// One ggml type's row.
#[derive(Clone, Copy)]
pub(crate) struct Codec {
    /// Bytes per block (`ggml_type_size`), the block struct's size.
    pub(crate) block_bytes: usize,
    /// Elements per block (`ggml_blck_size`).
    pub(crate) block_elems: usize,
    /// The runs of scalars a big-endian file swaps, from the block struct's fields.
    pub(crate) swap: &'static [Swap],
    /// The dequantizer, if any.
    pub(crate) dequantize: Option<DequantizeFn>,
    /// The quantizer without importance matrix, if any.
    pub(crate) quantize: Option<QuantizeFn>,
    /// The importance-matrix path.
    pub(crate) importance: Importance,
}

fn dequantize<B: Dequantize<N>, const N: usize>(isa: Isa, src: &[u8], dst: &mut [f32]) {
    B::dequantize(isa, as_blocks(src), dst.as_chunks_mut::<N>().0);
}

fn quantize<B: Quantize<N>, const N: usize>(isa: Isa, src: &[f32], dst: &mut [u8]) -> Result<(), Abort> {
    B::quantize(isa, src.as_chunks::<N>().0, as_blocks_mut(dst));
    Ok(())
}

fn quantize_row<B: QuantizeRow<N>, const N: usize>(
    isa: Isa,
    src: &[f32],
    dst: &mut [u8],
    weights: &[f32],
) -> Result<(), Abort> {
    B::quantize_row(isa, src.as_chunks::<N>().0, as_blocks_mut(dst), weights.as_chunks::<N>().0);
    Ok(())
}

fn grid_quantize<B: GridQuantize<N>, const N: usize>(isa: Isa, src: &[f32], dst: &mut [u8]) -> Result<(), Abort> {
    B::quantize_grid(isa, src.as_chunks::<N>().0, as_blocks_mut(dst), None)
}

fn grid_quantize_row<B: GridQuantize<N>, const N: usize>(
    isa: Isa,
    src: &[f32],
    dst: &mut [u8],
    weights: &[f32],
) -> Result<(), Abort> {
    B::quantize_grid(isa, src.as_chunks::<N>().0, as_blocks_mut(dst), Some(weights.as_chunks::<N>().0))
}

impl Codec {
    /// A type that only decodes.
    const fn decoder<B: Dequantize<N>, const N: usize>() -> Codec {
        Codec {
            block_bytes: std::mem::size_of::<B>(),
            block_elems: N,
            swap: B::SWAP,
            dequantize: Some(dequantize::<B, N>),
            quantize: None,
            importance: Importance::Unsupported,
        }
    }

    /// A type that decodes and encodes, without an importance path.
    const fn quantizer<B: Dequantize<N> + Quantize<N>, const N: usize>() -> Codec {
        Codec { quantize: Some(quantize::<B, N>), ..Codec::decoder::<B, N>() }
    }

    /// A type that decodes and encodes, and whose ggml quantizer ignores importance weights.
    const fn ignoring_weights<B: Dequantize<N> + Quantize<N>, const N: usize>() -> Codec {
        Codec { importance: Importance::Ignored, ..Codec::quantizer::<B, N>() }
    }

    /// A grid type whose ggml quantizer requires importance weights (IQ2_XXS, IQ2_XS, IQ1_S):
    /// no plain quantizer, the importance path only.
    const fn grid_weighted<B: Dequantize<N> + GridQuantize<N>, const N: usize>() -> Codec {
        Codec { importance: Importance::Row(grid_quantize_row::<B, N>), ..Codec::decoder::<B, N>() }
    }

    /// A grid type that quantizes with or without importance weights.
    const fn grid<B: Dequantize<N> + GridQuantize<N>, const N: usize>() -> Codec {
        Codec { quantize: Some(grid_quantize::<B, N>), ..Codec::grid_weighted::<B, N>() }
    }

    /// A type that decodes, encodes, and encodes with importance weights.
    const fn weighted<B: Dequantize<N> + Quantize<N> + QuantizeRow<N>, const N: usize>() -> Codec {
        Codec { importance: Importance::Row(quantize_row::<B, N>), ..Codec::quantizer::<B, N>() }
    }
}

/// The row of `dtype`: the one place that maps a ggml type to its codec.
pub(crate) fn row(dtype: GgmlType) -> &'static Codec {
    match dtype {
        GgmlType::F32 => const { &Codec::ignoring_weights::<F32, 1>() },
        GgmlType::F16 => const { &Codec::ignoring_weights::<F16, 1>() },
        GgmlType::BF16 => const { &Codec::ignoring_weights::<BF16, 1>() },
        GgmlType::F64 => const { &Codec::decoder::<F64, 1>() },
        GgmlType::I8 => const { &Codec::decoder::<i8, 1>() },
        GgmlType::I16 => const { &Codec::decoder::<I16, 1>() },
        GgmlType::I32 => const { &Codec::decoder::<I32, 1>() },
        GgmlType::I64 => const { &Codec::decoder::<I64, 1>() },
        GgmlType::Q4_0 => const { &Codec::weighted::<l::block_q4_0, 32>() },
        GgmlType::Q4_1 => const { &Codec::weighted::<l::block_q4_1, 32>() },
        GgmlType::Q5_0 => const { &Codec::weighted::<l::block_q5_0, 32>() },
        GgmlType::Q5_1 => const { &Codec::weighted::<l::block_q5_1, 32>() },
        GgmlType::Q8_0 => const { &Codec::ignoring_weights::<l::block_q8_0, 32>() },
        GgmlType::Q8_1 => const { &Codec::ignoring_weights::<l::block_q8_1, 32>() },
        GgmlType::Q2_K => const { &Codec::weighted::<k::block_q2_K, 256>() },
        GgmlType::Q3_K => const { &Codec::weighted::<k::block_q3_K, 256>() },
        GgmlType::Q4_K => const { &Codec::weighted::<k::block_q4_K, 256>() },
        GgmlType::Q5_K => const { &Codec::weighted::<k::block_q5_K, 256>() },
        GgmlType::Q6_K => const { &Codec::weighted::<k::block_q6_K, 256>() },
        GgmlType::Q8_K => const { &Codec::quantizer::<k::block_q8_K, 256>() },
        GgmlType::IQ2_XXS => const { &Codec::grid_weighted::<iq::block_iq2_xxs, 256>() },
        GgmlType::IQ2_XS => const { &Codec::grid_weighted::<iq::block_iq2_xs, 256>() },
        GgmlType::IQ2_S => const { &Codec::grid::<iq::block_iq2_s, 256>() },
        GgmlType::IQ3_XXS => const { &Codec::grid::<iq::block_iq3_xxs, 256>() },
        GgmlType::IQ3_S => const { &Codec::grid::<iq::block_iq3_s, 256>() },
        GgmlType::IQ1_S => const { &Codec::grid_weighted::<iq::block_iq1_s, 256>() },
        GgmlType::IQ1_M => const { &Codec::grid::<iq::block_iq1_m, 256>() },
        GgmlType::IQ4_NL => const { &Codec::weighted::<iq::block_iq4_nl, 32>() },
        GgmlType::IQ4_XS => const { &Codec::weighted::<iq::block_iq4_xs, 256>() },
        GgmlType::TQ1_0 => const { &Codec::quantizer::<o::block_tq1_0, 256>() },
        GgmlType::TQ2_0 => const { &Codec::quantizer::<o::block_tq2_0, 256>() },
        GgmlType::MXFP4 => const { &Codec::quantizer::<o::block_mxfp4, 32>() },
        GgmlType::NVFP4 => const { &Codec::quantizer::<o::block_nvfp4, 64>() },
        GgmlType::Q1_0 => const { &Codec::quantizer::<o::block_q1_0, 128>() },
        GgmlType::Q2_0 => const { &Codec::quantizer::<o::block_q2_0, 64>() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_agree_with_the_type_table() {
        for t in GgmlType::ALL {
            let r = row(t);
            assert_eq!((r.block_bytes as u64, r.block_elems as u64), (t.type_size(), t.block_size()), "{t}");
            // The swap runs tile the block exactly, in order.
            let mut at = 0;
            for s in r.swap {
                assert_eq!(s.offset, at, "{t}");
                at += s.width * s.count;
            }
            assert_eq!(at, r.block_bytes, "{t}");
        }
    }

    /// What each type supports, as the module docs list it.
    #[test]
    fn supported_operations() {
        use GgmlType::*;
        let quantizes = [
            F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ2_S, IQ3_XXS,
            IQ3_S, IQ1_M, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0, Q2_0,
        ];
        let weighted = [
            Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M,
            IQ4_NL, IQ4_XS,
        ];
        let ignored = [F32, F16, BF16, Q8_0, Q8_1];
        for t in GgmlType::ALL {
            let r = row(t);
            assert!(r.dequantize.is_some(), "{t}");
            assert_eq!(r.quantize.is_some(), quantizes.contains(&t), "{t}");
            let imp = match r.importance {
                Importance::Unsupported => 0,
                Importance::Ignored => 1,
                Importance::Row(_) => 2,
            };
            let want = if weighted.contains(&t) { 2 } else { ignored.contains(&t) as i32 };
            assert_eq!(imp, want, "{t}");
        }
    }

    fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 33) as u8
            })
            .collect()
    }

    /// Every kernel gives the same bits with the SIMD features of this CPU as portably: random
    /// block bytes (every scale bit pattern) decoded, random values (every exponent, infinities)
    /// and smooth ones encoded, with and without importance weights.
    #[test]
    fn simd_and_portable_kernels_give_the_same_bits() {
        let (simd, portable) = (Isa::detected(), Isa::portable());
        if crate::codec::isa::skip_without_avx2(simd) {
            return;
        }
        for t in GgmlType::ALL {
            let r = row(t);
            let nblocks = 4096 / r.block_elems + 37;
            let n = nblocks * r.block_elems;
            if let Some(f) = r.dequantize {
                let src = random_bytes(nblocks * r.block_bytes, t.id() as u64 * 31 + 7);
                let (mut a, mut b) = (vec![0f32; n], vec![1f32; n]);
                f(simd, &src, &mut a);
                f(portable, &src, &mut b);
                let diff = a.iter().zip(&b).position(|(x, y)| x.to_bits() != y.to_bits());
                assert_eq!(diff, None, "dequantize {t}");
            }
            // Random bit patterns, NaN made finite: from blocks with several NaN the reference's
            // own result depends on which NaN payload an operation keeps, which IEEE 754 leaves
            // open (module docs of `codec`); the C vectors pin NaN edge blocks.
            let raw: Vec<f32> = random_bytes(4 * n, t.id() as u64 + 99)
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .map(|v| if v.is_nan() { f32::from_bits(v.to_bits() & !0x4000_0000) } else { v })
                .collect();
            let smooth: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 0.37e-2).collect();
            let weights: Vec<f32> = (0..r.block_elems * 2).map(|i| 0.25 + (i % 13) as f32).collect();
            for (what, x) in [("random bits", &raw), ("smooth", &smooth)] {
                if let Some(f) = r.quantize {
                    let (mut a, mut b) = (vec![0u8; nblocks * r.block_bytes], vec![1u8; nblocks * r.block_bytes]);
                    let (ra, rb) = (f(simd, x, &mut a), f(portable, x, &mut b));
                    assert_eq!(ra, rb, "quantize {t}, {what}");
                    if ra.is_err() {
                        b.copy_from_slice(&a);
                    }
                    let bad = a.chunks(r.block_bytes).zip(b.chunks(r.block_bytes)).position(|(p, q)| p != q);
                    assert_eq!(bad, None, "quantize {t}, {what}: first differing block");
                }
                if let Importance::Row(f) = r.importance {
                    let rows = nblocks / 2;
                    let x = &x[..rows * 2 * r.block_elems];
                    let (mut a, mut b) = (vec![0u8; rows * 2 * r.block_bytes], vec![1u8; rows * 2 * r.block_bytes]);
                    for ((xr, ar), br) in x
                        .chunks_exact(2 * r.block_elems)
                        .zip(a.chunks_exact_mut(2 * r.block_bytes))
                        .zip(b.chunks_exact_mut(2 * r.block_bytes))
                    {
                        let (ra, rb) = (f(simd, xr, ar, &weights), f(portable, xr, br, &weights));
                        assert_eq!(ra, rb, "{t}, {what}");
                        if ra.is_err() {
                            // A row ggml aborts on (grid types): its bytes are unspecified.
                            br.copy_from_slice(ar);
                        }
                    }
                    assert!(a == b, "quantize_with_importance {t}, {what}");
                }
            }
        }
    }
}
