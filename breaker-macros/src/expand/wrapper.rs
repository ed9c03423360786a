//! The new body: the breaker's statics, then the original body run through the breaker, and
//! what answers when it does not (the stale answer, the fallback, the rejection).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Block, ItemFn, Type};

use super::arguments::Plan;
use super::attempts::attempts;
use super::paths::{mentions_impl_trait, runtime};
use super::stale::Stale;
use super::statics::statics;
use crate::attr::Options;

/// The new body: the breaker's statics, then the original body run through it.
pub(super) fn wrap(
    options: &Options,
    item: &ItemFn,
    ret: &Type,
    block: &Block,
    plan: &Plan,
    copies: &[TokenStream],
) -> TokenStream {
    let krate = runtime(options);
    let statics = statics(options, item, &krate);
    let annotated = (!mentions_impl_trait(ret)).then_some(ret);
    // The first statement returns a value of the declared type, so the block's type is fixed
    // before the body is checked: a wrong `return` in the body is reported on that `return`.
    let body = match annotated {
        Some(ret) => quote_spanned! {Span::mixed_site()=>
            async {
                if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<#ret> {
                    #[allow(unreachable_code)]
                    return __breaker_ret;
                }
                let __breaker_ret: #ret = #block;
                #[allow(unreachable_code)]
                __breaker_ret
            }
        },
        None => quote!(async #block),
    };
    let ret_span = ret.span();
    // Classified inside the guarded future, so the `IsFailure` bound is checked once, on the
    // return type, and a panicking classifier counts as a failure like a panicking body.
    let classify = match (&options.is_failure, annotated) {
        (Some(path), _) => quote_spanned! {path.span()=>
            #krate::__private::verdict_of_failure(#path(&__breaker_value))
        },
        (None, Some(ret)) => {
            quote_spanned!(ret_span=> #krate::__private::classify::<#ret>(&__breaker_value))
        }
        (None, None) => quote_spanned!(ret_span=> #krate::__private::classify(&__breaker_value)),
    };
    let prelude = &plan.prelude;
    let breaker = format_ident!("__breaker", span = Span::mixed_site());
    let outcome = format_ident!("__breaker_outcome", span = Span::mixed_site());
    // What a counted failure said, for the breaker to keep if the circuit opens on it: chosen
    // on the concrete type (an opaque one, `impl Trait`, says nothing), and read by the runtime
    // as it records the failure, out of line, so an answered call carries none of it.
    let describe = match annotated {
        Some(ret) => quote! {
            #krate::__private::describer::<#ret, _>(|__breaker_failed| {
                use #krate::__private::DescribeFailure as _;
                (&&&&#krate::__private::Describe(__breaker_failed)).failure()
            })
        },
        None => quote!(#krate::__private::silent(&__breaker_value)),
    };
    let attempt = quote! {
        #krate::__private::attempt(
            #breaker,
            async {
                let __breaker_value = #body.await;
                let __breaker_verdict = #classify;
                let __breaker_describe = #describe;
                (__breaker_value, __breaker_verdict, __breaker_describe)
            },
        )
        .await
    };
    let policy = crate::valid::policy(options);
    // Without retries, a deadline or a bulkhead, one attempt, exactly as before they existed.
    let run = if policy.is_inert() {
        attempt
    } else {
        attempts(&policy, &krate, &breaker, &attempt, copies)
    };
    let stale = annotated.and_then(|ret| Stale::new(options, item, ret, &krate));
    let (stale_statics, stale_key) = match &stale {
        Some(stale) => (Some(&stale.statics), Some(&stale.key)),
        None => (None, None),
    };
    let guarded = quote! {
        #statics
        #stale_statics
        let #breaker: &'static #krate::Breaker = __BREAKER_HANDLE.get();
        #stale_key
        #(#prelude)*
        let #outcome = #run;
    };
    // With `stale_for`, a good answer is kept, and a failed or rejected call serves the last
    // one for the same arguments before anything else.
    let (keep, serve_stale) = match &stale {
        Some(stale) => (Some(&stale.keep), Some(&stale.serve)),
        None => (None, None),
    };

    let Some(fallback) = &options.fallback else {
        let rejected = match annotated {
            Some(ret) => {
                quote_spanned!(ret_span=> <#ret as #krate::__private::FromRejection>::from_rejection(__breaker_error))
            }
            None => {
                quote_spanned!(ret_span=> #krate::__private::FromRejection::from_rejection(__breaker_error))
            }
        };
        // Checked first, so a fn returning a plain value hears first that it must return a
        // `Result` (or take a fallback), before it hears about `IsFailure`.
        let carries_rejection = annotated.map(|ret| {
            quote_spanned!(ret_span=> let _ = <#ret as #krate::__private::FromRejection>::from_rejection;)
        });
        if stale.is_none() {
            return quote! {
                #carries_rejection
                #guarded
                match #outcome {
                    ::core::result::Result::Ok((__breaker_value, _, _)) => __breaker_value,
                    ::core::result::Result::Err(__breaker_error) => #rejected,
                }
            };
        }
        return quote! {
            #carries_rejection
            #guarded
            match #outcome {
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success, _)) => {
                    #keep
                    __breaker_value
                }
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Ignore, _)) => __breaker_value,
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Failure, _)) => {
                    #serve_stale
                    __breaker_value
                }
                ::core::result::Result::Err(__breaker_error) => {
                    #serve_stale
                    #rejected
                }
            }
        };
    };

    let fallback_span = fallback.span();
    let args = &plan.args;
    // In a method, a bare name and a `Self::` path are the type's own methods and take the
    // receiver; any other path (`self::queue_charge`, `crate::cache::get`) is a function that
    // takes the arguments alone, so a free fn can serve a method.
    let on_self = fallback.leading_colon.is_none()
        && fallback.segments.len() > 1
        && fallback.segments[0].ident == "Self";
    let call = match (&plan.receiver, fallback.get_ident()) {
        (Some(receiver), Some(method)) => {
            quote_spanned!(fallback_span=> #receiver.#method(#(#args),*))
        }
        (Some(receiver), None) if on_self => {
            quote_spanned!(fallback_span=> #fallback(#receiver, #(#args),*))
        }
        _ => quote_spanned!(fallback_span=> #fallback(#(#args),*)),
    };
    let fallback_value = match annotated {
        Some(ret) => quote_spanned! {fallback_span=>
            {
                __BREAKER_DECLARATION.fallbacks.ran();
                let __breaker_fallback: #ret = #call.await;
                __breaker_fallback
            }
        },
        None => quote_spanned! {fallback_span=>
            {
                __BREAKER_DECLARATION.fallbacks.ran();
                #call.await
            }
        },
    };
    if stale.is_none() {
        return quote! {
            #guarded
            match #outcome {
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success | #krate::Verdict::Ignore, _)) => __breaker_value,
                // A counted failure or the breaker's own answer: serve the fallback, the value
                // it replaces dropped first (not held across the fallback's await).
                __breaker_unanswered => {
                    ::core::mem::drop(__breaker_unanswered);
                    #fallback_value
                }
            }
        };
    }
    quote! {
        #guarded
        match #outcome {
            ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success, _)) => {
                #keep
                __breaker_value
            }
            ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Ignore, _)) => __breaker_value,
            // A counted failure or the breaker's own answer: the last good answer if there is
            // one fresh enough, else the fallback.
            __breaker_unanswered => {
                ::core::mem::drop(__breaker_unanswered);
                #serve_stale
                #fallback_value
            }
        }
    }
}
