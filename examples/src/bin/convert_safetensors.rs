//! Converts a Hugging Face Llama checkpoint (`config.json` + `*.safetensors`, sharded or not) to
//! GGUF, as llama.cpp's `convert_hf_to_gguf.py` does for Llama: tensor names mapped, Q/K rows
//! permuted, `llama.*` hyper-parameters, output F32, F16, BF16 or Q8_0. Streams: memory stays a
//! few MiB whatever the model's size. The logic is in `gguf_examples::convert`; the README's
//! "Writing a converter" section walks through it.
//!
//! ```text
//! cargo run --release -p gguf-examples --bin convert_safetensors -- MODEL_DIR [-o OUT.gguf] [--outtype q8_0]
//! ```
//! OUT defaults to `MODEL_DIR/<folder name>-<OUTTYPE>.gguf`. No tokenizer is converted.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use gguf_examples::convert::{plan, source_bytes, Checkpoint, ConvertOptions, OutType};
use gguf_serde::{GgufModel, GgufWriter};
use indicatif::{ProgressBar, ProgressStyle};

/// Convert a Hugging Face Llama checkpoint (safetensors) to GGUF.
#[derive(Parser)]
struct Args {
    /// The checkpoint folder: config.json and *.safetensors (with model.safetensors.index.json
    /// when sharded).
    dir: PathBuf,
    /// The GGUF file to write (replaced atomically).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Type of the matrices: f32, f16, bf16 or q8_0 (norms stay F32; Q8_0 falls back to F16 for
    /// rows that are not a multiple of 32).
    #[arg(long, default_value = "f16")]
    outtype: OutType,
    /// general.name (default: the folder's name).
    #[arg(long)]
    name: Option<String>,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let ckpt = Checkpoint::open(&args.dir)?;
    let tensors = ckpt.tensors()?;
    let dir_name = std::fs::canonicalize(&args.dir)
        .ok()
        .and_then(|d| d.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .unwrap_or_else(|| "model".into());
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.dir.join(format!("{dir_name}-{}.gguf", format!("{:?}", args.outtype).to_uppercase())));

    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let inc = |n: u64| bar.inc(n);
    let opts = ConvertOptions { name: args.name.as_deref(), progress: Some(&inc), ..ConvertOptions::new(args.outtype) };
    let model = plan(&ckpt.config, &tensors, &dir_name, &opts)?;
    bar.set_length(source_bytes(&model));

    let mut w = GgufWriter::create(&out).with_context(|| format!("creating {}", out.display()))?;
    model.write(&mut w)?;
    w.commit().with_context(|| format!("writing {}", out.display()))?;
    bar.finish_and_clear();

    let tied = if model.output.is_none() { " (tied embeddings: no output.weight)" } else { "" };
    println!(
        "{}: {} blocks, {:?}{tied}, {} bytes",
        out.display(),
        model.blocks.len(),
        args.outtype,
        std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0)
    );
    Ok(())
}
