//! What a consumer did, counted as it goes: for logs, health checks and the demo's figures.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of what a consumer did since it was built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Fetches asked of the source.
    pub fetches: u64,
    /// Deliveries the source handed out.
    pub delivered: u64,
    /// Deliveries given to the handler.
    pub handled: u64,
    /// Deliveries acked.
    pub acked: u64,
    /// Deliveries sent back for redelivery.
    pub retried: u64,
    /// Deliveries dead-lettered by the handler's word ([`Failure::Permanent`](crate::Failure)).
    pub dead_lettered: u64,
    /// Messages the source dead-lettered on its own for reaching the broker's delivery limit
    /// ([`Source::limit_reached`](crate::Source::limit_reached)). With
    /// [`dead_lettered`](Self::dead_lettered), every message sent to the dead letters:
    /// [`dead_letters`](Self::dead_letters).
    pub limit_reached: u64,
    /// Deliveries sent back unhandled: the circuit opened between fetch and admission, or the
    /// source handed out more than it was asked for.
    pub released: u64,
    /// Handlers that panicked.
    pub panics: u64,
    /// Handlers cut off by the breaker's timeout.
    pub timeouts: u64,
    /// Deliveries failed by a fault injected on purpose
    /// ([`Breaker::inject`](breaker_runtime::Breaker::inject)) instead of being handled, and
    /// sent back for redelivery like a failure (an injected delay past the timeout counts in
    /// [`timeouts`](Self::timeouts)).
    pub injected: u64,
    /// Times the consumer paused for an open circuit, counted once the source took the pause.
    pub pauses: u64,
    /// Errors talking to the broker (fetch, settle, pause, resume).
    pub source_errors: u64,
}

impl Stats {
    /// Every message sent to the dead letters: by the handler's word and at the delivery
    /// limit. What the broker's dead-letter stream or queue received from this consumer.
    pub fn dead_letters(&self) -> u64 {
        self.dead_lettered + self.limit_reached
    }
}

/// The live counters behind [`Stats`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) fetches: AtomicU64,
    pub(crate) delivered: AtomicU64,
    pub(crate) handled: AtomicU64,
    pub(crate) acked: AtomicU64,
    pub(crate) retried: AtomicU64,
    pub(crate) dead_lettered: AtomicU64,
    pub(crate) released: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) injected: AtomicU64,
    pub(crate) pauses: AtomicU64,
    pub(crate) source_errors: AtomicU64,
}

/// Adds `n` to a counter. Counters publish nothing but themselves, so `Relaxed`.
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    pub(crate) fn read(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            fetches: get(&self.fetches),
            delivered: get(&self.delivered),
            handled: get(&self.handled),
            acked: get(&self.acked),
            retried: get(&self.retried),
            dead_lettered: get(&self.dead_lettered),
            limit_reached: 0,
            released: get(&self.released),
            panics: get(&self.panics),
            timeouts: get(&self.timeouts),
            injected: get(&self.injected),
            pauses: get(&self.pauses),
            source_errors: get(&self.source_errors),
        }
    }
}
