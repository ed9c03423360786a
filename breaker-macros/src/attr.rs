//! The attribute's arguments, parsed into typed options with the span of every value.
//!
//! Parsing never stops at the first mistake: an unknown key, a repeated key or a bad value is
//! recorded and the rest is still read.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, Lit, LitStr, Token};

use crate::errors::Errors;
use crate::grammar::{self, MAX_PROBES, Window};

/// Every option as the README's table shows it: the keys of a row, and its default. The
/// README is checked against this list, so the two cannot drift.
pub(crate) const OPTIONS: &[(&[&str], &str)] = &[
    (&["threshold"], "`\"50%\"`"),
    (&["window"], "`\"20\"`"),
    (
        &["min_calls"],
        "the window size (count window), 10 (time window)",
    ),
    (&["timeout_ms", "timeout"], "10 000 ms"),
    (&["break_duration"], "`\"30s\"`"),
    (&["max_break_duration"], "none (no growth)"),
    (&["probes"], "1"),
    (&["slow_call"], "off"),
    (&["slow_threshold"], "`\"100%\"`"),
    (&["fallback"], "none"),
    (&["name"], "`module_path!()::fn_name`"),
    (&["is_failure"], "the `IsFailure` impl"),
    (&["crate"], "`::breaker_runtime`"),
];

/// A value and where it was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timeout {
    Off,
    Millis(u64),
}

/// The options as written; absent ones take their defaults in expansion.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) threshold: Option<At<u32>>,
    pub(crate) window: Option<At<Window>>,
    pub(crate) min_calls: Option<At<u32>>,
    pub(crate) timeout: Option<At<Timeout>>,
    pub(crate) break_duration: Option<At<u64>>,
    pub(crate) max_break_duration: Option<At<u64>>,
    pub(crate) probes: Option<At<u32>>,
    pub(crate) slow_call: Option<At<u64>>,
    pub(crate) slow_threshold: Option<At<u32>>,
    pub(crate) fallback: Option<syn::Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) is_failure: Option<syn::Path>,
    pub(crate) krate: Option<syn::Path>,
}

/// The parse: the options read, and every mistake found on the way.
pub(crate) struct Parsed {
    pub(crate) options: Options,
    pub(crate) errors: Errors,
}

impl Parse for Parsed {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut options = Options::default();
        let mut errors = Errors::default();
        let mut seen: Vec<String> = Vec::new();
        while !input.is_empty() {
            let (key, key_span) = if input.peek(Token![crate]) {
                let token: Token![crate] = input.parse()?;
                ("crate".to_string(), token.span)
            } else {
                let ident: syn::Ident = input.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        format!("expected an option name; the options are {}", option_list()),
                    )
                })?;
                (ident.to_string(), ident.span())
            };
            input.parse::<Token![=]>().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!("expected `=` after `{key}`: write `{key} = <value>`"),
                )
            })?;
            let value: Expr = input.parse()?;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }

            let canonical = if key == "timeout_ms" {
                "timeout"
            } else {
                key.as_str()
            };
            if seen.iter().any(|s| s == canonical) {
                let message = if canonical == "timeout" {
                    "`timeout` and `timeout_ms` both set the timeout; keep one".to_string()
                } else {
                    format!("`{key}` is given more than once; keep one")
                };
                errors.push(key_span, message);
                continue;
            }
            seen.push(canonical.to_string());
            options.read(&key, key_span, &value, &mut errors);
        }
        Ok(Parsed { options, errors })
    }
}

fn option_list() -> String {
    OPTIONS
        .iter()
        .flat_map(|(keys, _)| keys.iter())
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Options {
    fn read(&mut self, key: &str, key_span: Span, value: &Expr, errors: &mut Errors) {
        let mut fail = |span: Span, message: String| errors.push(span, message);
        match key {
            "threshold" => {
                self.threshold = percentage(value, key).map_err(|(s, m)| fail(s, m)).ok()
            }
            "slow_threshold" => {
                self.slow_threshold = percentage(value, key).map_err(|(s, m)| fail(s, m)).ok()
            }
            "window" => self.window = window(value).map_err(|(s, m)| fail(s, m)).ok(),
            "min_calls" => {
                self.min_calls = positive(value, key, u64::from(u32::MAX))
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "probes" => {
                self.probes = positive(value, key, MAX_PROBES)
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "timeout_ms" => {
                self.timeout = positive(value, key, u64::MAX)
                    .map(|at: At<u64>| At {
                        value: Timeout::Millis(at.value),
                        span: at.span,
                    })
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "timeout" => self.timeout = timeout(value).map_err(|(s, m)| fail(s, m)).ok(),
            "break_duration" => {
                self.break_duration = nonzero_duration(value, key)
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "max_break_duration" => {
                self.max_break_duration = nonzero_duration(value, key)
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "slow_call" => {
                self.slow_call = nonzero_duration(value, key)
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "fallback" => {
                self.fallback = path(value, key, "an async fn, e.g. `fallback = queue_charge`")
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            "is_failure" => {
                self.is_failure = path(
                    value,
                    key,
                    "a fn(&Return) -> bool, e.g. `is_failure = is_outage`",
                )
                .map_err(|(s, m)| fail(s, m))
                .ok()
            }
            "crate" => {
                self.krate = path(
                    value,
                    key,
                    "the runtime crate's path, e.g. `crate = ::my_breaker`",
                )
                .map_err(|(s, m)| fail(s, m))
                .ok()
            }
            "name" => {
                self.name = string(value, key, "a name such as \"payments\"")
                    .map_err(|(s, m)| fail(s, m))
                    .ok()
            }
            unknown => fail(
                key_span,
                format!(
                    "unknown option `{unknown}`; the options are {}",
                    option_list()
                ),
            ),
        }
    }
}

type Refusal = (Span, String);

fn string(value: &Expr, key: &str, what: &str) -> Result<LitStr, Refusal> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => Err((
            other.span(),
            format!("`{key}` takes a string literal: {what}"),
        )),
    }
}

fn from_text<T>(
    value: &Expr,
    key: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<At<T>, Refusal> {
    let text = string(value, key, what)?;
    parse(&text.value())
        .map(|v| At {
            value: v,
            span: text.span(),
        })
        .map_err(|message| (text.span(), format!("invalid `{key}`: {message}")))
}

fn percentage(value: &Expr, key: &str) -> Result<At<u32>, Refusal> {
    from_text(
        value,
        key,
        "a percentage such as \"50%\"",
        grammar::percentage,
    )
}

fn window(value: &Expr) -> Result<At<Window>, Refusal> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Int(n), ..
    }) = value
    {
        let calls = n.base10_parse::<u64>().unwrap_or(u64::MAX);
        return grammar::count_window(calls)
            .map(|w| At {
                value: w,
                span: n.span(),
            })
            .map_err(|m| (n.span(), format!("invalid `window`: {m}")));
    }
    from_text(
        value,
        "window",
        "a number of calls such as \"20\" or a duration such as \"30s\"",
        grammar::window,
    )
}

fn nonzero_duration(value: &Expr, key: &str) -> Result<At<u64>, Refusal> {
    let at = from_text(value, key, "a duration such as \"30s\"", grammar::duration)?;
    if at.value == 0 {
        return Err((
            at.span,
            format!("invalid `{key}`: it must be longer than zero"),
        ));
    }
    Ok(at)
}

fn timeout(value: &Expr) -> Result<At<Timeout>, Refusal> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(s), ..
    }) = value
    {
        if s.value().trim() == "off" {
            return Ok(At {
                value: Timeout::Off,
                span: s.span(),
            });
        }
    }
    let at = nonzero_duration(value, "timeout")
        .map_err(|(span, m)| (span, format!("{m} (or \"off\" for no timeout)")))?;
    Ok(At {
        value: Timeout::Millis(at.value),
        span: at.span,
    })
}

fn positive<T: TryFrom<u64>>(value: &Expr, key: &str, max: u64) -> Result<At<T>, Refusal> {
    let Expr::Lit(ExprLit {
        lit: Lit::Int(n), ..
    }) = value
    else {
        return Err((
            value.span(),
            format!("`{key}` takes an integer, e.g. `{key} = 5`"),
        ));
    };
    let parsed = n
        .base10_parse::<u64>()
        .map_err(|_| (n.span(), format!("`{key}` takes a whole number")))?;
    if parsed == 0 {
        return Err((n.span(), format!("invalid `{key}`: it must be at least 1")));
    }
    if parsed > max {
        return Err((
            n.span(),
            format!("invalid `{key}`: it must be at most {max}"),
        ));
    }
    T::try_from(parsed)
        .map(|v| At {
            value: v,
            span: n.span(),
        })
        .map_err(|_| (n.span(), format!("invalid `{key}`: too large")))
}

fn path(value: &Expr, key: &str, what: &str) -> Result<syn::Path, Refusal> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path.clone()),
        other => Err((
            other.span(),
            format!("`{key}` takes a path, not an expression: {what}"),
        )),
    }
}
