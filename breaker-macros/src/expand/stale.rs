//! What `stale_for` adds to the body.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, Type};

use crate::attr::Options;

/// What `stale_for` adds: the static that keeps the answers, the key built from the
/// arguments before the body runs, the keeping of a success, and the lookup a failed or
/// rejected call falls back on.
pub(super) struct Stale {
    pub(super) statics: TokenStream,
    pub(super) key: TokenStream,
    pub(super) keep: TokenStream,
    pub(super) serve: TokenStream,
}

impl Stale {
    pub(super) fn new(
        options: &Options,
        item: &ItemFn,
        ret: &Type,
        krate: &TokenStream,
    ) -> Option<Stale> {
        let stale_for = options.stale_for?;
        let p = quote!(#krate::__private);
        let (mut types, mut values, mut checks) = (Vec::new(), Vec::new(), Vec::new());
        for input in &item.sig.inputs {
            // The receiver is the fn's owner (a client, a repository), not what it is asked.
            let FnArg::Typed(typed) = input else { continue };
            let Pat::Ident(ident) = &*typed.pat else {
                continue;
            };
            let name = &ident.ident;
            let span = typed.ty.span();
            match &*typed.ty {
                Type::Reference(reference) => {
                    let inner = &reference.elem;
                    checks.push(quote_spanned!(span=> #p::stale_key_part::<<#inner as ::std::borrow::ToOwned>::Owned>();));
                    types.push(quote_spanned!(span=> <#inner as ::std::borrow::ToOwned>::Owned));
                    values.push(quote_spanned!(span=> ::std::borrow::ToOwned::to_owned(&*#name)));
                }
                ty => {
                    checks.push(quote_spanned!(span=> #p::stale_key_part::<#ty>();));
                    types.push(quote_spanned!(span=> #ty));
                    values.push(quote_spanned!(span=> ::core::clone::Clone::clone(&#name)));
                }
            }
        }
        let ms = stale_for.value.as_millis() as u64;
        let entries = options
            .stale_entries
            .map_or(breaker_options::DEFAULT_STALE_ENTRIES, |e| e.value)
            as usize;
        let span = stale_for.span;
        // Every use goes through `StaleAnswer::cache`, whose bounds are told on the tokens at
        // fault: the return type that is not `Clone`, and `stale_for` for a key that cannot be
        // one (each argument is told on its own type above). The uses' errors are identical,
        // so rustc shows them once.
        let answer = quote_spanned!(ret.span()=> <#ret as #p::StaleAnswer>);
        let cache = quote_spanned!(span=> #answer::cache(&*__BREAKER_STALE));
        Some(Stale {
            statics: quote_spanned! {span=>
                static __BREAKER_STALE: #p::LazyLock<#p::StaleCache<(#(#types,)*), #ret>> =
                    #p::LazyLock::new(|| #p::StaleCache::new(#p::Duration::from_millis(#ms), #entries));
            },
            key: quote!(#(#checks)* let __breaker_key = (#(#values,)*);),
            // Only a success is kept: a `Result` only when `Ok`, so a healthy error ("not
            // found") is never served again in place of the answer it was then.
            keep: quote! {
                let __breaker_keepable = {
                    use #p::IsKeepable as _;
                    (&&#p::Keepable(&__breaker_value)).keepable()
                };
                if __breaker_keepable {
                    #cache.keep(__breaker_key, &__breaker_value);
                }
            },
            serve: quote! {
                if let ::core::option::Option::Some(__breaker_stale) = #cache.stale(&__breaker_key) {
                    __BREAKER_DECLARATION.fallbacks.served_stale();
                    return __breaker_stale;
                }
            },
        })
    }
}
