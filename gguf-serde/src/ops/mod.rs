//! Whole-file operations, each reading a model and writing a new file atomically (a temporary
//! file renamed into place; the target is untouched after any failure):
//!
//! - [`edit`]: set, remove and rename metadata keys (`gguf set`, `rm`, `rename`);
//! - [`split`]: split a model into shards and merge them back (`gguf split`, `merge`), in
//!   `llama-gguf-split`'s layout;
//! - [`imatrix`]: read llama.cpp's importance matrices (GGUF and legacy `.dat`) for `--imatrix`;
//! - [`quantize`]: choose each tensor's type as `llama-quantize` does (file types, mix rules);
//! - [`requant`]: re-quantize a model by that plan, or convert every tensor to one type
//!   (`gguf quantize`, `dequantize`).

pub mod edit;
mod error;
pub mod imatrix;
pub mod quantize;
pub mod requant;
pub mod split;

pub use error::{EditError, ImatrixProblem, QuantizeError};
