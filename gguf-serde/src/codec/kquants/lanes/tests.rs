//! The lane-parallel searches against the scalar ones in `search.rs`, on the C vector inputs
//! and 64 Ki pseudo-random values at scales 1e-6..1e4.

use super::super::search::{make_q3_quants, make_qkx3_quants, make_qkx_quants, make_qx_quants};
use super::*;

/// The C vector inputs for `ty` followed by 64 Ki pseudo-random values at scales 1e-6..1e4
/// (many more blocks than the vectors, for the lane-vs-scalar comparisons).
fn inputs(ty: &str) -> Vec<f32> {
    let path = format!("{}/tests/data/codec/{ty}.in.f32", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(path).unwrap();
    let mut x: Vec<f32> = data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let mut st = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..65536i32 {
        st = st.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let u = (st >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        x.push(u * 10f32.powi(i / 256 % 11 - 6));
    }
    x
}

#[test]
fn qkx2_lanes_equal_scalar_q4_k_shape() {
    if crate::codec::isa::skip_without_avx2(Isa::detected()) {
        return;
    }
    let x = inputs("Q4_K");
    for (bi, blk) in x.chunks_exact(256).enumerate() {
        let mut xt = [[0f32; LANES]; 32];
        let mut wt = [[0f32; LANES]; 32];
        for k in 0..LANES {
            for i in 0..32 {
                xt[i][k] = blk[32 * k + i];
                wt[i][k] = 0.3 + blk[32 * k + i].abs();
            }
        }
        let mut lt = [[0u8; LANES]; 32];
        let (s8, m8) = make_qkx2_quants_x8::<32, false>(Isa::detected(), 15, &xt, &wt, &mut lt, -1.0, 0.1, 20);
        let mut lt2 = [[0u8; LANES]; 32];
        let (s8b, m8b) = qkx2_x8_body::<32, false>(15, &xt, &wt, &mut lt2, -1.0, 0.1, 20);
        assert_eq!(
            (s8.map(f32::to_bits), m8.map(f32::to_bits), lt),
            (s8b.map(f32::to_bits), m8b.map(f32::to_bits), lt2)
        );
        for k in 0..LANES {
            let xs = &blk[32 * k..32 * k + 32];
            let w: Vec<f32> = xs.iter().map(|v| 0.3 + v.abs()).collect();
            let mut l = [0u8; 32];
            let mut laux = [0u8; 32];
            let (s, m) = make_qkx_quants(15, xs, &w, &mut l, &mut laux, -1.0, 0.1, 20, false, false);
            let ll: Vec<u8> = (0..32).map(|i| lt[i][k]).collect();
            assert_eq!(
                (s.to_bits(), m.to_bits(), l.to_vec()),
                (s8[k].to_bits(), m8[k].to_bits(), ll),
                "block {bi} lane {k}"
            );
        }
    }
}

/// The AVX2 `make_qx_quants` (Q6_K's use) and `make_q3_quants` (Q3_K's) against the scalar ones.
#[test]
fn qx_and_q3_lanes_equal_scalar() {
    if crate::codec::isa::skip_without_avx2(Isa::detected()) {
        return;
    }
    for ty in ["Q6_K", "Q3_K"] {
        let x = inputs(ty);
        for (bi, blk) in x.chunks_exact(128).enumerate() {
            let mut xt = [[0f32; LANES]; 16];
            for k in 0..LANES {
                for i in 0..16 {
                    xt[i][k] = blk[16 * k + i];
                }
            }
            let mut lt = [[0i8; LANES]; 16];
            // SAFETY: AVX2 checked above.
            #[allow(unsafe_code)]
            let s8 = unsafe {
                if ty == "Q6_K" {
                    qx_x8_avx2::<16>(32, &xt, None, &mut lt)
                } else {
                    q3_x8_avx2(4, &xt, &mut lt)
                }
            };
            for k in 0..LANES {
                let mut l = [0i8; 16];
                let xs = &blk[16 * k..16 * k + 16];
                let s = if ty == "Q6_K" { make_qx_quants(32, xs, &mut l, None) } else { make_q3_quants(4, xs, &mut l) };
                let ll: Vec<i8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!((s.to_bits(), l.to_vec()), (s8[k].to_bits(), ll), "{ty} block {bi} lane {k}");
            }
        }
    }
}

#[test]
fn qkx2_lanes_equal_scalar() {
    if crate::codec::isa::skip_without_avx2(Isa::detected()) {
        return;
    }
    let x = inputs("Q2_K");
    for (bi, blk) in x.chunks_exact(128).enumerate() {
        let mut xt = [[0f32; LANES]; 16];
        let mut wt = [[0f32; LANES]; 16];
        for k in 0..LANES {
            for i in 0..16 {
                xt[i][k] = blk[16 * k + i];
                wt[i][k] = blk[16 * k + i].abs();
            }
        }
        let mut lt = [[0u8; LANES]; 16];
        let (s8, m8) = make_qkx2_quants_x8::<16, true>(Isa::detected(), 3, &xt, &wt, &mut lt, -0.5, 0.1, 15);
        let mut lt2 = [[0u8; LANES]; 16];
        let (s8b, m8b) = qkx2_x8_body::<16, true>(3, &xt, &wt, &mut lt2, -0.5, 0.1, 15);
        assert_eq!(
            (s8.map(f32::to_bits), m8.map(f32::to_bits), lt),
            (s8b.map(f32::to_bits), m8b.map(f32::to_bits), lt2)
        );
        for k in 0..LANES {
            let xs = &blk[16 * k..16 * k + 16];
            let w: Vec<f32> = xs.iter().map(|v| v.abs()).collect();
            let mut l = [0u8; 16];
            let mut laux = [0u8; 16];
            let (s, m) = make_qkx_quants(3, xs, &w, &mut l, &mut laux, -0.5, 0.1, 15, true, false);
            let ll: Vec<u8> = (0..16).map(|i| lt[i][k]).collect();
            assert_eq!(
                (s.to_bits(), m.to_bits(), l.to_vec()),
                (s8[k].to_bits(), m8[k].to_bits(), ll),
                "block {bi} lane {k} {xs:?}"
            );
        }
    }
}

/// Eight sub-blocks of `N` from `blk` side by side (`x[i][k]` = `blk[N·k + i]`) with
/// pseudo-random weights from the generator state `st`: one in `zero_every` is 0, the others
/// spread over 1e-3..1e3.
fn lanes_with_weights<const N: usize>(blk: &[f32], st: &mut u64, zero_every: u32) -> ([Lf; N], [Lf; N]) {
    let mut xt = [[0f32; LANES]; N];
    let mut wt = [[0f32; LANES]; N];
    for k in 0..LANES {
        for i in 0..N {
            *st = st.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (*st >> 40) as u32;
            xt[i][k] = blk[N * k + i];
            wt[i][k] =
                if r.is_multiple_of(zero_every) { 0.0 } else { (r % 1000) as f32 * 10f32.powi((r % 7) as i32 - 3) };
        }
    }
    (xt, wt)
}

/// `make_qkx3_quants` (the importance quantizers' search: -0.9, 0.05, 36 steps, and its flat-block
/// test `max <= min`) against the lane-parallel search with those arguments, for the Q4_K/Q5_K
/// shape (8 × 32, levels 0..=15 and 0..=31) and the Q2_K shape (8 × 16, levels 0..=3), AVX2 and
/// plain: weights with zeros and spread over 1e-3..1e3, and flat, all-zero, all-negative and
/// one-value sub-blocks among the inputs.
#[test]
fn qkx3_lanes_equal_scalar() {
    fn check<const N: usize>(nmax: i32, x: &[f32]) {
        let mut st = 0x2545_f491_4f6c_dd1du64;
        for (bi, blk) in x.chunks_exact(N * LANES).enumerate() {
            let mut blk = blk.to_vec();
            match bi % 7 {
                0 => blk[..N].fill(0.25),
                1 => blk[N..2 * N].fill(0.0),
                2 => blk[2 * N..3 * N].iter_mut().for_each(|v| *v = -v.abs() - 1e-3),
                3 => blk[3 * N + 1..4 * N].fill(0.0),
                _ => {}
            }
            let (xt, wt) = lanes_with_weights::<N>(&blk, &mut st, 5);
            let mut lt = [[0u8; LANES]; N];
            let (s8, m8) = make_qkx2_quants_x8::<N, false>(Isa::detected(), nmax, &xt, &wt, &mut lt, -0.9, 0.05, 36);
            let mut lt2 = [[0u8; LANES]; N];
            let (s8b, m8b) = qkx2_x8_body::<N, false>(nmax, &xt, &wt, &mut lt2, -0.9, 0.05, 36);
            assert_eq!(
                (s8.map(f32::to_bits), m8.map(f32::to_bits), lt),
                (s8b.map(f32::to_bits), m8b.map(f32::to_bits), lt2),
                "block {bi}: AVX2 and plain lanes"
            );
            for k in 0..LANES {
                let xs: Vec<f32> = (0..N).map(|i| xt[i][k]).collect();
                let w: Vec<f32> = (0..N).map(|i| wt[i][k]).collect();
                let mut l = vec![0u8; N];
                let mut laux = vec![0u8; N];
                let (s, m) = make_qkx3_quants(nmax, &xs, &w, &mut l, &mut laux);
                let ll: Vec<u8> = (0..N).map(|i| lt[i][k]).collect();
                assert_eq!(
                    (s.to_bits(), m.to_bits(), l),
                    (s8[k].to_bits(), m8[k].to_bits(), ll),
                    "block {bi} lane {k}"
                );
            }
        }
    }
    let x = inputs("Q4_K");
    check::<32>(15, &x);
    check::<32>(31, &x);
    check::<16>(3, &inputs("Q2_K"));
}

/// `make_qx_quants` with importance weights (the Q4_0/Q5_0 importance path: blocks of 32, levels
/// -8..7 and -16..15; Q6_K's: 16, -32..31) against the lane-parallel search, AVX2 and plain: the
/// same inputs and weights as [`qkx3_lanes_equal_scalar`], flat and tiny blocks among them.
#[test]
fn qx_lanes_with_weights_equal_scalar() {
    fn check<const N: usize>(nmax: i32, x: &[f32]) {
        let mut st = 0x9e37_79b9_7f4a_7c15u64;
        for (bi, blk) in x.chunks_exact(N * LANES).enumerate() {
            let mut blk = blk.to_vec();
            match bi % 5 {
                0 => blk[..N].fill(-0.5),
                1 => blk[N..2 * N].fill(0.0),
                2 => blk[2 * N..3 * N].iter_mut().for_each(|v| *v *= 1e-12),
                _ => {}
            }
            let (xt, wt) = lanes_with_weights::<N>(&blk, &mut st, 6);
            let mut lt = [[0i8; LANES]; N];
            let s8 = make_qx_quants_x8::<N>(Isa::detected(), nmax, &xt, &wt, &mut lt);
            let mut lt2 = [[0i8; LANES]; N];
            let s8b = make_qx_quants_x8::<N>(Isa::portable(), nmax, &xt, &wt, &mut lt2);
            assert_eq!((s8.map(f32::to_bits), lt), (s8b.map(f32::to_bits), lt2), "block {bi}: AVX2 and plain");
            for k in 0..LANES {
                let xs: Vec<f32> = (0..N).map(|i| xt[i][k]).collect();
                let w: Vec<f32> = (0..N).map(|i| wt[i][k]).collect();
                let mut l = vec![0i8; N];
                let s = make_qx_quants(nmax, &xs, &mut l, Some(&w));
                let ll: Vec<i8> = (0..N).map(|i| lt[i][k]).collect();
                assert_eq!((s.to_bits(), l), (s8[k].to_bits(), ll), "block {bi} lane {k}");
            }
        }
    }
    check::<32>(8, &inputs("Q4_0"));
    check::<32>(16, &inputs("Q5_0"));
    check::<16>(32, &inputs("Q6_K"));
}
