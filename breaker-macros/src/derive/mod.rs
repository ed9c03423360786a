//! `#[derive(IsFailure)]`: a typed view of the input (`ast`), then code (`expand`).

mod ast;
mod expand;

use proc_macro2::TokenStream;

pub(crate) fn is_failure(input: syn::DeriveInput) -> TokenStream {
    let (container, errors) = ast::Container::from_input(&input);
    match container.filter(|_| errors.is_empty()) {
        Some(container) => expand::impl_is_failure(&container),
        None => {
            // A stub impl keeps code that uses the type from drowning the real errors.
            let stub = expand::stub(&input);
            let errors = errors.into_compile_errors();
            quote::quote!(#errors #stub)
        }
    }
}
