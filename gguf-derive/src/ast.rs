//! The derive input as a typed description: the struct, its fields and their attributes.

use syn::{Data, DeriveInput, Fields, Generics, Ident, Type};

use crate::attr::{FieldAttrs, StructAttrs};
use crate::ctxt::Ctxt;

/// A struct with named fields.
pub struct Input<'a> {
    pub ident: &'a Ident,
    pub generics: &'a Generics,
    pub attrs: StructAttrs,
    pub fields: Vec<Field<'a>>,
}

/// One named field.
pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: FieldAttrs,
}

impl<'a> Input<'a> {
    /// The typed description, or `None` (with an error recorded) for an enum, a union or a struct
    /// without named fields.
    pub fn from_syn(cx: &Ctxt, input: &'a DeriveInput) -> Option<Input<'a>> {
        let attrs = StructAttrs::parse(cx, &input.attrs);
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(n) => Some(n),
                _ => None,
            },
            _ => None,
        };
        let Some(named) = named else {
            cx.error_spanned_by(&input.ident, "GgufModel can only be derived for a struct with named fields");
            return None;
        };
        let fields = named
            .named
            .iter()
            .filter_map(|f| Some(Field { ident: f.ident.as_ref()?, ty: &f.ty, attrs: FieldAttrs::parse(cx, &f.attrs) }))
            .collect();
        Some(Input { ident: &input.ident, generics: &input.generics, attrs, fields })
    }
}
