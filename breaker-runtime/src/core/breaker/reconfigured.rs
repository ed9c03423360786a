//! What a change of a live breaker's options says: before and after, when, which options,
//! and who asked; and the options as a log line spells them.

use std::fmt;
use std::path::PathBuf;
use std::time::SystemTime;

use tokio::time::Instant;

use crate::core::config::{Config, Settings, Window, WindowKind};

/// A change of a live breaker's configuration: what it was, what it is, and when.
///
/// ```
/// use breaker_runtime::{Breaker, Config};
///
/// let breaker = Breaker::new(Config::builder().name("ledger").threshold(50.0).build()?);
/// let change = breaker.reconfigure(Config::builder().threshold(25.0).build()?)?;
/// assert_eq!((change.before.threshold().percent(), change.after.threshold().percent()), (50.0, 25.0));
/// assert_eq!(change.after.name().as_str(), "ledger", "the name stays");
/// # Ok::<(), breaker_runtime::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Reconfigured {
    /// The configuration before.
    pub before: Config,
    /// The configuration in force after.
    pub after: Config,
    /// When, on tokio's clock.
    pub at: Instant,
    /// When, on the system's clock (for logs and dashboards).
    pub at_system: SystemTime,
    /// Where the options in force after it came from.
    pub source: ConfigSource,
}

/// Where the options a breaker runs by came from: what it was built with, or who changed them
/// last. A [snapshot](crate::Snapshot::config_source) says it, and the endpoint's page shows it
/// beside the options, so that options changed behind a watched file's back show at a glance.
///
/// ```
/// use breaker_runtime::{Breaker, Config, ConfigSource};
///
/// let breaker = Breaker::new(Config::builder().threshold(50.0).build()?);
/// assert_eq!(breaker.snapshot().config_source, ConfigSource::Built);
/// breaker.update(Config::builder().threshold(25.0))?;
/// assert_eq!(breaker.snapshot().config_source, ConfigSource::Code);
/// breaker.reset_config();
/// assert_eq!(breaker.snapshot().config_source, ConfigSource::Built, "put back as built");
/// # Ok::<(), breaker_runtime::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigSource {
    /// What the breaker was built with (the attribute's options, or the `Config` given to
    /// [`Breaker::new`](crate::Breaker::new)), never changed or put back by
    /// [`reset_config`](crate::Breaker::reset_config).
    Built,
    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure), from the application's code.
    Code,
    /// The operator's endpoint (`PUT {name}/config`).
    Endpoint,
    /// A configuration file ([`ConfigFile`](crate::config_file::ConfigFile)), at this path.
    File(PathBuf),
}

impl ConfigSource {
    /// The source as a lowercase word, as JSON shows it: `built`, `code`, `endpoint`, `file`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ConfigSource::Built => "built",
            ConfigSource::Code => "code",
            ConfigSource::Endpoint => "endpoint",
            ConfigSource::File(_) => "file",
        }
    }
}

/// Who asked for a reconfiguration, as its log line says.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Requester<'a> {
    /// [`Breaker::reconfigure`](crate::Breaker::reconfigure) or
    /// [`Breaker::reset_config`](crate::Breaker::reset_config), called by the application.
    Code,
    /// The operator's endpoint.
    #[cfg_attr(not(feature = "http-endpoint"), allow(dead_code))]
    Endpoint,
    /// A configuration file.
    #[cfg_attr(not(feature = "config-file"), allow(dead_code))]
    File(&'a std::path::Path),
}

impl Requester<'_> {
    /// Where options this requester sets come from.
    pub(crate) fn source(self) -> ConfigSource {
        match self {
            Requester::Code => ConfigSource::Code,
            Requester::Endpoint => ConfigSource::Endpoint,
            Requester::File(path) => ConfigSource::File(path.to_path_buf()),
        }
    }
}

impl fmt::Display for Requester<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requester::Code => f.write_str("code"),
            Requester::Endpoint => f.write_str("the endpoint"),
            Requester::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl Reconfigured {
    /// The options whose values differ before and after, as the attribute names them, in the
    /// order of its table (an option that follows another, such as `min_calls` after a new
    /// `window`, is named too).
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// let breaker = Breaker::new(Config::builder().build()?);
    /// let change = breaker.reconfigure(Config::builder().threshold(25.0).count_window(10).build()?)?;
    /// assert_eq!(change.changed(), ["threshold", "window", "min_calls"]);
    /// # Ok::<(), breaker_runtime::ConfigError>(())
    /// ```
    pub fn changed(&self) -> Vec<&'static str> {
        changed(&self.before.settings(), &self.after.settings())
    }
}

/// The options whose values differ between `now` and `next` (defaults filled in).
pub(crate) fn changed(now: &Settings, next: &Settings) -> Vec<&'static str> {
    [
        ("threshold", now.threshold != next.threshold),
        ("window", now.window != next.window),
        ("window_kind", now.window_kind != next.window_kind),
        ("min_calls", now.min_calls() != next.min_calls()),
        ("timeout", now.timeout != next.timeout),
        ("break_duration", now.break_duration != next.break_duration),
        (
            "max_break_duration",
            now.max_break_duration != next.max_break_duration,
        ),
        (
            "break_growth",
            now.max_break_duration.map(|_| now.break_growth())
                != next.max_break_duration.map(|_| next.break_growth()),
        ),
        ("break_jitter", now.break_jitter != next.break_jitter),
        ("probes", now.probes != next.probes),
        (
            "probe_threshold",
            now.probe_threshold != next.probe_threshold,
        ),
        ("slow_call", now.slow_call != next.slow_call),
        (
            "slow_threshold",
            now.slow_call.map(|_| now.slow_threshold())
                != next.slow_call.map(|_| next.slow_threshold()),
        ),
        ("mode", now.mode != next.mode),
        ("record", now.record != next.record),
        ("warm_up", now.warm_up != next.warm_up),
    ]
    .into_iter()
    .filter_map(|(option, differs)| differs.then_some(option))
    .collect()
}

/// A window's options as the attribute spells them: `window = "20"`, or a span with
/// `window_kind = "fixed"` after it for a fixed window.
pub(crate) struct WindowOptions(pub(crate) Window, pub(crate) WindowKind);

impl fmt::Display for WindowOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Window::Count(n) => write!(f, "window = \"{n}\"")?,
            Window::Time(span) => write!(f, "window = \"{span:?}\"")?,
        }
        if self.1 == WindowKind::Fixed {
            f.write_str(", window_kind = \"fixed\"")?;
        }
        Ok(())
    }
}

/// A configuration's options as the attribute spells them, for a log line.
pub(crate) struct Options<'a>(pub(crate) &'a Config);

impl fmt::Display for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.0;
        write!(
            f,
            "threshold = \"{}%\", {}",
            c.threshold().percent(),
            WindowOptions(c.window(), c.window_kind())
        )?;
        write!(f, ", min_calls = {}", c.min_calls())?;
        match c.timeout() {
            Some(t) => write!(f, ", timeout = \"{t:?}\"")?,
            None => write!(f, ", timeout = \"off\"")?,
        }
        write!(
            f,
            ", break_duration = \"{:?}\", probes = {}",
            c.break_duration(),
            c.probes()
        )?;
        if let Some(rate) = c.probe_threshold() {
            write!(f, ", probe_threshold = \"{}%\"", rate.percent())?;
        }
        if let Some(max) = c.max_break_duration() {
            write!(f, ", max_break_duration = \"{max:?}\"")?;
        }
        if let Some(slow) = c.slow_call() {
            write!(
                f,
                ", slow_call = \"{slow:?}\", slow_threshold = \"{}%\"",
                c.slow_threshold().percent()
            )?;
        }
        if let Some(warm_up) = c.warm_up() {
            write!(f, ", warm_up = \"{warm_up:?}\"")?;
        }
        write!(f, ", mode = \"{}\"", c.mode().as_str())
    }
}

impl From<Config> for Settings {
    fn from(config: Config) -> Settings {
        config.settings()
    }
}

impl From<&Config> for Settings {
    fn from(config: &Config) -> Settings {
        config.settings()
    }
}
