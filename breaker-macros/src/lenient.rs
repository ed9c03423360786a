//! Reading the guarded fn when its body does not parse yet.
//!
//! While a body is half typed, a strict parse fails and the attribute would add "goes on an
//! `async fn`" on top of rustc's own error about the body. Read as a signature and a brace
//! group, the fn still expands, and the body's tokens go through untouched, so rustc reports
//! the real mistake where it is, alone (as `tokio::main` does).

use proc_macro::TokenStream;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Block, Item, ItemFn, Signature, Stmt, Visibility, braced};

/// The fn, parsed strictly if it parses, else with its body kept as raw tokens.
pub(crate) fn function(item: TokenStream) -> Option<ItemFn> {
    match syn::parse::<ItemFn>(item.clone()) {
        Ok(function) => Some(function),
        Err(_) => syn::parse::<Lenient>(item).ok().map(|lenient| lenient.0),
    }
}

struct Lenient(ItemFn);

impl Parse for Lenient {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        let content;
        let brace_token = braced!(content in input);
        let body: proc_macro2::TokenStream = content.parse()?;
        Ok(Lenient(ItemFn {
            attrs,
            vis,
            sig,
            block: Box::new(Block {
                brace_token,
                stmts: vec![Stmt::Item(Item::Verbatim(body))],
            }),
        }))
    }
}
