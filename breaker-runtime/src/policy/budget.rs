//! The retry budget: retries at most a share of the calls of the last 10 s, but always at
//! least 10 per second, lock-free.
//!
//! Calls and retries are counted in ten one-second buckets each, one atomic word per bucket
//! holding its second and its count, so a bucket from an older second is restarted by the
//! first writer of the new one. Two retries checked at once may both pass at the very edge
//! of the budget: it is a bound on load, not an exact quota.
//!
//! Seconds are read from the coarse clock where tokio's runs and cannot be paused (as a time
//! window of a second or more does): a kernel tick is nothing against a one-second bucket, and
//! the precise read would be most of a check's cost. A paused clock is always read exactly.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use breaker_options::{RETRY_BUDGET_FLOOR, RETRY_BUDGET_WINDOW, Rate};

use crate::base::clock::{self, Nanos};

const BUCKETS: usize = RETRY_BUDGET_WINDOW.as_secs() as usize;
const FLOOR: u64 = RETRY_BUDGET_FLOOR as u64 * RETRY_BUDGET_WINDOW.as_secs();

pub(crate) struct Budget {
    share: Rate,
    calls: Buckets,
    retries: Buckets,
    /// Which clock dates the buckets: chosen on first use, then kept.
    dating: AtomicU8,
}

const UNCHOSEN: u8 = 0;
const PRECISE: u8 = 1;
const COARSE: u8 = 2;

impl Budget {
    pub(crate) fn new(share: Rate) -> Budget {
        Budget {
            share,
            calls: Buckets::default(),
            retries: Buckets::default(),
            dating: AtomicU8::new(UNCHOSEN),
        }
    }

    fn second(&self) -> u32 {
        // Relaxed: the choice is one byte read on its own; racing first uses choose alike.
        let dating = match self.dating.load(Ordering::Relaxed) {
            UNCHOSEN => {
                let chosen = if clock::anchor_coarse() {
                    COARSE
                } else {
                    PRECISE
                };
                self.dating.store(chosen, Ordering::Relaxed);
                chosen
            }
            chosen => chosen,
        };
        second(clock::reading(dating == COARSE))
    }

    /// One call made: it adds to what may be retried.
    pub(crate) fn deposit(&self) {
        self.calls.add(self.second());
    }

    /// Whether one more retry fits the budget; if it does, it is counted.
    pub(crate) fn withdraw(&self) -> bool {
        let now = self.second();
        let calls = self.calls.sum(now);
        let allowed = (calls * u64::from(self.share.ppm()) / 1_000_000).max(FLOOR);
        if self.retries.sum(now) >= allowed {
            return false;
        }
        self.retries.add(now);
        true
    }
}

fn second(now: Nanos) -> u32 {
    // Seconds since the clock's origin; u32 lasts 136 years.
    (now / 1_000_000_000) as u32
}

#[derive(Default)]
struct Buckets([AtomicU64; BUCKETS]);

impl Buckets {
    fn add(&self, second: u32) {
        let bucket = &self.0[second as usize % BUCKETS];
        // Relaxed: each word is one count on its own, and publishes nothing else.
        let mut current = bucket.load(Ordering::Relaxed);
        loop {
            let next = if (current >> 32) as u32 == second {
                current.saturating_add(1)
            } else {
                (u64::from(second) << 32) | 1
            };
            match bucket.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => current = now,
            }
        }
    }

    /// The counts of the buckets whose second is within the window ending at `now`.
    fn sum(&self, now: u32) -> u64 {
        self.0
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .filter(|word| now.wrapping_sub((word >> 32) as u32) < BUCKETS as u32)
            .map(|word| word & u64::from(u32::MAX))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn twenty_percent() -> Budget {
        Budget::new(Rate::from_ppm(200_000))
    }

    #[tokio::test(start_paused = true)]
    async fn retries_stay_within_the_floor_when_calls_are_few() {
        let budget = twenty_percent();
        budget.deposit();
        let granted = (0..1_000).filter(|_| budget.withdraw()).count();
        assert_eq!(granted as u64, FLOOR, "10 a second over 10 s");
    }

    #[tokio::test(start_paused = true)]
    async fn retries_stay_within_the_share_of_many_calls() {
        let budget = twenty_percent();
        for _ in 0..10_000 {
            budget.deposit();
        }
        let granted = (0..10_000).filter(|_| budget.withdraw()).count();
        assert_eq!(granted, 2_000);
    }

    #[tokio::test(start_paused = true)]
    async fn the_window_slides_and_old_seconds_stop_counting() {
        let budget = twenty_percent();
        for _ in 0..1_000 {
            budget.deposit();
        }
        while budget.withdraw() {}
        assert!(!budget.withdraw(), "spent");
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(
            budget.withdraw(),
            "ten seconds on, the old retries are out of the window"
        );
        assert_eq!(budget.calls.sum(budget.second()), 0);
    }
}
