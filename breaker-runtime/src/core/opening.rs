//! Why a circuit last opened: the rule, and the window that met it, kept past the moment the
//! window is left behind so that an open breaker can still say what opened it.

use std::fmt;

use tokio::time::Instant;

use crate::base::clock::{self, Age, Nanos};
use crate::core::config::{
    Config, Rate, WORD_WINDOW, Window, WindowKind, window_kind_of, window_of,
};
use crate::core::state::State;
use crate::core::window::Tally;

/// What opened the circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenReason {
    /// The window's failure rate reached the threshold.
    FailureRate,
    /// The window's slow-call rate reached the slow threshold.
    SlowRate,
    /// A probe failed, so the circuit opened again (for a longer break, if it grows).
    ProbeFailed,
    /// An operator forced it open.
    Forced,
    /// An order from outside opened it ([`Breaker::apply_order`](crate::Breaker::apply_order)):
    /// another process's evidence, which this one does not hold.
    Ordered,
    /// A [drill](crate::Breaker::drill) holds it open, on an operator's request, until it
    /// ends.
    Drill,
}

impl OpenReason {
    /// The reason as a lowercase word, as logs and JSON show it.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenReason::FailureRate => "failure_rate",
            OpenReason::SlowRate => "slow_rate",
            OpenReason::ProbeFailed => "probe_failed",
            OpenReason::Forced => "forced",
            OpenReason::Ordered => "ordered",
            OpenReason::Drill => "drill",
        }
    }
}

/// The last time a circuit opened, and the evidence: see [`Snapshot::last_opened`].
///
/// The counts are those of the window that tripped the circuit, and the threshold and window
/// are the options that judged them, as they were at that moment: a reconfiguration afterwards
/// does not rewrite what opened it. A failed probe reopens it on the same evidence, so after
/// [`OpenReason::ProbeFailed`] they are still those of the trip that began the run of breaks;
/// an opening by an operator, a drill or an order has none.
///
/// [`Snapshot::last_opened`]: crate::Snapshot::last_opened
///
/// ```
/// use breaker_runtime::{Breaker, Config, OpenReason, State};
///
/// let breaker = Breaker::new(Config::builder().name("geo").count_window(4).build().unwrap());
/// for fails in [true, false, true, true] {
///     let _ = breaker.try_acquire().map(|p| if fails { p.failure() } else { p.success() });
/// }
/// let snapshot = breaker.snapshot();
/// assert_eq!(snapshot.state, State::Open);
/// assert_eq!((snapshot.calls, snapshot.failures), (4, 3), "the window that opened it");
/// let opened = snapshot.last_opened.unwrap();
/// assert_eq!(opened.reason, OpenReason::FailureRate);
/// assert_eq!(
///     opened.to_string(),
///     "failure rate 75% reached the threshold of 50% over 4 calls (3 failed, 0 slow)"
/// );
/// ```
///
/// Its `Debug` shows `at` as its distance from the moment it is printed, on tokio's clock
/// (`at: 12.3s ago`); every other field prints as a derived `Debug` would.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Opening {
    /// The rule that opened it.
    pub reason: OpenReason,
    /// When, on tokio's clock.
    pub at: Instant,
    /// Outcomes in the window that tripped it.
    pub calls: u32,
    /// Failures among them.
    pub failures: u32,
    /// Slow successes among them.
    pub slow: u32,
    /// Failures as a percentage of the window's outcomes.
    pub failure_rate: f64,
    /// Slow successes as a percentage of the window's outcomes.
    pub slow_rate: f64,
    /// The threshold that was reached, in percent, as it was when the circuit opened (the slow
    /// threshold for [`OpenReason::SlowRate`]; 0 for [`OpenReason::Forced`],
    /// [`OpenReason::Drill`] and [`OpenReason::Ordered`]).
    pub threshold: f64,
    /// The window the counts were judged over, as it was when the circuit opened; `None` for
    /// an opening no window decided ([`OpenReason::Forced`], [`OpenReason::Drill`],
    /// [`OpenReason::Ordered`]).
    pub window: Option<Window>,
    /// Whether that window slid or was fixed (sliding for an opening no window decided).
    pub window_kind: WindowKind,
    /// The message of the counted failure the circuit opened on (its error's `Display`), when
    /// the call went through the attribute, [`Breaker::call`](crate::Breaker::call) with an
    /// error type the crate knows, or [`Breaker::note_failure`](crate::Breaker::note_failure).
    pub last_failure: Option<String>,
    /// The rate rule behind the counts (a failed probe reopens on the trip's evidence).
    tripped_by: Option<OpenReason>,
}

impl fmt::Debug for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Taken apart whole, so that a field added later cannot be left out of the output.
        let Opening {
            reason,
            at,
            calls,
            failures,
            slow,
            failure_rate,
            slow_rate,
            threshold,
            window,
            window_kind,
            last_failure,
            tripped_by,
        } = self;
        f.debug_struct("Opening")
            .field("reason", reason)
            .field("at", &Age::of(*at))
            .field("calls", calls)
            .field("failures", failures)
            .field("slow", slow)
            .field("failure_rate", failure_rate)
            .field("slow_rate", slow_rate)
            .field("threshold", threshold)
            .field("window", window)
            .field("window_kind", window_kind)
            .field("last_failure", last_failure)
            .field("tripped_by", tripped_by)
            .finish()
    }
}

/// The rule and its counts, as a sentence; the failure's message is the field beside it.
impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let evidence = |f: &mut fmt::Formatter<'_>, what: &str, rate: f64| {
            write!(
                f,
                "{what} {} reached the threshold of {} over {} calls ({} failed, {} slow)",
                Percent(rate),
                Percent(self.threshold),
                self.calls,
                self.failures,
                self.slow
            )
        };
        let rule = |f: &mut fmt::Formatter<'_>, rule: OpenReason| match rule {
            OpenReason::SlowRate => evidence(f, "slow-call rate", self.slow_rate),
            _ => evidence(f, "failure rate", self.failure_rate),
        };
        match (self.reason, self.tripped_by) {
            (OpenReason::Forced, _) => f.write_str("forced open by an operator"),
            (OpenReason::Drill, _) => f.write_str("held open for a drill by an operator"),
            (OpenReason::Ordered, _) => {
                f.write_str("opened on another process's evidence (an order from outside)")
            }
            (OpenReason::ProbeFailed, Some(tripped_by)) => {
                f.write_str("a probe failed; it first opened when the ")?;
                rule(f, tripped_by)
            }
            (OpenReason::ProbeFailed, None) => f.write_str("a probe failed"),
            (reason, _) => rule(f, reason),
        }
    }
}

/// A percentage with no more digits than it needs: 75%, 66.7%.
struct Percent(f64);

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round() / 10.0;
        if tenths.fract() == 0.0 {
            write!(f, "{tenths:.0}%")
        } else {
            write!(f, "{tenths:.1}%")
        }
    }
}

/// What a breaker keeps of its last opening, boxed under its cold lock: the evidence, and the
/// message of the failure it opened on once the caller has told it.
pub(crate) struct Opened {
    pub(crate) evidence: Evidence,
    pub(crate) last_failure: Option<Box<str>>,
}

impl Opened {
    /// The opening as the snapshot and a rejection's `Display` tell it.
    pub(crate) fn opening(&self) -> Opening {
        self.evidence.opening(self.last_failure.as_deref())
    }
}

/// The most of a failure's message kept: enough to act on, not a whole response body.
pub(crate) const MESSAGE_LIMIT: usize = 240;

/// `message`, cut at a character boundary at most [`MESSAGE_LIMIT`] bytes in, with `…`.
pub(crate) fn clipped(mut message: String) -> Box<str> {
    if message.len() > MESSAGE_LIMIT {
        let mut end = MESSAGE_LIMIT;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message.into_boxed_str()
}

/// The evidence as the breaker keeps it, under its cold lock: cheap to store on a transition.
#[derive(Clone, Copy)]
pub(crate) struct Evidence {
    reason: OpenReason,
    /// The rate rule the counts met: the trip's, carried on by a failed probe.
    tripped_by: Option<OpenReason>,
    at: Nanos,
    tally: Tally,
    /// The state period the opening began, so a snapshot shows the counts only while that
    /// period lasts.
    generation: u32,
    /// The threshold the counts reached, as configured when the circuit tripped (0 for an
    /// opening no window decided): the trip's, carried on by a failed probe.
    threshold: Rate,
    /// The window they were counted in then, as its configuration word (0 for none: no window
    /// has size 0), which keeps the evidence within 40 bytes.
    window: u64,
}

impl Evidence {
    /// The evidence for entering `to` from `from`, or `None` if `to` is not an opening.
    /// `tally` is the window judged (empty unless the circuit tripped), by `config` (the
    /// configuration in force at an opening); `before` is the last evidence, which a failed
    /// probe carries on.
    pub(crate) fn of(
        (from, to): (State, State),
        tally: Tally,
        (at, generation): (Nanos, u32),
        before: Option<Evidence>,
        (config, ordered): (Option<&Config>, bool),
    ) -> Option<Evidence> {
        const NONE: (Rate, u64) = (Rate::from_ppm(0), 0);
        let (reason, tripped_by, tally, (threshold, window)) = match (from, to) {
            (_, State::Open) if ordered => (OpenReason::Ordered, None, Tally::EMPTY, NONE),
            (State::Closed, State::Open) => {
                let threshold = config.map_or(Rate::HUNDRED_PERCENT, Config::threshold);
                let (reason, reached) = if threshold.reached_by(tally.failures, tally.calls) {
                    (OpenReason::FailureRate, threshold)
                } else {
                    let slow = config.map_or(Rate::HUNDRED_PERCENT, Config::slow_threshold);
                    (OpenReason::SlowRate, slow)
                };
                let window = config.map_or(0, |c| c.words()[WORD_WINDOW]);
                (reason, Some(reason), tally, (reached, window))
            }
            (_, State::Open) => match before {
                Some(before) => (
                    OpenReason::ProbeFailed,
                    before.tripped_by,
                    before.tally,
                    (before.threshold, before.window),
                ),
                None => (OpenReason::ProbeFailed, None, Tally::EMPTY, NONE),
            },
            (_, State::ForcedOpen) => (OpenReason::Forced, None, Tally::EMPTY, NONE),
            _ => return None,
        };
        Some(Evidence {
            reason,
            tripped_by,
            at,
            tally,
            generation,
            threshold,
            window,
        })
    }

    /// Why the circuit opened.
    pub(crate) fn reason(&self) -> OpenReason {
        self.reason
    }

    /// Marks a forced opening as a drill's.
    pub(crate) fn drilled(&mut self) {
        if self.reason == OpenReason::Forced {
            self.reason = OpenReason::Drill;
        }
    }

    /// The counts to show for the state period `generation`: the window that opened it, while
    /// that opening lasts.
    pub(crate) fn tally_during(&self, generation: u32) -> Option<Tally> {
        (self.generation == generation).then_some(self.tally)
    }

    /// Whether this opening began the state period `generation`.
    pub(crate) fn began(&self, generation: u32) -> bool {
        self.generation == generation
    }

    pub(crate) fn opening(&self, last_failure: Option<&str>) -> Opening {
        let Tally {
            calls,
            failures,
            slow,
        } = self.tally;
        let threshold = self.threshold.percent();
        Opening {
            reason: self.reason,
            at: clock::to_instant(self.at),
            calls,
            failures,
            slow,
            failure_rate: self.tally.failure_rate(),
            slow_rate: self.tally.slow_rate(),
            threshold,
            window: (self.window != 0).then(|| window_of(self.window)),
            window_kind: window_kind_of(self.window),
            last_failure: last_failure.map(str::to_owned),
            tripped_by: self.tripped_by,
        }
    }
}
