//! `gguf validate FILE...`

use std::path::PathBuf;
use std::process::ExitCode;

use gguf_serde::Gguf;

/// Arguments of `gguf validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Files to validate.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// Opens each file with full validation; prints `OK` or the error per file.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut bad = 0;
    for path in &args.files {
        match Gguf::open(path) {
            Ok(f) => println!(
                "{}: OK (version {}, {} keys, {} tensors)",
                path.display(),
                f.version(),
                f.kv_count(),
                f.tensor_count()
            ),
            Err(e) => {
                bad += 1;
                println!("{}: INVALID: {e}", path.display());
            }
        }
    }
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
