//! The fuzz seed corpus (`fuzz/seeds/`) is generated from the test builder (`common::seeds`):
//! this test checks that the committed files are exactly what the builder makes, that every
//! `ok-*` seed opens and every `bad-*` seed is refused. `GGUF_WRITE_SEEDS=1` rewrites the folder.

mod common;

use std::path::PathBuf;

use gguf_serde::Gguf;

fn seed_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds")
}

#[test]
fn seeds_open_or_are_refused_as_named() {
    for s in common::seeds() {
        let r = Gguf::from_slice(&s.bytes);
        assert_eq!(r.is_ok(), s.valid(), "{}: {:?}", s.name, r.err());
        assert!(s.bytes.len() < 8 * 1024, "{} is {} bytes", s.name, s.bytes.len());
    }
}

#[test]
fn committed_seeds_are_the_generated_ones() {
    let dir = seed_dir();
    let seeds = common::seeds();
    if std::env::var("GGUF_WRITE_SEEDS").as_deref() == Ok("1") {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for s in &seeds {
            std::fs::write(dir.join(s.name), &s.bytes).unwrap();
        }
    }
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let mut want: Vec<String> = seeds.iter().map(|s| s.name.to_owned()).collect();
    want.sort();
    assert_eq!(names, want, "fuzz/seeds differs from common::seeds() (GGUF_WRITE_SEEDS=1 rewrites it)");
    for s in &seeds {
        assert_eq!(std::fs::read(dir.join(s.name)).unwrap(), s.bytes, "{} is stale", s.name);
    }
}
