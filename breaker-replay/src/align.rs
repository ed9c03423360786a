//! Where a replay's clock starts, so that a time window judges the same trace the same way
//! every time.
//!
//! The runtime's time window counts in buckets of a tenth of the window, their edges fixed on
//! the process's clock, not on the breaker's start. A replay that started anywhere between two
//! edges would see an outcome leave the window up to a bucket earlier or later from one run to
//! the next. So before a replay with a time window, the paused clock is moved to just past an
//! edge (within a millisecond): every replay of a trace then puts its calls in the same buckets.
//!
//! The edge is found with the runtime's own window, not from its internals: outcomes recorded in
//! a row of scratch breakers, each a little later than the one before, are looked at once the
//! oldest bucket they could fill has left the window. Those recorded before the edge have left
//! it, those at or after it have not, which narrows the edge down to the gap between two of
//! them; a few rounds narrow it to the millisecond.

use std::time::Duration;

use breaker_runtime::{Breaker, Config, Window};
use tokio::time::{Instant, sleep_until};

/// Scratch breakers per round: each round narrows the edge down by this factor.
const PER_ROUND: u64 = 64;

/// The instant to count the trace from: `now` for a count window; for a time window, the
/// first whole millisecond (after `start`, on the runtime's millisecond grid) at or after an
/// edge of the window's buckets, at least `now`.
pub(crate) async fn start(start: Instant, window: Window) -> Instant {
    let Window::Time(span) = window else {
        return Instant::now();
    };
    // Edges repeat every bucket, a tenth of the window; so they repeat every window too, which
    // is a whole number of milliseconds.
    let period = u64::try_from(span.as_millis()).unwrap_or(u64::MAX).max(1);
    let bucket_ms = period.div_ceil(10);
    let ms = |instant: Instant| {
        u64::try_from(instant.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX)
    };
    // An edge lies in (low, low + len]: any stretch of a whole bucket holds one.
    let mut low = ms(Instant::now());
    let mut len = bucket_ms;
    while len > 1 {
        // The same stretch, a whole number of windows later, not yet passed.
        let now = ms(Instant::now());
        let periods = now.saturating_sub(low).div_ceil(period);
        let from = low.saturating_add(periods.saturating_mul(period));
        let step = len.div_ceil(PER_ROUND);
        let count = len.div_ceil(step);
        let mut scratch = Vec::with_capacity(count as usize);
        for i in 0..count {
            sleep_until(at(start, from + i * step)).await;
            let breaker = Breaker::new(scratch_config(span));
            if let Ok(permit) = breaker.try_acquire() {
                permit.success();
            }
            scratch.push(breaker);
        }
        // Past the edge by the whole window, and not yet by a window and a bucket: an outcome
        // from before the edge has left, one from at or after it has not.
        sleep_until(at(start, from + len + period)).await;
        let first_kept = scratch.iter().position(|b| b.snapshot().calls > 0);
        match first_kept {
            Some(i) if i > 0 => {
                low = from + (i as u64 - 1) * step;
                len = step;
            }
            None => {
                low = from + (count - 1) * step;
                len = from + len - low;
            }
            // The first scratch outcome precedes the edge and must have left: only a window
            // too short to measure keeps it. Start where the clock is.
            Some(_) => break,
        }
    }
    let now = ms(Instant::now());
    let periods = now.saturating_sub(low + 1).div_ceil(period);
    let begin = (low + 1).saturating_add(periods.saturating_mul(period));
    sleep_until(at(start, begin)).await;
    Instant::now()
}

fn at(start: Instant, ms: u64) -> Instant {
    start
        .checked_add(Duration::from_millis(ms))
        .unwrap_or(start)
}

/// A breaker that only keeps outcomes: it never opens on successes.
fn scratch_config(span: Duration) -> Config {
    Config::builder()
        .name("replay-clock")
        .time_window(span)
        .build()
        .unwrap_or_default()
}
