//! The codecs against fixed vectors made by ggml's own code (`tests/data/codec/`; its README says
//! what every file holds): quantized bytes, dequantized f32 bits, and dequantized random blocks,
//! including edge blocks (zeros, huge values, NaN, infinities, subnormals, f16 overflow), and the
//! importance-matrix quantizers. The vectors are regenerable: `scripts/codec-vectors.sh` builds
//! the driver `tests/harness/codec_vectors.c` against ggml and compares its output with every
//! committed file (CI runs it).
//!
//! These cover what gguf-py cannot check: quantizing Q8_1, Q2_K–Q6_K, Q8_K and F16 rounding,
//! dequantizing Q8_K, quantizing with importance weights, and NaN/Inf edge cases of every type
//! here. The i-quant, ternary and FP4 vectors of the same folder are read by the codec's unit
//! tests (`src/codec/iq/reference_tests.rs`).

use std::path::PathBuf;

use gguf_serde::codec;
use gguf_serde::{Endian, GgmlType};
use gguf_test_support::f32s;

fn data(name: &str) -> Option<Vec<u8>> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/codec").join(name);
    std::fs::read(p).ok()
}

fn first_difference(a: &[f32], b: &[f32]) -> Option<(usize, u32, u32)> {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .enumerate()
        .find(|(_, (x, y))| x.to_bits() != y.to_bits())
        .map(|(i, (x, y))| (i, x.to_bits(), y.to_bits()))
}

const TYPES: [GgmlType; 14] = [
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q8_1,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::Q8_K,
];

fn check_quantize(isa: codec::Isa, t: GgmlType) {
    let x = f32s(&data(&format!("{t}.in.f32")).expect("input vector"));
    let want = data(&format!("{t}.q")).expect("quantized vector");
    let mut got = vec![0u8; want.len()];
    codec::quantize_isa(isa, t, &x, &mut got).unwrap();
    let ts = t.type_size() as usize;
    for (i, (g, w)) in got.chunks(ts).zip(want.chunks(ts)).enumerate() {
        assert_eq!(g, w, "quantize {t} ({isa:?}): block {i} differs from ggml's reference");
    }
    assert_eq!(codec::quantize_to_vec(t, &x).unwrap(), want, "quantize_to_vec {t}");
    // Big-endian output is the little-endian output with the listed fields swapped.
    let mut be = vec![0u8; want.len()];
    codec::quantize_endian(t, Endian::Big, &x, &mut be).unwrap();
    codec::swap_blocks(t, &mut be);
    assert_eq!(be, want, "quantize big-endian {t}");
}

fn check_dequantize(isa: codec::Isa, t: GgmlType, src: &str, expected: &str) {
    let (Some(q), Some(want)) = (data(src), data(expected)) else {
        panic!("missing vector {src} / {expected}");
    };
    let want = f32s(&want);
    let mut got = vec![0f32; want.len()];
    codec::dequantize_isa(isa, t, &q, &mut got).unwrap();
    assert_eq!(first_difference(&got, &want), None, "dequantize {t} ({src}, {isa:?}): (index, ours, reference)");
    let par = codec::dequantize_to_vec(t, &q).unwrap();
    assert_eq!(first_difference(&par, &want), None, "dequantize_to_vec {t} ({src})");
}

fn quantize_all(isa: codec::Isa) {
    for t in TYPES {
        check_quantize(isa, t);
    }
}

fn dequantize_all(isa: codec::Isa) {
    for t in TYPES {
        if t == GgmlType::Q8_1 {
            continue; // ggml has no dequantize_row_q8_1; see below
        }
        check_dequantize(isa, t, &format!("{t}.q"), &format!("{t}.deq.f32"));
        check_dequantize(isa, t, &format!("{t}.rand.bin"), &format!("{t}.rand.f32"));
    }
}

#[test]
fn quantize_equals_reference() {
    quantize_all(codec::Isa::detected());
}

#[test]
fn dequantize_equals_reference() {
    dequantize_all(codec::Isa::detected());
}

/// The same with the portable code paths (no SIMD), chosen per call: no process-wide switch.
#[test]
fn portable_paths_equal_reference() {
    quantize_all(codec::Isa::portable());
    dequantize_all(codec::Isa::portable());
}

/// Q8_1 has no reference dequantizer; its blocks encode `qs[i] × d` (with `s = d × Σ qs`).
/// Checked by hand on the reference's quantized bytes.
#[test]
fn q8_1_dequantizes_to_q_times_d() {
    let q = data("Q8_1.q").unwrap();
    let got = codec::dequantize_to_vec(GgmlType::Q8_1, &q).unwrap();
    for (b, y) in q.chunks_exact(36).zip(got.chunks_exact(32)) {
        let d = half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32();
        for (i, v) in y.iter().enumerate() {
            let want = (b[4 + i] as i8) as f32 * d;
            assert!(v.to_bits() == want.to_bits() || (v.is_nan() && want.is_nan()));
        }
    }
}

#[test]
fn unsupported_types_are_errors() {
    let mut out = [0u8; 66];
    assert!(matches!(
        codec::quantize(GgmlType::I32, &[0.0; 1], &mut out[..4]),
        Err(gguf_serde::codec::CodecError::UnsupportedQuantize(GgmlType::I32))
    ));
    assert_eq!(
        codec::quantize(GgmlType::I32, &[0.0; 1], &mut out[..4]).unwrap_err().to_string(),
        "quantizing to I32 is not supported"
    );
}

/// The hash named `name` in `exhaustive.txt` (lines `name hex`, written by the C driver).
fn exhaustive_hash(name: &str) -> u64 {
    let text = String::from_utf8(data("exhaustive.txt").expect("exhaustive.txt")).unwrap();
    let hex = text
        .lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("{name} not in exhaustive.txt"));
    u64::from_str_radix(hex.trim(), 16).unwrap()
}

/// FNV-1a (64-bit) over bytes: how the exhaustive checks below compare with ggml's output.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Every f16 bit pattern, in order, dequantized: the FNV-1a hash of the little-endian f32 bits
/// equals that of ggml's `ggml_fp16_to_fp32_row` over the same 65,536 inputs (`exhaustive.txt`).
#[test]
fn every_f16_value_dequantizes_as_ggml() {
    let src: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
    let out = codec::dequantize_to_vec(GgmlType::F16, &src).unwrap();
    let mut h = Fnv::new();
    for v in out {
        h.update(&v.to_le_bytes());
    }
    assert_eq!(h.0, exhaustive_hash("f16_to_f32"));
}

/// Every f32 bit pattern, in order, quantized to F16 and to BF16: FNV-1a hashes of the
/// little-endian outputs equal those of ggml's `ggml_fp32_to_fp16_row` and
/// `ggml_fp32_to_bf16_row_ref` (`exhaustive.txt`). About 4.3 billion conversions and 8.6 GB
/// hashed per type, the two types on two threads. Ignored: `scripts/test-nightly.sh` runs it
/// (with `--ignored`); the suite checks the same conversions on ggml's vectors
/// (`F16.in.f32`/`BF16.in.f32` of `quantize_equals_reference`, edge values included).
#[test]
#[ignore = "4.3 billion conversions per type: run by scripts/test-nightly.sh, or with --ignored"]
fn every_f32_value_quantizes_to_f16_and_bf16_as_ggml() {
    let hash = |t: GgmlType| {
        let mut h = Fnv::new();
        let mut src = vec![0f32; 1 << 20];
        let mut out = vec![0u8; 2 << 20];
        for chunk in 0u64..(1 << 12) {
            for (i, x) in src.iter_mut().enumerate() {
                *x = f32::from_bits(((chunk << 20) | i as u64) as u32);
            }
            codec::quantize(t, &src, &mut out).unwrap();
            h.update(&out);
        }
        h.0
    };
    let (h16, hbf) = std::thread::scope(|s| {
        let f16 = s.spawn(|| hash(GgmlType::F16));
        let bf16 = s.spawn(|| hash(GgmlType::BF16));
        (f16.join().unwrap(), bf16.join().unwrap())
    });
    assert_eq!(h16, exhaustive_hash("f32_to_f16"), "F16");
    assert_eq!(hbf, exhaustive_hash("f32_to_bf16"), "BF16");
}

/// Quantizing with an importance matrix equals ggml's `quantize_*` given `quant_weights`
/// (`*.imat.*` vectors, made through `ggml_quantize_chunk`: rows of 64 elements for the
/// 32-element types, 512 for the 256-element ones).
#[test]
fn quantize_with_importance_equals_reference() {
    let types = [
        (GgmlType::Q4_0, 64),
        (GgmlType::Q4_1, 64),
        (GgmlType::Q5_0, 64),
        (GgmlType::Q5_1, 64),
        (GgmlType::Q2_K, 512),
        (GgmlType::Q3_K, 512),
        (GgmlType::Q4_K, 512),
        (GgmlType::Q5_K, 512),
        (GgmlType::Q6_K, 512),
        (GgmlType::IQ4_NL, 64),
        (GgmlType::IQ4_XS, 512),
    ];
    for (t, n_per_row) in types {
        let x = f32s(&data(&format!("{t}.imat.in.f32")).unwrap());
        let w = f32s(&data(&format!("{t}.imat.w.f32")).unwrap());
        let want = data(&format!("{t}.imat.q")).unwrap();
        for isa in [codec::Isa::detected(), codec::Isa::portable()] {
            let mut got = vec![0u8; want.len()];
            codec::quantize_with_importance_isa(isa, t, &x, &mut got, n_per_row, &w).unwrap();
            let ts = t.type_size() as usize;
            for (i, (g, e)) in got.chunks(ts).zip(want.chunks(ts)).enumerate() {
                assert_eq!(g, e, "quantize_with_importance {t} ({isa:?}): block {i} differs from ggml's reference");
            }
        }
    }
    // Length checks.
    let mut out = vec![0u8; 144];
    assert!(codec::quantize_with_importance(GgmlType::Q4_K, &[0.0; 256], &mut out, 256, &[1.0; 255]).is_err());
    assert!(codec::quantize_with_importance(GgmlType::Q4_K, &[0.0; 256], &mut out, 128, &[1.0; 128]).is_err());
    assert!(matches!(
        codec::quantize_with_importance(GgmlType::I8, &[0.0; 4], &mut out[..4], 4, &[1.0; 4]),
        Err(gguf_serde::codec::CodecError::UnsupportedQuantize(GgmlType::I8))
    ));
}

/// The importance path is not the plain one in disguise: on the same rows the bytes differ.
#[test]
fn importance_changes_the_result() {
    for t in [
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q2_K,
        GgmlType::Q3_K,
        GgmlType::Q4_K,
        GgmlType::Q5_K,
        GgmlType::Q6_K,
        GgmlType::IQ4_NL,
        GgmlType::IQ4_XS,
    ] {
        let x = f32s(&data(&format!("{t}.imat.in.f32")).unwrap());
        let with = data(&format!("{t}.imat.q")).unwrap();
        assert_ne!(codec::quantize_to_vec(t, &x).unwrap(), with, "{t}");
    }
}
