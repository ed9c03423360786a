//! Candidate options, written exactly as in the attribute, read into the runtime's [`Config`].
//!
//! A value the attribute refuses is refused here with the attribute's own message. Options a
//! replay cannot honour are refused with the reason, after their value is checked as the
//! attribute checks it:
//!
//! - `retries`, `backoff`, `retry_budget`: a retried call is a new call to the dependency, and
//!   the trace cannot say how it would have ended.
//! - `deadline`, `max_concurrent`, `max_wait`: they turn calls away or cut them short before the
//!   breaker sees them; the trace holds the calls as the breaker saw them.
//! - `fallback`, `is_failure`, `crate`, `stale_for`, `stale_entries`: they name code or keep
//!   answers; a trace's outcomes are already classified, and a replay returns nothing to anyone.
//! - `break_jitter`: it adds a random share to each break, and a replay must give the same answer
//!   every time it runs.
//!
//! `name` names the row of the table. `mode` is read and checked, and changes nothing: a replay
//! always shows what the breaker would have turned away, which is what a shadow breaker reports.

mod rules;
mod tokens;
mod values;

use std::fmt;

use breaker_runtime::{Config, Settings};

/// Options to replay a trace under: the runtime's configuration, and how the user wrote it.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The options as written, trimmed: the row's label unless `name` gives one.
    pub written: String,
    /// The `name` option, when given.
    pub name: Option<String>,
    /// The configuration the replay's breaker is built with.
    pub config: Config,
}

impl Candidate {
    /// How the table names this candidate: its `name`, or its options as written (`defaults`
    /// when none were).
    pub fn label(&self) -> &str {
        match (&self.name, self.written.as_str()) {
            (Some(name), _) => name,
            (None, "") => "defaults",
            (None, written) => written,
        }
    }

    /// The candidate's settings, every option filled in.
    pub fn settings(&self) -> Settings {
        self.config.settings()
    }
}

/// Options refused: every message, as the attribute (or, for options a replay cannot honour,
/// the replay) gives it, in the order written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct OptionsError {
    /// The messages, one per mistake.
    pub messages: Vec<String>,
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.messages.join("\n"))
    }
}

/// Reads candidate options spelled as in the attribute: `threshold = "40%", window = "30s"`,
/// integers such as `timeout_ms = 2000` unquoted.
///
/// ```
/// use std::time::Duration;
///
/// let candidate = breaker_replay::parse_options(r#"threshold = "40%", window = "30s""#)?;
/// assert_eq!(candidate.config.min_calls(), 10);
/// assert_eq!(candidate.config.break_duration(), Duration::from_secs(30));
///
/// let refused = breaker_replay::parse_options(r#"threshold = "150%""#).unwrap_err();
/// assert_eq!(refused.messages, [r#"invalid `threshold`: `150%` is above 100%; use at most "100%""#]);
/// # Ok::<(), breaker_replay::OptionsError>(())
/// ```
pub fn parse_options(text: &str) -> Result<Candidate, OptionsError> {
    let refuse = |messages: Vec<String>| OptionsError { messages };
    let pairs = tokens::pairs(text).map_err(|message| refuse(vec![message]))?;
    let mut written = values::Written::default();
    let mut messages = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for pair in &pairs {
        let canonical = breaker_options::canonical(&pair.key).unwrap_or(&pair.key);
        if seen.contains(&canonical) {
            messages.push(if canonical == "timeout" {
                "`timeout` and `timeout_ms` both set the timeout; keep one".to_string()
            } else {
                format!("`{}` is given more than once; keep one", pair.key)
            });
            continue;
        }
        seen.push(canonical);
        match values::read(&mut written, &pair.key, &pair.value) {
            Err(message) => messages.push(message),
            Ok(()) => messages.extend(not_replayable(&pair.key)),
        }
    }
    messages.extend(rules::violations(&written));
    if !messages.is_empty() {
        return Err(refuse(messages));
    }
    let mut settings = rules::settings(&written);
    // The replay enforces whatever the mode: see the module's docs.
    settings.mode = breaker_runtime::Mode::Enforce;
    let config = Config::builder()
        .name(written.name.clone().unwrap_or_else(|| "replay".to_string()))
        .settings(settings)
        .build()
        .map_err(|error| refuse(vec![format!("invalid `{}`: {error}", error.field())]))?;
    Ok(Candidate {
        written: text.trim().to_string(),
        name: written.name,
        config,
    })
}

/// Why a replay refuses an option the attribute takes, if it does.
fn not_replayable(key: &str) -> Option<String> {
    let why = match key {
        "retries" | "backoff" | "retry_budget" => {
            "a retried call is a new call to the dependency, and the trace cannot say how it would have ended"
        }
        "deadline" | "max_concurrent" | "max_wait" => {
            "it turns calls away or cuts them short before the breaker sees them, and the trace holds the calls as the breaker saw them"
        }
        "fallback" | "is_failure" | "crate" => {
            "it names code, and a trace's outcomes are already classified"
        }
        "stale_for" | "stale_entries" => {
            "it keeps answers for callers, and a replay has no answers and no callers"
        }
        "break_jitter" => {
            "it adds a random share to each break, and a replay must give the same answer every time"
        }
        _ => return None,
    };
    Some(format!(
        "`{key}` cannot be replayed: {why}; remove it to replay the breaker's own options"
    ))
}
