//! Code generation for `#[circuit_breaker]`.
//!
//! The function is re-emitted with its attributes, visibility and signature untouched; only the
//! body changes. The new body declares the function's breaker as two statics (a declaration the
//! linker gathers for the registry, and a handle that caches the breaker), then runs the original
//! body through it. The original body sits in an async block whose type is pinned to the declared
//! return type before the body is checked (a "fake return edge"), so `?`, `return` and type errors
//! behave and point where they would have without the attribute.
//!
//! | file | its job |
//! |---|---|
//! | `shape.rs` | what the attribute was put on: an `async fn`, or a method `#[async_trait]` rewrote |
//! | `checks.rs` | the uses refused before anything is generated |
//! | `arguments.rs` | the arguments again: copies for the fallback, and for each retry |
//! | `wrapper.rs` | the new body: the guarded call, the fallback, the stale answer |
//! | `stale.rs` | what `stale_for` adds to the body |
//! | `attempts.rs` | the attempts under a policy (retries, deadline, bulkhead) |
//! | `statics.rs` | the declaration, the handle and the configuration |
//! | `paths.rs` | the runtime's path and what a type or path says as text |

mod arguments;
mod attempts;
mod checks;
mod paths;
mod shape;
mod stale;
mod statics;
mod wrapper;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemFn, ReturnType};

use crate::attr::Options;
use crate::errors::Errors;
use arguments::{Plan, retry_copies};
use paths::runtime;
use shape::{Shape, async_trait_future, shape};
use wrapper::wrap;

pub(crate) fn circuit_breaker(options: Options, mut errors: Errors, item: ItemFn) -> TokenStream {
    let shape = shape(&item, &mut errors);
    checks::fallback_arguments(&options, &item, &mut errors);
    checks::returns_something(&options, &item, shape.as_ref(), &mut errors);
    checks::fallback_in_block(&options, &item, &mut errors);
    checks::stale(&options, &item, &mut errors);
    let mut item = item;
    let copies = if options.retries.is_some() {
        retry_copies(&mut item.sig.inputs, &runtime(&options), &mut errors)
    } else {
        Vec::new()
    };
    let Some(shape) = shape.filter(|_| errors.is_empty()) else {
        // Emit the function as written beside the errors, so its callers do not pile up
        // "cannot find function" errors on top of the real one.
        let errors = errors.into_compile_errors();
        return quote!(#errors #item);
    };
    match shape {
        Shape::Async => {
            let ret = match &item.sig.output {
                ReturnType::Default => syn::parse_quote!(()),
                ReturnType::Type(_, ty) => (**ty).clone(),
            };
            let mut item = item;
            let plan = Plan::new(&mut item.sig.inputs, &options);
            let body = wrap(&options, &item, &ret, &item.block, &plan, &copies);
            let ItemFn {
                attrs, vis, sig, ..
            } = &item;
            quote!(#(#attrs)* #vis #sig { #body })
        }
        Shape::AsyncTrait { output } => {
            let mut item = item;
            let plan = Plan::new(&mut item.sig.inputs, &options);
            let mut block = item.block.as_ref().clone();
            let Some(future) = async_trait_future(&mut block) else {
                // `shape` found the future in a copy of this block, so this cannot happen; if it
                // ever does, the fn must not go unguarded in silence.
                let error = syn::Error::new(
                    item.sig.fn_token.span,
                    "#[circuit_breaker] could not find the future `#[async_trait]` made of this fn's body; put #[circuit_breaker] below #[async_trait], on the `async fn` itself",
                )
                .to_compile_error();
                return quote!(#error #item);
            };
            let body = wrap(&options, &item, &output, &future.block, &plan, &copies);
            future.block = syn::parse_quote!({ #body });
            *item.block = block;
            quote!(#item)
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// The signature as rustdoc shows it: the user's patterns, not `__breaker_arg` names.
    #[test]
    fn pattern_parameters_stay_in_the_signature_with_a_fallback() {
        let item: syn::ItemFn = syn::parse_quote! {
            async fn add((a, b): (u32, u32), Point { x, y }: Point, Wrapper(w): Wrapper)
                -> Result<u32, E> { Ok(a + b + x + y + w) }
        };
        let expanded = crate::guard::guard(quote!(fallback = later), item, None);
        let expanded: syn::ItemFn = syn::parse2(expanded).expect("a fn");
        let inputs = &expanded.sig.inputs;
        let signature = quote!(#inputs).to_string();
        assert_eq!(
            signature,
            quote!((a, b): (u32, u32), Point { x, y }: Point, Wrapper(w): Wrapper).to_string()
        );
    }

    /// A pattern that cannot be put together again is still renamed, as before.
    #[test]
    fn a_pattern_with_rest_is_renamed_for_the_fallback() {
        let item: syn::ItemFn = syn::parse_quote! {
            async fn sum([first, .., last]: [u32; 3]) -> Result<u32, E> { Ok(first + last) }
        };
        let expanded = crate::guard::guard(quote!(fallback = later), item, None);
        let expanded: syn::ItemFn = syn::parse2(expanded).expect("a fn");
        let inputs = &expanded.sig.inputs;
        assert!(quote!(#inputs).to_string().starts_with("__breaker_arg0"));
    }
}
