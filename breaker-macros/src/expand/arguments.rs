//! The call's arguments again: the copies a fallback is handed, and each retry's own copy of
//! every argument taken by value.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{FnArg, Pat, Token, Type};

use super::paths::runtime;
use crate::attr::Options;
use crate::errors::Errors;

/// How the fallback gets the call's arguments: what to clone before the body runs, and what to
/// pass.
pub(super) struct Plan {
    pub(super) prelude: Vec<TokenStream>,
    pub(super) receiver: Option<TokenStream>,
    pub(super) args: Vec<TokenStream>,
}

impl Plan {
    /// Only a fallback needs the arguments again. A parameter given as a pattern is renamed so
    /// the whole argument can be cloned, and destructured as before the body runs.
    pub(super) fn new(inputs: &mut Punctuated<FnArg, Token![,]>, options: &Options) -> Plan {
        let mut plan = Plan {
            prelude: Vec::new(),
            receiver: None,
            args: Vec::new(),
        };
        if options.fallback.is_none() {
            return plan;
        }
        let krate = runtime(options);
        for (index, input) in inputs.iter_mut().enumerate() {
            match input {
                FnArg::Receiver(receiver) => {
                    if matches!(*receiver.ty, Type::Reference(_)) {
                        plan.receiver = Some(quote!(self));
                    } else {
                        let copy = format_ident!("__breaker_self", span = Span::mixed_site());
                        let ty = &receiver.ty;
                        plan.prelude.push(quote_spanned! {ty.span()=>
                            let #copy = #krate::__private::FallbackArg::duplicate(&self);
                        });
                        plan.receiver = Some(quote!(#copy));
                    }
                }
                FnArg::Typed(typed) => {
                    let by_value = !matches!(*typed.ty, Type::Reference(_));
                    let span = typed.ty.span();
                    // The pattern stays in the signature (and in rustdoc) when the argument can
                    // be put together again from copies of its bindings.
                    let rebuilt = by_value
                        .then(|| rebuild(&typed.pat, &krate, span))
                        .flatten();
                    if let Some(rebuilt) = rebuilt {
                        plan.pass_copy(index, rebuilt);
                        continue;
                    }
                    let (name, destructure) = name_whole(typed, index);
                    if by_value {
                        let copy = rebuild_binding(&name, &krate, span);
                        plan.pass_copy(index, copy);
                    } else {
                        plan.args.push(quote!(#name));
                    }
                    // Cloned first, then taken apart as the signature had it.
                    plan.prelude.extend(destructure);
                }
            }
        }
        plan
    }

    /// Hands the fallback `value`, computed before the body runs.
    fn pass_copy(&mut self, index: usize, value: TokenStream) {
        let copy = format_ident!("__breaker_fallback_arg{}", index, span = Span::mixed_site());
        self.prelude.push(quote!(let #copy = #value;));
        self.args.push(quote!(#copy));
    }
}

/// The parameter's name, or for a pattern that cannot be put together again (`..`, `_`, a
/// reference) a hidden name given to the whole argument in its place, with the statement that
/// takes it apart as the signature had it.
fn name_whole(typed: &mut syn::PatType, index: usize) -> (syn::Ident, Option<TokenStream>) {
    match &*typed.pat {
        Pat::Ident(ident) if ident.subpat.is_none() => (ident.ident.clone(), None),
        pattern => {
            let name = format_ident!("__breaker_arg{}", index, span = Span::mixed_site());
            let pattern = pattern.clone();
            *typed.pat = syn::parse_quote!(#name);
            (name.clone(), Some(quote!(let #pattern = #name;)))
        }
    }
}

/// A copy of one binding, spanned on the parameter's type so a missing `Clone` is reported there.
fn rebuild_binding(name: &syn::Ident, krate: &TokenStream, span: Span) -> TokenStream {
    quote_spanned!(span=> #krate::__private::FallbackArg::duplicate(&#name))
}

/// The expression that builds a pattern's value again from copies of its bindings, for the
/// patterns that bind every part by value: `(a, b)`, `Point { x, y }`, `Wrapper(inner)`.
fn rebuild(pattern: &Pat, krate: &TokenStream, span: Span) -> Option<TokenStream> {
    let parts = |elems: &Punctuated<Pat, Token![,]>| -> Option<Vec<TokenStream>> {
        elems.iter().map(|p| rebuild(p, krate, span)).collect()
    };
    match pattern {
        Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
            Some(rebuild_binding(&ident.ident, krate, span))
        }
        Pat::Paren(inner) => rebuild(&inner.pat, krate, span),
        Pat::Tuple(tuple) => {
            let parts = parts(&tuple.elems)?;
            Some(quote!((#(#parts,)*)))
        }
        Pat::TupleStruct(tuple) if tuple.qself.is_none() => {
            let parts = parts(&tuple.elems)?;
            let path = &tuple.path;
            Some(quote!(#path(#(#parts),*)))
        }
        Pat::Struct(strukt) if strukt.qself.is_none() && strukt.rest.is_none() => {
            let fields = strukt
                .fields
                .iter()
                .map(|field| {
                    let member = &field.member;
                    rebuild(&field.pat, krate, span).map(|value| quote!(#member: #value))
                })
                .collect::<Option<Vec<_>>>()?;
            let path = &strukt.path;
            Some(quote!(#path { #(#fields),* }))
        }
        _ => None,
    }
}

/// With retries, each attempt runs the body on its own copy of every argument taken by value:
/// `let x = copy of x;` for each binding, spanned on the parameter's type so that a missing
/// `Clone` is reported there. `self` by value cannot be rebound, so it is an error.
pub(super) fn retry_copies(
    inputs: &mut Punctuated<FnArg, Token![,]>,
    krate: &TokenStream,
    errors: &mut Errors,
) -> Vec<TokenStream> {
    let mut copies = Vec::new();
    for input in inputs.iter_mut() {
        match input {
            FnArg::Receiver(receiver) => {
                if receiver.reference.is_none() && !matches!(*receiver.ty, Type::Reference(_)) {
                    errors.push_spanned(
                        receiver,
                        "`retries` runs the body again for each attempt, so it cannot take `self` by value: take `&self`, or remove `retries`".to_string(),
                    );
                }
            }
            FnArg::Typed(typed) => {
                if matches!(*typed.ty, Type::Reference(_)) {
                    continue;
                }
                let span = typed.ty.span();
                let mut names = Vec::new();
                bindings(&mut typed.pat, &mut names);
                for (name, mutability) in names {
                    copies.push(quote_spanned! {span=>
                        #[allow(unused_variables, unused_mut)]
                        let #mutability #name = #krate::__private::RetryArg::duplicate(&#name);
                    });
                }
            }
        }
    }
    copies
}

/// The names a pattern binds by value, with their `mut`, which moves from the parameter to
/// the copy: the body only ever sees the copy, and a `mut` left on the parameter would be
/// reported unused.
fn bindings(pattern: &mut Pat, found: &mut Vec<(syn::Ident, Option<Token![mut]>)>) {
    match pattern {
        Pat::Ident(ident) => {
            if ident.by_ref.is_none() {
                found.push((ident.ident.clone(), ident.mutability.take()));
            }
            if let Some((_, sub)) = &mut ident.subpat {
                bindings(sub, found);
            }
        }
        Pat::Paren(inner) => bindings(&mut inner.pat, found),
        Pat::Tuple(tuple) => tuple.elems.iter_mut().for_each(|p| bindings(p, found)),
        Pat::TupleStruct(tuple) => tuple.elems.iter_mut().for_each(|p| bindings(p, found)),
        Pat::Struct(strukt) => strukt
            .fields
            .iter_mut()
            .for_each(|field| bindings(&mut field.pat, found)),
        Pat::Slice(slice) => slice.elems.iter_mut().for_each(|p| bindings(p, found)),
        Pat::Reference(reference) => bindings(&mut reference.pat, found),
        Pat::Type(typed) => bindings(&mut typed.pat, found),
        _ => {}
    }
}
