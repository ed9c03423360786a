//! The `#[circuit_breaker]` attribute and `#[derive(IsFailure)]`, re-exported by
//! `breaker-runtime`: depend on that crate, not on this one, since the code they write calls
//! into it.
//!
//! ```
//! use breaker_runtime::{circuit_breaker, BreakerError, IsFailure};
//!
//! #[derive(Debug, IsFailure)]
//! enum LookupError {
//!     Unavailable,
//!     #[breaker(healthy)]
//!     NotFound,
//!     #[breaker(transparent)]
//!     Breaker(BreakerError),
//! }
//!
//! impl From<BreakerError> for LookupError {
//!     fn from(e: BreakerError) -> Self {
//!         LookupError::Breaker(e)
//!     }
//! }
//!
//! #[circuit_breaker(window = "4", fallback = cached)]
//! async fn lookup(sku: u32) -> Result<&'static str, LookupError> {
//!     Err(LookupError::Unavailable) // the catalog is down
//! }
//!
//! async fn cached(sku: u32) -> Result<&'static str, LookupError> {
//!     Ok("from the cache")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! assert_eq!(lookup(7).await.unwrap(), "from the cache");
//! # }
//! ```
//!
//! The options, their grammar and defaults are in `breaker-runtime`'s docs of the attribute.
//!
//! The crate reads as a pipeline: `attr` parses the attribute's arguments into typed options
//! (with `grammar` for the percentages, counts and durations), `valid` checks them against
//! each other, and `expand` writes the code; `guard` runs one fn through the three, for the
//! attribute on a fn and for each method of an `impl` block's. `derive` does the same for
//! `IsFailure`. Every mistake is collected (`errors`) and reported together, on the token at
//! fault, and the function is still emitted beside them.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod attr;
mod derive;
mod errors;
mod expand;
mod guard;
mod impl_block;
mod lenient;
mod tokens;
mod valid;

#[cfg(test)]
mod expansions;
#[cfg(test)]
mod grammar_props;

use proc_macro::TokenStream;

/// Guards an async fn with a circuit breaker; see `breaker_runtime` for the options.
///
/// On an `impl` block it takes no options and names each guarded method's breaker after the
/// type (`module::Type::method`).
#[proc_macro_attribute]
pub fn circuit_breaker(args: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(function) = lenient::function(item.clone()) {
        return guard::guard(args.into(), function, None).into();
    }
    if let Ok(block) = syn::parse::<syn::ItemImpl>(item.clone()) {
        return impl_block::expand(args.into(), block).into();
    }
    let error = syn::Error::new(
        proc_macro2::Span::call_site(),
        "#[circuit_breaker] goes on an `async fn` with a body (or on an `impl` block, to name its methods' breakers after the type)",
    );
    with_item(error, item)
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
    /// The lines of the first markdown table whose header starts `| option`, each line read
    /// through `strip` (a doc comment's `/// `), up to the first line that is not a row.
    fn option_table(text: &str, strip: &str) -> Vec<String> {
        text.lines()
            .map(|line| line.strip_prefix(strip).unwrap_or(""))
            .skip_while(|line| !line.starts_with("| option"))
            .take_while(|line| line.starts_with('|'))
            .map(str::to_string)
            .collect()
    }

    /// The option names of a table's rows: `timeout_ms` and `timeout` from
    /// `| `timeout_ms` / `timeout` | ...`.
    fn names(table: &[String]) -> std::collections::BTreeSet<String> {
        table
            .iter()
            .skip(2)
            .flat_map(|row| {
                let first = row
                    .trim_start_matches('|')
                    .split(" | ")
                    .next()
                    .unwrap_or("");
                first
                    .split('/')
                    .map(|k| k.trim().trim_matches('`').to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The attribute's rustdoc (on `breaker_runtime::circuit_breaker`, where users read it)
    /// lists every option, in the README's own table: the same names, and the same rows.
    #[test]
    fn the_rustdoc_option_table_is_the_readme_table() {
        let readme = option_table(include_str!("../../README.md"), "");
        let rustdoc = option_table(include_str!("../../breaker-runtime/src/lib.rs"), "/// ");
        assert!(readme.len() > 2, "README.md has an option table");
        assert_eq!(
            names(&rustdoc),
            names(&readme),
            "the options of #[circuit_breaker]'s rustdoc table and of README.md's"
        );
        assert_eq!(
            rustdoc, readme,
            "#[circuit_breaker]'s rustdoc table (breaker-runtime/src/lib.rs) must be README.md's \"Options and defaults\" table, row for row"
        );
    }

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
        let expected: Vec<(Vec<String>, String)> = breaker_options::OPTIONS
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
            "README.md's option table (keys, default) must match breaker_options::OPTIONS"
        );
    }
}
