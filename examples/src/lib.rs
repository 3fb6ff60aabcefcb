//! Runnable examples of gguf-serde: see `src/bin/`.
