//! What the attribute was put on: an `async fn`, or a method `#[async_trait]` already rewrote.

use syn::{
    Block, Expr, GenericArgument, ItemFn, PathArguments, ReturnType, Stmt, Type, TypeParamBound,
};

use crate::errors::Errors;

/// What the attribute was put on.
pub(super) enum Shape {
    /// An `async fn`.
    Async,
    /// A method already rewritten by `#[async_trait]`: a plain fn returning
    /// `Box::pin(async move { .. })`, whose future yields `output`.
    AsyncTrait { output: Box<Type> },
}

pub(super) fn shape(item: &ItemFn, errors: &mut Errors) -> Option<Shape> {
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
pub(super) fn async_trait_future(block: &mut Block) -> Option<&mut syn::ExprAsync> {
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
