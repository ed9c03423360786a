//! Every mistake in one pass: errors are collected and reported together, so a user with three
//! mistakes sees three errors in one build.

use proc_macro2::{Span, TokenStream};

#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.add(syn::Error::new(span, message));
    }

    pub(crate) fn push_spanned(
        &mut self,
        tokens: impl quote::ToTokens,
        message: impl std::fmt::Display,
    ) {
        self.add(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn add(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.0.map(|e| e.to_compile_error()).unwrap_or_default()
    }
}
