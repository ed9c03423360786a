//! `#[circuit_breaker]` on an `impl` block: the one place that can see a method's type, so it
//! names each guarded method's breaker after it (`module::Type::method`).
//!
//! A method's own attribute cannot name `Self` in the statics it declares, and a name without
//! the type collides between `Svc::get` and `Other::get`. Numbering such collisions would follow
//! source order, so the name of a breaker (and of its metrics and dashboards) would change when
//! code is moved. The block's attribute expands every guarded method itself, with the type known.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{ImplItem, ItemFn, ItemImpl, Meta, Type};

use crate::attr::Owner;
use crate::errors::Errors;

pub(crate) fn expand(args: TokenStream, mut block: ItemImpl) -> TokenStream {
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.push_spanned(
            &args,
            "#[circuit_breaker] on an `impl` block takes no options: it only names the methods' breakers after the type; put the options on each method's own #[circuit_breaker(...)]",
        );
    }
    let owner = Owner {
        name: owner(&block),
        methods: methods(&block),
    };
    let mut guarded = 0;
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(at) = method.attrs.iter().position(is_circuit_breaker) else {
            continue;
        };
        let attr = method.attrs.remove(at);
        let args = match attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens,
            Meta::NameValue(value) => {
                errors.push_spanned(
                    &value,
                    "write #[circuit_breaker(option = value, ..)], not #[circuit_breaker = ..]",
                );
                continue;
            }
        };
        let function = ItemFn {
            attrs: std::mem::take(&mut method.attrs),
            vis: method.vis.clone(),
            sig: method.sig.clone(),
            block: Box::new(method.block.clone()),
        };
        let expanded = crate::guard::guard(args, function, Some(owner.clone()));
        *item = ImplItem::Verbatim(expanded);
        guarded += 1;
    }
    if guarded == 0 && errors.is_empty() {
        errors.push(
            block.impl_token.span,
            "#[circuit_breaker] on an `impl` block guards nothing here: put #[circuit_breaker] on the `async fn` methods it should guard",
        );
    }
    let errors = errors.into_compile_errors();
    quote!(#errors #block)
}

/// Every method the block defines, so a bare-name fallback can be checked against them; a
/// macro call among the items could define more, and then nothing is known.
fn methods(block: &ItemImpl) -> Option<Vec<syn::Ident>> {
    block
        .items
        .iter()
        .filter_map(|item| match item {
            ImplItem::Fn(method) => Some(Some(method.sig.ident.clone())),
            ImplItem::Macro(_) | ImplItem::Verbatim(_) => Some(None),
            _ => None,
        })
        .collect()
}

/// Only the attribute's last path segment is compared, so `#[breaker_runtime::circuit_breaker]`
/// is found too; a renamed import is not, and expands on its own with the shorter name.
fn is_circuit_breaker(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "circuit_breaker")
}

/// The type as its breakers' names show it: `Svc` for `impl<T> Svc<T>`, `<Svc as Trait>` in a
/// trait impl, so the same method name in two traits of one type stays two breakers.
fn owner(block: &ItemImpl) -> String {
    let ty = type_text(&block.self_ty);
    match &block.trait_ {
        Some((_, path, _)) => format!("<{ty} as {}>", path_text(path)),
        None => ty,
    }
}

/// Generic arguments are left out: one breaker serves every instantiation of a generic fn, as
/// its statics do, so the arguments would only make the name longer.
fn type_text(ty: &Type) -> String {
    match ty {
        Type::Path(path) if path.qself.is_none() => path_text(&path.path),
        Type::Reference(reference) => type_text(&reference.elem),
        Type::Paren(inner) => type_text(&inner.elem),
        Type::Group(inner) => type_text(&inner.elem),
        other => other
            .to_token_stream()
            .to_string()
            .split_whitespace()
            .collect(),
    }
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use syn::parse_quote;

    fn refused(block: syn::ItemImpl) -> bool {
        super::expand(TokenStream::new(), block)
            .to_string()
            .contains("is not a method of this impl block")
    }

    #[test]
    fn a_bare_fallback_the_block_does_not_define_is_refused() {
        assert!(refused(parse_quote! {
            impl Catalog {
                #[circuit_breaker(fallback = price_list)]
                async fn price(&self) -> Result<u32, E> { Ok(1) }
            }
        }));
        assert!(!refused(parse_quote! {
            impl Catalog {
                #[circuit_breaker(fallback = cached)]
                async fn price(&self) -> Result<u32, E> { Ok(1) }
                async fn cached(&self) -> Result<u32, E> { Ok(0) }
            }
        }));
    }

    /// A macro among the items may define the method; and an associated fn's bare name is a
    /// free fn already.
    #[test]
    fn a_bare_fallback_is_left_to_rustc_where_the_block_cannot_tell() {
        assert!(!refused(parse_quote! {
            impl Catalog {
                cached_methods!();
                #[circuit_breaker(fallback = cached)]
                async fn price(&self) -> Result<u32, E> { Ok(1) }
            }
        }));
        assert!(!refused(parse_quote! {
            impl Catalog {
                #[circuit_breaker(fallback = price_list)]
                async fn price(sku: u32) -> Result<u32, E> { Ok(sku) }
            }
        }));
    }
}
