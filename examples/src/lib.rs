//! Runnable examples of gguf-serde (see `src/bin/`), and the generator of the spec's test vector.

pub mod convert;
pub mod models;
pub mod olmoe;
pub mod small;
