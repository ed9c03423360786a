//! The call's attempts under its policy: retries, a deadline, a bulkhead.

use std::time::Duration;

use breaker_options::{PolicySettings, RetryBudget};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// The call's attempts under its policy (retries, deadline, bulkhead): the policy's static, and
/// the attempts driven by the runtime's `Attempts`, which holds every rule. Only what the
/// policy has is written: a slot with a bulkhead, a loop with retries, a wrapper with a
/// deadline, so that an attempt that answers at once polls no future of the policy's (through
/// one loop for every policy, a first attempt that succeeded with `retries` cost 48 ns against
/// 17 now, and one with `max_concurrent` 42 against 21).
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
    let attempts = format_ident!("__breaker_attempts", span = site);
    let slot = format_ident!("__breaker_slot", span = site);
    let outcome = format_ident!("__breaker_attempt", span = site);
    let label = syn::Lifetime::new("'__breaker_attempts", site);
    let retrying = policy.retries > 0;
    // A free place is taken at once; only a full bulkhead polls the future that waits or
    // refuses, and a refusal is the call's answer.
    let (take_slot, give_back) = match policy.max_concurrent {
        Some(_) => (
            quote! {
                let #slot = match #attempts.slot_now() {
                    ::core::option::Option::Some(#slot) => #slot,
                    ::core::option::Option::None => match #attempts.slot().await {
                        ::core::result::Result::Ok(#slot) => #slot,
                        ::core::result::Result::Err(__breaker_full) => {
                            // Bound first: `break 'label ::core::..` would parse as a label.
                            let __breaker_refused = ::core::result::Result::Err(__breaker_full);
                            break #label __breaker_refused
                        }
                    },
                };
            },
            quote!(::core::mem::drop(#slot);),
        ),
        None => (TokenStream::new(), TokenStream::new()),
    };
    let run = if retrying {
        quote! {
            #label: loop {
                #take_slot
                #(#copies)*
                let #outcome = #attempt;
                #give_back
                match #attempts.retry(#p::Attempted::of(&#outcome)) {
                    ::core::option::Option::None => break #label #outcome,
                    ::core::option::Option::Some(__breaker_wait) => #p::backoff(__breaker_wait).await,
                }
            }
        }
    } else if policy.max_concurrent.is_some() {
        quote! {
            #label: {
                #take_slot
                let #outcome = #attempt;
                #give_back
                #outcome
            }
        }
    } else {
        attempt.clone()
    };
    let run = match policy.deadline {
        Some(_) => quote!(#p::within_deadline(&__BREAKER_POLICY, #breaker, async { #run }).await),
        None => run,
    };
    let mutable = retrying.then(|| quote!(mut));
    quote! {
        {
            static __BREAKER_POLICY: #p::LazyLock<#p::Policy> =
                #p::LazyLock::new(|| #p::Policy::__checked(#settings));
            let #mutable #attempts = #p::Attempts::begin(&__BREAKER_POLICY, #breaker);
            #run
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
