//! A limit on the operator's requests per breaker and second: a script gone wrong, or a
//! stolen token, cannot flip a breaker faster than a person would, and each refusal says when
//! to try again (429 with `Retry-After`).
//!
//! Counted per breaker in whole seconds of tokio's clock, and only for requests that carried
//! the token and named a breaker that exists, so the map holds at most one entry per
//! registered breaker and a caller without the token cannot spend an operator's budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::time::Instant;

/// Requests a breaker takes from the operator in one second, unless set otherwise.
pub(super) const DEFAULT_PER_SECOND: u32 = 10;

#[derive(Clone)]
pub(super) struct CommandLimit {
    /// 0 for no limit.
    per_second: u32,
    /// Each breaker's second (counted from `origin`) and the requests taken in it.
    seen: Arc<Mutex<HashMap<String, (u64, u32)>>>,
    origin: Arc<std::sync::OnceLock<Instant>>,
}

impl Default for CommandLimit {
    fn default() -> CommandLimit {
        CommandLimit::per_second(DEFAULT_PER_SECOND)
    }
}

impl CommandLimit {
    pub(super) fn per_second(per_second: u32) -> CommandLimit {
        CommandLimit {
            per_second,
            seen: Arc::default(),
            origin: Arc::default(),
        }
    }

    pub(super) fn limit(&self) -> u32 {
        self.per_second
    }

    /// Takes one request for `breaker`: `false` when its second's budget is spent, and the
    /// next second (at most one away) starts a new one.
    pub(super) fn take(&self, breaker: &str) -> bool {
        if self.per_second == 0 {
            return true;
        }
        let now = Instant::now();
        let origin = *self.origin.get_or_init(|| now);
        let elapsed = now.saturating_duration_since(origin);
        let second = elapsed.as_secs();
        // A count and a compare under the lock, never held across an await.
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, taken) = seen.entry(breaker.to_string()).or_insert((second, 0));
        if *at != second {
            (*at, *taken) = (second, 0);
        }
        if *taken >= self.per_second {
            return false;
        }
        *taken += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_breaker_takes_its_limit_in_a_second_and_the_next_second_starts_anew() {
        let limit = CommandLimit::per_second(3);
        for _ in 0..3 {
            assert!(limit.take("payments"));
        }
        assert!(!limit.take("payments"));
        assert!(limit.take("stock"), "another breaker's budget");
        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(!limit.take("payments"), "the same second");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(limit.take("payments"), "the next second");
    }

    #[tokio::test(start_paused = true)]
    async fn no_limit_takes_every_request() {
        let limit = CommandLimit::per_second(0);
        for _ in 0..1_000 {
            assert!(limit.take("payments"));
        }
    }
}
