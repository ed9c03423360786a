//! The attribute's options as the README's table shows them.

/// Every option of `#[circuit_breaker]`: the keys of a row of the README's table, and its
/// default as the table writes it. The attribute names these keys in its errors, and a test
/// holds the README to this list.
pub const OPTIONS: &[(&[&str], &str)] = &[
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
