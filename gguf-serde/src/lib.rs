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
//!
//! Every malformed or truncated file gives an [`Error`] that says what and where (byte offset,
//! key or tensor name); no input panics or hangs, and opening a file allocates in proportion to
//! the bytes its metadata really occupies, never to a count it claims (at most 16 bytes per byte
//! of metadata plus 16 KiB; see the [`container`] module docs).
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
#![warn(missing_docs)]

pub mod codec;
pub mod container;
pub mod dtype;
pub mod error;

pub use container::{
    Array, ArrayRef, AtomicFile, Endian, Gguf, GgufWriter, Kv, MetadataOnly, Shape, TensorInfo, Value, ValueRef,
    ValueType, WriteOptions,
};
pub use dtype::GgmlType;
pub use error::{Error, Result};
