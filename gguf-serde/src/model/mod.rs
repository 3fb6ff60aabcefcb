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
//! /// The hyper-parameters a block's shapes need, read from the same keys as `Meta`.
//! #[derive(Deserialize)]
//! struct Dims {
//!     #[serde(rename = "{arch}.embedding_length")]
//!     embd: u32,
//! }
//!
//! // The block has no metadata field: `Dims` is deserialized from the file's metadata on read
//! // and from the metadata the model writes on write, so a block built in memory needs no copy.
//! #[derive(GgufModel)]
//! #[gguf(metadata = "Dims")]
//! struct Block<T> {
//!     #[gguf(name = "attn_norm.weight", dtype = "F32", shape = "[embd]")]
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
//!     token_embd: Tensor::from_f32("token_embd.weight", &[4, 8], &[0.5; 32])?,
//!     blocks: vec![
//!         Block { attn_norm: Tensor::from_f32("blk.0.attn_norm.weight", &[8], &[1.0; 8])? },
//!         Block { attn_norm: Tensor::from_f32("blk.1.attn_norm.weight", &[8], &[1.0; 8])? },
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
//! // Or as f32 elements with their shape, converted on read.
//! let typed = Tiny::<gguf_serde::F32Tensor>::read(&file)?;
//! assert_eq!((&*typed.token_embd.shape, typed.token_embd.data.len()), (&[4, 8][..], 32));
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! # Attributes
//!
//! On the struct:
//!
//! | attribute | meaning |
//! |---|---|
//! | `#[gguf(unbound = "error")]` | the default: reading fails with [`ModelError::UnboundTensors`] if the file has tensors that no field binds (so that a read-then-write round trip cannot silently drop tensors) |
//! | `#[gguf(unbound = "ignore")]` | tensors that no field binds are left alone; [`LoadReport::unbound`] lists them |
//! | `#[gguf(metadata = "Dims")]` | for a sub-model: the type (`DeserializeOwned`) its `shape` and `count` expressions refer to, deserialized from the model's metadata — the file's on read, the metadata the top-level struct writes on write. The sub-model has no metadata field, so a model built in memory does not copy hyper-parameters into every block. Excludes a `#[gguf(metadata)]` field. Meant for sub-models: a top-level struct writes no metadata of its own, so on write its `Type` would see no keys |
//! | `#[gguf(crate = "path")]` | the path of this crate in the generated code (`"my_crate::gguf_serde"`), as `#[serde(crate = "...")]`: for a crate that re-exports `gguf_serde` and whose users do not depend on it |
//!
//! On a field (a field with no attribute is a tensor or sub-model named after the field):
//!
//! | attribute | field type | meaning |
//! |---|---|---|
//! | `#[gguf(metadata)]` | any `Serialize + Deserialize` type | the key/value metadata, read with the [serde mapping](crate#the-serde-mapping) and the read options (e.g. the `{arch}` prefix). At most one per struct. Written only for the top-level struct. A sub-model's metadata field reads the same keys (e.g. the hyper-parameters its shape constraints need) and is not written again: on write, each key it serializes to must be written by the top-level struct with the same value, else a [`MetadataError`](crate::MetadataError) names the key — so its constraints hold for the file written (`#[gguf(metadata = "Type")]` on the sub-model avoids the copy) |
//! | `#[gguf(skip)]` | any `Default` type | not bound to the file: `Default::default()` on read, not written (run-time state such as a cache). Excludes every other attribute |
//! | `#[gguf(name = "token_embd.weight")]` | a tensor storage (`T`, [`TensorView`], [`Tensor`], [`F32Tensor`], `Vec<f32>`, your own) | the tensor of that name (after the prefix of the enclosing sub-model) |
//! | `#[gguf(name = "vision")]` | a sub-model (a struct that derives `GgufModel`) | its fields' names get the prefix `vision.` |
//! | `#[gguf(flatten)]` | a sub-model | its fields' names get no prefix of their own (a group of top-level tensors in a struct of its own) |
//! | `#[gguf(name = "blk.{}")]` | `Vec<Sub>` of sub-models or tensors | element `i` is named with `{}` replaced by `i`: `blk.0.attn_q.weight`, `blk.1.…` |
//! | `#[gguf(name = "blk.{}", count = "block_count")]` | `Vec<…>` | the number of elements is a metadata value (an expression as for `shape`); without `count` (or when the value is an absent `Option`), it is the number of elements present in the file, and a hole in the numbering is [`ModelError::NumberingHole`] |
//! | `Option<…>` field type | | an optional tensor or sub-model: `None` when absent (tied embeddings). Any other missing tensor is [`ModelError::MissingTensor`] |
//! | `#[gguf(dtype = "F32")]`, `#[gguf(dtype = "q4_k \| Q6_K")]` | tensors (also in `Option` and `Vec`) | the ggml types the tensor may have (one, or a set separated by `\|`), by their ggml names in any case (as [`GgmlType`](crate::GgmlType)'s `FromStr` and the CLI accept them); `"any"` (alone) is every type, the same as no `dtype`. A typed storage ([`F32Tensor`], `Vec<f32>`) is written as the first type listed (F32 without a `dtype`) |
//! | `#[gguf(shape = "[vocab_size, embedding_length]")]` | tensors | the canonical shape (outermost first); each dimension is a number, `_` (any), or an expression over the fields of the struct's `#[gguf(metadata)]` field with `+ - * /` and parentheses: `[head_count * key_length, embd]`. A metadata value may be any integer, an `Option` of one (`None` checks nothing), or a `Vec`/slice/string array (its length: `[tokens, embd]`). A `Vec<f32>` field is written with this shape (all dimensions known, or all but one, which its length gives) |
//!
//! Mistakes are compile errors pointing at the attribute or field: an unknown attribute, a
//! duplicate name, a field type that is neither a tensor storage nor a sub-model, a `Vec` of
//! sub-models without a `{}` template, a template with `{}` on a field that is not a `Vec`, a
//! `dtype` that is not a ggml type (the error lists the valid names), a `shape` that names a
//! missing metadata field, `skip` with another attribute, a struct with both a metadata field
//! and `#[gguf(metadata = "...")]`.
//!
//! # Reading
//! [`GgufModel::read`] takes a [`Gguf`](crate::Gguf) (a slice, a memory mapping or owned bytes) or
//! a [`ShardedGguf`]; [`GgufModel::read_with`] takes [`ReadOptions`] and also returns a
//! [`LoadReport`]. The metadata field is deserialized first (shape and count constraints use it),
//! then the fields in order. Errors name the tensor:
//! [`ModelError::MissingTensor`],
//! [`ModelError::WrongDtype`],
//! [`ModelError::WrongShape`],
//! [`ModelError::NumberingHole`],
//! [`ModelError::UnboundTensors`],
//! [`ModelError::Constraint`] (also for a `count` larger than the
//! number of tensors); the error of a conversion that fails (a [`CodecError`](crate::CodecError))
//! keeps its kind, with [`Error::tensor`](crate::Error::tensor) naming the tensor.
//!
//! # Writing
//! [`GgufModel::write`] first checks the whole model — each tensor's layout against its field's
//! constraints, evaluated against the metadata that is written; each sub-model's copy of the
//! metadata against the metadata written; each list's length against its count — and only then
//! adds to a [`GgufWriter`](crate::GgufWriter) the top-level metadata (its key/value pairs, in
//! field order), declares every tensor and streams each tensor's data in the same order.
//!
//! The order of the tensors ([`TensorOrder`], in [`WriteModelOptions`]) is by default the order of
//! the file the model was read from, when every tensor knows its place in it
//! ([`TensorStorage::position`]: [`TensorView`], [`Tensor`] and [`F32Tensor`] bound by a read do),
//! and otherwise field order (a sub-model's tensors where the sub-model is, `Vec` elements by
//! number). So a file read and written back with the same metadata is byte-identical whatever
//! the field order — also a file that stores `blk.0, blk.1, blk.10, …` as some of llama.cpp's
//! converters do. [`TensorOrder::Field`] asks for field order.
//!
//! Nothing but one tensor at a time is held in memory (or one piece of it: a storage may give its
//! data in pieces through [`TensorStorage::write_stored`], converting as it goes), and a
//! [`TensorView`] is written straight from the file it borrows from (a memory mapping), so a
//! model larger than memory can be written from the views of another file.
//!
//! # Tensor storage
//! A field's tensor type implements [`TensorStorage`]: [`TensorView`] (borrowed from the file,
//! zero-copy; [`TensorView::as_f32`], [`as_f16`](TensorView::as_f16) and
//! [`as_bf16`](TensorView::as_bf16) give the elements as typed slices without a copy when the
//! data is aligned and in the host's byte order), [`Tensor`] (owned bytes), [`F32Tensor`]
//! (dequantized on read, with its shape), `Vec<f32>` (dequantized; no shape of its own, so it is
//! written only with a field `shape` that gives it), or your own type, e.g. a framework's tensor
//! (see [`TensorStorage`]; a read-only one implements only
//! [`from_view`](TensorStorage::from_view)).
//!
//! [`ShardedGguf`]: crate::ShardedGguf

#![deny(clippy::arithmetic_side_effects)]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod cx;
mod error;
mod source;
mod spec;
mod storage;
mod traits;

pub use cx::*;
pub use error::ModelError;
pub use source::*;
pub use spec::*;
pub use storage::*;
pub use traits::*;
