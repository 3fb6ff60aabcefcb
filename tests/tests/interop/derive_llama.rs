//! The `llama` example's model: a tiny random Llama built in Rust (F32 and Q8_0 tensors),
//! written with `#[derive(GgufModel)]`, then read by gguf-py and compared with what was put in
//! (names, types, canonical shapes and SHA-256 of each tensor's bytes; every key with its type and
//! value), and read back here as `Llama<Tensor>`.

use gguf_examples::models::{tiny_llama, Llama, TINY_LLAMA};
use gguf_serde::{Gguf, GgufModel, GgufWriter, Tensor};
use gguf_tests::{assert_same, python, run_py, sha256, temp_dir};
use serde_json::json;

/// The tensors of a model in the order the derive writes them (field order, blocks by number).
fn tensors(m: &Llama<Tensor>) -> Vec<(String, &Tensor)> {
    let mut out = vec![("token_embd.weight".to_owned(), &m.token_embd)];
    for (i, b) in m.blocks.iter().enumerate() {
        for (n, t) in [
            ("attn_norm", &b.attn_norm),
            ("attn_q", &b.attn_q),
            ("attn_k", &b.attn_k),
            ("attn_v", &b.attn_v),
            ("attn_output", &b.attn_output),
            ("ffn_norm", &b.ffn_norm),
            ("ffn_gate", &b.ffn_gate),
            ("ffn_down", &b.ffn_down),
            ("ffn_up", &b.ffn_up),
        ] {
            out.push((format!("blk.{i}.{n}.weight"), t));
        }
    }
    out.push(("output_norm.weight".to_owned(), &m.output_norm));
    if let Some(o) = &m.output {
        out.push(("output.weight".to_owned(), o));
    }
    out
}

#[test]
fn tiny_llama_is_read_by_gguf_py_as_built() {
    let model = tiny_llama(7).unwrap();
    let dir = temp_dir("derive_llama");
    let path = dir.join("tiny-llama.gguf");
    let mut w = GgufWriter::create(&path).unwrap();
    model.write(&mut w).unwrap();
    w.commit().unwrap();

    let c = &model.config;
    let expected_tensors: Vec<_> = tensors(&model)
        .iter()
        .map(|(name, t)| json!({"name": name, "dtype": t.dtype.name(), "shape": &*t.shape, "sha256": sha256(&t.bytes)}))
        .collect();
    assert_eq!(expected_tensors.len(), 1 + 9 * 2 + 2);
    let q8 = tensors(&model).iter().filter(|(_, t)| t.dtype.name() == "Q8_0").count();
    assert_eq!(q8, 7 * 2 + 1);
    let expected = json!({
        "version": 3, "endianness": "little", "alignment": 32,
        "metadata": [
            {"key": "general.architecture", "type": "string", "value": "llama"},
            {"key": "general.name", "type": "string", "value": "tiny random llama"},
            {"key": "llama.context_length", "type": "u32", "value": TINY_LLAMA.context_length},
            {"key": "llama.embedding_length", "type": "u32", "value": 64},
            {"key": "llama.block_count", "type": "u32", "value": 2},
            {"key": "llama.feed_forward_length", "type": "u32", "value": 96},
            {"key": "llama.rope.dimension_count", "type": "u32", "value": 16},
            {"key": "llama.attention.head_count", "type": "u32", "value": 4},
            {"key": "llama.attention.head_count_kv", "type": "u32", "value": 2},
            {"key": "llama.attention.layer_norm_rms_epsilon", "type": "f32", "value": f64::from(1e-5f32)},
            {"key": "llama.vocab_size", "type": "u32", "value": c.vocab_size},
        ],
        "tensors": expected_tensors,
    });

    if let Some(py) = python() {
        let theirs = run_py(&py, "dump.py", &[path.to_str().unwrap()]);
        assert_same(&theirs, &expected);
    }

    // And back here, owned.
    let file = Gguf::open(&path).unwrap();
    let back = Llama::<Tensor>::read(&file).unwrap();
    assert_eq!(back.config, model.config);
    let (a, b) = (tensors(&back), tensors(&model));
    assert_eq!(a.len(), b.len());
    for ((na, ta), (nb, tb)) in a.iter().zip(&b) {
        assert_eq!((na, ta), (nb, tb));
    }
    drop(file);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn q8_0_tensors_dequantize_close_to_the_random_values() {
    // Q8_0 stores 32 values as i8 × one f16 scale d = max|x| / 127: each value comes back within
    // d / 2 (plus the f16 rounding of d), here max|x| < 1 so within 1/254 + a little.
    let model = tiny_llama(7).unwrap();
    let q = &model.blocks[0].attn_q;
    assert_eq!(q.dtype.name(), "Q8_0");
    let back = q.to_f32().unwrap();
    // The same random stream, regenerated: attn_q is the second tensor drawn for block 0
    // (after attn_norm), which follows token_embd; rebuild it with an unquantized copy.
    let exact = tiny_llama_f32_attn_q(7);
    assert_eq!(back.len(), exact.len());
    let worst = back.iter().zip(&exact).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(worst <= 1.0 / 254.0 + 1e-3, "worst error {worst}");
    assert!(worst > 0.0, "Q8_0 is lossy: identical values mean nothing was quantized");
}

/// The F32 values `tiny_llama(seed)` draws for `blk.0.attn_q.weight`, from the same splitmix64
/// stream (written out again here so the test does not use the code under test).
fn tiny_llama_f32_attn_q(seed: u64) -> Vec<f32> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let (vocab, embd) = (32, 64);
    for _ in 0..vocab * embd + embd {
        next(); // token_embd, then blk.0.attn_norm
    }
    (0..embd * embd).map(|_| next()).collect()
}
