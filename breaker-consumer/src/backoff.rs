//! The wait between attempts to reach a broker that does not answer: doubling from 100 ms to
//! 10 s, back to the start after a success.

use std::time::Duration;

const FIRST: Duration = Duration::from_millis(100);
const LAST: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
pub(crate) struct Backoff {
    failures: u32,
}

impl Backoff {
    /// The wait after one more failure in a row.
    pub(crate) fn next(&mut self) -> Duration {
        let wait = FIRST.saturating_mul(1 << self.failures.min(16)).min(LAST);
        self.failures = self.failures.saturating_add(1);
        wait
    }

    pub(crate) fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_ten_seconds_and_starts_over_after_a_success() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..9).map(|_| backoff.next().as_millis() as u64).collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]
        );
        backoff.reset();
        assert_eq!(backoff.next(), FIRST);
    }
}
