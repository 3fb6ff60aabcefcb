//! Whole-file operations, each reading a model and writing a new file atomically (a temporary
//! file renamed into place; the target is untouched after any failure):
//!
//! - [`edit`]: set, remove and rename metadata keys (`gguf set`, `rm`, `rename`);
//! - [`split`]: split a model into shards and merge them back (`gguf split`, `merge`), in
//!   `llama-gguf-split`'s layout;
//! - [`requant`]: re-quantize or dequantize every tensor (`gguf quantize`, `dequantize`).

pub mod edit;
pub mod requant;
pub mod split;
