//! The attribute's options as the README's table shows them.

/// Every option of `#[circuit_breaker]`: the keys of a row of the README's table, and its
/// default as the table writes it. The attribute names these keys in its errors, and a test
/// holds the README to this list.
pub const OPTIONS: &[(&[&str], &str)] = &[
    (&["threshold"], "`\"50%\"`"),
    (&["window"], "`\"20\"`"),
    (&["window_kind"], "`\"sliding\"`"),
    (
        &["min_calls"],
        "the window size (count window), 10 (time window)",
    ),
    (&["timeout_ms", "timeout"], "10 000 ms"),
    (&["break_duration"], "`\"30s\"`"),
    (&["max_break_duration"], "none (no growth)"),
    (&["break_growth"], "`\"2x\"` (with `max_break_duration`)"),
    (&["break_jitter"], "none"),
    (&["probes"], "1"),
    (&["probe_threshold"], "none (every probe must succeed)"),
    (&["slow_call"], "off"),
    (&["slow_threshold"], "`\"100%\"`"),
    (&["mode"], "`\"enforce\"`"),
    (&["record"], "`\"10m\"` (the process's default)"),
    (&["warm_up"], "none"),
    (&["retries"], "0"),
    (&["backoff"], "`\"100ms..10s\"` (with `retries`)"),
    (&["retry_budget"], "`\"20%\"` (with `retries`)"),
    (&["deadline"], "none"),
    (&["max_concurrent"], "none (no bulkhead)"),
    (&["max_wait"], "none (reject at once)"),
    (&["stale_for"], "none"),
    (&["stale_entries"], "1 000 (with `stale_for`)"),
    (&["fallback"], "none"),
    (&["name"], "`module_path!()::fn_name`"),
    (&["is_failure"], "the `IsFailure` impl"),
    (&["crate"], "`::breaker_runtime`"),
];

/// The option `key` sets: the last key of its row, so `timeout_ms` and `timeout` set one
/// option, `timeout`. `None` for an unknown key.
///
/// ```
/// assert_eq!(breaker_options::canonical("timeout_ms"), Some("timeout"));
/// assert_eq!(breaker_options::canonical("window"), Some("window"));
/// assert_eq!(breaker_options::canonical("treshold"), None);
/// ```
pub fn canonical(key: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .find(|(keys, _)| keys.contains(&key))
        .and_then(|(keys, _)| keys.last().copied())
}

/// Every key, quoted and joined, for the sentence that lists them after an unknown one.
pub fn option_list() -> String {
    OPTIONS
        .iter()
        .flat_map(|(keys, _)| keys.iter())
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
