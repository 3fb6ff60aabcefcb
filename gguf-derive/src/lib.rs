//! `#[derive(GgufModel)]`: whole GGUF files as typed Rust structs.
//!
//! Use it through `gguf-serde`, which re-exports the derive beside the `GgufModel` trait and
//! documents the attributes (module `gguf_serde::model`). The generated code names its runtime
//! through `::gguf_serde::__private`.
//!
//! The macro works in stages, as serde_derive and thiserror do: `ast` turns the input into a
//! typed description, `attr` parses the `#[gguf(...)]` attributes (collecting every mistake
//! with its span in a `ctxt::Ctxt`), `check` classifies the fields and checks attributes
//! against each other and against the field types, and `expand` writes the impls. When there
//! are errors, the errors are emitted together with a placeholder impl, so that the user sees the
//! attribute mistakes and not a cascade of "trait not implemented" errors.

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `gguf_serde::GgufModel` (and `gguf_serde::model::ModelField`) for a struct with named
/// fields. See `gguf_serde::model` for the attributes.
#[proc_macro_derive(GgufModel, attributes(gguf))]
pub fn derive_gguf_model(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

/// The ggml type names `dtype = "..."` accepts, as an array of string literals. Hidden: it exists
/// so that a test of `gguf-serde` can check them against `GgmlType::ALL`.
#[doc(hidden)]
#[proc_macro]
pub fn __ggml_type_names(_input: TokenStream) -> TokenStream {
    let names = check::DTYPE_NAMES;
    quote::quote!([#(#names),*]).into()
}
