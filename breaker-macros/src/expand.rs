//! Code generation for `#[circuit_breaker]`.
//!
//! The function is re-emitted with its attributes, visibility and signature untouched; only the
//! body changes. The new body declares the function's breaker as two statics (a declaration the
//! linker gathers for the registry, and a handle that caches the breaker), then runs the original
//! body through it. The original body sits in an async block whose type is pinned to the declared
//! return type before the body is checked (a "fake return edge"), so `?`, `return` and type errors
//! behave and point where they would have without the attribute.

use std::time::Duration;

use breaker_options::{Mode, PolicySettings, Rate, RetryBudget, Window};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Block, Expr, FnArg, GenericArgument, ItemFn, Pat, PathArguments, ReturnType, Stmt, Token, Type,
    TypeParamBound,
};

use crate::attr::Options;
use crate::errors::Errors;

/// What the attribute was put on.
enum Shape {
    /// An `async fn`.
    Async,
    /// A method already rewritten by `#[async_trait]`: a plain fn returning
    /// `Box::pin(async move { .. })`, whose future yields `output`.
    AsyncTrait { output: Box<Type> },
}

pub(crate) fn circuit_breaker(options: Options, mut errors: Errors, item: ItemFn) -> TokenStream {
    let shape = shape(&item, &mut errors);
    if let Some(fallback) = &options.fallback {
        if let Some(arg) = item
            .sig
            .inputs
            .iter()
            .find(|a| matches!(a, FnArg::Typed(t) if matches!(*t.pat, Pat::Wild(_))))
        {
            errors.push_spanned(
                arg,
                format!(
                    "`_` cannot be passed on to the fallback `{}`; give the parameter a name",
                    path_text(fallback)
                ),
            );
        }
    }
    if let (ReturnType::Default, None, Some(Shape::Async)) =
        (&item.sig.output, &options.is_failure, &shape)
    {
        errors.push(
            item.sig.paren_token.span.close(),
            format!(
                "`{}` returns nothing, so the breaker cannot tell a failure from a success: return a `Result<(), E>`, or pass `is_failure = path::to::fn`",
                item.sig.ident
            ),
        );
    }
    check_fallback_in_block(&options, &item, &mut errors);
    check_stale(&options, &item, &mut errors);
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

fn shape(item: &ItemFn, errors: &mut Errors) -> Option<Shape> {
    if item.sig.asyncness.is_some() {
        return Some(Shape::Async);
    }
    if let Some(output) = boxed_future_output(&item.sig.output) {
        let mut block = item.block.clone();
        if async_trait_future(&mut block).is_some() {
            return Some(Shape::AsyncTrait {
                output: Box::new(output),
            });
        }
    }
    errors.push(
        item.sig.fn_token.span,
        format!(
            "#[circuit_breaker] guards an `async fn`, and `{}` is not async: write `async fn {}`",
            item.sig.ident, item.sig.ident
        ),
    );
    None
}

/// The `Output` of `Pin<Box<dyn Future<Output = T> + ..>>`, the return type `#[async_trait]`
/// gives a method.
fn boxed_future_output(output: &ReturnType) -> Option<Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let pinned = single_generic(ty, "Pin")?;
    let boxed = single_generic(pinned, "Box")?;
    let Type::TraitObject(object) = boxed else {
        return None;
    };
    object.bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let segment = t.path.segments.last().filter(|s| s.ident == "Future")?;
        let PathArguments::AngleBracketed(args) = &segment.arguments else {
            return None;
        };
        args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
            _ => None,
        })
    })
}

fn single_generic<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last().filter(|s| s.ident == name)?;
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    args.args.iter().find_map(|arg| match arg {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

/// The `async move { .. }` inside the trailing `Box::pin(..)` of an `#[async_trait]` method.
fn async_trait_future(block: &mut Block) -> Option<&mut syn::ExprAsync> {
    let Some(Stmt::Expr(Expr::Call(call), None)) = block.stmts.last_mut() else {
        return None;
    };
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    if func.path.segments.last().is_none_or(|s| s.ident != "pin") || call.args.len() != 1 {
        return None;
    }
    match call.args.first_mut() {
        Some(Expr::Async(future)) if future.capture.is_some() => Some(future),
        _ => None,
    }
}

/// How the fallback gets the call's arguments: what to clone before the body runs, and what to
/// pass.
struct Plan {
    prelude: Vec<TokenStream>,
    receiver: Option<TokenStream>,
    args: Vec<TokenStream>,
}

impl Plan {
    /// Only a fallback needs the arguments again. A parameter given as a pattern is renamed so
    /// the whole argument can be cloned, and destructured as before the body runs.
    fn new(inputs: &mut Punctuated<FnArg, Token![,]>, options: &Options) -> Plan {
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

/// In a method, a bare-name fallback is a method on `self`. When the `impl` block carries the
/// attribute too, the block's methods are known, and a bare name none of them has is most
/// likely a free fn written without its path; left to rustc, that is a missing method whose
/// nearest name is often the guarded method itself, which it then suggests. A method's own
/// attribute sees no other item, so without the block's attribute the name goes to rustc.
fn check_fallback_in_block(options: &Options, item: &ItemFn, errors: &mut Errors) {
    let (Some(fallback), Some(owner)) = (&options.fallback, &options.owner) else {
        return;
    };
    let (Some(name), Some(methods)) = (fallback.get_ident(), &owner.methods) else {
        return;
    };
    if item.sig.receiver().is_none() || methods.contains(name) {
        return;
    }
    errors.push_spanned(
        fallback,
        format!(
            "`{name}` is not a method of this impl block, and a bare name in a method's `fallback` is called on `self`: for a free fn write `fallback = self::{name}`; for a method of another impl block or of a trait, `fallback = Self::{name}`"
        ),
    );
}

/// The uses `stale_for` cannot serve: its cache is a static, keyed by owned copies of the
/// arguments, so it must name their types and the return type without a generic parameter.
fn check_stale(options: &Options, item: &ItemFn, errors: &mut Errors) {
    if options.stale_for.is_none() {
        if let Some(entries) = options.stale_entries {
            errors.push(
                entries.span,
                "`stale_entries` needs `stale_for`: add `stale_for = \"10m\"` (how long a good answer may be served), or remove `stale_entries`".to_string(),
            );
        }
        return;
    }
    if let Some(param) = item.sig.generics.type_params().next() {
        errors.push_spanned(
            param,
            "`stale_for` keeps answers in a static, which cannot name a generic parameter: remove `stale_for`, or make the fn non-generic".to_string(),
        );
    }
    if let ReturnType::Type(_, ty) = &item.sig.output {
        if mentions_impl_trait(ty) {
            errors.push_spanned(
                ty,
                "`stale_for` keeps answers in a static, which cannot name an `impl Trait` return type: name the type".to_string(),
            );
        }
    }
    for input in &item.sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        if mentions_impl_trait(&typed.ty) {
            errors.push_spanned(
                &typed.ty,
                "`stale_for` keys its answers by the arguments, and cannot name an `impl Trait` parameter's type: name the type".to_string(),
            );
        }
        if !matches!(&*typed.pat, Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none())
        {
            errors.push_spanned(
                &typed.pat,
                "`stale_for` keys its answers by the arguments: give this parameter a name instead of a pattern".to_string(),
            );
        }
    }
}

/// What `stale_for` adds: the static that keeps the answers, the key built from the
/// arguments before the body runs, the keeping of a success, and the lookup a failed or
/// rejected call falls back on.
struct Stale {
    statics: TokenStream,
    key: TokenStream,
    keep: TokenStream,
    serve: TokenStream,
}

impl Stale {
    fn new(options: &Options, item: &ItemFn, ret: &Type, krate: &TokenStream) -> Option<Stale> {
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

fn runtime(options: &Options) -> TokenStream {
    options
        .krate
        .as_ref()
        .map_or_else(|| quote!(::breaker_runtime), ToTokens::to_token_stream)
}

fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// The new body: the breaker's statics, then the original body run through it.
fn wrap(
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
    let attempt = quote! {
        #breaker
            .call_with(
                async {
                    let __breaker_value = #body.await;
                    let __breaker_verdict = #classify;
                    (__breaker_value, __breaker_verdict)
                },
                |(_, __breaker_verdict)| *__breaker_verdict,
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
    // What a counted failure said, kept if the circuit opened on it; only an open circuit
    // formats it. The trait is chosen on the concrete type, so an opaque one (`impl Trait`)
    // says nothing. Written into the failure's own arm, so the success and the rejection carry
    // none of it.
    let note = |value: TokenStream| {
        annotated.map(|_| {
            quote! {
                if #breaker.state() == #krate::State::Open {
                    use #krate::__private::DescribeFailure as _;
                    #krate::__private::note_failure(
                        #breaker,
                        (&&&&#krate::__private::Describe(#value)).failure(),
                    );
                }
            }
        })
    };
    let note_value = note(quote!(&__breaker_value));
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
                    // The failure goes back to the caller, who can read it; noting it here cost
                    // every call through the attribute 5 ns (benchmarked), so it is not.
                    ::core::result::Result::Ok((__breaker_value, _)) => __breaker_value,
                    ::core::result::Result::Err(__breaker_error) => #rejected,
                }
            };
        }
        return quote! {
            #carries_rejection
            #guarded
            match #outcome {
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success)) => {
                    #keep
                    __breaker_value
                }
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Ignore)) => __breaker_value,
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Failure)) => {
                    #note_value
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
    let note_failed = note(quote!(__breaker_failed));
    let noted = quote! {
        if let ::core::result::Result::Ok((__breaker_failed, #krate::Verdict::Failure)) = &__breaker_unanswered {
            #note_failed
        }
        ::core::mem::drop(__breaker_unanswered);
    };
    if stale.is_none() {
        return quote! {
            #guarded
            match #outcome {
                ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success | #krate::Verdict::Ignore)) => __breaker_value,
                // A counted failure or the breaker's own answer: serve the fallback.
                __breaker_unanswered => {
                    #noted
                    #fallback_value
                }
            }
        };
    }
    quote! {
        #guarded
        match #outcome {
            ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Success)) => {
                #keep
                __breaker_value
            }
            ::core::result::Result::Ok((__breaker_value, #krate::Verdict::Ignore)) => __breaker_value,
            // A counted failure or the breaker's own answer: the last good answer if there is
            // one fresh enough, else the fallback.
            __breaker_unanswered => {
                #noted
                #serve_stale
                #fallback_value
            }
        }
    }
}

/// The call's attempts under its policy (retries, deadline, bulkhead): the policy's static, and
/// the attempts driven by the runtime's `Attempts`, which holds every rule.
fn attempts(
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
    let take_slot = |on_full: TokenStream| {
        quote! {
            let #slot = match #attempts.slot().await {
                ::core::result::Result::Ok(#slot) => #slot,
                ::core::result::Result::Err(__breaker_full) => #on_full,
            };
        }
    };
    let run = if policy.retries == 0 {
        let take_slot = take_slot(quote!(return ::core::result::Result::Err(__breaker_full)));
        quote! {
            let #attempts = #p::Attempts::begin(#policy_ref, #breaker);
            #p::within_deadline(#policy_ref, #breaker, async {
                #take_slot
                let #outcome = #attempt;
                ::core::mem::drop(#slot);
                #outcome
            })
        }
    } else {
        let take_slot = take_slot(quote!(break ::core::result::Result::Err(__breaker_full)));
        quote! {
            let mut #attempts = #p::Attempts::begin(#policy_ref, #breaker);
            #p::within_deadline(#policy_ref, #breaker, async {
                loop {
                    #take_slot
                    #(#copies)*
                    let #outcome = #attempt;
                    ::core::mem::drop(#slot);
                    if !#attempts.again(#p::Attempted::of(&#outcome)).await {
                        break #outcome;
                    }
                }
            })
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

/// With retries, each attempt runs the body on its own copy of every argument taken by value:
/// `let x = copy of x;` for each binding, spanned on the parameter's type so that a missing
/// `Clone` is reported there. `self` by value cannot be rebound, so it is an error.
fn retry_copies(
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

/// The declaration the linker gathers for the registry, and the handle that caches the breaker.
fn statics(options: &Options, item: &ItemFn, krate: &TokenStream) -> TokenStream {
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
const SETTINGS_FIELDS: usize = 12;

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

fn mentions_impl_trait(ty: &Type) -> bool {
    crate::tokens::has_ident(ty.to_token_stream(), &|ident| ident == "impl")
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
        let expanded = crate::guard(quote!(fallback = later), item, None);
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
        let expanded = crate::guard(quote!(fallback = later), item, None);
        let expanded: syn::ItemFn = syn::parse2(expanded).expect("a fn");
        let inputs = &expanded.sig.inputs;
        assert!(quote!(#inputs).to_string().starts_with("__breaker_arg0"));
    }
}
