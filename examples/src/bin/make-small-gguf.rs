//! Writes the spec's test vector to `tests/data/small.gguf` (or the path given).

fn main() -> anyhow::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::env::args().nth(1).map(std::path::PathBuf::from).unwrap_or(root.join("tests/data/small.gguf"));
    let bytes = gguf_examples::small::build()?;
    std::fs::write(&out, &bytes)?;
    println!("wrote {} ({} bytes)", out.display(), bytes.len());
    Ok(())
}
