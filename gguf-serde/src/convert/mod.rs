//! Converting Hugging Face checkpoints to GGUF (cargo feature `convert`).

pub mod general;
