//! The breaker's clock.
//!
//! Every reading comes from `tokio::time`, so a test that pauses tokio's clock drives every timed
//! rule (break durations, time windows, slow calls, timeouts) without sleeping. Readings are kept
//! as nanoseconds since a process-wide origin so that they fit in one atomic word.

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

/// The current reading of tokio's clock.
#[cfg(not(breaker_loom))]
pub(crate) fn now() -> Nanos {
    to_nanos(Instant::now())
}

/// Under loom there is no tokio clock to pause: model checks set the time by hand.
#[cfg(breaker_loom)]
pub(crate) static MODEL_NOW: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[cfg(breaker_loom)]
pub(crate) fn now() -> Nanos {
    MODEL_NOW.load(std::sync::atomic::Ordering::SeqCst)
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
    async fn instants_round_trip() {
        let instant = Instant::now();
        assert_eq!(to_instant(to_nanos(instant)), instant);
    }
}
