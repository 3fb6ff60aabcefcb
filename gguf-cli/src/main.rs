//! `gguf`: inspect, validate and edit GGUF files.

mod inspect;
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect(args) => inspect::run(&args),
        Command::Validate(args) => validate::run(&args),
    };
    match result {
        Ok(code) => code,
        // `gguf inspect FILE | head`: a closed pipe is not an error.
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
