//! Each option's value read as the attribute reads it, refused with the attribute's words.
//!
//! The grammar is `breaker-options`' own; what is said around it (`takes a string literal`,
//! `takes an integer`) follows the attribute's parser, so a value refused here reads exactly
//! as the compile error for the same value in `#[circuit_breaker(...)]`.

use std::time::Duration;

use breaker_options::{
    BreakGrowth, MAX_CONCURRENT, MAX_DURATION, MAX_PROBES, MAX_RETRIES, MAX_STALE_ENTRIES, Mode,
    Rate, Window, WindowKind, grammar, option_list,
};

use super::tokens::{Value, is_path};

/// The options read so far; `None` for absent ones and for ones refused.
#[derive(Debug, Default, Clone)]
pub(crate) struct Written {
    pub(crate) threshold: Option<Rate>,
    pub(crate) window: Option<Window>,
    pub(crate) window_kind: Option<WindowKind>,
    pub(crate) min_calls: Option<u32>,
    /// `Some(None)` for `timeout = "off"`.
    pub(crate) timeout: Option<Option<Duration>>,
    pub(crate) break_duration: Option<Duration>,
    pub(crate) max_break_duration: Option<Duration>,
    pub(crate) break_growth: Option<BreakGrowth>,
    pub(crate) probes: Option<u32>,
    pub(crate) probe_threshold: Option<Rate>,
    pub(crate) slow_call: Option<Duration>,
    pub(crate) warm_up: Option<Duration>,
    pub(crate) slow_threshold: Option<Rate>,
    pub(crate) mode: Option<Mode>,
    pub(crate) name: Option<String>,
}

/// Reads `value` as option `key` onto `written`; the attribute's message if it refuses it.
/// Options a replay has no use for are read too (a bad value is still reported as the
/// attribute reports it) and left for the caller to refuse.
pub(crate) fn read(written: &mut Written, key: &str, value: &Value) -> Result<(), String> {
    match key {
        "threshold" => written.threshold = Some(percentage(value, key)?),
        "slow_threshold" => written.slow_threshold = Some(percentage(value, key)?),
        "probe_threshold" => written.probe_threshold = Some(percentage(value, key)?),
        "break_jitter" => drop(percentage(value, key)?),
        "window" => written.window = Some(window(value)?),
        "window_kind" => {
            written.window_kind = Some(from_text(
                value,
                key,
                "\"sliding\" or \"fixed\"",
                grammar::window_kind,
            )?)
        }
        "min_calls" => written.min_calls = Some(positive(value, key, u64::from(u32::MAX), "")?),
        "probes" => written.probes = Some(positive(value, key, u64::from(MAX_PROBES), "")?),
        "timeout_ms" => {
            let hint =
                "; for no timeout write `timeout = \"off\"`, for a duration `timeout = \"2s\"`";
            let max_millis = MAX_DURATION.as_secs() * 1_000;
            let ms: u64 =
                positive_limit(value, key, max_millis, "2592000000 (720h, 30 days)", hint)?;
            written.timeout = Some(Some(Duration::from_millis(ms)));
        }
        "timeout" => {
            let what = "a duration such as \"30s\" (or \"off\" for no timeout)";
            written.timeout = Some(from_text(value, key, what, grammar::timeout)?);
        }
        "break_duration" => written.break_duration = Some(nonzero_duration(value, key)?),
        "max_break_duration" => written.max_break_duration = Some(nonzero_duration(value, key)?),
        "break_growth" => written.break_growth = Some(growth(value, key)?),
        "mode" => {
            written.mode = Some(from_text(
                value,
                key,
                "\"enforce\" or \"shadow\"",
                grammar::mode,
            )?)
        }
        "slow_call" => written.slow_call = Some(nonzero_duration(value, key)?),
        "warm_up" => written.warm_up = Some(nonzero_duration(value, key)?),
        "record" => {
            let what = "a span such as \"30m\", or \"off\"";
            from_text(value, key, what, grammar::record)?;
        }
        "retries" => drop(positive::<u32>(value, key, u64::from(MAX_RETRIES), "")?),
        "backoff" => drop(from_text(
            value,
            key,
            "its bounds, such as \"100ms..10s\"",
            grammar::backoff,
        )?),
        "retry_budget" => drop(from_text(
            value,
            key,
            "a percentage of calls such as \"20%\", or \"off\"",
            grammar::retry_budget,
        )?),
        "deadline" | "max_wait" | "stale_for" => drop(nonzero_duration(value, key)?),
        "max_concurrent" => drop(positive::<u32>(value, key, u64::from(MAX_CONCURRENT), "")?),
        "stale_entries" => drop(positive::<u32>(
            value,
            key,
            u64::from(MAX_STALE_ENTRIES),
            "",
        )?),
        "fallback" => path(value, key, "an async fn, e.g. `fallback = queue_charge`")?,
        "is_failure" => path(
            value,
            key,
            "a fn(&Return) -> bool, e.g. `is_failure = is_outage`",
        )?,
        "crate" => path(
            value,
            key,
            "the runtime crate's path, e.g. `crate = ::my_breaker`",
        )?,
        "name" => written.name = Some(name(value)?),
        unknown => {
            return Err(format!(
                "unknown option `{unknown}`; the options are {}",
                option_list()
            ));
        }
    }
    Ok(())
}

fn string<'a>(value: &'a Value, key: &str, what: &str) -> Result<&'a str, String> {
    match value {
        Value::Str(text) => Ok(text),
        _ => Err(format!("`{key}` takes a string literal: {what}")),
    }
}

fn name(value: &Value) -> Result<String, String> {
    let name = string(value, "name", "a name such as \"payments\"")?;
    if name.trim().is_empty() {
        return Err(
            "`name` must not be empty: it is how logs, errors and the registry tell breakers apart"
                .to_string(),
        );
    }
    Ok(name.to_string())
}

fn from_text<T>(
    value: &Value,
    key: &str,
    what: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, String> {
    let text = string(value, key, what)?;
    parse(text).map_err(|message| format!("invalid `{key}`: {message}"))
}

/// A growth factor as text (`"1.5x"`) or as a number (`1.5`, `2`), read by one grammar.
fn growth(value: &Value, key: &str) -> Result<BreakGrowth, String> {
    match value {
        Value::Int(digits) | Value::Float(digits) => {
            grammar::break_growth(digits).map_err(|message| format!("invalid `{key}`: {message}"))
        }
        _ => from_text(
            value,
            key,
            "how much longer each break gets, such as \"1.5x\" or 1.5",
            grammar::break_growth,
        ),
    }
}

fn percentage(value: &Value, key: &str) -> Result<Rate, String> {
    from_text(
        value,
        key,
        "a percentage such as \"50%\"",
        grammar::percentage,
    )
}

fn window(value: &Value) -> Result<Window, String> {
    if let Value::Int(digits) = value {
        let calls = digits.parse::<u64>().unwrap_or(u64::MAX);
        return grammar::count_window(calls).map_err(|m| format!("invalid `window`: {m}"));
    }
    from_text(
        value,
        "window",
        "a number of calls such as \"20\" or a duration such as \"30s\"",
        grammar::window,
    )
}

fn nonzero_duration(value: &Value, key: &str) -> Result<Duration, String> {
    from_text(
        value,
        key,
        "a duration such as \"30s\"",
        grammar::nonzero_duration,
    )
}

/// A positive integer literal up to `max`, the limit written as the number.
fn positive<T: TryFrom<u64>>(value: &Value, key: &str, max: u64, hint: &str) -> Result<T, String> {
    positive_limit(value, key, max, &max.to_string(), hint)
}

/// A positive integer literal up to `max`; `max` is written as `limit` when the error names it.
fn positive_limit<T: TryFrom<u64>>(
    value: &Value,
    key: &str,
    max: u64,
    limit: &str,
    hint: &str,
) -> Result<T, String> {
    let Value::Int(digits) = value else {
        return Err(format!("`{key}` takes an integer, e.g. `{key} = 5`{hint}"));
    };
    let Ok(parsed) = digits.parse::<u64>() else {
        if digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("invalid `{key}`: it must be at most {limit}"));
        }
        return Err(format!("`{key}` takes a whole number{hint}"));
    };
    if parsed == 0 {
        return Err(format!("invalid `{key}`: it must be at least 1{hint}"));
    }
    if parsed > max {
        return Err(format!("invalid `{key}`: it must be at most {limit}"));
    }
    T::try_from(parsed).map_err(|_| format!("invalid `{key}`: too large"))
}

/// A path, written bare or as a string.
fn path(value: &Value, key: &str, what: &str) -> Result<(), String> {
    match value {
        Value::Path(_) => Ok(()),
        Value::Str(text) if is_path(text.trim()) => Ok(()),
        Value::Str(_) => Err(format!("`{key}` takes a path: {what}")),
        _ => Err(format!("`{key}` takes a path, not an expression: {what}")),
    }
}
