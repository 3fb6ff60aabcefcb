//! Whole-file operations, each reading a model and writing a new file atomically (a temporary
//! file renamed into place; the target is untouched after any failure):
//!
//! - [`edit`]: set, remove and rename metadata keys (`gguf set`, `rm`, `rename`);
//! - [`split`]: split a model into shards and merge them back (`gguf split`, `merge`), in
//!   `llama-gguf-split`'s layout;
//! - [`imatrix`]: read llama.cpp's importance matrices (GGUF and legacy `.dat`) for `--imatrix`;
//! - [`quantize`]: choose each tensor's type as `llama-quantize` does (mix rules), the plan;
//! - [`requant`]: re-quantize a model by that plan (`gguf quantize`), with the streaming
//!   converter;
//! - [`dequantize`]: convert every tensor to one type (`gguf dequantize`);
//! - `export` (feature `export`): a model as a safetensors file and back (`gguf export`,
//!   `gguf import`);
//! - `hash` (feature `hash`): per-tensor and whole-model hashes and manifests as llama.cpp's
//!   `llama-gguf-hash` (`gguf hash`).
//!
//! Beside them, the pieces they share: [`file_type`] (llama.cpp's file types, one table),
//! [`kv_override`] (`--override-kv`), [`globs`] (the `--exclude` name globs) and
//! [`tensor_order`] (llama-quantize's tensor order).
//!
//! # Who may use whom
//!
//! Each module uses only the ones listed before it in this table (and the layers below `ops`);
//! there are no cycles:
//!
//! | module | uses |
//! |---|---|
//! | `c_num` (private: C's `atol`/`atof`) | — |
//! | [`file_type`], [`globs`] | — |
//! | [`kv_override`] | `c_num` |
//! | [`tensor_order`] | `c_num` |
//! | [`imatrix`] | [`kv_override`] |
//! | [`quantize`] | [`file_type`], [`globs`], [`kv_override`], [`tensor_order`], [`imatrix`] |
//! | [`requant`] | [`quantize`], [`tensor_order`], [`imatrix`] |
//! | [`dequantize`] | [`requant`] (its writer), [`file_type`], [`globs`] |
//! | `export` | [`requant`] (its page release), [`globs`] |
//! | [`edit`], [`split`], `hash` | — |
//! | `error` ([`QuantizeError`], [`ImatrixProblem`], [`EditError`]) | — (every module above uses it) |
//!
//! Inside [`quantize`]: `params` (the options) ← `rules` (one tensor) ← `plan` (the model).

mod c_num;
pub mod dequantize;
pub mod edit;
mod error;
#[cfg(feature = "export")]
#[cfg_attr(docsrs, doc(cfg(feature = "export")))]
pub mod export;
pub mod file_type;
pub mod globs;
#[cfg(feature = "hash")]
#[cfg_attr(docsrs, doc(cfg(feature = "hash")))]
pub mod hash;
pub mod imatrix;
pub mod kv_override;
pub mod quantize;
pub mod requant;
pub mod split;
pub mod tensor_order;

pub use error::{EditError, ImatrixProblem, PatternProblem, QuantizeError};
