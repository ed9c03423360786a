//! The attribute's arguments, parsed into typed options with the span of every value.
//!
//! Parsing never stops at the first mistake: an unknown key, a repeated key or a bad value is
//! recorded and the rest is still read.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, ExprLit, Lit, LitStr, Token};

use std::time::Duration;

use breaker_options::{
    Backoff, BreakGrowth, MAX_CONCURRENT, MAX_DURATION, MAX_PROBES, MAX_RETRIES, MAX_STALE_ENTRIES,
    Mode, Rate, Record, RetryBudget, Window, WindowKind, grammar, option_list,
};

use crate::errors::Errors;

/// The type whose methods the block's attribute expands, and what it knows of the type there.
#[derive(Clone)]
pub(crate) struct Owner {
    /// The type as its breakers' names show it.
    pub(crate) name: String,
    /// The names of the block's methods; `None` when a macro in the block may add others.
    pub(crate) methods: Option<Vec<syn::Ident>>,
}

/// A value and where it was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// The options as written; absent ones take their defaults in expansion.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) threshold: Option<At<Rate>>,
    pub(crate) window: Option<At<Window>>,
    pub(crate) window_kind: Option<At<WindowKind>>,
    pub(crate) min_calls: Option<At<u32>>,
    /// `None` inside for `timeout = "off"`.
    pub(crate) timeout: Option<At<Option<Duration>>>,
    pub(crate) break_duration: Option<At<Duration>>,
    pub(crate) max_break_duration: Option<At<Duration>>,
    pub(crate) break_growth: Option<At<BreakGrowth>>,
    pub(crate) break_jitter: Option<At<Rate>>,
    pub(crate) mode: Option<At<Mode>>,
    pub(crate) record: Option<At<Record>>,
    pub(crate) probes: Option<At<u32>>,
    pub(crate) probe_threshold: Option<At<Rate>>,
    pub(crate) slow_call: Option<At<Duration>>,
    pub(crate) warm_up: Option<At<Duration>>,
    pub(crate) slow_threshold: Option<At<Rate>>,
    pub(crate) retries: Option<At<u32>>,
    pub(crate) backoff: Option<At<Backoff>>,
    pub(crate) retry_budget: Option<At<RetryBudget>>,
    pub(crate) deadline: Option<At<Duration>>,
    pub(crate) max_concurrent: Option<At<u32>>,
    pub(crate) max_wait: Option<At<Duration>>,
    pub(crate) stale_for: Option<At<Duration>>,
    pub(crate) stale_entries: Option<At<u32>>,
    pub(crate) fallback: Option<syn::Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) is_failure: Option<syn::Path>,
    pub(crate) krate: Option<syn::Path>,
    /// The type whose method this is, when the `impl` block carries the attribute too.
    pub(crate) owner: Option<Owner>,
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

            let canonical = breaker_options::canonical(&key).unwrap_or(&key);
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

impl Options {
    fn read(&mut self, key: &str, key_span: Span, value: &Expr, errors: &mut Errors) {
        match key {
            "threshold" => self.threshold = keep(errors, percentage(value, key)),
            "slow_threshold" => self.slow_threshold = keep(errors, percentage(value, key)),
            "probe_threshold" => self.probe_threshold = keep(errors, percentage(value, key)),
            "window" => self.window = keep(errors, window(value)),
            "window_kind" => {
                self.window_kind = keep(
                    errors,
                    from_text(value, key, "\"sliding\" or \"fixed\"", grammar::window_kind),
                )
            }
            "min_calls" => {
                self.min_calls = keep(
                    errors,
                    positive(value, key, (u64::from(u32::MAX), &u32::MAX.to_string()), ""),
                )
            }
            "probes" => {
                self.probes = keep(
                    errors,
                    positive(
                        value,
                        key,
                        (u64::from(MAX_PROBES), &MAX_PROBES.to_string()),
                        "",
                    ),
                )
            }
            "timeout_ms" => {
                let hint =
                    "; for no timeout write `timeout = \"off\"`, for a duration `timeout = \"2s\"`";
                let max_millis = MAX_DURATION.as_secs() * 1_000;
                self.timeout = keep(
                    errors,
                    positive(value, key, (max_millis, "2592000000 (720h, 30 days)"), hint).map(
                        |at: At<u64>| At {
                            value: Some(Duration::from_millis(at.value)),
                            span: at.span,
                        },
                    ),
                )
            }
            "timeout" => self.timeout = keep(errors, timeout(value)),
            "break_duration" => self.break_duration = keep(errors, nonzero_duration(value, key)),
            "max_break_duration" => {
                self.max_break_duration = keep(errors, nonzero_duration(value, key))
            }
            "break_growth" => self.break_growth = keep(errors, growth(value, key)),
            "mode" => {
                self.mode = keep(
                    errors,
                    from_text(value, key, "\"enforce\" or \"shadow\"", grammar::mode),
                )
            }
            "break_jitter" => self.break_jitter = keep(errors, percentage(value, key)),
            "record" => {
                self.record = keep(
                    errors,
                    from_text(
                        value,
                        key,
                        "a span such as \"30m\", or \"off\"",
                        grammar::record,
                    ),
                )
            }
            "slow_call" => self.slow_call = keep(errors, nonzero_duration(value, key)),
            "warm_up" => self.warm_up = keep(errors, nonzero_duration(value, key)),
            "retries" => {
                self.retries = keep(
                    errors,
                    positive(
                        value,
                        key,
                        (u64::from(MAX_RETRIES), &MAX_RETRIES.to_string()),
                        "",
                    ),
                )
            }
            "backoff" => {
                self.backoff = keep(
                    errors,
                    from_text(
                        value,
                        key,
                        "its bounds, such as \"100ms..10s\"",
                        grammar::backoff,
                    ),
                )
            }
            "retry_budget" => {
                self.retry_budget = keep(
                    errors,
                    from_text(
                        value,
                        key,
                        "a percentage of calls such as \"20%\", or \"off\"",
                        grammar::retry_budget,
                    ),
                )
            }
            "deadline" => self.deadline = keep(errors, nonzero_duration(value, key)),
            "max_concurrent" => {
                self.max_concurrent = keep(
                    errors,
                    positive(
                        value,
                        key,
                        (u64::from(MAX_CONCURRENT), &MAX_CONCURRENT.to_string()),
                        "",
                    ),
                )
            }
            "max_wait" => self.max_wait = keep(errors, nonzero_duration(value, key)),
            "stale_for" => self.stale_for = keep(errors, nonzero_duration(value, key)),
            "stale_entries" => {
                self.stale_entries = keep(
                    errors,
                    positive(
                        value,
                        key,
                        (u64::from(MAX_STALE_ENTRIES), &MAX_STALE_ENTRIES.to_string()),
                        "",
                    ),
                )
            }
            "fallback" => {
                self.fallback = keep(
                    errors,
                    path(value, key, "an async fn, e.g. `fallback = queue_charge`"),
                )
            }
            "is_failure" => {
                self.is_failure = keep(
                    errors,
                    path(
                        value,
                        key,
                        "a fn(&Return) -> bool, e.g. `is_failure = is_outage`",
                    ),
                )
            }
            "crate" => {
                self.krate = keep(
                    errors,
                    path(
                        value,
                        key,
                        "the runtime crate's path, e.g. `crate = ::my_breaker`",
                    ),
                )
            }
            "name" => self.name = keep(errors, name(value)),
            unknown => errors.push(
                key_span,
                format!(
                    "unknown option `{unknown}`; the options are {}",
                    option_list()
                ),
            ),
        }
    }
}

/// The value, or nothing with its error recorded.
fn keep<T>(errors: &mut Errors, result: Result<T, syn::Error>) -> Option<T> {
    result.map_err(|e| errors.add(e)).ok()
}

fn refuse<T>(value: impl quote::ToTokens, message: String) -> Result<T, syn::Error> {
    Err(syn::Error::new_spanned(value, message))
}

fn string(value: &Expr, key: &str, what: &str) -> Result<LitStr, syn::Error> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => refuse(other, format!("`{key}` takes a string literal: {what}")),
    }
}

fn name(value: &Expr) -> Result<LitStr, syn::Error> {
    let name = string(value, "name", "a name such as \"payments\"")?;
    if name.value().trim().is_empty() {
        return refuse(
            &name,
            "`name` must not be empty: it is how logs, errors and the registry tell breakers apart"
                .to_string(),
        );
    }
    Ok(name)
}

fn from_text<T>(
    value: &Expr,
    key: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<At<T>, syn::Error> {
    let text = string(value, key, what)?;
    match parse(&text.value()) {
        Ok(v) => Ok(At {
            value: v,
            span: text.span(),
        }),
        Err(message) => refuse(&text, format!("invalid `{key}`: {message}")),
    }
}

/// A growth factor as text (`"1.5x"`) or as a number (`1.5`, `2`), read by one grammar.
fn growth(value: &Expr, key: &str) -> Result<At<BreakGrowth>, syn::Error> {
    let number = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => Some((f.base10_digits().to_string(), f.span())),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => Some((i.base10_digits().to_string(), i.span())),
        _ => None,
    };
    let Some((text, span)) = number else {
        return from_text(
            value,
            key,
            "how much longer each break gets, such as \"1.5x\" or 1.5",
            grammar::break_growth,
        );
    };
    grammar::break_growth(&text)
        .map(|value| At { value, span })
        .map_err(|message| syn::Error::new(span, format!("invalid `{key}`: {message}")))
}

fn percentage(value: &Expr, key: &str) -> Result<At<Rate>, syn::Error> {
    from_text(
        value,
        key,
        "a percentage such as \"50%\"",
        grammar::percentage,
    )
}

fn window(value: &Expr) -> Result<At<Window>, syn::Error> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Int(n), ..
    }) = value
    {
        let calls = n.base10_parse::<u64>().unwrap_or(u64::MAX);
        return match grammar::count_window(calls) {
            Ok(w) => Ok(At {
                value: w,
                span: n.span(),
            }),
            Err(m) => refuse(n, format!("invalid `window`: {m}")),
        };
    }
    from_text(
        value,
        "window",
        "a number of calls such as \"20\" or a duration such as \"30s\"",
        grammar::window,
    )
}

fn nonzero_duration(value: &Expr, key: &str) -> Result<At<Duration>, syn::Error> {
    from_text(
        value,
        key,
        "a duration such as \"30s\"",
        grammar::nonzero_duration,
    )
}

fn timeout(value: &Expr) -> Result<At<Option<Duration>>, syn::Error> {
    let what = "a duration such as \"30s\" (or \"off\" for no timeout)";
    from_text(value, "timeout", what, grammar::timeout)
}

/// A positive integer literal up to `max`; `max` is written as `limit` when the error names it.
fn positive<T: TryFrom<u64>>(
    value: &Expr,
    key: &str,
    (max, limit): (u64, &str),
    hint: &str,
) -> Result<At<T>, syn::Error> {
    let Expr::Lit(ExprLit {
        lit: Lit::Int(n), ..
    }) = value
    else {
        return refuse(
            value,
            format!("`{key}` takes an integer, e.g. `{key} = 5`{hint}"),
        );
    };
    let Ok(parsed) = n.base10_parse::<u64>() else {
        if n.base10_digits().bytes().all(|b| b.is_ascii_digit()) {
            return refuse(n, format!("invalid `{key}`: it must be at most {limit}"));
        }
        return refuse(n, format!("`{key}` takes a whole number{hint}"));
    };
    if parsed == 0 {
        return refuse(n, format!("invalid `{key}`: it must be at least 1{hint}"));
    }
    if parsed > max {
        return refuse(n, format!("invalid `{key}`: it must be at most {limit}"));
    }
    match T::try_from(parsed) {
        Ok(v) => Ok(At {
            value: v,
            span: n.span(),
        }),
        Err(_) => refuse(n, format!("invalid `{key}`: too large")),
    }
}

/// A path, written bare or (like serde's and the derive's `crate = "..."`) as a string.
fn path(value: &Expr, key: &str, what: &str) -> Result<syn::Path, syn::Error> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => s
            .parse::<syn::Path>()
            .map_err(|_| syn::Error::new_spanned(s, format!("`{key}` takes a path: {what}"))),
        other => refuse(
            other,
            format!("`{key}` takes a path, not an expression: {what}"),
        ),
    }
}
