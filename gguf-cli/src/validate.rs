//! `gguf validate [--ggml] FILE...`

use std::path::PathBuf;
use std::process::ExitCode;

use gguf_serde::container::Source;
use gguf_serde::Gguf;

/// Arguments of `gguf validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Files to validate.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Also refuse what the spec allows but ggml's reader (llama.cpp) refuses: tensor offsets
    /// other than the running sum of padded sizes, tensor names of 64 bytes or more, empty
    /// tensor names. Without it these are printed as warnings and the file counts as valid.
    #[arg(long)]
    ggml: bool,
}

/// What ggml's `gguf.cpp` refuses in a file this crate accepts.
fn ggml_refusals<S: Source>(f: &Gguf<S>) -> Vec<String> {
    let mut out = Vec::new();
    let align = u64::from(f.alignment());
    let mut expected = 0u64;
    for t in f.tensors() {
        if t.name.is_empty() {
            out.push("a tensor has an empty name".to_owned());
        }
        if t.name.len() >= 64 {
            out.push(format!("tensor {:?}: name of {} bytes (ggml keeps at most 63)", t.name, t.name.len()));
        }
        if t.relative_offset != expected {
            out.push(format!(
                "tensor {:?}: offset {} in the data section, ggml expects {} (the running sum of padded sizes)",
                t.name, t.relative_offset, expected
            ));
        }
        expected = (t.relative_offset + t.nbytes).div_ceil(align) * align;
    }
    out
}

/// Opens each file with full validation; prints `OK` or the error per file.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut bad = 0;
    for path in &args.files {
        match Gguf::open(path) {
            Ok(f) => {
                let refusals = ggml_refusals(&f);
                if args.ggml && !refusals.is_empty() {
                    bad += 1;
                    println!("{}: INVALID for ggml: {}", path.display(), refusals.join("; "));
                    continue;
                }
                println!(
                    "{}: OK (version {}, {} keys, {} tensors)",
                    path.display(),
                    f.version(),
                    f.kv_count(),
                    f.tensor_count()
                );
                for r in refusals {
                    println!("{}: warning: valid GGUF, but ggml's reader refuses it: {r}", path.display());
                }
            }
            Err(e) => {
                bad += 1;
                println!("{}: INVALID: {e}", path.display());
            }
        }
    }
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
