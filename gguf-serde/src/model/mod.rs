//! Typed models: a whole GGUF file — metadata and tensors — as one Rust struct.
//!
//! `#[derive(GgufModel)]` (re-exported from the `gguf-derive` crate) binds each field of a struct
//! to a tensor, a numbered list of sub-models or the metadata, and generates the code that reads
//! the struct from a [`ModelSource`] (a [`Gguf`](crate::Gguf) file or a [`ShardedGguf`] model) and writes it
//! back with a [`GgufWriter`](crate::GgufWriter):
//!
//! ```
//! use gguf_serde::{GgufModel, GgmlType, GgufWriter, Gguf, Tensor, TensorView};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Meta {
//!     #[serde(rename = "general.architecture")]
//!     arch: String,
//!     #[serde(rename = "{arch}.block_count")]
//!     block_count: u32,
//!     #[serde(rename = "{arch}.embedding_length")]
//!     embd: u32,
//! }
//!
//! #[derive(GgufModel)]
//! struct Block<T> {
//!     #[gguf(name = "attn_norm.weight", dtype = "F32")]
//!     attn_norm: T,
//! }
//!
//! #[derive(GgufModel)]
//! struct Tiny<T> {
//!     #[gguf(metadata)]
//!     meta: Meta,
//!     #[gguf(name = "token_embd.weight", shape = "[4, embd]")]
//!     token_embd: T,
//!     #[gguf(name = "blk.{}", count = "block_count")]
//!     blocks: Vec<Block<T>>,
//!     #[gguf(name = "output.weight")]
//!     output: Option<T>, // tied embeddings: absent is fine
//! }
//!
//! // Build a model in memory and write it...
//! let model = Tiny {
//!     meta: Meta { arch: "tiny".into(), block_count: 2, embd: 8 },
//!     token_embd: Tensor::from_f32(&[4, 8], &[0.5; 32])?,
//!     blocks: vec![
//!         Block { attn_norm: Tensor::from_f32(&[8], &[1.0; 8])? },
//!         Block { attn_norm: Tensor::from_f32(&[8], &[1.0; 8])? },
//!     ],
//!     output: None,
//! };
//! let bytes = model.to_vec()?;
//!
//! // ...and read it back, borrowing the tensor data from the bytes.
//! let file = Gguf::from_slice(&bytes)?;
//! let back = Tiny::<TensorView>::read(&file)?;
//! assert_eq!(back.meta.block_count, 2);
//! assert_eq!(&*back.token_embd.shape, &[4, 8]);
//! assert_eq!(back.blocks[1].attn_norm.name, "blk.1.attn_norm.weight");
//! assert_eq!(back.blocks[1].attn_norm.to_f32()?, vec![1.0; 8]);
//! assert!(back.output.is_none());
//!
//! // Or as f32 vectors, converted on read.
//! let typed = Tiny::<Vec<f32>>::read(&file)?;
//! assert_eq!(typed.token_embd.len(), 32);
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! # Attributes
//!
//! On the struct:
//!
//! | attribute | meaning |
//! |---|---|
//! | `#[gguf(unbound = "error")]` | the default: reading fails with [`ModelError::UnboundTensors`](crate::ModelError::UnboundTensors) if the file has tensors that no field binds (so that a read-then-write round trip cannot silently drop tensors) |
//! | `#[gguf(unbound = "ignore")]` | tensors that no field binds are left alone; [`LoadReport::unbound`] lists them |
//!
//! On a field (a field with no attribute is a tensor or sub-model named after the field):
//!
//! | attribute | field type | meaning |
//! |---|---|---|
//! | `#[gguf(metadata)]` | any `Serialize + Deserialize` type | the key/value metadata, read with the [serde mapping](crate#the-serde-mapping) and the read options (e.g. the `{arch}` prefix). At most one per struct. Written only for the top-level struct: a sub-model's metadata field reads the same keys (e.g. the hyper-parameters its shape constraints need) and is not written again |
//! | `#[gguf(name = "token_embd.weight")]` | a tensor storage (`T`, [`TensorView`], [`Tensor`], `Vec<f32>`, your own) | the tensor of that name (after the prefix of the enclosing sub-model) |
//! | `#[gguf(name = "vision")]` | a sub-model (a struct that derives `GgufModel`) | its fields' names get the prefix `vision.` |
//! | `#[gguf(flatten)]` | a sub-model | its fields' names get no prefix of their own (a group of top-level tensors in a struct of its own) |
//! | `#[gguf(name = "blk.{}")]` | `Vec<Sub>` of sub-models or tensors | element `i` is named with `{}` replaced by `i`: `blk.0.attn_q.weight`, `blk.1.…` |
//! | `#[gguf(name = "blk.{}", count = "block_count")]` | `Vec<…>` | the number of elements is a metadata value (an expression as for `shape`); without `count` (or when the value is an absent `Option`), it is the number of elements present in the file, and a hole in the numbering is [`ModelError::NumberingHole`](crate::ModelError::NumberingHole) |
//! | `Option<…>` field type | | an optional tensor or sub-model: `None` when absent (tied embeddings). Any other missing tensor is [`ModelError::MissingTensor`](crate::ModelError::MissingTensor) |
//! | `#[gguf(dtype = "F32")]`, `#[gguf(dtype = "Q4_K \| Q6_K")]` | tensors (also in `Option` and `Vec`) | the ggml types the tensor may have (one, or a set separated by `\|`); without it, any type. A typed storage (`Vec<f32>`) is written as the first type listed (F32 without a `dtype`) |
//! | `#[gguf(shape = "[vocab_size, embedding_length]")]` | tensors | the canonical shape (outermost first); each dimension is a number, `_` (any), or an expression over the fields of the struct's `#[gguf(metadata)]` field with `+ - * /` and parentheses: `[head_count * key_length, embd]`. A metadata value may be any integer, an `Option` of one (`None` checks nothing), or a `Vec`/slice/string array (its length: `[tokens, embd]`) |
//!
//! Mistakes are compile errors pointing at the attribute or field: an unknown attribute, a
//! duplicate name, a field type that is neither a tensor storage nor a sub-model, a `Vec` of
//! sub-models without a `{}` template, a template with `{}` on a field that is not a `Vec`, a
//! `dtype` that is not a ggml type, a `shape` that names a missing metadata field.
//!
//! # Reading
//! [`GgufModel::read`] takes a [`Gguf`](crate::Gguf) (a slice, a memory mapping or owned bytes) or
//! a [`ShardedGguf`]; [`GgufModel::read_with`] takes [`ReadOptions`] and also returns a
//! [`LoadReport`]. The metadata field is deserialized first (shape and count constraints use it),
//! then the fields in order. Errors name the tensor:
//! [`ModelError::MissingTensor`](crate::ModelError::MissingTensor),
//! [`ModelError::WrongDtype`](crate::ModelError::WrongDtype),
//! [`ModelError::WrongShape`](crate::ModelError::WrongShape),
//! [`ModelError::NumberingHole`](crate::ModelError::NumberingHole),
//! [`ModelError::UnboundTensors`](crate::ModelError::UnboundTensors),
//! [`ModelError::Constraint`](crate::ModelError::Constraint) (also for a `count` larger than the
//! number of tensors); the error of a conversion that fails (a [`CodecError`](crate::CodecError))
//! keeps its kind, with [`Error::tensor`](crate::Error::tensor) naming the tensor.
//!
//! # Writing
//! [`GgufModel::write`] adds to a [`GgufWriter`](crate::GgufWriter) the top-level metadata (its key/value pairs, in
//! field order), then declares every tensor in field order (a sub-model's tensors where the
//! sub-model is, `Vec` elements by number), then streams each tensor's data in the same order.
//! Nothing but one tensor at a time is held in memory (or one piece of it: a storage may give its
//! data in pieces through [`TensorStorage::write_stored`], converting as it goes), and a
//! [`TensorView`] is written straight from the file it borrows from (a memory mapping), so a
//! model larger than memory can be written from the views of another file. Constraints are
//! checked on write too. A file read and written back with the same field order and metadata is
//! byte-identical.
//!
//! # Tensor storage
//! A field's tensor type implements [`TensorStorage`]: [`TensorView`] (borrowed from the file,
//! zero-copy), [`Tensor`] (owned bytes), `Vec<f32>` (converted on read), or your own type, e.g.
//! a framework's tensor (see [`TensorStorage`]).
//!
//! [`ShardedGguf`]: crate::ShardedGguf

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod cx;
mod source;
mod spec;
mod storage;
mod traits;

pub use cx::*;
pub use source::*;
pub use spec::*;
pub use storage::*;
pub use traits::*;
