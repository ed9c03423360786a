//! One guarded fn, from the attribute's arguments to its code: parse, check, expand. Both the
//! attribute on a fn and the attribute on an `impl` block (for each of its methods) come here.

use quote::quote;

use crate::attr::{self, Owner};
use crate::{expand, valid};

/// One guarded fn: parse, check, expand. `owner` is the type, when an `impl` block's attribute
/// expands its methods.
pub(crate) fn guard(
    args: proc_macro2::TokenStream,
    function: syn::ItemFn,
    owner: Option<Owner>,
) -> proc_macro2::TokenStream {
    let attr::Parsed {
        mut options,
        mut errors,
    } = match syn::parse2::<attr::Parsed>(args) {
        Ok(parsed) => parsed,
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#error #function);
        }
    };
    options.owner = owner;
    valid::check(&options, &mut errors);
    expand::circuit_breaker(options, errors, function)
}
