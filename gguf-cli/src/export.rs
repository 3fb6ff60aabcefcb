//! `gguf export FILE OUT.safetensors`, `gguf import IN.safetensors OUT.gguf`

use std::path::PathBuf;
use std::process::ExitCode;

use gguf_serde::ops::export::{export, import, ExportDtype, ExportOptions};
use gguf_serde::Gguf;

use crate::out::{outln, Out};
use crate::outputs::{Outputs, Reads};
use gguf_serde::format::shown_path;

/// Arguments of `gguf export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The GGUF file (one file: merge a split model first with gguf merge).
    input: PathBuf,
    /// The safetensors file to write (refused if it exists, unless --force).
    output: PathBuf,
    /// The type of the tensors written: `keep` (default) keeps F32, F16, BF16, F64 and integer
    /// tensors in their type and dequantizes quantized ones to F32 (bit-identical to gguf-py's
    /// gguf.quants.dequantize, except the sign and payload of a NaN made from a NaN block
    /// scale); `f32`, `f16` or `bf16` converts every float and quantized tensor
    /// to that type (rounding to nearest even, as ggml does); integer tensors are always kept.
    #[arg(long, default_value = "keep", ignore_case = true,
        value_parser = crate::names::Text(clap::builder::EnumValueParser::<DtypeArg>::new()))]
    dtype: DtypeArg,
    /// Leave out tensors whose whole name matches the glob GLOB (repeatable); the globs of
    /// `gguf quantize --exclude`.
    #[arg(long, value_name = "GLOB", value_parser = crate::quantize::parse_glob())]
    exclude: Vec<Vec<u8>>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    force: bool,
    /// No progress bar (one is shown on standard error when it is a terminal); the summary is
    /// still printed.
    #[arg(long, short)]
    quiet: bool,
}

/// `--dtype`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum DtypeArg {
    Keep,
    F32,
    F16,
    Bf16,
}

/// Arguments of `gguf import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The safetensors file (written by gguf export, or any with F32, F16, BF16, F64 or integer
    /// tensors).
    input: PathBuf,
    /// The GGUF file to write (refused if it exists, unless --force).
    output: PathBuf,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    force: bool,
}

/// Writes the safetensors file.
pub fn run_export(a: &ExportArgs) -> anyhow::Result<ExitCode> {
    let src =
        Gguf::open(&a.input).map_err(|e| crate::out::unless_named(e, shown_path(&a.input).to_string(), &[&a.input]))?;
    if let Some(n) = src.get("split.count").and_then(|v| v.as_u64()).filter(|&n| n > 1) {
        anyhow::bail!(
            "{}: a shard of a model split into {n} files: export reads one file; merge the shards first (gguf merge {} MERGED.gguf)",
            shown_path(&a.input),
            shown_path(&a.input)
        );
    }
    let if_exists =
        Outputs::one(std::slice::from_ref(&a.output), std::slice::from_ref(&a.input), Reads::Model, a.force).check()?;
    let bar = crate::quantize::progress_bar(a.quiet);
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let dtype = match a.dtype {
        DtypeArg::Keep => ExportDtype::Keep,
        DtypeArg::F32 => ExportDtype::F32,
        DtypeArg::F16 => ExportDtype::F16,
        DtypeArg::Bf16 => ExportDtype::BF16,
    };
    let opts =
        ExportOptions::new(dtype).with_exclude(a.exclude.clone()).with_progress(&progress).with_if_exists(if_exists);
    let report =
        export(&src, &a.output, &opts).map_err(|e| crate::out::writing(e.into(), std::slice::from_ref(&a.output)))?;
    bar.finish_and_clear();
    let mut out = Out::stdout();
    outln!(
        out,
        "{}: {} ({} converted, {} excluded), {}",
        shown_path(&a.output),
        crate::out::count(report.tensors, "tensor"),
        report.converted,
        report.excluded,
        crate::out::count(report.bytes, "byte")
    );
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the GGUF file.
pub fn run_import(a: &ImportArgs) -> anyhow::Result<ExitCode> {
    let if_exists =
        Outputs::one(std::slice::from_ref(&a.output), std::slice::from_ref(&a.input), Reads::Model, a.force).check()?;
    let report = import(&a.input, &a.output, if_exists)
        .map_err(|e| crate::out::unless_named(e, shown_path(&a.input).to_string(), &[&a.input, &a.output]))?;
    let mut out = Out::stdout();
    let (tensors, bytes) = (crate::out::count(report.tensors, "tensor"), crate::out::count(report.bytes, "byte"));
    outln!(out, "{}: {tensors}, {bytes}", shown_path(&a.output));
    out.finish()?;
    Ok(ExitCode::SUCCESS)
}
