//! The `#[gguf(...)]` attributes of the struct and of its fields.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr};

use crate::ctxt::Ctxt;

/// What the struct does with tensors that no field binds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unbound {
    Error,
    Ignore,
}

/// `#[gguf(...)]` on the struct.
#[derive(Default)]
pub struct StructAttrs {
    pub unbound: Option<Unbound>,
    /// `crate = "path"`: the path of `gguf_serde` (when it is re-exported or renamed).
    pub crate_path: Option<syn::Path>,
    /// `metadata = "Type"`: the metadata type of a sub-model that has no metadata field of its
    /// own, deserialized from the metadata the model reads or writes.
    pub metadata: Option<(syn::Type, Span)>,
}

/// `#[gguf(...)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    /// `metadata`, with the span of the word.
    pub metadata: Option<Span>,
    /// `flatten`, with the span of the word.
    pub flatten: Option<Span>,
    /// `name = "..."`.
    pub name: Option<LitStr>,
    /// `dtype = "F32 | F16"`.
    pub dtype: Option<LitStr>,
    /// `shape = "[a, b]"`.
    pub shape: Option<LitStr>,
    /// `count = "block_count"`.
    pub count: Option<LitStr>,
    /// `skip`, with the span of the word.
    pub skip: Option<Span>,
}

const FIELD_KEYS: &str = "`metadata`, `flatten`, `name`, `dtype`, `shape`, `count`, `skip`";

fn set<T>(cx: &Ctxt, slot: &mut Option<T>, value: T, path: &syn::Path, what: &str) {
    if slot.is_some() {
        cx.error_spanned_by(path, format!("duplicate gguf attribute `{what}`"));
    } else {
        *slot = Some(value);
    }
}

/// Skips the `= value` of an attribute we do not know, so parsing can go on.
fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

impl StructAttrs {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> StructAttrs {
        let mut out = StructAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("gguf")) {
            let r = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("unbound") {
                    let lit: LitStr = meta.value()?.parse()?;
                    let v = match lit.value().as_str() {
                        "error" => Unbound::Error,
                        "ignore" => Unbound::Ignore,
                        other => {
                            cx.error_spanned_by(
                                &lit,
                                format!("unknown unbound policy `{other}`: expected \"error\" or \"ignore\""),
                            );
                            return Ok(());
                        }
                    };
                    set(cx, &mut out.unbound, v, &meta.path, "unbound");
                } else if meta.path.is_ident("crate") {
                    let lit: LitStr = meta.value()?.parse()?;
                    match lit.parse::<syn::Path>() {
                        Ok(path) => set(cx, &mut out.crate_path, path, &meta.path, "crate"),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format!(
                                "invalid crate path {:?}: expected a path such as \"my_crate::gguf_serde\"",
                                lit.value()
                            ),
                        ),
                    }
                } else if meta.path.is_ident("metadata") {
                    let lit: LitStr = meta.value()?.parse()?;
                    match lit.parse::<syn::Type>() {
                        Ok(ty) => set(cx, &mut out.metadata, (ty, lit.span()), &meta.path, "metadata"),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format!("invalid metadata type {:?}: expected a type such as \"LlamaDims\"", lit.value()),
                        ),
                    }
                } else {
                    let name = meta.path.get_ident().map_or_else(|| "?".to_owned(), |i| i.to_string());
                    cx.error_spanned_by(
                        &meta.path,
                        format!("unknown gguf struct attribute `{name}`: expected `unbound`, `crate` or `metadata`"),
                    );
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = r {
                cx.syn_error(e);
            }
        }
        out
    }
}

impl FieldAttrs {
    pub fn parse(cx: &Ctxt, attrs: &[Attribute]) -> FieldAttrs {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("gguf")) {
            let r = attr.parse_nested_meta(|meta| {
                let p = &meta.path;
                if p.is_ident("metadata") {
                    set(cx, &mut out.metadata, p.span(), p, "metadata");
                } else if p.is_ident("skip") {
                    set(cx, &mut out.skip, p.span(), p, "skip");
                } else if p.is_ident("flatten") {
                    set(cx, &mut out.flatten, p.span(), p, "flatten");
                } else if p.is_ident("name") {
                    set(cx, &mut out.name, meta.value()?.parse()?, p, "name");
                } else if p.is_ident("dtype") {
                    set(cx, &mut out.dtype, meta.value()?.parse()?, p, "dtype");
                } else if p.is_ident("shape") {
                    set(cx, &mut out.shape, meta.value()?.parse()?, p, "shape");
                } else if p.is_ident("count") {
                    set(cx, &mut out.count, meta.value()?.parse()?, p, "count");
                } else {
                    let name = p.get_ident().map_or_else(|| "?".to_owned(), |i| i.to_string());
                    cx.error_spanned_by(p, format!("unknown gguf attribute `{name}`: expected one of {FIELD_KEYS}"));
                    skip_value(&meta)?;
                }
                Ok(())
            });
            if let Err(e) = r {
                cx.syn_error(e);
            }
        }
        out
    }
}
