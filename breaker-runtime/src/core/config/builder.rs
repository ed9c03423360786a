//! The builder of a [`Config`]: every option from its default, checked once at `build`.

use std::time::Duration;

use crate::base::name::Name;
use crate::core::config::{
    BreakGrowth, Config, ConfigError, MAX_BREAK_GROWTH, Mode, Rate, Record, Settings, Window,
    WindowKind,
};

/// Builds a [`Config`]; every value is checked by [`ConfigBuilder::build`].
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, ConfigError};
///
/// let err = Config::builder()
///     .break_duration(Duration::from_secs(10))
///     .max_break_duration(Duration::from_secs(5))
///     .build()
///     .unwrap_err();
/// assert!(matches!(err, ConfigError::MaxBreakBelowBreak { .. }));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ConfigBuilder {
    name: Name,
    settings: Settings,
    // Kept as given until `build`, which refuses those outside (0, 100].
    threshold: f64,
    slow_threshold: Option<f64>,
    break_growth: Option<f64>,
    break_jitter: Option<f64>,
    probe_threshold: Option<f64>,
    /// The options a setter was called for, as bits of [`OPTIONS`]: what
    /// [`Breaker::update`](crate::Breaker::update) changes.
    named: u16,
}

/// The options a live breaker can change, in the attribute's order: the bits of
/// `ConfigBuilder::named`.
const OPTIONS: [&str; 16] = [
    "threshold",
    "window",
    "window_kind",
    "min_calls",
    "timeout",
    "break_duration",
    "max_break_duration",
    "break_growth",
    "break_jitter",
    "probes",
    "probe_threshold",
    "slow_call",
    "slow_threshold",
    "mode",
    "record",
    "warm_up",
];

impl Default for ConfigBuilder {
    fn default() -> Self {
        ConfigBuilder {
            name: Config::DEFAULT.name,
            settings: Settings::DEFAULT,
            threshold: Settings::DEFAULT.threshold.percent(),
            slow_threshold: None,
            break_growth: None,
            break_jitter: None,
            probe_threshold: None,
            named: 0,
        }
    }
}

impl ConfigBuilder {
    /// The breaker's name (default `"breaker"`).
    pub fn name(mut self, name: impl Into<Name>) -> Self {
        self.name = name.into();
        self
    }
    /// Open when the failure rate is at least this percentage, in (0, 100] (default 50).
    pub fn threshold(mut self, percent: f64) -> Self {
        self.threshold = percent;
        self.name_option("threshold");
        self
    }
    /// Judge the last `calls` recorded outcomes, 1 to [`MAX_COUNT_WINDOW`](crate::MAX_COUNT_WINDOW) (default 20).
    /// A count window only slides, so this makes the window sliding too.
    pub fn count_window(mut self, calls: u32) -> Self {
        self.settings.window = Window::Count(calls);
        self.settings.window_kind = WindowKind::Sliding;
        self.name_option("window");
        self
    }
    /// Judge the outcomes recorded in the last `duration`, at least [`MIN_TIME_WINDOW`](crate::MIN_TIME_WINDOW).
    /// The window slides unless [`window_kind`](Self::window_kind) says fixed.
    pub fn time_window(mut self, duration: Duration) -> Self {
        self.settings.window = Window::Time(duration);
        self.name_option("window");
        self
    }
    /// Judge the outcomes recorded since the last edge of an interval of `duration`: a time
    /// window whose counts all clear at each edge (gobreaker's `Interval`), the edges on the
    /// process's clock. The same as `.time_window(duration).window_kind(WindowKind::Fixed)`.
    pub fn fixed_window(self, duration: Duration) -> Self {
        self.time_window(duration).window_kind(WindowKind::Fixed)
    }
    /// Whether a time window slides (the default) or clears at each edge of its span; a
    /// fixed kind needs a time window.
    pub fn window_kind(mut self, kind: WindowKind) -> Self {
        self.settings.window_kind = kind;
        self.name_option("window_kind");
        self
    }
    /// Judge only once the window holds this many outcomes (default: the count window's size,
    /// or 10 for a time window).
    pub fn min_calls(mut self, calls: u32) -> Self {
        self.settings.min_calls = Some(calls);
        self.name_option("min_calls");
        self
    }
    /// Cancel a call still running after `limit` and count it as a failure (default 10 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.settings.timeout = Some(limit);
        self.name_option("timeout");
        self
    }
    /// Let calls run as long as they take.
    pub fn no_timeout(mut self) -> Self {
        self.settings.timeout = None;
        self.name_option("timeout");
        self
    }
    /// How long the circuit stays open before a probe (default 30 s).
    pub fn break_duration(mut self, duration: Duration) -> Self {
        self.settings.break_duration = duration;
        self.name_option("break_duration");
        self
    }
    /// Grow the break after each failed probe in a row, up to this (default: no growth).
    pub fn max_break_duration(mut self, duration: Duration) -> Self {
        self.settings.max_break_duration = Some(duration);
        self.name_option("max_break_duration");
        self
    }
    /// Multiply the break by `factor` after each failed probe in a row, 1 to
    /// [`MAX_BREAK_GROWTH`], to the hundredth (default 2; needs
    /// [`max_break_duration`](Self::max_break_duration)).
    pub fn break_growth(mut self, factor: f64) -> Self {
        self.break_growth = Some(factor);
        self.name_option("break_growth");
        self
    }
    /// Add to each break a random share of it, up to `percent`, in (0, 100] (default: none),
    /// so breakers that opened together do not probe together.
    pub fn break_jitter(mut self, percent: f64) -> Self {
        self.break_jitter = Some(percent);
        self.name_option("break_jitter");
        self
    }
    /// Probes allowed at once in half-open, and successes in a row that close it (default 1);
    /// with [`probe_threshold`](Self::probe_threshold), the probes of a half-open period.
    pub fn probes(mut self, probes: u32) -> Self {
        self.settings.probes = probes;
        self.name_option("probes");
        self
    }
    /// Judge a half-open period's probes together, as Resilience4j does: admit at most
    /// `probes` of them, and once all have answered close the circuit if their failure rate
    /// (and slow-call rate, by `slow_threshold`) is below `percent`, in (0, 100], or open it
    /// again otherwise (default: none, every probe must succeed and the first failure opens it).
    pub fn probe_threshold(mut self, percent: f64) -> Self {
        self.probe_threshold = Some(percent);
        self.name_option("probe_threshold");
        self
    }
    /// A success that takes longer than this is slow (default: off).
    pub fn slow_call(mut self, duration: Duration) -> Self {
        self.settings.slow_call = Some(duration);
        self.name_option("slow_call");
        self
    }
    /// Open when slow successes reach this percentage of the window (default 100; needs
    /// [`slow_call`](Self::slow_call)).
    pub fn slow_threshold(mut self, percent: f64) -> Self {
        self.slow_threshold = Some(percent);
        self.name_option("slow_threshold");
        self
    }

    /// Whether the breaker rejects calls while open (default), or never does and only reports
    /// what it would have rejected ([`Mode::Shadow`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.settings.mode = mode;
        self.name_option("mode");
        self
    }

    /// What the flight recorder keeps (default: the process's default, read when the
    /// configuration is built; see [`trace::set_default_record`](crate::trace::set_default_record)): the calls of
    /// the last span given (and at most the last 20 000), or nothing with [`Record::Off`].
    pub fn record(mut self, record: Record) -> Self {
        self.settings.record = Some(record);
        self.name_option("record");
        self
    }

    /// For `warm_up` after the breaker's first call, the circuit does not open whatever its
    /// window says; the outcomes are still recorded, so the first judgement after it sees them
    /// (opossum's `allowWarmUp`).
    pub fn warm_up(mut self, warm_up: Duration) -> Self {
        self.settings.warm_up = Some(warm_up);
        self.name_option("warm_up");
        self
    }

    /// Starts from `settings` instead of the defaults (the name stays as set).
    /// Every option is named, so [`Breaker::update`](crate::Breaker::update) given this builder
    /// changes them all.
    pub fn settings(mut self, settings: Settings) -> Self {
        self = self.starting_from(settings);
        self.named = u16::MAX >> (16 - OPTIONS.len());
        self
    }

    /// The builder holding `settings`, none of them named.
    pub(crate) fn starting_from(mut self, settings: Settings) -> Self {
        self.threshold = settings.threshold.percent();
        self.slow_threshold = settings.slow_threshold.map(Rate::percent);
        self.break_growth = settings.break_growth.map(BreakGrowth::factor);
        self.break_jitter = settings.break_jitter.map(Rate::percent);
        self.probe_threshold = settings.probe_threshold.map(Rate::percent);
        self.settings = settings;
        self
    }

    fn name_option(&mut self, option: &str) {
        if let Some(bit) = OPTIONS.iter().position(|o| *o == option) {
            self.named |= 1 << bit;
        }
    }

    /// The options a setter was called for, in the attribute's order.
    pub(crate) fn named(&self) -> Vec<&'static str> {
        OPTIONS
            .iter()
            .enumerate()
            .filter(|(bit, _)| self.named & (1 << bit) != 0)
            .map(|(_, option)| *option)
            .collect()
    }

    /// The values set, each checked alone (a percentage in range, a growth factor), and the
    /// options named: a change to lay over a live breaker's options, whose rules between
    /// options are checked once it is laid over them.
    pub(crate) fn change(self) -> Result<(Settings, Vec<&'static str>), ConfigError> {
        let named = self.named();
        Ok((self.values(false)?, named))
    }

    /// Checks every value and returns the configuration, or the first rule broken.
    pub fn build(self) -> Result<Config, ConfigError> {
        if self.name.trim().is_empty() {
            return Err(ConfigError::EmptyName);
        }
        let name = self.name.clone();
        let settings = self.values(true)?;
        settings.check()?;
        // A `record` not set is the process's default as it is now, so that the configuration
        // says what a breaker built from it will keep.
        Ok(Config::__checked(name, settings)
            .with_record_resolved(crate::core::config::default_record::default_record()))
    }

    /// The settings with the values kept as given converted; `whole` for a configuration of
    /// its own, where a slow threshold without `slow_call` has nothing to apply to.
    fn values(self, whole: bool) -> Result<Settings, ConfigError> {
        let mut settings = self.settings;
        settings.threshold = percentage("threshold", self.threshold)?;
        // Checked before the slow threshold's value: without `slow_call` there is nothing to
        // say about it but that.
        settings.slow_threshold = match self.slow_threshold {
            Some(_) if whole && settings.slow_call.is_none() => {
                return Err(ConfigError::SlowThresholdWithoutSlowCall);
            }
            Some(percent) => Some(percentage("slow_threshold", percent)?),
            None => None,
        };
        settings.break_growth = match self.break_growth {
            Some(value) => Some(BreakGrowth::from_factor(value).ok_or(
                ConfigError::BreakGrowth {
                    value,
                    max: MAX_BREAK_GROWTH,
                },
            )?),
            None => None,
        };
        settings.break_jitter = match self.break_jitter {
            Some(percent) => Some(percentage("break_jitter", percent)?),
            None => None,
        };
        settings.probe_threshold = match self.probe_threshold {
            Some(percent) => Some(percentage("probe_threshold", percent)?),
            None => None,
        };
        Ok(settings)
    }
}

fn percentage(field: &'static str, value: f64) -> Result<Rate, ConfigError> {
    Rate::from_percent(value).ok_or(ConfigError::Percentage { field, value })
}
