//! The `#[circuit_breaker]` attribute and `#[derive(IsFailure)]`, re-exported by
//! `breaker-runtime`: depend on that crate, not on this one.
//!
//! The crate reads as a pipeline: `attr` parses the attribute's arguments into typed options
//! (with `grammar` for the percentages, counts and durations), `valid` checks them against
//! each other, and `expand` writes the code. `derive` does the same for `IsFailure`. Every
//! mistake is collected (`errors`) and reported together, on the token at fault, and the
//! function is still emitted beside them.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod attr;
mod derive;
mod errors;
mod expand;
mod grammar;
mod tokens;
mod valid;

#[cfg(test)]
mod grammar_props;

use proc_macro::TokenStream;

/// Guards an async fn with a circuit breaker; see `breaker_runtime` for the options.
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    let parsed = match syn::parse::<attr::Parsed>(args) {
        Ok(parsed) => parsed,
        Err(error) => return with_item(error, item),
    };
    let function = match syn::parse::<syn::ItemFn>(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new(
                proc_macro2::Span::call_site(),
                "#[circuit_breaker] goes on an `async fn` with a body",
            );
            return with_item(error, item);
        }
    };
    let attr::Parsed {
        options,
        mut errors,
    } = parsed;
    valid::check(&options, &mut errors);
    expand::circuit_breaker(options, errors, function).into()
}

fn with_item(error: syn::Error, item: TokenStream) -> TokenStream {
    let mut out: TokenStream = error.to_compile_error().into();
    out.extend(item);
    out
}

/// Derives `IsFailure` for an error enum or struct: every variant is a failure unless marked
/// `#[breaker(healthy)]`, `#[breaker(ignore)]` or `#[breaker(transparent)]`.
#[proc_macro_derive(IsFailure, attributes(breaker))]
pub fn derive_is_failure(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input) {
        Ok(input) => derive::is_failure(input).into(),
        Err(error) => error.to_compile_error().into(),
    }
}

#[cfg(test)]
mod readme {
    /// The README's option table is checked against the parser's own list: the same rows, in
    /// the same order, with the same keys and defaults.
    #[test]
    fn the_readme_option_table_matches_the_parser() {
        let readme = include_str!("../../README.md");
        let rows: Vec<(Vec<String>, String)> = readme
            .lines()
            .skip_while(|l| !l.starts_with("| option"))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|row| {
                let cells: Vec<&str> = row.split(" | ").collect();
                let keys = cells[0]
                    .trim_start_matches('|')
                    .split('/')
                    .map(|k| k.trim().trim_matches('`').to_string())
                    .collect();
                (
                    keys,
                    cells
                        .get(2)
                        .map(|d| d.trim().to_string())
                        .unwrap_or_default(),
                )
            })
            .collect();
        let expected: Vec<(Vec<String>, String)> = crate::attr::OPTIONS
            .iter()
            .map(|(keys, default)| {
                (
                    keys.iter().map(|k| k.to_string()).collect(),
                    default.to_string(),
                )
            })
            .collect();
        assert_eq!(
            rows, expected,
            "README.md's option table (keys, default) must match attr::OPTIONS"
        );
    }
}
