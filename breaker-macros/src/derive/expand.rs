//! The `IsFailure` impl for a checked container.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::ast::{Body, Container, Mark, Rule};

pub(crate) fn impl_is_failure(container: &Container<'_>) -> TokenStream {
    let krate = &container.krate;
    let input = container.input;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut bounds: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();

    let mut failure_arms = Vec::new();
    let mut ignored_arms = Vec::new();
    let mut arm = |pattern: TokenStream, rule: &Rule, bounds: &mut Vec<TokenStream>| match rule {
        Rule::Fixed(mark) => {
            let (failure, ignored) = (*mark == Mark::Failure, *mark == Mark::Ignore);
            failure_arms.push(quote!(#pattern => #failure));
            ignored_arms.push(quote!(#pattern => #ignored));
        }
        Rule::Field(_, ty) => {
            // Only a field whose type involves a type parameter needs a bound; any other
            // field's missing `IsFailure` is reported by the calls below, on the field's type.
            if mentions_type_param(ty, &input.generics) {
                bounds.push(quote_spanned!(ty.span()=> #ty: #krate::IsFailure));
            }
            // Asked through `TransparentField`, whose message for a missing impl is about the
            // derive rather than the attribute.
            failure_arms.push(quote_spanned!(ty.span()=> #pattern => <#ty as #krate::__private::TransparentField>::is_failure(__breaker_field)));
            ignored_arms.push(quote_spanned!(ty.span()=> #pattern => <#ty as #krate::__private::TransparentField>::is_ignored(__breaker_field)));
        }
    };
    let pattern = |path: TokenStream, rule: &Rule| match rule {
        Rule::Fixed(_) => quote!(#path { .. }),
        Rule::Field(member, _) => quote!(#path { #member: __breaker_field, .. }),
    };
    match &container.body {
        Body::Enum(variants) => {
            for variant in variants {
                let v = &variant.ident;
                arm(
                    pattern(quote!(Self::#v), &variant.rule),
                    &variant.rule,
                    &mut bounds,
                );
            }
        }
        Body::Struct(rule) => arm(pattern(quote!(Self), rule), rule, &mut bounds),
    }
    let where_clause = (!bounds.is_empty()).then(|| quote!(where #(#bounds),*));
    // An enum without variants has no value to look at.
    let subject = if failure_arms.is_empty() {
        quote!(*self)
    } else {
        quote!(self)
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::IsFailure for #ident #ty_generics #where_clause {
            fn is_failure(&self) -> bool {
                #[allow(unreachable_patterns)]
                match #subject {
                    #(#failure_arms,)*
                }
            }
            fn is_ignored(&self) -> bool {
                #[allow(unreachable_patterns)]
                match #subject {
                    #(#ignored_arms,)*
                }
            }
        }
    }
}

fn mentions_type_param(ty: &syn::Type, generics: &syn::Generics) -> bool {
    let names: Vec<String> = generics
        .type_params()
        .map(|p| p.ident.to_string())
        .collect();
    !names.is_empty()
        && crate::tokens::has_ident(quote!(#ty), &|ident| names.contains(&ident.to_string()))
}

/// An impl that compiles whatever the input, emitted beside the errors of an invalid one.
pub(crate) fn stub(input: &syn::DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let krate = super::ast::crate_path(input);
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #krate::IsFailure for #ident #ty_generics #where_clause {
            fn is_failure(&self) -> bool {
                ::core::unreachable!()
            }
        }
    }
}
