//! The statics every guarded fn declares: the declaration the registry gathers, the handle
//! that caches the breaker, and the configuration it is built with.

use std::time::Duration;

use breaker_options::{Mode, Rate, Record, Window, WindowKind};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;

use super::paths::path_text;
use crate::attr::Options;

/// The declaration the linker gathers for the registry, and the handle that caches the breaker.
pub(super) fn statics(options: &Options, item: &ItemFn, krate: &TokenStream) -> TokenStream {
    let ident = &item.sig.ident;
    let fn_name = ident.to_string();
    let qualified = match &options.owner {
        Some(owner) => format!("{}::{fn_name}", owner.name),
        None => fn_name,
    };
    let default_name = quote!(::core::concat!(::core::module_path!(), "::", #qualified));
    let (name, config_name) = match &options.name {
        Some(name) => (quote!(::core::option::Option::Some(#name)), quote!(#name)),
        None => (quote!(::core::option::Option::None), default_name.clone()),
    };
    let config = config(options, krate, &config_name);
    let location = quote_spanned! {ident.span()=>
        #krate::__private::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        }
    };
    let private = quote!(#krate::__private);
    let linkme = quote!(#private::linkme);
    let fallback = match &options.fallback {
        Some(path) => {
            let text = path_text(path);
            quote!(::core::option::Option::Some(#text))
        }
        None => quote!(::core::option::Option::None),
    };
    let stale = options.stale_for.is_some();
    quote! {
        #[#linkme::distributed_slice(#private::DECLARATIONS)]
        #[linkme(crate = #linkme)]
        static __BREAKER_DECLARATION: #private::Declaration = #private::Declaration {
            name: #name,
            default_name: #default_name,
            config: #config,
            location: #location,
            fallbacks: #private::Fallbacks::new(#fallback, #stale),
        };
        static __BREAKER_HANDLE: #private::Handle = #private::Handle::new(&__BREAKER_DECLARATION);
    }
}

/// The fields of `breaker_options::Settings`, one per option the configuration holds.
const SETTINGS_FIELDS: usize = 16;

/// The configuration as a `Settings` literal that names only the options written, so every
/// default comes from its one definition in `breaker-options`.
fn config(options: &Options, krate: &TokenStream, name: &TokenStream) -> TokenStream {
    let p = quote!(#krate::__private);
    let duration = |d: Duration| {
        let ms = d.as_millis() as u64;
        quote!(#p::Duration::from_millis(#ms))
    };
    let optional = |d: Option<Duration>| match d {
        Some(d) => {
            let d = duration(d);
            quote!(::core::option::Option::Some(#d))
        }
        None => quote!(::core::option::Option::None),
    };
    let rate = |r: Rate| {
        let ppm = r.ppm();
        quote!(#p::Rate::from_ppm(#ppm))
    };
    let mut fields = Vec::new();
    if let Some(t) = options.threshold {
        let v = rate(t.value);
        fields.push(quote!(threshold: #v));
    }
    if let Some(w) = options.window {
        let v = match w.value {
            Window::Count(n) => quote!(#p::Window::Count(#n)),
            Window::Time(d) => {
                let d = duration(d);
                quote!(#p::Window::Time(#d))
            }
        };
        fields.push(quote!(window: #v));
    }
    if let Some(k) = options.window_kind {
        let v = match k.value {
            WindowKind::Sliding => quote!(#p::WindowKind::Sliding),
            WindowKind::Fixed => quote!(#p::WindowKind::Fixed),
        };
        fields.push(quote!(window_kind: #v));
    }
    if let Some(m) = options.min_calls {
        let n = m.value;
        fields.push(quote!(min_calls: ::core::option::Option::Some(#n)));
    }
    if let Some(t) = options.timeout {
        let v = optional(t.value);
        fields.push(quote!(timeout: #v));
    }
    if let Some(b) = options.break_duration {
        let v = duration(b.value);
        fields.push(quote!(break_duration: #v));
    }
    if let Some(m) = options.max_break_duration {
        let v = optional(Some(m.value));
        fields.push(quote!(max_break_duration: #v));
    }
    if let Some(g) = options.break_growth {
        let hundredths = g.value.hundredths();
        fields.push(quote!(break_growth: ::core::option::Option::Some(
            #p::BreakGrowth::from_hundredths(#hundredths)
        )));
    }
    if let Some(j) = options.break_jitter {
        let v = rate(j.value);
        fields.push(quote!(break_jitter: ::core::option::Option::Some(#v)));
    }
    if let Some(n) = options.probes {
        let n = n.value;
        fields.push(quote!(probes: #n));
    }
    if let Some(t) = options.probe_threshold {
        let v = rate(t.value);
        fields.push(quote!(probe_threshold: ::core::option::Option::Some(#v)));
    }
    if let Some(m) = options.mode {
        let v = match m.value {
            Mode::Enforce => quote!(#p::Mode::Enforce),
            Mode::Shadow => quote!(#p::Mode::Shadow),
        };
        fields.push(quote!(mode: #v));
    }
    if let Some(s) = options.slow_call {
        let v = optional(Some(s.value));
        fields.push(quote!(slow_call: #v));
    }
    if let Some(t) = options.slow_threshold {
        let v = rate(t.value);
        fields.push(quote!(slow_threshold: ::core::option::Option::Some(#v)));
    }
    if let Some(w) = options.warm_up {
        let v = optional(Some(w.value));
        fields.push(quote!(warm_up: #v));
    }
    if let Some(r) = options.record {
        let v = match r.value {
            Record::Off => quote!(#p::Record::Off),
            Record::Last(span) => {
                let d = duration(span);
                quote!(#p::Record::Last(#d))
            }
        };
        fields.push(quote!(record: ::core::option::Option::Some(#v)));
    }
    // With every option written, a struct update would be needless (and clippy says so in the
    // user's crate); a field added to `Settings` then fails to compile here, in our tests.
    let rest = (fields.len() < SETTINGS_FIELDS).then(|| quote!(..#p::Settings::DEFAULT));
    quote! {
        #p::Config::__checked(
            #p::Name::from_static(#name),
            #p::Settings { #(#fields,)* #rest },
        )
    }
}
