//! The lane-parallel searches against the scalar ones in `search.rs`, on the C vector inputs
//! and 64 Ki pseudo-random values at scales 1e-6..1e4.

use super::super::search::{make_q3_quants, make_qkx_quants, make_qx_quants};
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
                    qx_x8_avx2(32, &xt, &mut lt)
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
