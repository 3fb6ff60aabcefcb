//! # gguf-serde
//!
//! GGUF files — the model format of llama.cpp, ggml, Ollama and LM Studio — as typed Rust data.
//!
//! Open a model, print its architecture and its tensors:
//!
//! ```
//! use gguf_serde::Gguf;
//!
//! // Memory-mapped and fully validated; here the GGUF spec's test vector of this repository.
//! let file = Gguf::open("../tests/data/small.gguf")?;
//! let arch = file.get("general.architecture").and_then(|v| v.as_str());
//! println!("architecture: {}", arch.unwrap_or("?"));
//! for t in file.tensors() {
//!     // Canonical shape, outermost first (the stored `ne` reversed); data borrowed from the map.
//!     let data: &[u8] = file.tensor_data(&t)?;
//!     println!("{:<8} {:<5} {:?} {} bytes", t.name, t.dtype, &*t.shape, data.len());
//! }
//! assert_eq!(arch, Some("llama"));
//! // Names are compared as bytes; `name_str` gives the text (ggml does not require UTF-8).
//! let names: Vec<&str> = file.tensors().map(|t| t.name_str()).collect::<Result<_, _>>()?;
//! assert_eq!(names, ["w_f32", "w_q8_0", "e_bf16"]);
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//!
//! What the crate holds:
//!
//! - [`Gguf`]: open and validate a file from a byte slice (zero-copy), a memory mapping
//!   ([`Gguf::open`]) or any `Read + Seek` (metadata only); read its key/value metadata with exact
//!   types, its tensor infos in canonical terms (name, dtype, shape outermost first, absolute data
//!   offset, byte size), and borrow tensor data.
//! - [`GgufWriter`]: a streaming writer; tensor data goes straight to the output, and writing to a
//!   path is atomic (temporary file, then rename).
//! - [`GgmlType`]: every ggml tensor type with its block size and bytes per block.
//! - [`ShardedGguf`] and [`ops::split`]: a model split into `NAME-00001-of-0000N.gguf`
//!   files read as one, and splitting and merging in `llama-gguf-split`'s layout;
//!   [`TensorSource`] looks tensors up by name in either kind of model.
//! - [`ops::edit`]: set, remove and rename metadata keys, rewriting the file safely with tensor data
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
//! assert_eq!((&*t.shape, t.ne().dims()), (&[4, 8][..], &[8, 4][..])); // canonical, stored
//! assert_eq!(file.tensor_data(&t)?.len(), 128);
//! # Ok::<(), gguf_serde::Error>(())
//! ```
//! # Cargo features
//!
//! As serde and ndarray do it, the heavy parts are features; the defaults are `derive`,
//! `parallel` and `mmap`. A user who only reads metadata can build with
//! `default-features = false`: 32 packages in its build graph instead of 41 (gguf-serde
//! included).
//!
//! | feature | default | what it adds | without it |
//! |---|---|---|---|
//! | `derive` | yes | `#[derive(GgufModel)]` (the `gguf-derive` crate) and [`metadata::standard`] (which derives serde's traits, through serde's own `derive` feature) | no `#[derive(GgufModel)]` (the [`GgufModel`] trait is not meant to be implemented by hand) and no `metadata::standard`: read metadata into your own `#[derive(Deserialize)]` struct (serde's `derive` in your own `Cargo.toml`) or key by key with [`Gguf::get`] |
//! | `parallel` | yes | rayon: [`dequantize_to_vec`], [`quantize_to_vec`], [`codec::dequantize_par`], [`codec::quantize_par`], [`quantize_with_importance`], [`ops::requant`] and [`ops::dequantize`] split their work over rayon's thread pool | the same functions run on the calling thread, with identical results (each chunk is computed the same way); [`ops::quantize::QuantizeParams::threads`] is ignored |
//! | `mmap` | yes | memmap2: [`Gguf::open`] (`Gguf<`[`Mmap`]`>`), [`ShardedGguf`], and the file operations built on them ([`ops::edit::edit_file`], [`ops::edit::rewrite_file`], [`ops::split::split_file`], [`ops::split::merge_file`]) | read the file into memory and use [`Gguf::from_vec`] / [`Gguf::from_slice`] (tensor data borrowed from the buffer), or [`Gguf::from_reader`] for the metadata and tensor infos alone; edit with [`ops::edit::apply`] |
//! | `remote` | no | ureq (rustls): `container::remote`, `Gguf::from_url` — a file's metadata over HTTP(S) with range requests; with `mmap`, `ShardedGguf::from_url` — a split model's, its shards fetched in parallel | — |
//! | `hash` | no | xxhash-rust, sha1, sha2, uuid: [`ops::hash`](crate::ops) — per-tensor and whole-model hashes (XXH64, SHA-1, SHA-256, UUIDv5) and manifests as llama.cpp's `llama-gguf-hash` prints and checks them | — |
//! | `export` | no | safetensors, serde_json (and `mmap`): [`ops::export`](crate::ops) — a model as a safetensors file (quantized tensors dequantized, metadata as JSON in `__metadata__`) and back (`gguf export`, `gguf import`) | — |
//! | `convert` | no | safetensors, serde_json, tokenizers (Hugging Face's, with pure-Rust regexes), sha2 (and `mmap`): `convert` — Hugging Face checkpoints (`config.json` + safetensors) to GGUF as llama.cpp's `convert_hf_to_gguf.py` converts them, with an `Architecture` trait for families of your own | — |
//!
//! The codecs are not a feature: they add no dependency (only code of this crate), and
//! [`model`]'s dequantized storage and [`ops`] are built on them.
//!
//! # What may grow (`#[non_exhaustive]`)
//!
//! Structs that will gain fields and enums that will gain variants are `#[non_exhaustive]`, so
//! that adding one is not a breaking change:
//!
//! - options, built with `new()`/`Default` and `with_*` methods (or by setting their public
//!   fields): [`WriteOptions`], [`ReadOptions`], [`WriteModelOptions`], [`ops::split::SplitOptions`],
//!   [`ops::dequantize::DequantizeOptions`]; and [`ops::quantize::QuantizeParams`], made with
//!   `QuantizeParams::new(ftype)` (llama-quantize's defaults), then set through its public fields;
//! - what the library reports or parses, which users read and do not build: [`TensorInfo`],
//!   [`Kv`], [`container::ShardTensor`], [`LoadReport`], [`ops::requant::RequantizeReport`],
//!   [`ops::quantize::TensorPlan`], [`format::keys::KeySpec`], [`format::keys::KeyMatch`] (to
//!   write tensor infos and pairs, use [`GgufWriter`]);
//! - enums that follow ggml, llama.cpp or our own growth: [`GgmlType`],
//!   [`ops::file_type::LlamaFileType`], [`ops::quantize::Rule`] and its parts, [`ops::edit::Edit`],
//!   [`ops::split::SplitBy`], [`ops::imatrix::ImatrixFormat`], [`Unbound`], [`TensorOrder`],
//!   [`format::keys::KeyType`], [`format::keys::TypeReference`], every error enum. A `match` on
//!   them needs a `_` arm.
//!
//! Kept exhaustive on purpose: [`ValueType`], [`ValueRef`], [`Value`] and [`Array`] are the 13
//! value types of GGUF version 3 (a new one would be a new format version), and [`Endian`] has
//! its two byte orders; matching them exhaustively is what a reader of the format wants.
//! [`ops::kv_override::KvOverride`] (a key and a value) and [`ops::kv_override::KvOverrideValue`]
//! (llama.cpp's four `--override-kv` types) mirror llama.cpp's fixed option syntax.
//! `model::FieldSpec` and `model::Dim` are built by the code `#[derive(GgufModel)]` generates,
//! which needs their literals.
//!
//! # The layers
//!
//! The table lists the layers, one folder of `src/` each, from the bottom (format facts) up
//! (whole-file operations and the Hugging Face converter). A change goes to the layer whose
//! concern it is, and a layer's code names only its own layer and those in its "uses" column,
//! plus the umbrella [`Error`] (`error.rs`, below); a path through a crate-root re-export counts
//! as the layer it comes from. `gguf-serde/tests/layers.rs` fails on any other import. Doc links
//! may point anywhere.
//!
//! | layer | uses | what it holds |
//! |---|---|---|
//! | [`format`](mod@format) | — | format facts: the ggml type table ([`GgmlType`]), the 13 value types ([`ValueType`]), byte order ([`Endian`]), a tensor's dims as canonical [`Shape`] and stored [`Ne`], limits, the standard metadata keys with their types ([`format::keys`]) |
//! | [`container`] | format | the GGUF container without serde: the one parser of the grammar, [`Gguf`] (slice, mapping, `Read + Seek`), [`Value`]/[`ValueRef`], the streaming [`GgufWriter`], atomic output ([`AtomicFile`]), sharded reading ([`ShardedGguf`], [`TensorSource`]), and remote files by HTTP range requests (`container::remote`, cargo feature `remote`: `Gguf::from_url`, `ShardedGguf::from_url` for a split model) |
//! | [`codec`] | format | beside the container: dequantize and quantize every ggml tensor type, bit-identical to ggml's reference |
//! | [`metadata`] | format, container | the serde mapping of the key/value block: [`to_vec`]/[`to_writer`], [`from_slice`]/[`from_reader`], `Value`'s serde impls, [`MetadataOptions`], `{arch}` keys, typed structs of the standard `general.*` and tokenizer keys ([`metadata::standard`]) |
//! | [`model`] | format, container, codec, metadata | the runtime of `#[derive(GgufModel)]`: model sources, tensor storages, field specs |
//! | [`ops`] | format, container, codec, metadata, model | whole-file operations: [`ops::edit`] (set, remove, rename keys), [`ops::split`] (split and merge), [`ops::quantize`] (llama-quantize's per-tensor type plan), [`ops::requant`] (quantize as llama-quantize, re-quantize), [`ops::dequantize`] (every tensor to one type) |
//! | `convert` (cargo feature `convert`) | all of the above | Hugging Face checkpoints (`config.json`, safetensors, tokenizer files) to GGUF as llama.cpp's `convert_hf_to_gguf.py` converts them: architectures, vocabularies, `general.*` keys, the streaming tensor plan |
//!
//! Each layer names what it refuses in its own enum, in the `error.rs` of its folder:
//! [`AlignmentProblem`] in `format`; [`FormatError`] (the parser), [`WriteError`] (the writer)
//! and [`ShardError`] (sharded reading, and [`ops::split`]) in `container`; [`CodecError`],
//! [`MetadataError`] and [`ModelError`] in theirs; [`EditError`] and [`QuantizeError`] (with
//! [`ImatrixProblem`]) in `ops`. Where a layer's variants name an offset, key or tensor, its enum
//! says which in exhaustive `offset()`/`key()`/`tensor()` matches ([`FormatError`],
//! [`WriteError`], [`CodecError`], [`QuantizeError`], [`ImatrixProblem`], [`EditError`]; the
//! others name only what `Error`'s own exhaustive match reads from them). The container, metadata, model and ops functions return
//! [`Error`] (`error.rs` at the crate root, which knows every layer's enum and which every layer
//! may use): one pointer, whose [`kind`](Error::kind) is the layer's enum ([`ErrorKind`], or I/O),
//! with the context added on the way up; [`Error::offset`], [`Error::key`], [`Error::tensor`] and
//! [`Error::shard`] look in both. The codecs return [`CodecError`], which converts into [`Error`]
//! with `?`; parsing a name has its own small error ([`format::UnknownTypeName`] for a ggml type,
//! [`format::UnescapeError`] for the escaped text of a key or tensor name,
//! [`ops::file_type::UnknownFileType`] for a llama.cpp file type). Parts of a larger error live beside
//! the code that makes them: the converter's `VocabError`, `GeneralError` and the SentencePiece
//! model's `ProtoError`, each a cause inside `ConvertError`.
//!
//! Two errors stay outside [`ErrorKind`], on purpose. The converter's `convert::ConvertError`
//! (cargo feature `convert`) reports what is wrong with a Hugging Face checkpoint (its JSON,
//! safetensors, tokenizer, config), which is no GGUF layer's concern; it keeps causes as
//! `source`s, and wraps an [`Error`] for what the GGUF layers refuse. `container::remote::RemoteError`
//! (cargo feature `remote`), what a server answered wrong, travels inside the `std::io::Error`
//! of a remote read (an [`ErrorKind::Io`]), because the reader reads any `Read + Seek` and
//! their error type is `std::io::Error`; opening a remote reader returns it as it is.
//!
#![doc = include_str!("../docs/serde-mapping.md")]
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod codec;
pub mod container;
#[cfg(feature = "convert")]
#[cfg_attr(docsrs, doc(cfg(feature = "convert")))]
pub mod convert;
mod error;
pub mod format;
pub mod metadata;
pub mod model;
pub mod ops;

pub use codec::{dequantize, dequantize_to_vec, quantize, quantize_to_vec, quantize_with_importance, CodecError};
#[cfg(feature = "mmap")]
pub use container::ShardedGguf;
pub use container::{
    Array, ArrayRef, AtomicFile, Gguf, GgufWriter, Kv, MetadataOnly, OddBoolBytes, Source, TensorInfo, TensorSource,
    Value, ValueRef, WriteOptions,
};
pub use container::{FormatError, Item, ShardError, WriteError};
pub use error::{Error, ErrorKind, Result};
pub use format::AlignmentProblem;
pub use format::{Endian, GgmlType, GgufStr, Ne, Shape, ValueType};
pub use metadata::MetadataError;
pub use metadata::{
    elem, from_gguf, from_reader, from_slice, from_value, to_value, to_vec, to_writer, MetadataOptions, StringArray,
    ARCH, MAX_NESTING,
};
pub use model::ModelError;
pub use model::{
    F32Tensor, GgufModel, LoadReport, ModelSource, ReadOptions, Tensor, TensorOrder, TensorStorage, TensorView,
    Unbound, WriteModelOptions,
};
pub use ops::{EditError, ImatrixProblem, PatternProblem, QuantizeError};

/// The read-only memory mapping [`Gguf::open`] holds (`Gguf<Mmap>`), re-exported from `memmap2`
/// so that the type can be named (in a struct field, a function signature) without depending on
/// `memmap2` directly.
#[cfg(feature = "mmap")]
pub use memmap2::Mmap;

/// `#[derive(GgufModel)]`: see the [`model`] module for the attributes.
#[cfg(feature = "derive")]
pub use gguf_derive::GgufModel;

/// Runtime support for the code `#[derive(GgufModel)]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::model::__private::*;
}

/// The examples of the crate's README, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
