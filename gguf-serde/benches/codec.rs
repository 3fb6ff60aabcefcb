//! Single-thread codec throughput per type (elements per second): `cargo bench -p gguf-serde
//! --bench codec`. Filter with a type name, e.g. `-- dequantize/Q4_K`. Inputs are realistic:
//! random values in [-1, 1) quantized to the type (no NaN or subnormal scales).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gguf_serde::{codec, GgmlType};

const N: usize = 1 << 20;

fn values(n: usize) -> Vec<f32> {
    let mut s = 0x1234_5678_9abc_def0u64;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

fn stored(t: GgmlType, x: &[f32]) -> Vec<u8> {
    match t {
        GgmlType::F32 => x.iter().flat_map(|v| v.to_le_bytes()).collect(),
        GgmlType::F64 => x.iter().flat_map(|&v| (v as f64).to_le_bytes()).collect(),
        GgmlType::I8 => x.iter().map(|&v| (v * 100.0) as i8 as u8).collect(),
        GgmlType::I16 => x.iter().flat_map(|&v| ((v * 1e4) as i16).to_le_bytes()).collect(),
        GgmlType::I32 => x.iter().flat_map(|&v| ((v * 1e8) as i32).to_le_bytes()).collect(),
        GgmlType::I64 => x.iter().flat_map(|&v| ((v * 1e8) as i64).to_le_bytes()).collect(),
        t if codec::can_quantize(t) => codec::quantize_to_vec(t, x).expect("quantize"),
        // Types without a quantizer here (IQ2/IQ3/IQ1): random block bytes, one block per
        // `block_size` values (the decoders' work does not depend on the values).
        t => {
            let n = x.len() / t.block_size() as usize * t.type_size() as usize;
            let mut s = 0x9e37_79b9_7f4a_7c15u64;
            (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s >> 32) as u8
                })
                .collect()
        }
    }
}

fn dequantize(c: &mut Criterion) {
    let x = values(N);
    let mut g = c.benchmark_group("dequantize");
    g.throughput(Throughput::Elements(N as u64));
    for t in GgmlType::ALL {
        let src = stored(t, &x);
        let mut dst = vec![0f32; N];
        g.bench_function(BenchmarkId::from_parameter(t), |b| {
            b.iter(|| codec::dequantize(t, black_box(&src), black_box(&mut dst)).expect("dequantize"))
        });
    }
    g.finish();
}

fn quantize(c: &mut Criterion) {
    let n = N / 4;
    let x = values(n);
    let mut g = c.benchmark_group("quantize");
    g.throughput(Throughput::Elements(n as u64));
    for t in GgmlType::ALL.into_iter().filter(|&t| codec::can_quantize(t) && t != GgmlType::F32) {
        let mut dst = vec![0u8; (n / t.block_size() as usize) * t.type_size() as usize];
        g.bench_function(BenchmarkId::from_parameter(t), |b| {
            b.iter(|| codec::quantize(t, black_box(&x), black_box(&mut dst)).expect("quantize"))
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = dequantize, quantize }
criterion_main!(benches);
