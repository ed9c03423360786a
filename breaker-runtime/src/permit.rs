//! Leave to make one call, and the duty to say how it ended.

use std::fmt;

use crate::clock::Nanos;
use crate::probes::ProbeId;
use crate::{Breaker, Ending, IsFailure, Verdict};

/// Leave from a [`Breaker`] to make one call; give it the call's outcome when the call ends.
///
/// This is the low-level API for integrations that cannot hand the breaker a future
/// ([`Breaker::call`] does all of this for you). Dropping a permit without an outcome means the
/// call was cancelled: nothing is recorded, and a half-open probe slot it held is freed.
///
/// ```
/// use breaker_runtime::{Breaker, Config, State};
///
/// let breaker = Breaker::new(Config::builder().count_window(2).build().unwrap());
/// for _ in 0..2 {
///     let permit = breaker.try_acquire().unwrap();
///     // ... the call fails ...
///     permit.failure();
/// }
/// assert_eq!(breaker.state(), State::Open);
/// ```
#[must_use = "a permit records nothing until given the call's outcome"]
pub struct Permit<'a> {
    pub(crate) breaker: &'a Breaker,
    kind: Kind,
    pub(crate) started: Option<Nanos>,
}

/// What a permit was admitted as.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// A call through the closed circuit of this generation.
    Closed { generation: u32 },
    /// A half-open probe holding slot `id`.
    Probe { generation: u32, id: ProbeId },
    /// A call that records nothing: the breaker is disabled.
    Unrecorded,
    /// The outcome was given.
    Done,
}

impl<'a> Permit<'a> {
    #[inline]
    pub(crate) fn new(breaker: &'a Breaker, kind: Kind, started: Option<Nanos>) -> Self {
        Permit {
            breaker,
            kind,
            started,
        }
    }

    /// The breaker that admitted the call.
    pub fn breaker(&self) -> &'a Breaker {
        self.breaker
    }

    /// Whether the call is a half-open probe: its outcome decides whether the circuit closes.
    pub fn is_probe(&self) -> bool {
        matches!(self.kind, Kind::Probe { .. })
    }

    /// Records how the call ended.
    #[inline]
    pub fn record(self, verdict: Verdict) {
        self.conclude(match verdict {
            Verdict::Success => Ending::Success,
            Verdict::Failure => Ending::Failure,
            Verdict::Ignore => Ending::Ignored,
        });
    }

    #[inline(always)]
    pub(crate) fn conclude(mut self, ending: Ending) {
        let kind = std::mem::replace(&mut self.kind, Kind::Done);
        self.breaker.finish(kind, self.started, ending);
    }

    /// Records the call's returned value, classified through [`IsFailure`].
    #[inline]
    pub fn record_value<T: IsFailure + ?Sized>(self, value: &T) {
        self.record(Verdict::of(value));
    }

    /// The dependency answered (a slow success if slow calls are detected and it took too long).
    #[inline]
    pub fn success(self) {
        self.record(Verdict::Success);
    }

    /// The dependency is unwell: a failure, a timeout or a panic.
    #[inline]
    pub fn failure(self) {
        self.record(Verdict::Failure);
    }

    /// Records nothing, and frees the probe slot if the call held one.
    #[inline]
    pub fn ignore(self) {
        self.record(Verdict::Ignore);
    }
}

impl Drop for Permit<'_> {
    #[inline]
    fn drop(&mut self) {
        if !matches!(self.kind, Kind::Done) {
            // Dropped without an outcome: the call was cancelled. A probe gives back its slot.
            let kind = std::mem::replace(&mut self.kind, Kind::Done);
            self.breaker.finish(kind, self.started, Ending::Cancelled);
        }
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("breaker", self.breaker.name())
            .field("kind", &self.kind)
            .finish()
    }
}
