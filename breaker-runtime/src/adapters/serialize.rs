//! `Serialize` for what dashboards show (feature `serde`): snapshots, states and configurations;
//! `Deserialize` for configurations, spelled as in the attribute.
//!
//! Where the options in force came from is `config_source` (`"built"`, `"code"`,
//! `"endpoint"` or `"file"`) with `config_file`, the file's path (`null` for any other
//! source); a snapshot's `config.mode` is the mode the breaker runs in, as its `mode` is. Why
//! it last opened, `last_opened`, holds the `threshold` and `window` (`{"calls": n}` or
//! `{"ms": d}`, with `window_kind` beside it, `"sliding"` or `"fixed"`) that judged it as they
//! were then, `null` for an opening no window decided.
//!
//! Instants have no meaning outside the process, so a snapshot's times are written relative to
//! the moment it is serialized: `next_probe_in_ms`, `last_transition_ms_ago`,
//! `config_changed_ms_ago` (`null` while the breaker keeps the config it was built with),
//! `drill_ends_in_ms` (`null` with no drill running), `injection.ends_in_ms` and
//! `last_opened.ms_ago`. Durations are in milliseconds.
//!
//! A running [fault injection](crate::Breaker::inject) reads `"injection": {"fail_percent":
//! 10.0, "delay_ms": 2000, "delay_percent": 5.0, "ends_in_ms": 290000, "drawn": 120,
//! "injected": 17}` (`delay_ms` and `delay_percent` are `null` without delays); `null` while
//! none runs.
//!
//! ```
//! use breaker_runtime::{Breaker, Config};
//!
//! let breaker = Breaker::new(Config::builder().name("search").build().unwrap());
//! let json = serde_json::to_value(breaker.snapshot()).unwrap();
//! assert_eq!(json["name"], "search");
//! assert_eq!(json["state"], "closed");
//! assert_eq!(json["config"]["window"]["calls"], 20);
//! ```

use std::time::Duration;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, SerializeStruct, Serializer};
use tokio::time::Instant;

use crate::core::breaker::ConfigSource;
use crate::core::breaker::snapshot::Snapshot;
use crate::core::config::Config;
use crate::core::injection::Injecting;
use crate::core::opening::Opening;
use crate::core::state::State;
use crate::policy::Policy;

/// Whole milliseconds of `d`, saturating: how the JSON this crate writes spells a duration.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Serialize for State {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Serialize for Config {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Config", 17)?;
        s.serialize_field("name", self.name().as_str())?;
        s.serialize_field("threshold", &self.threshold())?;
        s.serialize_field("window", &self.window())?;
        s.serialize_field("window_kind", self.window_kind().as_str())?;
        s.serialize_field("min_calls", &self.min_calls())?;
        s.serialize_field("timeout_ms", &self.timeout().map(millis))?;
        s.serialize_field("break_duration_ms", &millis(self.break_duration()))?;
        s.serialize_field(
            "max_break_duration_ms",
            &self.max_break_duration().map(millis),
        )?;
        s.serialize_field("break_growth", &self.break_growth().factor())?;
        s.serialize_field("break_jitter", &self.break_jitter())?;
        s.serialize_field("probes", &self.probes())?;
        s.serialize_field("probe_threshold", &self.probe_threshold())?;
        s.serialize_field("slow_call_ms", &self.slow_call().map(millis))?;
        s.serialize_field("slow_threshold", &self.slow_threshold())?;
        s.serialize_field("mode", self.mode().as_str())?;
        // As the attribute spells it ("10m", "off"); null for a configuration that leaves it
        // to the process's default, which a live breaker's never does.
        s.serialize_field("record", &self.record().map(|r| r.to_string()))?;
        s.serialize_field("warm_up_ms", &self.warm_up().map(millis))?;
        s.end()
    }
}

/// Reads a configuration as the attribute spells it, by the attribute's own grammar and rules:
/// `{ "threshold": "50%", "window": "30s", "timeout": "2s" }` in JSON, or the same keys in a
/// TOML or YAML file. Absent options take their defaults (the name `"breaker"`). This is not
/// the shape [`Serialize`] writes for dashboards (numbers in milliseconds and percent).
///
/// The options around the calls (`retries`, `backoff`, `retry_budget`, `deadline`,
/// `max_concurrent`, `max_wait`) may sit in the same map: a [`Policy`] reads those, and the
/// `Config` leaves them to it, so one section of a file can configure both.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Window};
///
/// let config: Config = serde_json::from_str(
///     r#"{ "name": "payments", "threshold": "25%", "window": "30s", "timeout": "2s" }"#,
/// )?;
/// assert_eq!(config.name(), "payments");
/// assert_eq!(config.window(), Window::Time(Duration::from_secs(30)));
/// assert_eq!(config.timeout(), Some(Duration::from_secs(2)));
///
/// let refused = serde_json::from_str::<Config>(r#"{ "window": "10", "min_calls": 11 }"#);
/// assert!(refused.unwrap_err().to_string().contains("min_calls"));
/// # Ok::<(), serde_json::Error>(())
/// ```
impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spelled = breaker_options::Spelled::deserialize(deserializer)?;
        let mut builder = Config::builder().settings(spelled.settings);
        if let Some(name) = spelled.name {
            builder = builder.name(name);
        }
        builder.build().map_err(D::Error::custom)
    }
}

/// Reads the options around a breaker's calls as the attribute spells them, from the same map
/// as its [`Config`] (whose keys it leaves to the `Config`).
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Policy};
///
/// let section = r#"{ "threshold": "25%", "retries": 2, "backoff": "50ms..2s", "max_concurrent": 16 }"#;
/// let config: Config = serde_json::from_str(section)?;
/// let policy: Policy = serde_json::from_str(section)?;
/// assert_eq!(config.threshold().percent(), 25.0);
/// assert_eq!(policy.settings().retries, 2);
/// assert_eq!(policy.settings().backoff().initial, Duration::from_millis(50));
/// assert_eq!(policy.settings().max_concurrent, Some(16));
///
/// let refused = serde_json::from_str::<Policy>(r#"{ "backoff": "2s..50ms", "retries": 1 }"#);
/// assert!(refused.unwrap_err().to_string().contains("reversed"));
/// # Ok::<(), serde_json::Error>(())
/// ```
impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spelled = breaker_options::Spelled::deserialize(deserializer)?;
        Policy::new(spelled.policy).map_err(D::Error::custom)
    }
}

impl Serialize for Snapshot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let now = Instant::now();
        let mut s = serializer.serialize_struct("Snapshot", 23)?;
        s.serialize_field("name", self.name().as_str())?;
        s.serialize_field("state", &self.state)?;
        s.serialize_field("mode", self.mode.as_str())?;
        s.serialize_field("calls", &self.calls)?;
        s.serialize_field("failures", &self.failures)?;
        s.serialize_field("slow", &self.slow)?;
        s.serialize_field("failure_rate", &self.failure_rate)?;
        s.serialize_field("slow_rate", &self.slow_rate)?;
        s.serialize_field("probes_in_flight", &self.probes_in_flight)?;
        s.serialize_field("rejected", &self.rejected)?;
        s.serialize_field("rejected_since_transition", &self.rejected_since_transition)?;
        s.serialize_field(
            "mean_duration_ms",
            &self.mean_duration.map(fractional_millis),
        )?;
        s.serialize_field("max_duration_ms", &self.max_duration.map(fractional_millis))?;
        s.serialize_field(
            "next_probe_in_ms",
            &self
                .next_probe_at
                .map(|at| millis(at.saturating_duration_since(now))),
        )?;
        s.serialize_field(
            "last_transition_ms_ago",
            &self
                .last_transition
                .map(|at| millis(now.saturating_duration_since(at))),
        )?;
        s.serialize_field(
            "last_opened",
            &self.last_opened.as_ref().map(|o| Relative(o, now)),
        )?;
        s.serialize_field(
            "config_changed_ms_ago",
            &self
                .config_changed
                .map(|at| millis(now.saturating_duration_since(at))),
        )?;
        s.serialize_field("config_source", self.config_source.as_str())?;
        s.serialize_field(
            "config_file",
            &match &self.config_source {
                ConfigSource::File(path) => Some(path.display().to_string()),
                _ => None,
            },
        )?;
        s.serialize_field("tracing", &self.tracing)?;
        s.serialize_field(
            "drill_ends_in_ms",
            &self
                .drill_ends
                .map(|at| millis(at.saturating_duration_since(now))),
        )?;
        s.serialize_field(
            "injection",
            &self.injection.as_ref().map(|i| InjectingAt(i, now)),
        )?;
        s.serialize_field("config", &self.config)?;
        s.end()
    }
}

/// A running injection, its end written relative to `now` like the snapshot's times.
struct InjectingAt<'a>(&'a Injecting, Instant);

impl Serialize for InjectingAt<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let InjectingAt(running, now) = self;
        let delay = running.injection.delay_of();
        let mut s = serializer.serialize_struct("Injecting", 6)?;
        s.serialize_field("fail_percent", &running.injection.fail_percent())?;
        s.serialize_field("delay_ms", &delay.map(|(d, _)| fractional_millis(d)))?;
        s.serialize_field("delay_percent", &delay.map(|(_, share)| share))?;
        s.serialize_field(
            "ends_in_ms",
            &millis(running.ends.saturating_duration_since(*now)),
        )?;
        s.serialize_field("drawn", &running.drawn)?;
        s.serialize_field("injected", &running.injected)?;
        s.end()
    }
}

/// A call's duration in milliseconds, to the microsecond the breaker keeps.
fn fractional_millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// An opening, its time written relative to `now` like the snapshot's.
struct Relative<'a>(&'a Opening, Instant);

impl Serialize for Relative<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Relative(opening, now) = self;
        let mut s = serializer.serialize_struct("Opening", 11)?;
        s.serialize_field("reason", opening.reason.as_str())?;
        s.serialize_field("ms_ago", &millis(now.saturating_duration_since(opening.at)))?;
        s.serialize_field("calls", &opening.calls)?;
        s.serialize_field("failures", &opening.failures)?;
        s.serialize_field("slow", &opening.slow)?;
        s.serialize_field("failure_rate", &opening.failure_rate)?;
        s.serialize_field("slow_rate", &opening.slow_rate)?;
        s.serialize_field("threshold", &opening.threshold)?;
        s.serialize_field("window", &opening.window)?;
        s.serialize_field("window_kind", opening.window_kind.as_str())?;
        s.serialize_field("last_failure", &opening.last_failure)?;
        s.serialize_field("why", &opening.to_string())?;
        s.end()
    }
}
