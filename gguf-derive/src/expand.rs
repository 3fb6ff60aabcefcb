//! Writes the `GgufModel` and `ModelField` impls.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, GenericParam, Lifetime, LifetimeParam};

use crate::ast::Input;
use crate::attr::Unbound;
use crate::check::{check, Checked, Kind};
use crate::ctxt::Ctxt;

/// The whole expansion: the impls, or the errors and a placeholder impl.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let cx = Ctxt::default();
    let parsed = Input::from_syn(&cx, input);
    let checked = parsed.as_ref().map(|p| check(&cx, p));
    let krate = parsed.as_ref().and_then(|p| p.attrs.crate_path.clone());
    match (cx.into_compile_errors(), &parsed, checked) {
        (None, Some(p), Some(c)) => wrap(krate.as_ref(), impls(p, &c)),
        (errors, _, _) => {
            let mut out = errors.unwrap_or_default();
            out.extend(wrap(krate.as_ref(), fallback(input)));
            out
        }
    }
}

/// The impls inside an anonymous const, with `__gguf` naming the runtime: through
/// `#[gguf(crate = "path")]` when given (as `#[serde(crate = "...")]`), else `gguf_serde`.
fn wrap(krate: Option<&syn::Path>, body: TokenStream) -> TokenStream {
    let runtime = match krate {
        Some(path) => quote! { use #path::__private as __gguf; },
        None => quote! {
            #[allow(unused_extern_crates, clippy::useless_attribute)]
            extern crate gguf_serde as _gguf_serde;
            use _gguf_serde::__private as __gguf;
        },
    };
    quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::all)]
        const _: () = {
            #runtime
            #body
        };
    }
}

/// The lifetime of the source: the struct's first lifetime parameter, or a new one.
fn model_lifetime(generics: &syn::Generics) -> (Lifetime, syn::Generics) {
    let mut g = generics.clone();
    if let Some(lt) = generics.lifetimes().next() {
        return (lt.lifetime.clone(), g);
    }
    let lt = Lifetime::new("'__a", Span::call_site());
    g.params.insert(0, GenericParam::Lifetime(LifetimeParam::new(lt.clone())));
    (lt, g)
}

fn fallback(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (lt, g) = model_lifetime(&input.generics);
    let (impl_g, _, _) = g.split_for_impl();
    let (_, ty_g, where_c) = input.generics.split_for_impl();
    quote! {
        impl #impl_g __gguf::GgufModel<#lt> for #ident #ty_g #where_c {
            const UNBOUND: __gguf::Unbound = __gguf::Unbound::Error;
            fn read_fields(_: &mut __gguf::ReadCx<#lt>, _: &str) -> __gguf::Result<Self> {
                ::core::unimplemented!()
            }
            fn write_fields<'__s>(&'__s self, _: &mut __gguf::WriteCx<'__s>, _: &str, _: bool) -> __gguf::Result<()> {
                ::core::unimplemented!()
            }
        }
    }
}

fn spec(c: &Checked<'_>, struct_name: &str, name: TokenStream) -> TokenStream {
    let field = format!("{struct_name}.{}", c.field.ident);
    let dtypes = &c.dtypes;
    let shape = match &c.shape {
        Some(_) => quote!(__gguf::Some(&__shape[..])),
        None => quote!(__gguf::None),
    };
    quote! {
        __gguf::FieldSpec { name: #name, field: #field, dtypes: &[#(#dtypes),*], shape: #shape }
    }
}

fn shape_let(c: &Checked<'_>) -> TokenStream {
    match &c.shape {
        Some(dims) => quote!(let __shape = [#(#dims),*];),
        None => quote!(),
    }
}

fn impls(input: &Input<'_>, fields: &[Checked<'_>]) -> TokenStream {
    let ident = input.ident;
    let struct_name = ident.to_string();
    let (lt, g) = model_lifetime(input.generics);
    let (impl_g, _, _) = g.split_for_impl();
    let (_, ty_g, where_c) = input.generics.split_for_impl();

    // Bounds: one per field type that uses a type parameter of the struct, spanned at the field,
    // so an unsatisfied one points there. A field type without type parameters gets no bound:
    // the generated code's use of it is then checked where the struct is defined (a bound on a
    // concrete type would only make the impl never apply).
    let params: Vec<String> = input.generics.type_params().map(|p| p.ident.to_string()).collect();
    let mut bounds: Vec<TokenStream> =
        where_c.map(|w| w.predicates.iter().map(|p| quote!(#p)).collect()).unwrap_or_default();
    // Fields with `dtype`/`shape` must be tensors: a bound when generic, else a check in the body.
    let mut asserts: Vec<TokenStream> = Vec::new();
    for c in fields {
        let ty = c.field.ty;
        if let Some(span) = c.tensor_only {
            let x = match c.kind {
                Kind::Optional(x) | Kind::Numbered(x) => x,
                _ => ty,
            };
            if mentions(&quote!(#x), &params) {
                bounds.push(quote_spanned!(span=> #x: __gguf::TensorStorage<#lt>));
            } else {
                asserts.push(quote_spanned!(span=> __gguf::assert_tensor::<#lt, #x>();));
            }
        }
        if !mentions(&quote!(#ty), &params) {
            continue;
        }
        let b = match c.kind {
            Kind::Metadata => {
                quote_spanned!(ty.span()=> #ty: __gguf::Deserialize<#lt> + __gguf::Serialize)
            }
            Kind::Skip => quote_spanned!(ty.span()=> #ty: __gguf::Default),
            Kind::Single => quote_spanned!(ty.span()=> #ty: __gguf::ModelField<#lt>),
            Kind::Optional(x) | Kind::Numbered(x) => quote_spanned!(x.span()=> #x: __gguf::ModelField<#lt>),
        };
        bounds.push(b);
    }

    // The struct's own metadata type (`#[gguf(metadata = "Type")]`): deserialized, so owned.
    if let Some((ty, span)) = &input.attrs.metadata {
        if mentions(&quote!(#ty), &params) {
            bounds.push(quote_spanned!(*span=> #ty: __gguf::DeserializeOwned));
        }
    }
    let meta = fields.iter().find(|c| matches!(c.kind, Kind::Metadata));
    let struct_meta = input.attrs.metadata.as_ref().map(|(ty, _)| ty);
    let unbound = match input.attrs.unbound {
        Some(Unbound::Ignore) => quote!(__gguf::Unbound::Ignore),
        _ => quote!(__gguf::Unbound::Error),
    };

    // read_fields
    let read_meta = match (meta, struct_meta) {
        (Some(c), _) => {
            let (f, ty) = (c.field.ident, c.field.ty);
            quote! {
                let #f: #ty = __cx.metadata()?;
                #[allow(unused_variables)]
                let __meta = &#f;
            }
        }
        (None, Some(ty)) => quote! {
            let __meta_owned: #ty = __cx.metadata()?;
            #[allow(unused_variables)]
            let __meta = &__meta_owned;
        },
        (None, None) => quote!(),
    };
    let reads = fields.iter().filter(|c| !matches!(c.kind, Kind::Metadata)).map(|c| {
        let f = c.field.ident;
        let name = &c.name;
        let shape = shape_let(c);
        let body = match c.kind {
            Kind::Single => {
                let ty = c.field.ty;
                let spec = spec(c, &struct_name, quote!(&__name));
                quote_spanned! {c.name_span=>
                    let __name = __gguf::join(__prefix, #name);
                    <#ty as __gguf::ModelField<#lt>>::read_field(__cx, &#spec)?
                }
            }
            Kind::Optional(x) => {
                let spec = spec(c, &struct_name, quote!(&__name));
                quote_spanned! {c.name_span=>
                    let __name = __gguf::join(__prefix, #name);
                    __gguf::read_optional::<#x>(__cx, &#spec)?
                }
            }
            Kind::Numbered(x) => {
                let spec = spec(c, &struct_name, quote!(#name));
                let count = c.count.clone().unwrap_or_else(|| quote!(__gguf::Dim::Any));
                quote_spanned! {c.name_span=>
                    __gguf::read_numbered::<#x>(__cx, __prefix, #name, #count, &#spec)?
                }
            }
            // Spanned at the field type, so a type without `Default` is reported there.
            Kind::Skip => {
                let ty = c.field.ty;
                quote_spanned!(ty.span()=> <#ty as __gguf::Default>::default())
            }
            Kind::Metadata => unreachable!(),
        };
        quote! { let #f = { #shape #body }; }
    });
    let all = fields.iter().map(|c| c.field.ident);

    // write_fields
    // The top-level struct writes its metadata; a sub-model's own copy must agree with what is
    // written, and a sub-model without a copy deserializes its type from what is written.
    let write_meta = match (meta, struct_meta) {
        (Some(c), _) => {
            let f = c.field.ident;
            let field = format!("{struct_name}.{f}");
            quote! {
                #[allow(unused_variables)]
                let __meta = &self.#f;
                if __root {
                    __cx.add_metadata(__meta)?;
                } else {
                    __cx.check_sub_metadata(__meta, __prefix, #field)?;
                }
            }
        }
        (None, Some(ty)) => quote! {
            let __meta_owned: #ty = __cx.written_metadata(__prefix)?;
            #[allow(unused_variables)]
            let __meta = &__meta_owned;
        },
        (None, None) => quote!(),
    };
    let writes = fields.iter().filter(|c| !matches!(c.kind, Kind::Metadata | Kind::Skip)).map(|c| {
        let f = c.field.ident;
        let name = &c.name;
        let shape = shape_let(c);
        let body = match c.kind {
            Kind::Single => {
                let ty = c.field.ty;
                let spec = spec(c, &struct_name, quote!(&__name));
                quote_spanned! {c.name_span=>
                    let __name = __gguf::join(__prefix, #name);
                    <#ty as __gguf::ModelField<#lt>>::write_field(&self.#f, __cx, &#spec)?;
                }
            }
            Kind::Optional(_) => {
                let spec = spec(c, &struct_name, quote!(&__name));
                quote_spanned! {c.name_span=>
                    let __name = __gguf::join(__prefix, #name);
                    __gguf::write_optional(&self.#f, __cx, &#spec)?;
                }
            }
            Kind::Numbered(_) => {
                let spec = spec(c, &struct_name, quote!(#name));
                let count = c.count.clone().unwrap_or_else(|| quote!(__gguf::Dim::Any));
                quote_spanned! {c.name_span=>
                    __gguf::write_numbered(&self.#f, __cx, __prefix, #name, #count, &#spec)?;
                }
            }
            Kind::Metadata | Kind::Skip => unreachable!(),
        };
        quote! { { #shape #body } }
    });

    quote! {
        impl #impl_g __gguf::GgufModel<#lt> for #ident #ty_g where #(#bounds,)* {
            const UNBOUND: __gguf::Unbound = #unbound;

            fn read_fields(__cx: &mut __gguf::ReadCx<#lt>, __prefix: &str) -> __gguf::Result<Self> {
                #(#asserts)*
                #read_meta
                #(#reads)*
                __gguf::Ok(#ident { #(#all),* })
            }

            fn write_fields<'__s>(&'__s self, __cx: &mut __gguf::WriteCx<'__s>, __prefix: &str, __root: bool) -> __gguf::Result<()> {
                #write_meta
                #(#writes)*
                __gguf::Ok(())
            }
        }

        impl #impl_g __gguf::ModelField<#lt> for #ident #ty_g where #(#bounds,)* {
            fn read_field(__cx: &mut __gguf::ReadCx<#lt>, __spec: &__gguf::FieldSpec<'_>) -> __gguf::Result<Self> {
                <Self as __gguf::GgufModel<#lt>>::read_fields(__cx, __spec.name)
            }

            fn is_present(__cx: &__gguf::ReadCx<#lt>, __name: &str) -> bool {
                __cx.has_prefix(__name)
            }

            fn write_field<'__s>(&'__s self, __cx: &mut __gguf::WriteCx<'__s>, __spec: &__gguf::FieldSpec<'_>) -> __gguf::Result<()> {
                <Self as __gguf::GgufModel<#lt>>::write_fields(self, __cx, __spec.name, false)
            }
        }
    }
}

/// Whether `tokens` contain one of the identifiers `params`.
fn mentions(tokens: &TokenStream, params: &[String]) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => params.iter().any(|p| i == p),
        proc_macro2::TokenTree::Group(g) => mentions(&g.stream(), params),
        _ => false,
    })
}
