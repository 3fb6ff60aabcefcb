//! Collects every error of one derive, so that all are reported at once.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// Records an error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, msg: M) {
        self.errors.borrow_mut().push(syn::Error::new_spanned(tokens.into_token_stream(), msg));
    }

    /// Records a `syn` error.
    pub fn syn_error(&self, err: syn::Error) {
        self.errors.borrow_mut().push(err);
    }

    /// The errors as `compile_error!` invocations, or `None` if there are none.
    pub fn into_compile_errors(self) -> Option<TokenStream> {
        let errors = self.errors.into_inner();
        if errors.is_empty() {
            return None;
        }
        Some(errors.into_iter().map(|e| e.to_compile_error()).collect())
    }
}
