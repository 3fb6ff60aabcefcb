//! `gguf`: inspect, validate and edit GGUF files.

mod diff;
mod edit;
mod inspect;
mod quantize;
mod split;
mod validate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "gguf", version, about = "Inspect, validate and edit GGUF files (llama.cpp / ggml models)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Describe a file: header, every key/value pair with its type, and a table of tensors
    /// (name, dtype, canonical shape outermost first, absolute data offset, bytes).
    Inspect(inspect::Args),
    /// Validate files: exit 0 if every file is valid, 1 otherwise, printing the error per file.
    Validate(validate::Args),
    /// Split a model into shards NAME-00001-of-0000N.gguf, ... in llama-gguf-split's layout
    /// (the first shard has all the metadata; every shard has split.no, split.count and
    /// split.tensors.count). Writes nothing unless every shard is complete.
    Split(split::SplitArgs),
    /// Merge the shards of a split model (give any shard) into one file without the split keys:
    /// byte-identical to the file that `gguf split` split.
    Merge(split::MergeArgs),
    /// Set a metadata key (rewrites the file safely: temporary file, then rename).
    Set(edit::SetArgs),
    /// Remove a metadata key (rewrites the file safely).
    Rm(edit::RmArgs),
    /// Rename a metadata key, keeping its place and value (rewrites the file safely).
    Rename(edit::RenameArgs),
    /// Show the keys and tensors that differ between two files (only in A: -, only in B: +,
    /// changed: ~;
    /// tensor data compared byte for byte). Exit 0 if none, 1 if any, 2 on error.
    Diff(diff::Args),
    /// Quantize a model as llama.cpp's llama-quantize does: IN [OUT] TYPE with a llama.cpp file
    /// type (Q4_K_M, Q8_0, ...); each tensor's type chosen by llama-quantize's rules (--dry-run
    /// shows them), the output laid out as llama-quantize writes it, with ggml's reference
    /// quantizers.
    Quantize(quantize::QuantizeArgs),
    /// Convert a model's quantized tensors to F32 (or F16, BF16).
    Dequantize(quantize::DequantizeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Split(args) => split::run_split(&args),
        Command::Merge(args) => split::run_merge(&args),
        Command::Set(args) => edit::run_set(&args),
        Command::Rm(args) => edit::run_rm(&args),
        Command::Rename(args) => edit::run_rename(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Quantize(args) => quantize::run_quantize(&args),
        Command::Dequantize(args) => quantize::run_dequantize(&args),
    };
    match result {
        Ok(code) => code,
        // `gguf inspect FILE | head`: a closed pipe is not an error.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // The chain: the CLI's context (a path), then the error; each error prints its own
            // cause or returns it as `source`, never both, so each text appears once.
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
