//! Converts a Hugging Face checkpoint (`config.json` + `*.safetensors`, sharded or not) to GGUF
//! with an architecture written outside the library: a Llama ([`MyLlama`], `--arch llama`, the
//! default) or the mixture of experts OLMoE ([`Olmoe`], `--arch olmoe`), through the library's
//! converter (`gguf_serde::convert::plan_with`, `write_plan`). Streams: memory stays a few MiB
//! whatever the model's size, experts included. The tokenizer is written as the reference writes
//! it.
//!
//! ```text
//! cargo run --release -p gguf-examples --bin convert_safetensors -- MODEL_DIR [-o OUT.gguf] [--outtype q8_0] [--arch olmoe]
//! ```
//! OUT defaults to the name `convert_hf_to_gguf.py` would give it, in MODEL_DIR.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use gguf_examples::convert::MyLlama;
use gguf_examples::olmoe::Olmoe;
use gguf_serde::convert::{plan_with, write_plan, Architecture, Checkpoint, ConvertOptions, OutType};
use indicatif::{ProgressBar, ProgressStyle};

/// The example architectures.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Arch {
    /// `LlamaForCausalLM` ([`MyLlama`]).
    Llama,
    /// `OlmoeForCausalLM` ([`Olmoe`]).
    Olmoe,
}

/// Convert a Hugging Face checkpoint (safetensors) to GGUF with an example architecture.
#[derive(Parser)]
struct Args {
    /// The checkpoint folder.
    dir: PathBuf,
    /// The GGUF file to write (replaced atomically).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// f32, f16, bf16, q8_0 or auto.
    #[arg(long, default_value = "f16")]
    outtype: OutType,
    /// The architecture.
    #[arg(long, value_enum, default_value = "llama")]
    arch: Arch,
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
    let bar = if args.quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let inc = |n: u64| bar.inc(n);
    let opts = ConvertOptions { name: args.name.as_deref(), progress: Some(&inc), ..ConvertOptions::new(args.outtype) };
    let arch: &dyn Architecture = match args.arch {
        Arch::Llama => &MyLlama,
        Arch::Olmoe => &Olmoe,
    };
    let plan = plan_with(&ckpt, arch, &opts)?;
    let out = match &args.out {
        Some(o) => o.clone(),
        None => args.dir.join(plan.default_file_name()?),
    };
    bar.set_length(plan.source_bytes());
    let report = write_plan(&plan, &out, &opts).with_context(|| format!("writing {}", out.display()))?;
    bar.finish_and_clear();
    println!("{}: {} tensors, {}", out.display(), report.tensors.len(), plan.outtype.label());
    Ok(())
}
