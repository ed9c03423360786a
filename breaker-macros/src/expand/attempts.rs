//! The call's attempts under its policy: retries, a deadline, a bulkhead.

use std::time::Duration;

use breaker_options::{PolicySettings, RetryBudget};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// The call's attempts under its policy (retries, deadline, bulkhead): the policy's static, and
/// the attempts driven by the runtime's `Attempts`, which holds every rule.
pub(super) fn attempts(
    policy: &PolicySettings,
    krate: &TokenStream,
    breaker: &syn::Ident,
    attempt: &TokenStream,
    copies: &[TokenStream],
) -> TokenStream {
    let p = quote!(#krate::__private);
    let settings = policy_settings(policy, &p);
    let site = Span::mixed_site();
    let policy_ref = format_ident!("__breaker_policy", span = site);
    let attempts = format_ident!("__breaker_attempts", span = site);
    let slot = format_ident!("__breaker_slot", span = site);
    let outcome = format_ident!("__breaker_attempt", span = site);
    // A free place is taken at once; only a full bulkhead polls the future that waits or
    // refuses.
    let take_slot = |on_full: TokenStream| {
        quote! {
            let #slot = match #attempts.slot_now() {
                ::core::option::Option::Some(#slot) => #slot,
                ::core::option::Option::None => match #attempts.slot().await {
                    ::core::result::Result::Ok(#slot) => #slot,
                    ::core::result::Result::Err(__breaker_full) => #on_full,
                },
            };
        }
    };
    // Without a deadline the attempts run as they are, not through `within_deadline`.
    let bounded = |attempts_block: TokenStream| {
        if policy.deadline.is_some() {
            quote!(#p::within_deadline(#policy_ref, #breaker, #attempts_block))
        } else {
            attempts_block
        }
    };
    // Retries alone: no slot to take and no deadline to run under, so the attempts are a plain
    // loop in the guarded fn's own future, and a first attempt that answers polls nothing of
    // the policy's (through `Attempts::again` and `within_deadline` such a call cost 48 ns; it
    // costs 17, the call without `retries` and the budget's deposit).
    if policy.deadline.is_none() && policy.max_concurrent.is_none() && policy.retries > 0 {
        return quote! {
            {
                static __BREAKER_POLICY: #p::LazyLock<#p::Policy> =
                    #p::LazyLock::new(|| #p::Policy::__checked(#settings));
                let mut #attempts = #p::Attempts::begin(&__BREAKER_POLICY, #breaker);
                loop {
                    #(#copies)*
                    let #outcome = #attempt;
                    match #attempts.retry(#p::Attempted::of(&#outcome)) {
                        ::core::option::Option::None => break #outcome,
                        ::core::option::Option::Some(__breaker_wait) => #p::backoff(__breaker_wait).await,
                    }
                }
            }
        };
    }
    let run = if policy.retries == 0 {
        let take_slot = take_slot(quote!(return ::core::result::Result::Err(__breaker_full)));
        let bounded = bounded(quote! {
            async {
                #take_slot
                let #outcome = #attempt;
                ::core::mem::drop(#slot);
                #outcome
            }
        });
        quote! {
            let #attempts = #p::Attempts::begin(#policy_ref, #breaker);
            #bounded
        }
    } else {
        let take_slot = take_slot(quote!(break ::core::result::Result::Err(__breaker_full)));
        let bounded = bounded(quote! {
            async {
                loop {
                    #take_slot
                    #(#copies)*
                    let #outcome = #attempt;
                    ::core::mem::drop(#slot);
                    if !#attempts.again(#p::Attempted::of(&#outcome)).await {
                        break #outcome;
                    }
                }
            }
        });
        quote! {
            let mut #attempts = #p::Attempts::begin(#policy_ref, #breaker);
            #bounded
        }
    };
    quote! {
        {
            static __BREAKER_POLICY: #p::LazyLock<#p::Policy> =
                #p::LazyLock::new(|| #p::Policy::__checked(#settings));
            let #policy_ref: &'static #p::Policy = &__BREAKER_POLICY;
            #run.await
        }
    }
}

/// The policy's settings as a literal naming only what was written.
fn policy_settings(policy: &PolicySettings, p: &TokenStream) -> TokenStream {
    let duration = |d: Duration| {
        let ms = d.as_millis() as u64;
        quote!(#p::Duration::from_millis(#ms))
    };
    let some = |value: TokenStream| quote!(::core::option::Option::Some(#value));
    let mut fields = Vec::new();
    let retries = policy.retries;
    fields.push(quote!(retries: #retries));
    if let Some(backoff) = policy.backoff {
        let (initial, max) = (duration(backoff.initial), duration(backoff.max));
        let value = some(quote!(#p::Backoff { initial: #initial, max: #max }));
        fields.push(quote!(backoff: #value));
    }
    if let Some(budget) = policy.retry_budget {
        let value = match budget {
            RetryBudget::Off => some(quote!(#p::RetryBudget::Off)),
            RetryBudget::Share(rate) => {
                let ppm = rate.ppm();
                some(quote!(#p::RetryBudget::Share(#p::Rate::from_ppm(#ppm))))
            }
        };
        fields.push(quote!(retry_budget: #value));
    }
    if let Some(deadline) = policy.deadline {
        let value = some(duration(deadline));
        fields.push(quote!(deadline: #value));
    }
    if let Some(cap) = policy.max_concurrent {
        let value = some(quote!(#cap));
        fields.push(quote!(max_concurrent: #value));
    }
    if let Some(wait) = policy.max_wait {
        let value = some(duration(wait));
        fields.push(quote!(max_wait: #value));
    }
    let rest = (fields.len() < POLICY_FIELDS).then(|| quote!(..#p::PolicySettings::DEFAULT));
    quote!(#p::PolicySettings { #(#fields,)* #rest })
}

/// The fields of `breaker_options::PolicySettings`.
const POLICY_FIELDS: usize = 6;
