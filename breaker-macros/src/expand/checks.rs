//! The uses of the attribute refused before anything is generated, each told on its token.

use syn::{FnArg, ItemFn, Pat, ReturnType};

use super::paths::{mentions_impl_trait, path_text};
use super::shape::Shape;
use crate::attr::Options;
use crate::errors::Errors;

/// The fallback is called with the fn's arguments, so a parameter it cannot name is refused.
pub(super) fn fallback_arguments(options: &Options, item: &ItemFn, errors: &mut Errors) {
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
}

/// A fn returning nothing gives the breaker nothing to classify, unless `is_failure` does.
pub(super) fn returns_something(
    options: &Options,
    item: &ItemFn,
    shape: Option<&Shape>,
    errors: &mut Errors,
) {
    if let (ReturnType::Default, None, Some(Shape::Async)) =
        (&item.sig.output, &options.is_failure, shape)
    {
        errors.push(
            item.sig.paren_token.span.close(),
            format!(
                "`{}` returns nothing, so the breaker cannot tell a failure from a success: return a `Result<(), E>`, or pass `is_failure = path::to::fn`",
                item.sig.ident
            ),
        );
    }
}

/// In a method, a bare-name fallback is a method on `self`. When the `impl` block carries the
/// attribute too, the block's methods are known, and a bare name none of them has is most
/// likely a free fn written without its path; left to rustc, that is a missing method whose
/// nearest name is often the guarded method itself, which it then suggests. A method's own
/// attribute sees no other item, so without the block's attribute the name goes to rustc.
pub(super) fn fallback_in_block(options: &Options, item: &ItemFn, errors: &mut Errors) {
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
pub(super) fn stale(options: &Options, item: &ItemFn, errors: &mut Errors) {
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
