//! Looking inside token streams.

use proc_macro2::{Ident, TokenStream, TokenTree};

/// Whether any identifier in `tokens`, at any depth, satisfies `wanted`.
pub(crate) fn has_ident(tokens: TokenStream, wanted: &impl Fn(&Ident) -> bool) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => wanted(&ident),
        TokenTree::Group(group) => has_ident(group.stream(), wanted),
        _ => false,
    })
}
