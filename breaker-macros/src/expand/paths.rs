//! The runtime's path, and what a type or a path says as text.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::Type;

use crate::attr::Options;

pub(super) fn runtime(options: &Options) -> TokenStream {
    options
        .krate
        .as_ref()
        .map_or_else(|| quote!(::breaker_runtime), ToTokens::to_token_stream)
}

pub(super) fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

pub(super) fn mentions_impl_trait(ty: &Type) -> bool {
    crate::tokens::has_ident(ty.to_token_stream(), &|ident| ident == "impl")
}
