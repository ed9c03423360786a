//! The breaker's clock.
//!
//! Every reading comes from `tokio::time`, so a test that pauses tokio's clock drives every timed
//! rule (break durations, time windows, slow calls, timeouts) without sleeping. Readings are kept
//! as nanoseconds since a process-wide origin so that they fit in one atomic word.
//!
//! Two questions are also put to a coarse clock (the kernel's last tick), for about a quarter
//! of the price, but only where tokio's clock runs and cannot be paused: whether an open
//! circuit's break is still well ahead (the question every rejection asks; near the deadline
//! the precise clock answers), and when a half-open probe was admitted (against which a hung
//! probe is timed, with a margin that covers the coarse clock's error).

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::time::Instant;

/// Nanoseconds since [`origin`].
pub(crate) type Nanos = u64;

static ORIGIN: OnceLock<Instant> = OnceLock::new();

fn origin() -> Instant {
    *ORIGIN.get_or_init(|| {
        let now = Instant::now();
        // Each paused test runtime starts its clock at the moment it was built. Setting the origin
        // back by as much as the platform allows keeps readings from a runtime built a little
        // later, or paused a little earlier, after the origin instead of saturating at zero.
        [86_400, 3_600, 60, 1]
            .into_iter()
            .find_map(|secs| now.checked_sub(Duration::from_secs(secs)))
            .unwrap_or(now)
    })
}

/// The current reading of tokio's clock, or of this thread's simulated clock while one runs.
#[cfg(not(breaker_loom))]
pub(crate) fn now() -> Nanos {
    #[cfg(feature = "simulation")]
    if let Some(now) = simulated() {
        return now;
    }
    to_nanos(Instant::now())
}

#[cfg(all(feature = "simulation", not(breaker_loom)))]
std::thread_local! {
    /// The simulated clock's reading on this thread (the `simulation` module's), or 0 while none
    /// runs: a reading is at least 1.
    pub(crate) static SIMULATED: std::cell::Cell<Nanos> = const { std::cell::Cell::new(0) };
}

/// This thread's simulated reading, while a simulated clock runs on it.
#[cfg(all(feature = "simulation", not(breaker_loom)))]
#[inline]
pub(crate) fn simulated() -> Option<Nanos> {
    Some(SIMULATED.with(std::cell::Cell::get)).filter(|&now| now != 0)
}

/// Under loom there is no tokio clock to pause: model checks set the time by hand.
#[cfg(breaker_loom)]
pub(crate) static MODEL_NOW: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(breaker_loom)]
pub(crate) fn now() -> Nanos {
    // Relaxed: a std atomic outside loom's model, set by the test between a model's steps.
    MODEL_NOW.load(std::sync::atomic::Ordering::Relaxed)
}

/// How close to a deadline the coarse clock stops answering for the precise one. A coarse
/// reading trails the precise clock by up to one kernel tick (10 ms at the slowest common tick
/// rate), once when anchored and once when read; the margin covers both with room to spare, so
/// the precise clock is always consulted in time.
pub(crate) const COARSE_MARGIN: Nanos = 50_000_000;

/// What to add to a coarse reading to put it on tokio's running clock (wrapping). Each anchoring
/// measures it anew, a fraction of a tick apart; it only ever grows, so that the coarse clock never
/// steps back and an outcome it dates never lands behind one dated before it.
#[cfg(not(breaker_loom))]
static COARSE_OFFSET: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(i64::MIN);

/// The coarse clock (the kernel's last tick on Linux), in nanoseconds since its own origin.
#[cfg(not(breaker_loom))]
#[inline]
fn coarse_nanos() -> Nanos {
    let ticks = coarsetime::Instant::now_without_cache_update().as_ticks();
    // Ticks are 2^-32 s.
    ((u128::from(ticks) * 1_000_000_000) >> 32) as Nanos
}

/// Whether tokio's clock runs on this thread and cannot be paused before a break that starts
/// now is over, anchoring the coarse clock to it when so.
///
/// Only a current-thread runtime's clock can be paused, and a test may pause it after the
/// circuit opened, so a circuit opened on one is judged by tokio's clock alone. Elsewhere, a
/// paused clock reads the same twice in a row (nothing can advance it between two reads in one
/// task) while a running one moves by the nanoseconds the reads take. A clock that ticks too
/// coarsely to move between the reads counts as paused, which only costs precision work.
#[cfg(not(breaker_loom))]
pub(crate) fn anchor_coarse() -> bool {
    use tokio::runtime::{Handle, RuntimeFlavor};
    // A simulated clock is set by hand, like a paused one.
    #[cfg(feature = "simulation")]
    if simulated().is_some() {
        return false;
    }
    if Handle::try_current().is_ok_and(|rt| rt.runtime_flavor() == RuntimeFlavor::CurrentThread) {
        return false;
    }
    let first = Instant::now();
    let second = Instant::now();
    if first == second {
        return false;
    }
    // The offset read as signed: the coarse clock's origin may be later or earlier than ours.
    let offset = to_nanos(second).wrapping_sub(coarse_nanos()) as i64;
    COARSE_OFFSET.fetch_max(offset, std::sync::atomic::Ordering::Relaxed);
    true
}

/// Whether the running clock is surely still before `deadline`, judged from the coarse clock
/// alone; `false` when that is not sure, and the precise clock must decide.
///
/// Only for deadlines set while [`anchor_coarse`] said the clock was running. Every error of
/// the estimate (a late tick, a stale anchor) makes it answer `false` sooner or, at worst,
/// later by that error: it never lets a deadline pass early.
#[cfg(not(breaker_loom))]
#[inline]
pub(crate) fn surely_before(deadline: Nanos) -> bool {
    estimate().saturating_add(COARSE_MARGIN) < deadline
}

/// tokio's running clock as the coarse clock puts it: within a kernel tick or so of the
/// precise reading, either side. Only for a clock [`anchor_coarse`] said runs.
#[cfg(not(breaker_loom))]
#[inline]
pub(crate) fn estimate() -> Nanos {
    coarse_nanos().wrapping_add(COARSE_OFFSET.load(std::sync::atomic::Ordering::Relaxed) as u64)
}

/// Model checks run on the model clock, which has no coarse twin.
#[cfg(breaker_loom)]
pub(crate) fn anchor_coarse() -> bool {
    false
}

#[cfg(breaker_loom)]
pub(crate) fn surely_before(_deadline: Nanos) -> bool {
    false
}

#[cfg(breaker_loom)]
pub(crate) fn estimate() -> Nanos {
    now()
}

/// A reading, and which clock it was read on: a caller holding one reuses it where the same
/// clock would be read again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    pub(crate) at: Nanos,
    /// The coarse clock ([`estimate`]), or tokio's ([`now`]).
    pub(crate) coarse: bool,
}

/// A reading of the coarse clock ([`estimate`]) or of tokio's ([`now`]), as a caller that
/// chose its clock once dates everything by it.
#[inline]
pub(crate) fn reading(coarse: bool) -> Nanos {
    if coarse { estimate() } else { now() }
}

pub(crate) fn to_nanos(instant: Instant) -> Nanos {
    duration_nanos(instant.saturating_duration_since(origin()))
}

pub(crate) fn to_instant(nanos: Nanos) -> Instant {
    let origin = origin();
    origin
        .checked_add(Duration::from_nanos(nanos))
        .unwrap_or(origin)
}

/// An instant as its distance from `now` on the breaker's clock, for `Debug`: `12.3s ago`,
/// `in 3.4s`, or `now`. An `Instant`'s own `Debug` is a reading of the OS clock (`tv_sec`,
/// `tv_nsec`) that says nothing to a person reading a log.
#[derive(Clone, Copy)]
pub(crate) struct Age {
    at: Instant,
    now: Instant,
}

impl Age {
    /// `at` as seen from `now`, for a value that shows several instants from one moment.
    pub(crate) fn seen_from(at: Instant, now: Instant) -> Age {
        Age { at, now }
    }

    /// `at` as seen from this moment.
    pub(crate) fn of(at: Instant) -> Age {
        Age::seen_from(at, now_instant())
    }
}

impl fmt::Debug for Age {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One decimal in the unit that fits, as `Duration`'s `Debug` prints the snapshot's
        // durations beside it.
        match self.at.cmp(&self.now) {
            std::cmp::Ordering::Less => {
                write!(f, "{:.1?} ago", self.now.saturating_duration_since(self.at))
            }
            std::cmp::Ordering::Greater => {
                write!(f, "in {:.1?}", self.at.saturating_duration_since(self.now))
            }
            std::cmp::Ordering::Equal => f.write_str("now"),
        }
    }
}

/// The breaker's clock now, as an instant: the one its readings are compared with.
pub(crate) fn now_instant() -> Instant {
    to_instant(now())
}

/// A duration in nanoseconds, saturating at `u64::MAX` (about 584 years).
pub(crate) fn duration_nanos(duration: Duration) -> Nanos {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(all(test, not(breaker_loom)))]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn readings_follow_the_paused_clock() {
        let before = now();
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(now() - before, 1_500_000_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_paused_clock_is_not_anchored() {
        assert!(!anchor_coarse());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_clock_that_a_test_could_still_pause_is_not_anchored() {
        assert!(!anchor_coarse());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_multi_thread_runtime_clock_is_anchored() {
        assert!((0..1_000).any(|_| anchor_coarse()));
    }

    #[test]
    fn the_coarse_clock_answers_only_far_from_a_deadline() {
        // Outside a runtime tokio's clock is the running system clock.
        assert!(
            (0..1_000).any(|_| anchor_coarse()),
            "the system clock moves between two reads"
        );
        let now = now();
        assert!(surely_before(now + 1_000_000_000));
        assert!(!surely_before(now + COARSE_MARGIN / 2));
        assert!(!surely_before(now));
        assert!(!surely_before(now.saturating_sub(1_000_000_000)));
    }

    #[tokio::test(start_paused = true)]
    async fn instants_round_trip() {
        let instant = Instant::now();
        assert_eq!(to_instant(to_nanos(instant)), instant);
    }
}
