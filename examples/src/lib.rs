//! Runnable examples of gguf-serde: see `src/bin/`.

pub mod models;
