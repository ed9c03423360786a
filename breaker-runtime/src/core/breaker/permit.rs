//! Leave to make one call, and the duty to say how it ended: borrowed from the breaker
//! ([`Permit`]) or holding it ([`OwnedPermit`]), for futures that must be `'static`.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::base::clock::{self, Nanos};
use crate::core::breaker::Breaker;
use crate::core::breaker::kind::Kind;
use crate::core::breaker::observer::Ending;
use crate::outcome::classify::{IsFailure, Verdict};

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
    held: Held<&'a Breaker>,
}

/// A [`Permit`] that holds its breaker, so it can live in a `'static` future (a tower service's
/// response future, a spawned task): what [`Breaker::try_acquire_owned`] hands out, the way
/// tokio's `Semaphore::acquire_owned` hands out an owned semaphore permit.
///
/// It behaves exactly like a [`Permit`]: give it the call's outcome; dropped without one, the
/// call counts as cancelled, nothing is recorded and a probe slot it held is freed.
///
/// ```
/// use std::sync::Arc;
/// use breaker_runtime::{Breaker, Config, Verdict};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let breaker = Arc::new(Breaker::new(Config::default()));
/// let permit = breaker.try_acquire_owned().unwrap();
/// let answer = tokio::spawn(permit.run(async { Ok::<_, std::io::Error>(7) }, Verdict::of));
/// assert_eq!(answer.await.unwrap().unwrap().unwrap(), 7);
/// assert_eq!(breaker.snapshot().calls, 1);
/// # }
/// ```
#[must_use = "a permit records nothing until given the call's outcome"]
pub struct OwnedPermit {
    held: Held<Arc<Breaker>>,
}

/// The part both permits share: the admission, and the duty to end it exactly once, whether
/// the breaker is borrowed or held.
struct Held<B: Deref<Target = Breaker>> {
    breaker: B,
    kind: Kind,
    started: Option<Nanos>,
}

impl<B: Deref<Target = Breaker>> Held<B> {
    #[inline(always)]
    fn conclude(&mut self, ending: Ending) {
        let kind = std::mem::replace(&mut self.kind, Kind::Done);
        self.breaker.finish(kind, self.started, ending);
    }

    /// Marks the call as held by an injected delay, and starts its clock if the breaker reads
    /// none for its calls: the delay counts against the timeout from the call's start.
    fn delay(&mut self) {
        self.kind = self.kind.delayed();
        if self.started.is_none() {
            self.started = Some(clock::now());
        }
    }

    /// Takes the delay's mark off, for an end announced otherwise.
    fn undelay(&mut self) {
        self.kind = self.kind.undelayed().0;
    }

    /// Hands the admission over to another holder, leaving nothing to end here.
    #[inline(always)]
    fn take(&mut self) -> (Kind, Option<Nanos>) {
        (std::mem::replace(&mut self.kind, Kind::Done), self.started)
    }
}

impl<B: Deref<Target = Breaker>> Drop for Held<B> {
    #[inline]
    fn drop(&mut self) {
        if !matches!(self.kind, Kind::Done) {
            // Dropped without an outcome: the call was cancelled. A probe gives back its slot.
            self.conclude(Ending::Cancelled);
        }
    }
}

/// What the call path needs of a permit, borrowed or owned.
pub(crate) trait Admitted: Sized {
    fn breaker(&self) -> &Breaker;
    fn started(&self) -> Option<Nanos>;
    /// What the call was admitted as.
    fn kind(&self) -> &Kind;
    /// Marks the call as held by an injected delay.
    fn delay(&mut self);
    /// Takes the delay's mark off.
    fn undelay(&mut self);
    fn conclude(self, ending: Ending);
    /// Concludes a failure, and tells the breaker what it said ([`Breaker::note_failure`]).
    fn conclude_noting(self, ending: Ending, failure: &dyn std::fmt::Display);
}

impl Admitted for Permit<'_> {
    fn kind(&self) -> &Kind {
        &self.held.kind
    }
    fn delay(&mut self) {
        self.held.delay();
    }
    fn undelay(&mut self) {
        self.held.undelay();
    }
    #[inline(always)]
    fn breaker(&self) -> &Breaker {
        self.held.breaker
    }
    #[inline(always)]
    fn started(&self) -> Option<Nanos> {
        self.held.started
    }
    #[inline(always)]
    fn conclude(mut self, ending: Ending) {
        self.held.conclude(ending);
    }
    fn conclude_noting(mut self, ending: Ending, failure: &dyn std::fmt::Display) {
        self.held.conclude(ending);
        self.held.breaker.note_failure(failure);
    }
}

impl Admitted for OwnedPermit {
    fn kind(&self) -> &Kind {
        &self.held.kind
    }
    fn delay(&mut self) {
        self.held.delay();
    }
    fn undelay(&mut self) {
        self.held.undelay();
    }
    #[inline(always)]
    fn breaker(&self) -> &Breaker {
        &self.held.breaker
    }
    #[inline(always)]
    fn started(&self) -> Option<Nanos> {
        self.held.started
    }
    #[inline(always)]
    fn conclude(mut self, ending: Ending) {
        self.held.conclude(ending);
    }
    fn conclude_noting(mut self, ending: Ending, failure: &dyn std::fmt::Display) {
        self.held.conclude(ending);
        self.held.breaker.note_failure(failure);
    }
}

impl Ending {
    /// How a call the caller classified as `verdict` ended.
    #[inline(always)]
    pub(crate) fn of(verdict: Verdict) -> Ending {
        match verdict {
            Verdict::Success => Ending::Success,
            Verdict::Failure => Ending::Failure,
            Verdict::Ignore => Ending::Ignored,
        }
    }
}

/// The outcome methods, one text for both permits.
macro_rules! outcome_methods {
    () => {
        /// Whether the call is a half-open probe: its outcome decides whether the circuit closes.
        pub fn is_probe(&self) -> bool {
            matches!(
                self.held.kind,
                Kind::Probe { .. } | Kind::DelayedProbe { .. }
            )
        }

        /// Records how the call ended.
        #[inline]
        pub fn record(self, verdict: Verdict) {
            Admitted::conclude(self, Ending::of(verdict));
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
    };
}

impl<'a> Permit<'a> {
    #[inline]
    pub(crate) fn new(breaker: &'a Breaker, kind: Kind, started: Option<Nanos>) -> Self {
        Permit {
            held: Held {
                breaker,
                kind,
                started,
            },
        }
    }

    /// The admission, handed over to whoever ends it next (see [`OwnedPermit::from_parts`]).
    #[inline]
    pub(crate) fn into_parts(mut self) -> (Kind, Option<Nanos>) {
        self.held.take()
    }

    /// The breaker that admitted the call.
    pub fn breaker(&self) -> &'a Breaker {
        self.held.breaker
    }

    outcome_methods!();
}

impl OwnedPermit {
    /// The admission of a [`Permit`] of `breaker`, taken apart with [`Permit::into_parts`].
    #[inline]
    pub(crate) fn from_parts(breaker: Arc<Breaker>, kind: Kind, started: Option<Nanos>) -> Self {
        OwnedPermit {
            held: Held {
                breaker,
                kind,
                started,
            },
        }
    }

    /// The breaker that admitted the call.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.held.breaker
    }

    /// Starts the call's clock again, now: for a permit taken ahead of its work, as a queue
    /// consumer takes its probe permits before it fetches the messages they will run. The wait
    /// then counts neither in the call's duration (so not in its slow-call judgement) nor
    /// against its timeout. A permit whose breaker reads no clock for its calls stays so.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, Verdict};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let config = Config::builder().count_window(1).slow_call(Duration::from_millis(100));
    /// let breaker = Arc::new(Breaker::new(config.build().unwrap()));
    /// let mut permit = breaker.try_acquire_owned().unwrap();
    /// tokio::time::sleep(Duration::from_secs(1)).await; // waiting for work to arrive
    /// permit.restart_clock();
    /// permit.run(async { Ok::<_, std::io::Error>(()) }, Verdict::of).await.unwrap().unwrap();
    /// assert_eq!(breaker.snapshot().slow, 0, "the wait before the call is not its duration");
    /// # }
    /// ```
    pub fn restart_clock(&mut self) {
        if self.held.started.is_some() {
            self.held.started = self.held.breaker.start_clock();
        }
    }

    outcome_methods!();
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("breaker", self.held.breaker.name())
            .field("kind", &self.held.kind)
            .finish()
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("breaker", self.held.breaker.name())
            .field("kind", &self.held.kind)
            .finish()
    }
}
