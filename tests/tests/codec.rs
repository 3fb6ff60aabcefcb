//! The tensor codecs against gguf-py's `gguf.quants` (PyPI `gguf`), the reference in CI:
//! identical f32 bits from dequantizing, identical bytes from quantizing, on random data (fixed
//! seeds) and on every quantized tensor of the Gemma 3 270M model. One Python process does every
//! job (`tests/py/codec_ref.py`).
//!
//! Types gguf-py does not implement (quantizing the k-quants, Q8_1, F16 rounding; dequantizing
//! Q8_1, Q8_K) are tested against vectors made by ggml's reference C code in
//! `gguf-serde/tests/codec_vectors.rs`.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use gguf_serde::codec;
use gguf_serde::{Endian, GgmlType, Gguf};
use gguf_tests::support::f32s;
use gguf_tests::{model, python, temp_dir, workspace_root};
use sha2::{Digest, Sha256};

/// splitmix64 (Steele, Lea, Flood 2014): the generator of every random input here.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

/// Random blocks of `dtype`: random bytes, except that f16 scale fields get finite values of
/// realistic size in half of the blocks (so most outputs are ordinary numbers) and random bits in
/// the other half (NaN, infinity, subnormal scales included).
fn random_blocks(dtype: GgmlType, nblocks: usize, rng: &mut Rng) -> Vec<u8> {
    let ts = dtype.type_size() as usize;
    let mut out = vec![0u8; nblocks * ts];
    for b in out.iter_mut() {
        *b = rng.next_u64() as u8;
    }
    let scale_fields: &[usize] = match dtype {
        GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
        GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4_K | GgmlType::Q5_K => &[0, 2],
        GgmlType::Q2_K => &[80, 82],
        GgmlType::Q3_K => &[108],
        GgmlType::Q6_K => &[208],
        _ => &[],
    };
    for (i, block) in out.chunks_exact_mut(ts).enumerate() {
        if i % 2 == 0 {
            for &off in scale_fields {
                let v = half::f16::from_f32(rng.unit() * 0.05).to_bits();
                block[off..off + 2].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// Random f32 rows: blocks of uniform values at scales from 1e-6 to 1e4, some with one outlier,
/// some all zero, some constant.
fn random_values(n: usize, block: usize, rng: &mut Rng) -> Vec<f32> {
    let mut v = Vec::with_capacity(n);
    let mut b = 0i32;
    while v.len() < n {
        let scale = 10f32.powi(b % 11 - 6);
        match b % 13 {
            5 => v.extend(vec![0.0; block]),
            9 => {
                let c = rng.unit() * scale;
                v.extend(vec![c; block]);
            }
            _ => {
                let start = v.len();
                v.extend((0..block).map(|_| rng.unit() * scale));
                if b % 4 == 1 {
                    let i = start + (rng.next_u64() as usize % block);
                    v[i] *= 50.0;
                }
            }
        }
        b += 1;
    }
    v.truncate(n);
    v
}

fn run_jobs(py: &Path, jobs: &str, dir: &Path) {
    let jobs_file = dir.join("jobs.txt");
    std::fs::write(&jobs_file, jobs).unwrap();
    let script = workspace_root().join("tests/py/codec_ref.py");
    let out = Command::new(py).arg(&script).arg(&jobs_file).output().expect("running python");
    assert!(out.status.success(), "codec_ref.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// The first index where two f32 slices differ in bits, with both values.
/// Bits must match, with two allowances for NaN:
/// - numpy converts a signalling f16 NaN to a signalling f32 NaN; ggml's conversion (a float
///   multiply) quiets it, so for F16 (`quiet_theirs`) a NaN from gguf-py is compared with its
///   quiet bit set.
/// - When both operands of one operation are NaN (a NaN scale `d` and a NaN min `m` in one block,
///   for the types with two scale fields), IEEE 754 does not say whose payload survives and
///   compilers swap operands freely; there (`any_nan`) any NaN matches any NaN.
fn first_bit_difference(a: &[f32], b: &[f32], quiet_theirs: bool, any_nan: bool) -> Option<(usize, u32, u32)> {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let y_bits = if quiet_theirs && y.is_nan() { y.to_bits() | 0x0040_0000 } else { y.to_bits() };
            let same = x.to_bits() == y_bits || (any_nan && x.is_nan() && y.is_nan());
            (same, x.to_bits(), y_bits)
        })
        .enumerate()
        .find(|(_, (same, _, _))| !same)
        .map(|(i, (_, x, y))| (i, x, y))
}

/// Types whose blocks have a scale and a min that can both be NaN.
fn two_scales(t: GgmlType) -> bool {
    matches!(t, GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q2_K | GgmlType::Q4_K | GgmlType::Q5_K)
}

const DEQUANT_TYPES: [GgmlType; 12] = [
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
];

const QUANT_TYPES: [GgmlType; 7] =
    [GgmlType::F16, GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0];

#[test]
fn random_data_equals_gguf_py() {
    let Some(py) = python() else { return };
    let dir = temp_dir("codec-random");
    let mut jobs = String::new();
    let mut cases = Vec::new();
    for (k, &t) in DEQUANT_TYPES.iter().enumerate() {
        let mut rng = Rng(1000 + k as u64);
        let nblocks = if t.block_size() == 1 { 1 << 16 } else { 4096 * 32 / t.block_size() as usize };
        let src = random_blocks(t, nblocks, &mut rng);
        let (i, o) = (dir.join(format!("d-{t}.in")), dir.join(format!("d-{t}.out")));
        std::fs::write(&i, &src).unwrap();
        writeln!(jobs, "dequant {t} {} {}", i.display(), o.display()).unwrap();
        cases.push((true, t, i, o));
    }
    for (k, &t) in QUANT_TYPES.iter().enumerate() {
        let mut rng = Rng(2000 + k as u64);
        let x = random_values(1 << 17, 32, &mut rng);
        let (i, o) = (dir.join(format!("q-{t}.in")), dir.join(format!("q-{t}.out")));
        std::fs::write(&i, x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        writeln!(jobs, "quant {t} {} {}", i.display(), o.display()).unwrap();
        cases.push((false, t, i, o));
    }
    run_jobs(&py, &jobs, &dir);
    for (is_dequant, t, i, o) in cases {
        let input = std::fs::read(&i).unwrap();
        let expected = std::fs::read(&o).unwrap();
        if is_dequant {
            let want = f32s(&expected);
            let mut got = vec![0f32; want.len()];
            codec::dequantize(t, &input, &mut got).unwrap();
            assert_eq!(
                first_bit_difference(&got, &want, t == GgmlType::F16, two_scales(t)),
                None,
                "dequantize {t}: (index, our bits, gguf-py bits)"
            );
            // The parallel path and the big-endian path give the same bits.
            assert_eq!(codec::dequantize_to_vec(t, &input).unwrap().len(), want.len());
            let par = codec::dequantize_to_vec(t, &input).unwrap();
            assert_eq!(
                first_bit_difference(&par, &want, t == GgmlType::F16, two_scales(t)),
                None,
                "dequantize_to_vec {t}"
            );
            let mut be = input.clone();
            codec::swap_blocks(t, &mut be);
            let mut got_be = vec![0f32; want.len()];
            codec::dequantize_endian(t, Endian::Big, &be, &mut got_be).unwrap();
            assert_eq!(
                first_bit_difference(&got_be, &want, t == GgmlType::F16, two_scales(t)),
                None,
                "dequantize big-endian {t}"
            );
        } else {
            let x = f32s(&input);
            let got = codec::quantize_to_vec(t, &x).unwrap();
            assert_eq!(got.len(), expected.len(), "quantize {t}: length");
            let bad = got.iter().zip(&expected).position(|(a, b)| a != b);
            assert_eq!(
                bad,
                None,
                "quantize {t}: first differing byte (block {:?})",
                bad.map(|b| b / t.type_size() as usize)
            );
        }
    }
}

/// Dequantizes every non-F32 tensor of a real model and compares the sha256 of the f32 bits with
/// gguf-py's `gguf.quants.dequantize`; returns the number of tensors per type compared.
fn every_tensor_dequantizes_as_gguf_py(file: &str, tag: &str) -> Option<std::collections::BTreeMap<GgmlType, usize>> {
    let path = model(file)?;
    let py = python()?;
    let f = Gguf::open(&path).unwrap();
    let dir = temp_dir(tag);
    let mut list = String::new();
    let mut ours = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for t in f.tensors() {
        if t.dtype == GgmlType::F32 {
            continue;
        }
        *counts.entry(t.dtype).or_insert(0) += 1;
        writeln!(list, "{} {} {} {}", t.name, t.dtype, t.data_offset, t.nbytes).unwrap();
        let vals = codec::dequantize_to_vec(t.dtype, f.tensor_data(&t).unwrap()).unwrap();
        let mut h = Sha256::new();
        for chunk in vals.chunks(1 << 16) {
            h.update(chunk.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
        }
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        ours.push((t.name.to_owned(), t.dtype, hex));
    }
    let lst = dir.join("tensors.txt");
    std::fs::write(&lst, list).unwrap();
    let out = dir.join("hashes.txt");
    run_jobs(&py, &format!("hashes {} {} {}\n", path.display(), lst.display(), out.display()), &dir);
    let theirs = std::fs::read_to_string(&out).unwrap();
    let theirs: Vec<(&str, &str)> = theirs.lines().filter_map(|l| l.split_once(' ')).collect();
    assert_eq!(theirs.len(), ours.len());
    for ((name, dtype, h), (tname, th)) in ours.iter().zip(theirs) {
        assert_eq!(name, tname);
        assert_eq!(h, th, "tensor {name} ({dtype}): dequantized f32 differ from gguf-py");
    }
    Some(counts)
}

#[test]
fn every_gemma_tensor_dequantizes_as_gguf_py() {
    let Some(counts) = every_tensor_dequantizes_as_gguf_py("gemma-3-270m-q4_k_m.gguf", "codec-gemma") else { return };
    let want = [(GgmlType::Q5_0, 81), (GgmlType::Q8_0, 10), (GgmlType::Q4_K, 27), (GgmlType::Q6_K, 9)];
    assert_eq!(counts, want.into_iter().collect());
}

#[test]
fn every_smollm2_tensor_dequantizes_as_gguf_py() {
    let Some(counts) = every_tensor_dequantizes_as_gguf_py("SmolLM2-135M-Instruct.Q4_1.gguf", "codec-smollm2") else {
        return;
    };
    assert_eq!(counts, [(GgmlType::Q4_1, 210), (GgmlType::Q8_0, 1)].into_iter().collect());
}

// ---------------------------------------------------------------------------------------------
// The i-quant, ternary and FP4 families against gguf-py (`tests/py/iq_gguf_py_reference.py`
// writes random blocks and gguf-py's results; moved here from the codec's unit tests, which stay
// hermetic and compare with ggml's C vectors instead).

const IQ_PY_DEQUANT: [GgmlType; 13] = [
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
];

const IQ_PY_QUANT: [GgmlType; 3] = [GgmlType::TQ1_0, GgmlType::TQ2_0, GgmlType::MXFP4];

/// Same bits, or both NaN (NaN payloads are not compared: numpy and C may propagate them
/// differently).
fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn iquants_and_fp4_equal_gguf_py() {
    let Some(py) = python() else { return };
    let dir = temp_dir("codec-iq-gguf-py");
    let script = workspace_root().join("tests/py/iq_gguf_py_reference.py");
    let out = Command::new(&py).arg(&script).arg(&*dir).output().expect("running python");
    assert!(out.status.success(), "iq_gguf_py_reference.py failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let read = |name: String| std::fs::read(dir.join(&name)).unwrap_or_else(|e| panic!("reading {name}: {e}"));
    for t in IQ_PY_DEQUANT {
        let (bs, ts) = (t.block_size() as usize, t.type_size() as usize);
        let src = read(format!("{}.deq.in", t.name()));
        let want = f32s(&read(format!("{}.deq.out", t.name())));
        assert!(src.len() > 100 * ts, "{t}");
        // Random scales are NaN or infinite now and then, but most values must be finite.
        assert!(want.iter().filter(|v| v.is_finite()).count() > want.len() * 9 / 10, "{t:?}: reference mostly NaN");
        let ours = codec::dequantize_to_vec(t, &src).unwrap();
        assert_eq!(ours.len(), want.len(), "dequantize {t}: length");
        let bad: Vec<usize> = (0..ours.len()).filter(|&i| !same_f32(ours[i], want[i])).collect();
        if let Some(&i) = bad.first() {
            panic!(
                "dequantize {t}: {} of {} values differ; first at element {i} (block {}): ours {:#010x}, gguf-py {:#010x}",
                bad.len(),
                ours.len(),
                i / bs,
                ours[i].to_bits(),
                want[i].to_bits()
            );
        }
    }
    for t in IQ_PY_QUANT {
        let (bs, ts) = (t.block_size() as usize, t.type_size() as usize);
        let src = f32s(&read(format!("{}.q.in", t.name())));
        let want = read(format!("{}.q.out", t.name()));
        assert!(src.len() > 100 * bs, "{t}");
        let ours = codec::quantize_to_vec(t, &src).unwrap();
        assert_eq!(ours.len(), want.len(), "quantize {t}: length");
        if let Some(i) = (0..ours.len()).find(|&i| ours[i] != want[i]) {
            let b = i / ts;
            panic!(
                "quantize {t}: first differing byte {i} (block {b}):\n ours {:02x?}\n want {:02x?}",
                &ours[b * ts..(b + 1) * ts],
                &want[b * ts..(b + 1) * ts]
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
