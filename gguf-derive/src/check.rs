//! Checks across attributes and field types, and the parsed forms of names, dtypes, shapes and
//! counts that the expansion uses.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, GenericArgument, Ident, Lit, LitStr, PathArguments, Type};

use crate::ast::{Field, Input};
use crate::ctxt::Ctxt;

/// How a field binds.
pub enum Kind<'a> {
    /// `#[gguf(metadata)]`: the key/value metadata.
    Metadata,
    /// A tensor or sub-model.
    Single,
    /// `Option<X>`: an optional tensor or sub-model.
    Optional(&'a Type),
    /// `Vec<X>` with a `{}` template: a numbered list.
    Numbered(&'a Type),
    /// `#[gguf(skip)]`: not bound; `Default` on read, not written.
    Skip,
}

/// The names of the ggml types, as `gguf_serde::GgmlType` spells its variants (ggml's
/// `type_traits[].type_name`, upper-cased). A unit test of `gguf-serde` checks this list against
/// `GgmlType::ALL`, through [`crate::__ggml_type_names`].
pub const DTYPE_NAMES: [&str; 35] = [
    "F32", "F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K",
    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64",
    "IQ1_M", "BF16", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0", "Q2_0",
];

/// A field with its checked attributes.
pub struct Checked<'a> {
    pub field: &'a Field<'a>,
    pub kind: Kind<'a>,
    /// The tensor name, sub-model prefix or template, and the span to report it at.
    pub name: String,
    pub name_span: Span,
    /// `__gguf::GgmlType::X` paths; empty for any.
    pub dtypes: Vec<TokenStream>,
    /// The dimension expressions (each evaluates to a `Dim`), if there is a shape.
    pub shape: Option<Vec<TokenStream>>,
    /// The count expression, if any.
    pub count: Option<TokenStream>,
    /// Whether the field has `dtype` or `shape` (so it must be a tensor), with the span.
    pub tensor_only: Option<Span>,
}

/// `X` if `ty` is `Wrapper<X>` (by the last path segment).
pub fn generic_arg<'a>(ty: &'a Type, wrapper: &str) -> Option<&'a Type> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let seg = p.path.segments.last()?;
    if seg.ident != wrapper {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &seg.arguments else { return None };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

fn is_f32(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("f32"))
}

/// Checks the fields and parses their attributes. Errors go to `cx`.
pub fn check<'a>(cx: &Ctxt, input: &'a Input<'a>) -> Vec<Checked<'a>> {
    let meta_field = input.fields.iter().filter(|f| f.attrs.metadata.is_some()).collect::<Vec<_>>();
    for extra in meta_field.iter().skip(1) {
        cx.error_spanned_by(extra.ident, "only one #[gguf(metadata)] field is allowed per struct");
    }
    if let (Some(f), Some((_, span))) = (meta_field.first(), &input.attrs.metadata) {
        cx.error_spanned_by(
            f.ident,
            "a #[gguf(metadata)] field and #[gguf(metadata = \"...\")] on the struct exclude each other: keep one",
        );
        cx.syn_error(syn::Error::new(*span, "the struct's metadata type is given here"));
    }
    let has_meta = !meta_field.is_empty() || input.attrs.metadata.is_some();
    let mut out: Vec<Checked<'a>> = Vec::new();
    for f in &input.fields {
        let a = &f.attrs;
        if let Some(span) = a.skip {
            let others = [
                (a.metadata.is_some(), "metadata"),
                (a.flatten.is_some(), "flatten"),
                (a.name.is_some(), "name"),
                (a.dtype.is_some(), "dtype"),
                (a.shape.is_some(), "shape"),
                (a.count.is_some(), "count"),
            ];
            for (_, what) in others.iter().filter(|(set, _)| *set) {
                cx.syn_error(syn::Error::new(
                    span,
                    format!("`skip` excludes `{what}`: a skipped field is not bound to the file (it is `Default` on read and not written)"),
                ));
            }
            out.push(Checked {
                field: f,
                kind: Kind::Skip,
                name: String::new(),
                name_span: span,
                dtypes: Vec::new(),
                shape: None,
                count: None,
                tensor_only: None,
            });
            continue;
        }
        let (name, name_span) = match (&a.name, a.flatten) {
            (_, Some(span)) => {
                for (lit, what) in [(&a.name, "name"), (&a.dtype, "dtype"), (&a.shape, "shape"), (&a.count, "count")] {
                    if let Some(l) = lit {
                        cx.error_spanned_by(l, format!("`{what}` does not apply to a #[gguf(flatten)] sub-model"));
                    }
                }
                if a.metadata.is_some() {
                    cx.syn_error(syn::Error::new(span, "`flatten` and `metadata` exclude each other"));
                }
                if generic_arg(f.ty, "Option").is_some() || generic_arg(f.ty, "Vec").is_some() {
                    cx.error_spanned_by(
                        f.ty,
                        "a #[gguf(flatten)] field is a sub-model itself, not an `Option` or `Vec`",
                    );
                }
                (String::new(), span)
            }
            (Some(l), None) => (l.value(), l.span()),
            (None, None) => (f.ident.to_string().trim_start_matches("r#").to_owned(), f.ident.span()),
        };
        let kind = if a.metadata.is_some() {
            for (lit, what) in [(&a.name, "name"), (&a.dtype, "dtype"), (&a.shape, "shape"), (&a.count, "count")] {
                if let Some(l) = lit {
                    cx.error_spanned_by(l, format!("`{what}` does not apply to a #[gguf(metadata)] field"));
                }
            }
            Kind::Metadata
        } else if name.contains("{}") {
            match generic_arg(f.ty, "Vec") {
                Some(elem) => Kind::Numbered(elem),
                None => {
                    cx.error_spanned_by(
                        f.ty,
                        format!("the name template {name:?} numbers a list: the field must be a `Vec` of tensors or sub-models"),
                    );
                    Kind::Single
                }
            }
        } else if let Some(inner) = generic_arg(f.ty, "Option") {
            Kind::Optional(inner)
        } else {
            if let Some(elem) = generic_arg(f.ty, "Vec") {
                if !is_f32(elem) {
                    cx.error_spanned_by(
                        a.name.as_ref().map_or_else(|| f.ident.to_token_stream(), |l| l.to_token_stream()),
                        format!(
                            "a `Vec` field is a numbered list: its name needs a `{{}}` for the number, e.g. \"{name}.{{}}\" \
                             (only `Vec<f32>` is a tensor)"
                        ),
                    );
                }
            }
            Kind::Single
        };
        if !matches!(kind, Kind::Metadata) && a.flatten.is_none() {
            check_name(cx, &name, name_span, matches!(kind, Kind::Numbered(_)));
            if let Some(other) = out.iter().find(|c| !matches!(c.kind, Kind::Metadata | Kind::Skip) && c.name == name) {
                cx.syn_error(syn::Error::new(
                    name_span,
                    format!("duplicate name {name:?}: field `{}` has it too", other.field.ident),
                ));
            }
        }
        if let (Some(c), false) = (&a.count, matches!(kind, Kind::Numbered(_))) {
            cx.error_spanned_by(c, "`count` applies only to a numbered list (a `Vec` field with a `{}` name template)");
        }
        let dtypes = a.dtype.as_ref().map(|l| parse_dtypes(cx, l)).unwrap_or_default();
        let shape = a.shape.as_ref().map(|l| parse_shape(cx, l, has_meta));
        let count = a.count.as_ref().and_then(|l| match l.parse::<Expr>() {
            Ok(e) => Some(dim_expr(cx, &e, has_meta)),
            Err(e) => {
                cx.syn_error(syn::Error::new(l.span(), format!("invalid count expression: {e}")));
                None
            }
        });
        let tensor_only = a.dtype.as_ref().or(a.shape.as_ref()).map(|l| l.span());
        out.push(Checked { field: f, kind, name, name_span, dtypes, shape, count, tensor_only });
    }
    out
}

fn check_name(cx: &Ctxt, name: &str, span: Span, numbered: bool) {
    if name.is_empty() {
        cx.syn_error(syn::Error::new(span, "empty name"));
        return;
    }
    let holes = name.matches("{}").count();
    let braces = name.matches(['{', '}']).count();
    if braces != 2 * holes || holes > 1 {
        cx.syn_error(syn::Error::new(
            span,
            format!(
                "invalid name {name:?}: a name may hold one `{{}}` (the number of a list element) and no other braces"
            ),
        ));
    }
    if numbered && holes == 0 {
        cx.syn_error(syn::Error::new(span, "a numbered list needs `{}` in its name"));
    }
}

fn parse_dtypes(cx: &Ctxt, lit: &LitStr) -> Vec<TokenStream> {
    let v = lit.value();
    let parts: Vec<&str> = v.split('|').map(str::trim).collect();
    if parts.iter().any(|p| p.eq_ignore_ascii_case("any")) {
        if parts.len() > 1 {
            cx.error_spanned_by(lit, "`any` stands alone: it means every ggml type (the same as no `dtype`)");
        }
        return Vec::new();
    }
    let mut out = Vec::new();
    for part in parts {
        // Case-insensitive, as `GgmlType::from_str` (and the CLI) accept names.
        match DTYPE_NAMES.iter().find(|n| n.eq_ignore_ascii_case(part)) {
            Some(name) => {
                let id = Ident::new(name, lit.span());
                out.push(quote_spanned!(lit.span()=> __gguf::GgmlType::#id));
            }
            None => cx.error_spanned_by(
                lit,
                format!(
                    "unknown ggml type {part:?} in `dtype`: expected names separated by `|` (any case), e.g. \"Q4_K | Q6_K\", \
                     or \"any\"; the ggml types are {}",
                    DTYPE_NAMES.join(", ")
                ),
            ),
        }
    }
    out
}

fn parse_shape(cx: &Ctxt, lit: &LitStr, has_meta: bool) -> Vec<TokenStream> {
    match lit.parse::<syn::ExprArray>() {
        Ok(arr) => {
            if arr.elems.len() > 4 {
                cx.error_spanned_by(lit, "a shape has at most 4 dimensions");
            }
            arr.elems.iter().map(|e| dim_expr(cx, e, has_meta)).collect()
        }
        Err(_) => {
            cx.error_spanned_by(lit, "invalid shape: expected a list of dimensions such as \"[vocab_size, 640]\"");
            Vec::new()
        }
    }
}

/// Whether `e` is `a`, `a.b`, `a.b.c`, ...
fn is_field_path(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none() && p.path.get_ident().is_some(),
        Expr::Field(f) => matches!(f.member, syn::Member::Named(_)) && is_field_path(&f.base),
        _ => false,
    }
}

/// The code of a dimension expression: evaluates to a `Dim`.
fn dim_expr(cx: &Ctxt, e: &Expr, has_meta: bool) -> TokenStream {
    let span = e.span();
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => match i.base10_parse::<u64>() {
                Ok(v) => quote_spanned!(span=> __gguf::lit(#v)),
                Err(err) => {
                    cx.syn_error(err);
                    quote!(__gguf::Dim::Any)
                }
            },
            _ => {
                cx.error_spanned_by(e, "a dimension is a whole number, `_`, or a metadata field");
                quote!(__gguf::Dim::Any)
            }
        },
        Expr::Infer(_) => quote_spanned!(span=> __gguf::Dim::Any),
        Expr::Paren(p) => dim_expr(cx, &p.expr, has_meta),
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::Add(_) => '+',
                BinOp::Sub(_) => '-',
                BinOp::Mul(_) => '*',
                BinOp::Div(_) => '/',
                _ => {
                    cx.error_spanned_by(b.op, "only + - * / are allowed in a dimension");
                    '+'
                }
            };
            let (l, r) = (dim_expr(cx, &b.left, has_meta), dim_expr(cx, &b.right, has_meta));
            quote_spanned!(span=> __gguf::op(#l, #op, #r))
        }
        e if is_field_path(e) => {
            if !has_meta {
                cx.error_spanned_by(
                    e,
                    format!(
                        "`{}` refers to the metadata, but this struct has no #[gguf(metadata)] field",
                        e.to_token_stream().to_string().replace(' ', "")
                    ),
                );
                return quote!(__gguf::Dim::Any);
            }
            quote_spanned!(span=> __gguf::dim(&__meta.#e))
        }
        _ => {
            cx.error_spanned_by(
                e,
                "unsupported in a dimension: use numbers, `_`, metadata fields (`a.b`), + - * / and parentheses",
            );
            quote!(__gguf::Dim::Any)
        }
    }
}
