//! Bounded resources on real files (git-ignored `models/`, made by scripts/setup.sh): opening
//! each allocates within the bound the hermetic tests check on hand-made files
//! (`gguf-serde/tests/suite/resources.rs`), measured by the same counting allocator.

use std::path::PathBuf;

use gguf_serde::Gguf;
use gguf_tests::support::{bound, measure, reader_extra};
use gguf_tests::{model, models_dir};

#[test]
fn real_models_allocate_a_small_fraction_of_their_metadata() {
    let Some(gemma) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let Some(smollm) = model("SmolLM2-135M-Instruct.Q4_1.gguf") else { return };
    let dir = models_dir();
    let mut files = vec![gemma, smollm];
    let vocab = std::fs::read_dir(dir.join("vocab"))
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh, or GGUF_SKIP_MODELS=1)", dir.display()));
    let mut vocab: Vec<PathBuf> = vocab.map(|e| e.unwrap().path()).collect();
    vocab.sort();
    assert_eq!(vocab.len(), 19, "vocab files in {}", dir.display());
    files.extend(vocab);
    for path in files {
        assert!(path.exists(), "{} missing (run scripts/setup.sh, or GGUF_SKIP_MODELS=1)", path.display());
        let map = std::fs::read(&path).unwrap();
        let (g, a) = measure(|| Gguf::from_slice(&map).unwrap().tensor_infos_end());
        let (_, r) = measure(|| Gguf::from_reader(std::fs::File::open(&path).unwrap()).unwrap().tensor_infos_end());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        eprintln!(
            "{name:36} metadata {:9} B  from_slice peak {:8} B ({:.4} B/B)  from_reader peak {:9} B",
            g,
            a.peak,
            a.peak as f64 / g as f64,
            r.peak
        );
        assert!(a.peak <= bound(g as usize), "{name}: {} bytes", a.peak);
        assert!(r.peak <= bound(g as usize) + reader_extra(g as usize, map.len()), "{name}: {} bytes", r.peak);
    }
}
