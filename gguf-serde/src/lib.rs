//! # gguf-serde
//!
//! GGUF files — the model format of llama.cpp, ggml, Ollama and LM Studio — as typed Rust data.
//!
//! - [`Gguf`]: open and validate a file from a byte slice (zero-copy), a memory mapping
//!   ([`Gguf::open`]) or any `Read + Seek` (metadata only); read its key/value metadata with exact
//!   types, its tensor infos in canonical terms (name, dtype, shape outermost first, absolute data
//!   offset, byte size), and borrow tensor data.
//! - [`GgufWriter`]: a streaming writer; tensor data goes straight to the output, and writing to a
//!   path is atomic (temporary file, then rename).
//! - [`GgmlType`]: every ggml tensor type with its block size and bytes per block.
//! - [`ShardedGguf`] and the [`shard`] module: a model split into `NAME-00001-of-0000N.gguf`
//!   files read as one, and splitting and merging in `llama-gguf-split`'s layout;
//!   [`TensorSource`] looks tensors up by name in either kind of model.
//! - [`edit`]: set, remove and rename metadata keys, rewriting the file safely with tensor data
//!   copied by the kernel.
//! - serde: metadata as plain Rust structs. [`to_vec`] / [`to_writer`] write a struct as the
//!   key/value block of a GGUF file, [`from_slice`] / [`from_reader`] / [`Gguf::deserialize_metadata`]
//!   read one back (borrowing strings), [`GgufWriter::add_serialize`] writes a model's metadata;
//!   see [the mapping](#the-serde-mapping) below.
//! - [`model`]: `#[derive(GgufModel)]` binds a whole file — metadata and every tensor — to a
//!   struct, generic over the tensor storage ([`TensorView`] borrowed, [`Tensor`] owned, `Vec<f32>`
//!   dequantized, or your own [`TensorStorage`]); read from a [`Gguf`] or [`ShardedGguf`], written
//!   back through the streaming writer.
//!
//! Every malformed or truncated file gives an [`Error`] that says what and where (byte offset,
//! key or tensor name); no input panics, hangs, or makes the reader allocate more than the file's
//! size.
//!
//! ```
//! use gguf_serde::{Gguf, GgufWriter, GgmlType, ValueRef};
//!
//! // Write a small file...
//! let mut w = GgufWriter::new(Vec::new());
//! w.add_kv("general.architecture", "llama")?;
//! w.add_kv("llama.context_length", 4096u32)?;
//! w.add_tensor("token_embd.weight", GgmlType::F32, &[4, 8])?; // 4 rows of 8, canonical order
//! w.write_tensor_data(&[0u8; 4 * 8 * 4])?;
//! let bytes = w.finish()?;
//!
//! // ...and read it back without copying.
//! let file = Gguf::from_slice(&bytes)?;
//! assert_eq!(file.get("llama.context_length"), Some(ValueRef::U32(4096)));
//! let t = file.tensor("token_embd.weight").unwrap();
//! assert_eq!((&*t.shape, &*t.ne()), (&[4, 8][..], &[8, 4][..]));
//! assert_eq!(file.tensor_data(&t)?.len(), 128);
//! # Ok::<(), gguf_serde::Error>(())
//! ```
#![doc = include_str!("../docs/serde-mapping.md")]
#![warn(missing_docs)]

pub mod codec;
pub mod container;
pub mod de;
pub mod dtype;
pub mod edit;
pub mod error;
pub mod model;
mod options;
pub mod requant;
mod rewrite;
pub mod ser;
pub mod shard;
mod value_serde;

pub use codec::{dequantize, dequantize_to_vec, quantize, quantize_to_vec, quantize_with_importance};
pub use container::{
    Array, ArrayRef, AtomicFile, Endian, Gguf, GgufWriter, Kv, MetadataOnly, Shape, TensorInfo, Value, ValueRef,
    ValueType, WriteOptions,
};
pub use de::{from_gguf, from_reader, from_slice, from_value};
pub use dtype::GgmlType;
pub use error::{Error, Result};
pub use model::{GgufModel, LoadReport, ModelSource, ReadOptions, Tensor, TensorStorage, TensorView, Unbound};
pub use options::{elem, Options, ARCH, MAX_NESTING};
pub use ser::{to_value, to_vec, to_writer};
pub use shard::{ShardedGguf, TensorSource};

/// `#[derive(GgufModel)]`: see the [`model`] module for the attributes.
pub use gguf_derive::GgufModel;

/// Runtime support for the code `#[derive(GgufModel)]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::model::__private::*;
}
