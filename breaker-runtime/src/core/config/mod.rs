//! What a breaker is told: thresholds, window, timing and probing, validated once.
//!
//! The options themselves (names, grammar, defaults, limits and the rules between them) are
//! defined once in `breaker-options`, shared with the attribute; this is the runtime's compact
//! form of them, and the builder.

use std::fmt;
use std::time::Duration;

pub use breaker_options::{
    BreakGrowth, ConfigError, MAX_BREAK_GROWTH, MAX_COUNT_WINDOW, MAX_DURATION, MAX_MIN_CALLS,
    MAX_PROBES, MIN_TIME_WINDOW, Mode, Rate, Record, Settings, Window, WindowKind,
};

use crate::base::name::Name;
use crate::base::random;

mod builder;

pub use builder::ConfigBuilder;

pub(crate) mod default_record;

/// A breaker's validated configuration. Build one with [`Config::builder`]; the defaults are
/// those of the `#[circuit_breaker]` attribute.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Window};
///
/// let config = Config::builder()
///     .name("payments")
///     .threshold(25.0)
///     .time_window(Duration::from_secs(30))
///     .timeout(Duration::from_secs(2))
///     .build()?;
/// assert_eq!(config.window(), Window::Time(Duration::from_secs(30)));
/// assert_eq!(config.min_calls(), 10);
/// # Ok::<(), breaker_runtime::ConfigError>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct Config {
    name: Name,
    threshold: Rate,
    slow_threshold: Rate,
    /// `min_calls` (at most `MAX_MIN_CALLS`, 20 bits) in the low bits, `probes` (at most
    /// `MAX_PROBES`, 10 bits) from `PROBES_SHIFT`, and `SHADOW` for the shadow mode: one word
    /// where two were, which makes room for the break's growth and jitter in a breaker that
    /// must stay within 256 bytes.
    calls: u32,
    /// The break's growth factor in hundredths (200: doubling).
    break_growth: u16,
    /// The break's jitter in hundredths of a percent (1 000: 10%); 0 for none.
    break_jitter: u16,
    // Durations in nanoseconds, 0 meaning none (every configured duration is longer than zero):
    // half the size of `Option<Duration>`, for a breaker that is small enough to have thousands.
    /// A count window's size, or a time window's span with `TIME_WINDOW` set (and
    /// `FIXED_WINDOW` for a fixed one).
    window: u64,
    timeout: u64,
    break_duration: u64,
    max_break_duration: u64,
    slow_call: u64,
    /// What the flight recorder keeps: its span in whole seconds (rounded up), `RECORD_OFF`
    /// or `RECORD_DEFAULT` (the process's default, not yet read).
    record: u32,
    /// How long after its first call the circuit does not open. Not among the live words (no
    /// call reads it, only the judgement that would open the circuit): a live breaker keeps
    /// it beside its warm-up (`breaker/warm_up.rs`).
    warm_up: u64,
    /// The half-open probes' rate rule in millionths, 0 for none (every probe must succeed).
    /// Not among the live words either: a live breaker's probe slots keep the rule they judge
    /// by, and the breaker the one set (`breaker/probe_rule.rs`).
    probe_threshold: u32,
}

const RECORD_OFF: u32 = 0;
/// Above the longest span (`MAX_DURATION`, 2 592 000 s), and within `RECORD_BITS`.
const RECORD_DEFAULT: u32 = (1 << RECORD_BITS) - 1;
const RECORD_BITS: u32 = 22;
/// Where the rates and the recorder's span sit in the first word: each rate in millionths
/// (at most 1 000 000, 20 bits), then the span in seconds.
const RATE_BITS: u64 = (1 << 20) - 1;
const SLOW_RATE_SHIFT: u32 = 20;
const RECORD_SHIFT: u32 = 40;
const _: () = assert!(MAX_DURATION.as_secs() < RECORD_DEFAULT as u64);

/// A span in whole seconds, rounded up, in a `const` context.
const fn record_secs(span: Duration) -> u32 {
    let secs = span.as_secs() + if span.subsec_nanos() > 0 { 1 } else { 0 };
    if secs >= RECORD_DEFAULT as u64 {
        RECORD_DEFAULT - 1
    } else {
        secs as u32
    }
}

/// How many words [`Config::words`] takes, and where each option is among them.
pub(crate) const WORDS: usize = 7;
pub(crate) const WORD_CALLS: usize = 1;
pub(crate) const WORD_WINDOW: usize = 2;
pub(crate) const WORD_TIMEOUT: usize = 3;
pub(crate) const WORD_BREAK: usize = 4;
pub(crate) const WORD_SLOW_CALL: usize = 6;

/// Marks `Config::window` as a time window's span.
const TIME_WINDOW: u64 = 1 << 63;
/// Marks a time window's span as a fixed window's. A span is at most `MAX_DURATION` (under
/// 2^52 ns), so both marks are clear of it.
const FIXED_WINDOW: u64 = 1 << 62;
const _: () = assert!((MAX_DURATION.as_nanos() as u64) < FIXED_WINDOW);

/// Where `probes` begins in `Config::calls`, above `min_calls`.
const PROBES_SHIFT: u32 = 21;
const MIN_CALLS_BITS: u32 = (1 << PROBES_SHIFT) - 1;
const PROBES_BITS: u32 = 0x3ff << PROBES_SHIFT;
/// Marks `Config::calls` of a breaker that starts in shadow mode.
const SHADOW: u32 = 1 << 31;
const _: () = assert!(MAX_MIN_CALLS <= MIN_CALLS_BITS && MAX_PROBES <= PROBES_BITS >> PROBES_SHIFT);

/// A rate in millionths as hundredths of a percent (rounded), in a `const` context.
const fn basis_points(rate: Rate) -> u16 {
    // At most 1 000 000 ppm, so at most 10 000.
    (rate.ppm().div_ceil(100)) as u16
}

/// Nanoseconds of `d`, saturating at `u64::MAX` (about 584 years), in a `const` context.
const fn nanos(d: Duration) -> u64 {
    let n = d.as_nanos();
    if n > u64::MAX as u128 {
        u64::MAX
    } else {
        n as u64
    }
}

const fn nanos_or_zero(d: Option<Duration>) -> u64 {
    match d {
        Some(d) => nanos(d),
        None => 0,
    }
}

/// The window a [`Config::words`] window word describes.
pub(crate) fn window_of(word: u64) -> Window {
    if word & TIME_WINDOW == 0 {
        // A count window's size is at most MAX_COUNT_WINDOW, so the cast is exact.
        Window::Count(word as u32)
    } else {
        Window::Time(Duration::from_nanos(word & !(TIME_WINDOW | FIXED_WINDOW)))
    }
}

/// The kind of window a [`Config::words`] window word describes.
pub(crate) fn window_kind_of(word: u64) -> WindowKind {
    if word & FIXED_WINDOW == 0 {
        WindowKind::Sliding
    } else {
        WindowKind::Fixed
    }
}

fn nonzero_duration(n: u64) -> Option<Duration> {
    (n > 0).then(|| Duration::from_nanos(n))
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.name)
            .field("threshold", &self.threshold)
            .field("window", &self.window())
            .field("window_kind", &self.window_kind())
            .field("min_calls", &self.min_calls())
            .field("timeout", &self.timeout())
            .field("break_duration", &self.break_duration())
            .field("max_break_duration", &self.max_break_duration())
            .field("break_growth", &self.break_growth())
            .field("break_jitter", &self.break_jitter())
            .field("probes", &self.probes())
            .field("probe_threshold", &self.probe_threshold())
            .field("mode", &self.mode())
            .field("slow_call", &self.slow_call())
            .field("slow_threshold", &self.slow_threshold)
            .field("record", &self.record())
            .finish()
    }
}

impl Default for Config {
    /// The defaults, as [`Config::builder`] builds them (`record` the process's default now).
    fn default() -> Self {
        Config::DEFAULT.with_record_resolved(default_record::default_record())
    }
}

impl Config {
    const DEFAULT: Config = Config::__checked(Name::from_static("breaker"), Settings::DEFAULT);

    /// A builder starting from the defaults: 50%, the last 20 calls, a 10 s timeout, a 30 s
    /// break, one probe, no slow-call detection.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder::default()
    }

    /// A configuration from settings already checked ([`Settings::check`]), by the attribute
    /// at compile time or by the builder.
    #[doc(hidden)]
    pub const fn __checked(name: Name, settings: Settings) -> Self {
        let window = match (settings.window, settings.window_kind) {
            (Window::Count(n), _) => n as u64,
            (Window::Time(d), kind) => {
                TIME_WINDOW
                    | (nanos(d) & !(TIME_WINDOW | FIXED_WINDOW))
                    | match kind {
                        WindowKind::Sliding => 0,
                        WindowKind::Fixed => FIXED_WINDOW,
                    }
            }
        };
        Config {
            name,
            threshold: settings.threshold,
            slow_threshold: settings.slow_threshold(),
            calls: (settings.min_calls() & MIN_CALLS_BITS)
                | ((settings.probes << PROBES_SHIFT) & PROBES_BITS)
                | match settings.mode {
                    Mode::Enforce => 0,
                    Mode::Shadow => SHADOW,
                },
            break_growth: settings.break_growth().hundredths(),
            break_jitter: match settings.break_jitter {
                Some(jitter) => basis_points(jitter),
                None => 0,
            },
            window,
            timeout: nanos_or_zero(settings.timeout),
            break_duration: nanos(settings.break_duration),
            max_break_duration: nanos_or_zero(settings.max_break_duration),
            slow_call: nanos_or_zero(settings.slow_call),
            record: match settings.record {
                None => RECORD_DEFAULT,
                Some(Record::Off) => RECORD_OFF,
                // At least a second (checked), so never mistaken for either mark.
                Some(Record::Last(span)) => record_secs(span),
            },
            warm_up: nanos_or_zero(settings.warm_up),
            probe_threshold: match settings.probe_threshold {
                Some(rate) => rate.ppm(),
                None => 0,
            },
        }
    }

    /// The settings this configuration was built from, its name aside, with the defaults the
    /// builder filled in said (`min_calls` the window's, `record` the process's).
    ///
    /// ```
    /// use breaker_runtime::{Config, Record, Settings};
    ///
    /// let config = Config::builder().probes(3).build().unwrap();
    /// assert_eq!(
    ///     config.settings(),
    ///     Settings { probes: 3, min_calls: Some(20), record: Some(Record::DEFAULT), ..Settings::DEFAULT },
    /// );
    /// ```
    pub fn settings(&self) -> Settings {
        Settings {
            threshold: self.threshold,
            window: self.window(),
            window_kind: self.window_kind(),
            min_calls: Some(self.min_calls()),
            timeout: self.timeout(),
            break_duration: self.break_duration(),
            max_break_duration: self.max_break_duration(),
            break_growth: self.max_break_duration().map(|_| self.break_growth()),
            break_jitter: self.break_jitter(),
            probes: self.probes(),
            probe_threshold: self.probe_threshold(),
            slow_call: self.slow_call(),
            slow_threshold: self.slow_call().map(|_| self.slow_threshold),
            mode: self.mode(),
            record: self.record(),
            warm_up: self.warm_up(),
        }
    }

    /// A builder holding this configuration's options and name, to change some of them: the
    /// options not set again keep their values here. A `min_calls` equal to its window's
    /// default is left to follow the window, so a new window brings its own default, as in the
    /// attribute.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::Config;
    ///
    /// let built = Config::builder().timeout(Duration::from_secs(2)).build()?;
    /// let lower = built.to_builder().threshold(30.0).build()?;
    /// assert_eq!(lower.threshold().percent(), 30.0);
    /// assert_eq!(lower.timeout(), Some(Duration::from_secs(2)), "kept, not the builder's 10 s");
    /// # Ok::<(), breaker_runtime::ConfigError>(())
    /// ```
    pub fn to_builder(&self) -> ConfigBuilder {
        let mut settings = self.settings();
        let default = Settings {
            min_calls: None,
            ..settings
        };
        if settings.min_calls() == default.min_calls() {
            settings.min_calls = None;
        }
        Config::builder()
            .name(self.name.clone())
            .starting_from(settings)
    }

    /// The same configuration under another name.
    pub fn with_name(mut self, name: impl Into<Name>) -> Self {
        self.name = name.into();
        self
    }

    /// The same configuration in `mode`: how a breaker tells the mode it runs in.
    pub(crate) fn with_mode(mut self, mode: Mode) -> Self {
        self.calls = match mode {
            Mode::Shadow => self.calls | SHADOW,
            Mode::Enforce => self.calls & !SHADOW,
        };
        self
    }

    /// The breaker's name.
    pub fn name(&self) -> &Name {
        &self.name
    }
    /// The failure rate at which the circuit opens.
    pub fn threshold(&self) -> Rate {
        self.threshold
    }
    /// The window the rates are judged over.
    pub fn window(&self) -> Window {
        window_of(self.window)
    }
    /// Whether the time window slides or clears at each edge of its span (a count window
    /// always slides).
    pub fn window_kind(&self) -> WindowKind {
        window_kind_of(self.window)
    }
    /// How many outcomes the window must hold before the rates are judged.
    pub fn min_calls(&self) -> u32 {
        self.calls & MIN_CALLS_BITS
    }
    /// How long a call may run before it is cancelled and counted as a failure.
    pub fn timeout(&self) -> Option<Duration> {
        nonzero_duration(self.timeout)
    }
    /// How long the circuit stays open before it lets a probe through.
    pub fn break_duration(&self) -> Duration {
        Duration::from_nanos(self.break_duration)
    }
    /// The cap on the break as it grows after failed probes; `None` means it never grows.
    pub fn max_break_duration(&self) -> Option<Duration> {
        nonzero_duration(self.max_break_duration)
    }
    /// How much longer each break gets after a failed probe in a row (with
    /// `max_break_duration`).
    pub fn break_growth(&self) -> BreakGrowth {
        BreakGrowth::from_hundredths(self.break_growth)
    }
    /// The most of a break added to it at random, to the hundredth of a percent; `None` for
    /// none.
    pub fn break_jitter(&self) -> Option<Rate> {
        (self.break_jitter > 0).then(|| Rate::from_ppm(u32::from(self.break_jitter) * 100))
    }
    /// How many probes may run at once in half-open, and how many successes in a row close it.
    pub fn probes(&self) -> u32 {
        (self.calls & PROBES_BITS) >> PROBES_SHIFT
    }
    /// The failure (and slow-call) rate of a half-open period's `probes` probes, judged once all
    /// have answered, at which the circuit opens again; `None` for the default rule (every
    /// probe must succeed, and the first failure opens it).
    pub fn probe_threshold(&self) -> Option<Rate> {
        (self.probe_threshold > 0).then(|| Rate::from_ppm(self.probe_threshold))
    }
    /// The same configuration with another probe rule: how a live breaker tells the one it
    /// keeps.
    pub(crate) fn with_probe_threshold(mut self, threshold: Option<Rate>) -> Self {
        self.probe_threshold = threshold.map_or(0, Rate::ppm);
        self
    }
    /// The mode a breaker built from it starts in; an operator may switch a live one
    /// ([`Breaker::set_mode`](crate::Breaker::set_mode)).
    pub fn mode(&self) -> Mode {
        Mode::shadow_if(self.calls & SHADOW != 0)
    }
    /// How long a successful call may take before it counts as slow; `None` turns detection off.
    pub fn slow_call(&self) -> Option<Duration> {
        nonzero_duration(self.slow_call)
    }
    /// The slow-call rate at which the circuit opens.
    pub fn slow_threshold(&self) -> Rate {
        self.slow_threshold
    }
    /// How long after its first call the circuit does not open, whatever its window says;
    /// `None` for no warm-up.
    pub fn warm_up(&self) -> Option<Duration> {
        nonzero_duration(self.warm_up)
    }

    /// The same configuration with another warm-up: how a live breaker tells the one it keeps.
    pub(crate) fn with_warm_up(mut self, warm_up: Option<Duration>) -> Self {
        self.warm_up = nanos_or_zero(warm_up);
        self
    }

    /// What the flight recorder keeps, its span in whole seconds (rounded up); `None` for the
    /// process's default, which a breaker reads when it is built
    /// ([`trace::set_default_record`](crate::trace::set_default_record)): the configuration of
    /// a live breaker always says which.
    pub fn record(&self) -> Option<Record> {
        match self.record {
            RECORD_DEFAULT => None,
            RECORD_OFF => Some(Record::Off),
            secs => Some(Record::Last(Duration::from_secs(u64::from(secs)))),
        }
    }

    /// The same configuration with the process's default `record` read, if it names none.
    pub(crate) fn with_record_resolved(mut self, default: Record) -> Config {
        if self.record == RECORD_DEFAULT {
            self.record = match default {
                Record::Off => RECORD_OFF,
                Record::Last(span) => record_secs(span),
            };
        }
        self
    }

    /// The break after `failed_probes` failed probes in a row, in nanoseconds: grown by the
    /// growth factor for each, up to the cap, then the jitter added (so a break is never
    /// shorter than `break_duration`, and at most the cap plus its jitter).
    pub(crate) fn break_after(&self, failed_probes: u32) -> u64 {
        let mut nanos = u128::from(self.break_duration);
        if self.max_break_duration > 0 {
            let cap = u128::from(self.max_break_duration);
            let growth = u128::from(self.break_growth);
            // Whole nanoseconds at every step, so doubling a 100 ms break gives exactly 200 ms.
            for _ in 0..failed_probes {
                if nanos >= cap || growth <= 100 {
                    break;
                }
                nanos = nanos * growth / 100;
            }
            nanos = nanos.min(cap);
        }
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        if self.break_jitter == 0 {
            return nanos;
        }
        nanos.saturating_add(
            self.most_jitter(nanos)
                .mul_f64(random::fraction())
                .as_nanos() as u64,
        )
    }

    /// The longest a break can last: the cap (or the break, without growth) and its jitter.
    pub fn longest_break(&self) -> Duration {
        let longest = self.max_break_duration.max(self.break_duration);
        Duration::from_nanos(longest).saturating_add(self.most_jitter(longest))
    }

    /// The most the jitter adds to a break of `nanos`.
    fn most_jitter(&self, nanos: u64) -> Duration {
        // At most the break itself (10 000 hundredths of a percent), so it cannot overflow.
        Duration::from_nanos((u128::from(nanos) * u128::from(self.break_jitter) / 10_000) as u64)
    }

    /// The configuration as the words a live breaker keeps it in ([`LiveConfig`]): every
    /// option but the name, each word at its index below.
    ///
    /// [`LiveConfig`]: crate::core::live_config::LiveConfig
    pub(crate) fn words(&self) -> [u64; WORDS] {
        [
            u64::from(self.threshold.ppm())
                | u64::from(self.slow_threshold.ppm()) << SLOW_RATE_SHIFT
                | u64::from(self.record) << RECORD_SHIFT,
            u64::from(self.calls)
                | u64::from(self.break_growth) << 32
                | u64::from(self.break_jitter) << 48,
            self.window,
            self.timeout,
            self.break_duration,
            self.max_break_duration,
            self.slow_call,
        ]
    }

    /// Whether `failures` and `slow` of `calls` outcomes reach the thresholds the configuration
    /// in `words` sets, once the window holds `min_calls`: the rule a closed circuit opens by,
    /// read from the words without building a configuration (and cloning its name).
    pub(crate) fn trips(words: &[u64; WORDS], calls: u32, failures: u32, slow: u32) -> bool {
        let threshold = Rate::from_ppm((words[0] & RATE_BITS) as u32);
        let slow_threshold = Rate::from_ppm((words[0] >> SLOW_RATE_SHIFT & RATE_BITS) as u32);
        let min_calls = words[WORD_CALLS] as u32 & MIN_CALLS_BITS;
        calls >= min_calls
            && (threshold.reached_by(failures, calls)
                || (words[WORD_SLOW_CALL] > 0 && slow_threshold.reached_by(slow, calls)))
    }

    /// The configuration `words` hold, under `name`: the inverse of [`words`](Self::words).
    pub(crate) fn from_words(name: Name, words: [u64; WORDS]) -> Config {
        let [
            rates,
            calls,
            window,
            timeout,
            break_duration,
            max_break_duration,
            slow_call,
        ] = words;
        Config {
            name,
            threshold: Rate::from_ppm((rates & RATE_BITS) as u32),
            slow_threshold: Rate::from_ppm((rates >> SLOW_RATE_SHIFT & RATE_BITS) as u32),
            calls: calls as u32,
            break_growth: (calls >> 32) as u16,
            break_jitter: (calls >> 48) as u16,
            window,
            timeout,
            break_duration,
            max_break_duration,
            slow_call,
            record: (rates >> RECORD_SHIFT) as u32 & RECORD_DEFAULT,
            // Not among the words: the breaker adds the warm-up and probe rule it keeps.
            warm_up: 0,
            probe_threshold: 0,
        }
    }

    /// Whether everything but the name agrees: two declarations of one breaker must.
    pub(crate) fn same_settings(&self, other: &Config) -> bool {
        self.clone().with_name(other.name.clone()) == *other
    }
}
