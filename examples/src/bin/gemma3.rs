//! Reads Gemma 3 270M as a typed `Gemma3<TensorView>` — every one of its 236 tensors bound to a
//! field, zero-copy from the memory mapping — prints a summary, writes the model back from the
//! views and checks that the new file is byte-identical to the original.
//!
//! ```text
//! cargo run -p gguf-examples --bin gemma3 -- [MODEL.gguf] [OUT.gguf]
//! ```
//! MODEL defaults to `models/gemma-3-270m-q4_k_m.gguf` (or `$GGUF_MODELS/...`); OUT to a file in
//! the temporary folder that is removed after the comparison.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use gguf_examples::models::Gemma3;
use gguf_serde::{Gguf, GgufModel, GgufWriter, ReadOptions, TensorView};

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let input = match args.next() {
        Some(p) => PathBuf::from(p),
        None => std::env::var_os("GGUF_MODELS")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("models"))
            .join("gemma-3-270m-q4_k_m.gguf"),
    };
    let (output, keep) = match args.next() {
        Some(p) => (PathBuf::from(p), true),
        None => (std::env::temp_dir().join(format!("gemma3-rewritten-{}.gguf", std::process::id())), false),
    };

    let file = Gguf::open(&input).with_context(|| format!("opening {}", input.display()))?;
    let (model, report) = Gemma3::<TensorView>::read_with(&file, &ReadOptions::default())?;

    let m = &model.meta;
    println!("{}: {}", input.display(), m.name.as_deref().unwrap_or("(no name)"));
    println!(
        "  {} blocks, embedding {}, ffn {}, heads {} (kv {}), head width {}, context {}, vocabulary {}",
        model.blocks.len(),
        m.embedding_length,
        m.feed_forward_length,
        m.head_count,
        m.head_count_kv,
        m.key_length,
        m.context_length,
        m.tokenizer.tokens.len()
    );
    println!(
        "  {} tensors bound, {} unbound; output projection {}",
        report.bound,
        report.unbound.len(),
        if model.output.is_some() { "separate" } else { "tied to token_embd" }
    );
    let mut by_type: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    let mut add = |t: &TensorView| {
        let e = by_type.entry(t.dtype.name()).or_default();
        e.0 += 1;
        e.1 += t.bytes.len() as u64;
    };
    add(&model.output_norm);
    add(&model.token_embd);
    for b in &model.blocks {
        for t in [
            &b.attn_k,
            &b.attn_k_norm,
            &b.attn_norm,
            &b.attn_output,
            &b.attn_q,
            &b.attn_q_norm,
            &b.attn_v,
            &b.ffn_down,
            &b.ffn_gate,
            &b.ffn_norm,
            &b.ffn_up,
            &b.post_attention_norm,
            &b.post_ffw_norm,
        ] {
            add(t);
        }
    }
    for (dtype, (n, bytes)) in &by_type {
        println!("  {dtype:>5}: {n:3} tensors, {bytes:>11} bytes");
    }
    let embd = &model.token_embd;
    println!("  token_embd.weight: {} {:?}, {} bytes", embd.dtype, &*embd.shape, embd.bytes.len());

    // Write it back: metadata, tensor infos, then each tensor's data straight from the mapping.
    let mut w = GgufWriter::create(&output)?;
    model.write(&mut w)?;
    w.commit()?;

    let same = same_bytes(&input, &output)?;
    if !keep {
        std::fs::remove_file(&output)?;
    }
    if !same {
        bail!("{} differs from {}", output.display(), input.display());
    }
    println!("  written back: byte-identical ({} bytes)", file.file_len());
    Ok(())
}

/// Whether two files hold the same bytes (compared through memory mappings of both).
fn same_bytes(a: &std::path::Path, b: &std::path::Path) -> Result<bool> {
    let (a, b) = (Gguf::open(a)?, Gguf::open(b)?);
    Ok(a.bytes() == b.bytes())
}
