//! Tests of the `iq` and `other` codec families against fixed vectors made by ggml's C code
//! (`tests/data/codec/`, see its README; regenerated and compared by `scripts/codec-vectors.sh`).
//! The comparison with gguf-py (`gguf.quants`) of the same families needs Python, so it lives in
//! the workspace's `tests/` crate (`tests/tests/codec.rs`).

use std::path::{Path, PathBuf};

use crate::codec::block::as_blocks_mut;
use crate::codec::iq::{block_iq4_nl, block_iq4_xs};
use crate::codec::isa::Isa;
use crate::codec::table::QuantizeRow;
use crate::format::GgmlType;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bs(t: GgmlType) -> usize {
    t.block_size() as usize
}

fn ts(t: GgmlType) -> usize {
    t.type_size() as usize
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn dequant(t: GgmlType, src: &[u8]) -> Vec<f32> {
    let mut out = vec![0f32; src.len() / ts(t) * bs(t)];
    crate::codec::dequantize(t, src, &mut out).unwrap();
    out
}

fn quant(t: GgmlType, src: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() / bs(t) * ts(t)];
    crate::codec::quantize(t, src, &mut out).unwrap();
    out
}

/// IQ4_NL / IQ4_XS with importance weights `w` (one per element of `src`).
fn quant_weighted(t: GgmlType, src: &[f32], w: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; src.len() / bs(t) * ts(t)];
    let isa = Isa::portable();
    match t {
        GgmlType::IQ4_NL => {
            block_iq4_nl::quantize_row(isa, src.as_chunks().0, as_blocks_mut(&mut out), w.as_chunks().0)
        }
        GgmlType::IQ4_XS => {
            block_iq4_xs::quantize_row(isa, src.as_chunks().0, as_blocks_mut(&mut out), w.as_chunks().0)
        }
        _ => panic!("{t:?} has no weighted quantizer here"),
    }
    out
}

fn assert_bytes_eq(what: &str, size: usize, ours: &[u8], want: &[u8]) {
    assert_eq!(ours.len(), want.len(), "{what}: length");
    if let Some(i) = (0..ours.len()).find(|&i| ours[i] != want[i]) {
        let b = i / size;
        panic!(
            "{what}: first differing byte {i} (block {b}):\n ours {:02x?}\n want {:02x?}",
            &ours[b * size..(b + 1) * size],
            &want[b * size..(b + 1) * size]
        );
    }
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("reading {name}: {e}"))
}

fn c_dir() -> PathBuf {
    crate_dir().join("tests").join("data").join("codec")
}

const C_DEQUANT: [GgmlType; 15] = [
    GgmlType::IQ2_XXS,
    GgmlType::IQ2_XS,
    GgmlType::IQ2_S,
    GgmlType::IQ3_XXS,
    GgmlType::IQ3_S,
    GgmlType::IQ1_S,
    GgmlType::IQ1_M,
    GgmlType::IQ4_NL,
    GgmlType::IQ4_XS,
    GgmlType::TQ1_0,
    GgmlType::TQ2_0,
    GgmlType::MXFP4,
    GgmlType::NVFP4,
    GgmlType::Q1_0,
    GgmlType::Q2_0,
];

const C_QUANT: [GgmlType; 8] = [
    GgmlType::IQ4_NL,
    GgmlType::IQ4_XS,
    GgmlType::TQ1_0,
    GgmlType::TQ2_0,
    GgmlType::MXFP4,
    GgmlType::NVFP4,
    GgmlType::Q1_0,
    GgmlType::Q2_0,
];

/// Dequantization equals ggml's `dequantize_row_*` bit for bit, NaN payloads included (the C
/// vectors hold NaN, infinite, subnormal and negative-zero scales).
#[test]
fn dequantize_matches_c_reference() {
    for t in C_DEQUANT {
        let src = read(&c_dir(), &format!("{}.deq.in", t.name()));
        let want = f32s(&read(&c_dir(), &format!("{}.deq.out", t.name())));
        assert!(src.len() >= 16 * ts(t));
        let ours = dequant(t, &src);
        assert_eq!(ours.len(), want.len());
        if let Some(i) = (0..ours.len()).find(|&i| ours[i].to_bits() != want[i].to_bits()) {
            panic!(
                "dequantize {t:?}: element {i} (block {}): ours {:#010x}, C reference {:#010x}",
                i / bs(t),
                ours[i].to_bits(),
                want[i].to_bits()
            );
        }
    }
}

/// Quantization equals ggml's reference quantizers byte for byte, on edge blocks (zeros, -0,
/// huge values, NaN, ±Inf, subnormals, ties, a maximum just below a power of two) and random ones.
#[test]
fn quantize_matches_c_reference() {
    for t in C_QUANT {
        let src = f32s(&read(&c_dir(), &format!("{}.q.in", t.name())));
        let want = read(&c_dir(), &format!("{}.q.out", t.name()));
        assert!(src.len() >= 24 * bs(t));
        assert_bytes_eq(&format!("quantize {t:?}"), ts(t), &quant(t, &src), &want);
    }
}

/// IQ4_NL / IQ4_XS with importance weights equal ggml's `quantize_iq4_*(…, quant_weights)`.
#[test]
fn quantize_weighted_matches_c_reference() {
    for t in [GgmlType::IQ4_NL, GgmlType::IQ4_XS] {
        let src = f32s(&read(&c_dir(), &format!("{}.q.in", t.name())));
        let w = f32s(&read(&c_dir(), &format!("{}.qw.w", t.name())));
        let want = read(&c_dir(), &format!("{}.qw.out", t.name()));
        let ours = quant_weighted(t, &src, &w);
        assert_eq!(ours.len(), want.len());
        assert_bytes_eq(&format!("quantize_weighted {t:?}"), ts(t), &ours, &want);
        // The same through the public importance path: one row, one weight per element.
        for isa in [Isa::detected(), Isa::portable()] {
            let mut got = vec![0u8; want.len()];
            crate::codec::quantize_with_importance_isa(isa, t, &src, &mut got, src.len(), &w).unwrap();
            assert_bytes_eq(&format!("quantize_with_importance {t:?} ({isa:?})"), ts(t), &got, &want);
        }
        // The weights matter: the unweighted bytes differ.
        assert_ne!(quant(t, &src), want, "{t:?}: weights had no effect");
    }
}

/// Values that the format represents exactly come back unchanged from quantize → dequantize
/// (hand-derived: the scale each reference quantizer picks is known for these blocks).
#[test]
fn representable_values_round_trip() {
    // E2M1 magnitudes; a block whose largest magnitude is 6·2^k gets scale 2^k exactly.
    const E2M1: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    // n values ±E2M1·2^k, the first one 6·2^k.
    let fp4 = |n: usize, k: i32| -> Vec<f32> {
        let p = 2f32.powi(k);
        let mut x: Vec<f32> = (0..n)
            .map(|j| {
                let m = E2M1[(j * 5 + 3) % 8] * p;
                if j % 3 == 1 && m != 0.0 {
                    -m
                } else {
                    m
                }
            })
            .collect();
        x[0] = 6.0 * p;
        x
    };
    for k in [-20, -3, 0, 5, 30] {
        let x = fp4(32, k);
        assert_eq!(dequant(GgmlType::MXFP4, &quant(GgmlType::MXFP4, &x)), x, "MXFP4 k={k}");
    }
    // NVFP4: each 16-element sub-block with largest magnitude 6·u, u an E4M3 value.
    let x: Vec<f32> =
        [1.0f32, 0.25, 1.5, 18.0].iter().flat_map(|&u| fp4(16, 0).into_iter().map(move |v| v * u)).collect();
    assert_eq!(dequant(GgmlType::NVFP4, &quant(GgmlType::NVFP4, &x)), x, "NVFP4");
    // Ternary and sign types: d is the largest magnitude (TQ*, Q2_0) or the mean magnitude (Q1_0);
    // 1.5 is exact in f16.
    let tern: Vec<f32> = (0..256).map(|j| [-1.5f32, 0.0, 1.5][(j * 7 + 1) % 3]).collect();
    for t in [GgmlType::TQ1_0, GgmlType::TQ2_0] {
        assert_eq!(dequant(t, &quant(t, &tern)), tern, "{t:?}");
    }
    assert_eq!(dequant(GgmlType::Q2_0, &quant(GgmlType::Q2_0, &tern[..64])), &tern[..64], "Q2_0");
    let signs: Vec<f32> = (0..128).map(|j| if j % 5 < 2 { -1.5 } else { 1.5 }).collect();
    assert_eq!(dequant(GgmlType::Q1_0, &quant(GgmlType::Q1_0, &signs)), signs, "Q1_0");
}

/// The IQ4 levels: a block whose values are `d · kvalues_iq4nl` with the largest level −127·d
/// (first level, so the scale search starts there) quantizes to d exactly.
#[test]
fn iq4_nl_levels_round_trip() {
    let d = 0.0625f32;
    let x: Vec<f32> = (0..32).map(|j| d * KV[(j * 11) % 16] as f32).collect();
    assert_eq!(x.iter().fold(0f32, |a, v| a.max(v.abs())), 127.0 * d);
    assert_eq!(dequant(GgmlType::IQ4_NL, &quant(GgmlType::IQ4_NL, &x)), x);
}

use super::KVALUES_IQ4NL as KV;

mod hostile {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Arbitrary block bytes dequantize without panicking, to the right number of values.
        #[test]
        fn any_bytes_dequantize(seed in any::<u64>(), nblocks in 1usize..4) {
            for t in C_DEQUANT {
                let mut s = seed ^ t.id() as u64;
                let src: Vec<u8> = (0..nblocks * ts(t)).map(|_| {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (s >> 56) as u8
                }).collect();
                prop_assert_eq!(dequant(t, &src).len(), nblocks * bs(t));
            }
        }

        /// Arbitrary f32 bit patterns (NaN, ±Inf, subnormals included) quantize without panicking.
        #[test]
        fn any_floats_quantize(bits in proptest::collection::vec(any::<u32>(), 256)) {
            let x: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            for t in C_QUANT {
                prop_assert_eq!(quant(t, &x).len(), 256 / bs(t) * ts(t));
            }
        }

        /// The grid quantizers never panic on arbitrary values and weights (NaN, ±Inf, subnormal,
        /// negative weights): bytes, or the typed error where ggml aborts.
        #[test]
        fn any_floats_and_weights_grid_quantize(
            bits in proptest::collection::vec(any::<u32>(), 256),
            wbits in proptest::collection::vec(any::<u32>(), 256),
            finite in any::<bool>(),
        ) {
            use crate::codec::CodecError;
            let fix = |b: u32| if finite { f32::from_bits(b & 0x3fff_ffff) } else { f32::from_bits(b) };
            let x: Vec<f32> = bits.iter().map(|&b| fix(b)).collect();
            let w: Vec<f32> = wbits.iter().map(|&b| fix(b)).collect();
            for &t in C_GRID {
                let mut out = vec![0u8; ts(t)];
                for r in [
                    crate::codec::quantize_with_importance(t, &x, &mut out, 256, &w),
                    crate::codec::quantize(t, &x, &mut out),
                ] {
                    prop_assert!(matches!(
                        r,
                        Ok(()) | Err(CodecError::QuantizeAbort { .. }) | Err(CodecError::ImportanceRequired(_))
                    ), "{:?}: {:?}", t, r);
                }
            }
        }
    }
}

/// The grid i-quants, as `tests/harness/codec_vectors.c` quantized them through
/// `ggml_quantize_chunk` one block at a time (README, "Grid i-quants").
const C_GRID: &[GgmlType] = C_DEQUANT.split_at(7).0;

/// The block indices listed in a `.abort` file.
fn aborted(name: &str) -> Vec<usize> {
    String::from_utf8(read(&c_dir(), name)).unwrap().lines().map(|l| l.parse().unwrap()).collect()
}

/// The grid quantizers equal ggml's byte for byte, with importance weights (every type) and
/// without (the types ggml quantizes without): each block alone, then the blocks ggml does not
/// abort on as one row (weights concatenated) through the public functions, portable and with
/// SIMD. Where ggml aborts, ours fails with `QuantizeAbort` naming the block.
#[test]
fn grid_quantize_matches_c_reference() {
    use crate::codec::{quantize_isa, quantize_with_importance_isa, CodecError};
    for &t in C_GRID {
        let x = f32s(&read(&c_dir(), &format!("{}.q.in", t.name())));
        let w = f32s(&read(&c_dir(), &format!("{}.qw.w", t.name())));
        let nb = x.len() / 256;
        let unweighted = c_dir().join(format!("{}.q.out", t.name())).exists();
        assert_eq!(unweighted, crate::codec::can_quantize(t), "{t:?}");
        for (suffix, weights) in [("qw", Some(&w)), ("q", None)] {
            if weights.is_none() && !unweighted {
                let mut out = vec![0u8; ts(t)];
                let e = crate::codec::quantize(t, &x[..256], &mut out).unwrap_err();
                assert_eq!(e, CodecError::ImportanceRequired(t));
                continue;
            }
            let want = read(&c_dir(), &format!("{}.{suffix}.out", t.name()));
            let aborts = aborted(&format!("{}.{suffix}.abort", t.name()));
            let run = |isa: Isa, xs: &[f32], ws: Option<&[f32]>, out: &mut [u8]| match ws {
                Some(ws) => quantize_with_importance_isa(isa, t, xs, out, xs.len(), ws),
                None => quantize_isa(isa, t, xs, out),
            };
            let mut kept = (Vec::new(), Vec::new(), Vec::new());
            for b in 0..nb {
                let xs = &x[256 * b..256 * (b + 1)];
                let ws = weights.map(|w| &w[256 * b..256 * (b + 1)]);
                let mut out = vec![0u8; ts(t)];
                let got = run(Isa::portable(), xs, ws, &mut out);
                if aborts.contains(&b) {
                    assert!(
                        matches!(got, Err(CodecError::QuantizeAbort { dtype, block: 0, .. }) if dtype == t),
                        "{t:?} {suffix} block {b}: ggml aborts, ours gave {got:?}"
                    );
                    continue;
                }
                got.unwrap_or_else(|e| panic!("{t:?} {suffix} block {b}: {e}"));
                assert_bytes_eq(&format!("{t:?} {suffix} block {b}"), ts(t), &out, &want[ts(t) * b..ts(t) * (b + 1)]);
                kept.0.extend_from_slice(xs);
                kept.1.extend_from_slice(ws.unwrap_or(&[]));
                kept.2.extend_from_slice(&out);
            }
            assert!(kept.2.len() >= 40 * ts(t), "{t:?} {suffix}: most blocks quantize");
            for isa in [Isa::detected(), Isa::portable()] {
                let mut out = vec![0u8; kept.2.len()];
                run(isa, &kept.0, weights.map(|_| &kept.1[..]), &mut out).unwrap();
                assert_bytes_eq(&format!("{t:?} {suffix} one row ({isa:?})"), ts(t), &out, &kept.2);
            }
            // The whole input fails at the first block ggml aborts on, named by its index.
            if let Some(&first) = aborts.first() {
                let mut out = vec![0u8; nb * ts(t)];
                let e = run(Isa::portable(), &x, weights.map(|w| &w[..]), &mut out).unwrap_err();
                assert!(matches!(e, CodecError::QuantizeAbort { block, .. } if block as usize == first), "{e:?}");
            }
        }
    }
}
