//! Saved states as JSON (feature `serde`): what a process writes on shutdown and the next one
//! reads at its start.
//!
//! ```json
//! { "version": 1, "saved_at_unix_ms": 1765000000000,
//!   "breakers": {
//!     "payments": { "state": "open", "open_until_unix_ms": 1765000012000, "break_ms": 30000,
//!                   "failed_probes": 1, "window": { "outcomes": "" },
//!                   "config": { "threshold": "50%", "window": "20", "timeout": "2000ms" } },
//!     "geo": { "state": "closed", "failed_probes": 0,
//!              "window": { "buckets": [ { "began_unix_ms": 1764999990000, "calls": 12, "failures": 3, "slow": 0 } ] },
//!              "config": { "window": "60000ms" } } } }
//! ```
//!
//! A count window's outcomes are one letter each, oldest first: `S` a success, `L` a slow
//! success, `F` a failure. The options are spelled as the attribute spells them and read by its
//! grammar. Every refusal names the breaker and the field.

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use crate::adapters::serialize::millis;
use crate::core::config::{Record, Settings, Window, WindowKind};
use crate::core::saved::{
    RestoreError, Restored, SAVED_STATE_VERSION, SavedBucket, SavedOutcome, SavedState,
    SavedStates, SavedWindow,
};
use crate::core::state::State;
use crate::registry::Registry;

impl Registry {
    /// [`saved_states`](Self::saved_states) as JSON, to write to a file on shutdown.
    pub fn export_json(&self) -> String {
        self.saved_states().to_json()
    }

    /// Reads saved states from JSON and puts them back ([`restore`](Self::restore)): refused
    /// whole, with nothing changed, when the JSON is not this library's format, names a
    /// breaker not registered here, or holds a value that is missing or out of range (the error
    /// names the breaker and the field).
    pub fn restore_json(&self, json: &str) -> Result<Vec<Restored>, RestoreError> {
        self.restore(&SavedStates::from_json(json)?)
    }
}

impl SavedStates {
    /// The states as JSON, in the format this module's documentation shows.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, SavedStates, State};
    ///
    /// let breaker = Breaker::new(Config::builder().name("geo").count_window(4).build()?);
    /// breaker.try_acquire()?.failure();
    /// let json = SavedStates::new(vec![breaker.saved_state()]).to_json();
    /// let back = SavedStates::from_json(&json)?;
    /// assert_eq!(back.breakers[0].state, State::Closed);
    /// assert_eq!(back.breakers[0].window, breaker.saved_state().window);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> String {
        let breakers: Map<String, Value> = self
            .breakers
            .iter()
            .map(|b| (b.name.clone(), state_json(b)))
            .collect();
        json!({
            "version": self.version,
            "saved_at_unix_ms": unix_ms(self.saved_at),
            "breakers": breakers,
        })
        .to_string()
    }

    /// Reads states written by [`to_json`](Self::to_json). Refuses another format version, JSON
    /// that is not an object of this shape, and any value missing or out of range, naming the
    /// breaker and the field.
    pub fn from_json(json: &str) -> Result<SavedStates, RestoreError> {
        let file: Value = serde_json::from_str(json).map_err(|e| {
            RestoreError::invalid(None, "(the file)", format!("is not valid JSON: {e}"))
        })?;
        let version = file
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| RestoreError::invalid(None, "version", "is missing"))?;
        if version != u64::from(SAVED_STATE_VERSION) {
            return Err(RestoreError::Version {
                found: u32::try_from(version).unwrap_or(u32::MAX),
                expected: SAVED_STATE_VERSION,
            });
        }
        let saved_at = file
            .get("saved_at_unix_ms")
            .and_then(Value::as_u64)
            .map(from_unix_ms)
            .ok_or_else(|| {
                RestoreError::invalid(None, "saved_at_unix_ms", "is missing or not a whole number")
            })?;
        let breakers = file
            .get("breakers")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                RestoreError::invalid(None, "breakers", "is missing or not a map of names")
            })?
            .iter()
            .map(|(name, value)| read_state(name, value))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SavedStates {
            version: SAVED_STATE_VERSION,
            saved_at,
            breakers,
        })
    }
}

fn state_json(saved: &SavedState) -> Value {
    let window = match &saved.window {
        SavedWindow::Count(outcomes) => {
            json!({ "outcomes": outcomes.iter().map(|o| o.letter()).collect::<String>() })
        }
        SavedWindow::Time(buckets) => json!({
            "buckets": buckets
                .iter()
                .map(|b| json!({
                    "began_unix_ms": unix_ms(b.began),
                    "calls": b.calls,
                    "failures": b.failures,
                    "slow": b.slow,
                }))
                .collect::<Vec<_>>()
        }),
    };
    let mut state = Map::new();
    state.insert("state".into(), saved.state.as_str().into());
    if let Some(until) = saved.open_until {
        state.insert("open_until_unix_ms".into(), unix_ms(until).into());
    }
    if let Some(length) = saved.break_length {
        state.insert("break_ms".into(), millis(length).into());
    }
    state.insert("failed_probes".into(), saved.failed_probes.into());
    state.insert("window".into(), window);
    state.insert("config".into(), Value::Object(spelled(&saved.config)));
    Value::Object(state)
}

fn read_state(name: &str, value: &Value) -> Result<SavedState, RestoreError> {
    let field = |field: &str| value.get(field);
    let invalid = |field: &str, message: &str| RestoreError::invalid(Some(name), field, message);
    let state_text = field("state")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("state", "is missing or not a string"))?;
    let state = State::named(state_text).ok_or_else(|| {
        invalid(
            "state",
            &format!(
                "is `{state_text}`; a state is closed, open, half_open, forced_open or disabled"
            ),
        )
    })?;
    let whole = |key: &str| -> Result<Option<u64>, RestoreError> {
        match field(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| invalid(key, "is not a whole number")),
        }
    };
    let open_until = whole("open_until_unix_ms")?.map(from_unix_ms);
    let break_length = whole("break_ms")?.map(Duration::from_millis);
    let failed_probes = whole("failed_probes")?.unwrap_or(0);
    let window = match field("window") {
        Some(w) if w.get("outcomes").is_some() => {
            let letters = w["outcomes"]
                .as_str()
                .ok_or_else(|| invalid("window.outcomes", "is not a string of S, L and F"))?;
            let outcomes = letters
                .chars()
                .map(SavedOutcome::from_letter)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    invalid(
                        "window.outcomes",
                        "holds a letter other than S (success), L (slow) and F (failure)",
                    )
                })?;
            SavedWindow::Count(outcomes)
        }
        Some(w) if w.get("buckets").is_some() => {
            let buckets = w["buckets"]
                .as_array()
                .ok_or_else(|| invalid("window.buckets", "is not a list"))?;
            SavedWindow::Time(
                buckets
                    .iter()
                    .map(|b| read_bucket(name, b))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        _ => {
            return Err(invalid(
                "window",
                "is missing, or holds neither `outcomes` nor `buckets`",
            ));
        }
    };
    let config = match field("config") {
        Some(config @ Value::Object(_)) => {
            serde_json::from_value::<breaker_options::Spelled>(config.clone())
                .map_err(|e| invalid("config", &e.to_string()))?
                .settings
        }
        _ => return Err(invalid("config", "is missing or not a map of options")),
    };
    let state = SavedState {
        name: name.to_owned(),
        state,
        open_until,
        break_length,
        failed_probes: u32::try_from(failed_probes).unwrap_or(u32::MAX),
        window,
        config,
    };
    crate::core::saved::check(&state)?;
    Ok(state)
}

fn read_bucket(name: &str, bucket: &Value) -> Result<SavedBucket, RestoreError> {
    let count = |key: &str| {
        bucket
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                RestoreError::invalid(
                    Some(name),
                    &format!("window.buckets.{key}"),
                    "is missing or not a whole number",
                )
            })
    };
    let began = bucket
        .get("began_unix_ms")
        .and_then(Value::as_u64)
        .map(from_unix_ms)
        .ok_or_else(|| {
            RestoreError::invalid(
                Some(name),
                "window.buckets.began_unix_ms",
                "is missing or not a whole number",
            )
        })?;
    Ok(SavedBucket {
        began,
        calls: count("calls")?,
        failures: count("failures")?,
        slow: count("slow")?,
    })
}

/// The options as the attribute spells them, every one written out, durations in whole
/// milliseconds (rounded up).
fn spelled(s: &Settings) -> Map<String, Value> {
    let ms = |d: Duration| format!("{}ms", d.as_nanos().div_ceil(1_000_000));
    let mut m = Map::new();
    m.insert("threshold".into(), s.threshold.to_string().into());
    let window = match s.window {
        Window::Count(n) => Value::from(n),
        Window::Time(span) => ms(span).into(),
    };
    m.insert("window".into(), window);
    if s.window_kind == WindowKind::Fixed {
        m.insert("window_kind".into(), "fixed".into());
    }
    m.insert("min_calls".into(), s.min_calls().into());
    let timeout = s.timeout.map_or_else(|| "off".to_string(), ms);
    m.insert("timeout".into(), timeout.into());
    m.insert("break_duration".into(), ms(s.break_duration).into());
    if let Some(max) = s.max_break_duration {
        m.insert("max_break_duration".into(), ms(max).into());
        m.insert(
            "break_growth".into(),
            format!("{}x", s.break_growth().factor()).into(),
        );
    }
    if let Some(jitter) = s.break_jitter {
        m.insert("break_jitter".into(), jitter.to_string().into());
    }
    m.insert("probes".into(), s.probes.into());
    if let Some(rate) = s.probe_threshold {
        m.insert("probe_threshold".into(), rate.to_string().into());
    }
    if let Some(slow) = s.slow_call {
        m.insert("slow_call".into(), ms(slow).into());
        m.insert(
            "slow_threshold".into(),
            s.slow_threshold().to_string().into(),
        );
    }
    m.insert("mode".into(), s.mode.as_str().into());
    if let Some(record) = s.record {
        let record = match record {
            Record::Off => "off".to_string(),
            Record::Last(span) => ms(span),
        };
        m.insert("record".into(), record.into());
    }
    if let Some(warm_up) = s.warm_up {
        m.insert("warm_up".into(), ms(warm_up).into());
    }
    m
}

fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, millis)
}

/// A time from a file, which any value may stand in: one no platform's clock can hold reads as
/// the latest it can (a break that far ahead is clamped to its length anyway).
fn from_unix_ms(ms: u64) -> SystemTime {
    let mut ms = ms;
    loop {
        if let Some(at) = SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(ms)) {
            return at;
        }
        ms /= 2;
    }
}
