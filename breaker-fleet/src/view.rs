//! What a member believes of the fleet's circuit for one breaker, and the order generations it
//! applies locally.

use tokio::time::Instant;

/// The fleet's circuit as this member sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// No fleet decision holds: the local breaker acts alone.
    Local,
    /// Open on the fleet's word until `ends`; this member tries for the probe lease at
    /// `attempt_at` (the end moved by its jitter).
    Open { ends: Instant, attempt_at: Instant },
    /// A member holds the probe lease: this one (`mine`), which renews it at `renew_at`, or
    /// another, whose lease runs out at `renew_at` unless news comes first.
    Probing { mine: bool, renew_at: Instant },
}

impl View {
    /// When this member must act next, if ever.
    pub(crate) fn due(&self) -> Option<Instant> {
        match *self {
            View::Local => None,
            View::Open { attempt_at, .. } => Some(attempt_at),
            View::Probing { renew_at, .. } => Some(renew_at),
        }
    }
}

/// Generations of the orders this member applies to its breaker: the fleet's generation
/// above, and below it a sequence for the member's own extensions within that generation, so
/// every order is newer than the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Generations {
    /// The newest fleet generation heard or taken.
    pub(crate) fleet: u64,
    sequence: u64,
}

const SEQUENCE_BITS: u32 = 20;

impl Generations {
    /// Whether `generation` is news: newer than anything heard.
    pub(crate) fn is_news(&self, generation: u64) -> bool {
        generation > self.fleet
    }

    /// The order generation for the first order of fleet generation `generation`.
    pub(crate) fn adopt(&mut self, generation: u64) -> u64 {
        self.fleet = generation;
        self.sequence = 0;
        self.order()
    }

    /// The order generation for one more order within the current fleet generation.
    pub(crate) fn extend(&mut self) -> u64 {
        self.sequence = (self.sequence + 1).min((1 << SEQUENCE_BITS) - 1);
        self.order()
    }

    fn order(&self) -> u64 {
        (self.fleet << SEQUENCE_BITS) | self.sequence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_is_newer_than_the_last() {
        let mut generations = Generations::default();
        let first = generations.adopt(3);
        let second = generations.extend();
        let third = generations.extend();
        let next_fleet = generations.adopt(4);
        assert!(first < second && second < third && third < next_fleet);
        assert!(!generations.is_news(4) && generations.is_news(5));
    }
}
