//! `gguf quantize IN OUT --type T` and `gguf dequantize IN OUT [--type F32|F16|BF16]`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use gguf_serde::ops::requant::{requantize, RequantizeOptions};
use gguf_serde::{GgmlType, Gguf};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `gguf quantize`.
#[derive(clap::Args)]
pub struct QuantizeArgs {
    /// The input model.
    input: PathBuf,
    /// The output file (written to a temporary file, then renamed).
    output: PathBuf,
    /// Target ggml type: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS,
    /// TQ1_0, TQ2_0, MXFP4, F16, BF16, F32.
    #[arg(long = "type", short = 't')]
    target: GgmlType,
    /// Leave tensors whose name matches PATTERN as they are (`*` is a wildcard; repeatable),
    /// e.g. `--exclude 'token_embd.weight' --exclude '*attn_v*'`. One-dimensional tensors (norms)
    /// always keep their type.
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Arguments of `gguf dequantize`.
#[derive(clap::Args)]
pub struct DequantizeArgs {
    /// The input model.
    input: PathBuf,
    /// The output file.
    output: PathBuf,
    /// Float type to convert to: F32 (default), F16 or BF16.
    #[arg(long = "type", short = 't', default_value = "F32")]
    target: GgmlType,
    /// Leave tensors whose name matches PATTERN as they are (`*` is a wildcard; repeatable).
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

/// Re-quantizes a model.
pub fn run_quantize(a: &QuantizeArgs) -> anyhow::Result<ExitCode> {
    convert(&a.input, &a.output, a.target, &a.exclude, a.quiet)
}

/// Dequantizes a model to a float type.
pub fn run_dequantize(a: &DequantizeArgs) -> anyhow::Result<ExitCode> {
    if !matches!(a.target, GgmlType::F32 | GgmlType::F16 | GgmlType::BF16) {
        bail!("dequantize converts to F32, F16 or BF16, not {}", a.target);
    }
    convert(&a.input, &a.output, a.target, &a.exclude, a.quiet)
}

fn convert(
    input: &PathBuf,
    output: &PathBuf,
    target: GgmlType,
    exclude: &[String],
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let src = Gguf::open(input).with_context(|| format!("{}", input.display()))?;
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(0) };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report_progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let mut opts = RequantizeOptions::new(target);
    opts.exclude = exclude.to_vec();
    opts.progress = Some(&report_progress);
    let report = requantize(&src, output, &opts).with_context(|| format!("writing {}", output.display()))?;
    bar.finish_and_clear();
    println!(
        "{}: {} tensors converted to {target}, {} kept; tensor data {} -> {} bytes",
        output.display(),
        report.converted.len(),
        report.kept.len(),
        report.bytes_in,
        report.bytes_out
    );
    Ok(ExitCode::SUCCESS)
}
