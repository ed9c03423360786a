//! Which candidates no other beats: the Pareto front over a replay's own figures, the ground a
//! search for options stands on (issue 46's `suggest`).
//!
//! Four figures, each the lower the better, read off a candidate's [`Row`]:
//!
//! | figure | from the row | what it costs |
//! |---|---|---|
//! | failures let through | `failures_through` | calls that still reached the sick dependency |
//! | healthy calls lost | `rejected_healthy` | calls turned away that would have answered |
//! | delay | `delay_max_ms`, or *missed* when an outage was never caught | how late the worst outage was caught |
//! | time not closed | `not_closed_ms` | how long callers were served by the fallback |
//!
//! A missed outage is worse than any delay: a candidate that catches every outage, however
//! late, is never beaten on delay by one that misses one. A trace without outages has a delay
//! of 0 for every candidate.
//!
//! One candidate *dominates* another when it is no worse on every figure and better on at
//! least one. The front is every candidate that no other dominates; candidates with the same
//! figures are all on it (none dominates the other), in the order given.
//!
//! ```
//! use breaker_replay::front::{Figures, front};
//!
//! let figures = [
//!     Figures { failures_through: 10, healthy_lost: 0, delay_ms: Some(900), not_closed_ms: 30_000 },
//!     Figures { failures_through: 4, healthy_lost: 2, delay_ms: Some(300), not_closed_ms: 31_000 },
//!     Figures { failures_through: 12, healthy_lost: 1, delay_ms: Some(900), not_closed_ms: 30_000 },
//! ];
//! assert_eq!(front(&figures), [0, 1], "the third is worse than the first on two figures");
//! assert_eq!(breaker_replay::front::dominated_by(&figures, 2), Some(0));
//! ```

use serde::Serialize;

use crate::report::Row;

/// A candidate's figures, each the lower the better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Figures {
    /// Failures that still reached the dependency.
    pub failures_through: u64,
    /// Healthy calls turned away.
    pub healthy_lost: u64,
    /// The longest delay from an outage's first failure to the opening, in milliseconds;
    /// `None` when an outage was never caught (worse than any delay).
    pub delay_ms: Option<u64>,
    /// Milliseconds spent open or half-open.
    pub not_closed_ms: u64,
}

impl Figures {
    /// The figures of a replayed candidate.
    pub fn of(row: &Row) -> Figures {
        let delay_ms = if row.outages_missed > 0 {
            None
        } else {
            Some(row.delay_max_ms.unwrap_or(0))
        };
        Figures {
            failures_through: row.failures_through,
            healthy_lost: row.rejected_healthy,
            delay_ms,
            not_closed_ms: row.not_closed_ms,
        }
    }

    /// Each figure as a number to compare, the lower the better: a missed outage is the
    /// largest delay.
    fn costs(&self) -> [u64; 4] {
        [
            self.failures_through,
            self.healthy_lost,
            self.delay_ms.unwrap_or(u64::MAX),
            self.not_closed_ms,
        ]
    }

    /// Whether these figures are no worse than `other`'s on every figure and better on one.
    pub fn dominates(&self, other: &Figures) -> bool {
        let (mine, theirs) = (self.costs(), other.costs());
        mine.iter().zip(&theirs).all(|(a, b)| a <= b) && mine != theirs
    }
}

/// The indices of the candidates no other dominates, in the order given.
pub fn front(figures: &[Figures]) -> Vec<usize> {
    (0..figures.len())
        .filter(|&i| beaten(figures, &figures[i]).is_none())
        .collect()
}

/// The first candidate that dominates `candidate`, if any.
fn beaten(figures: &[Figures], candidate: &Figures) -> Option<usize> {
    figures.iter().position(|other| other.dominates(candidate))
}

/// The first candidate on the front that dominates candidate `i`, if any: the row a dominated
/// candidate is shown beside. (Dominance is transitive, so a dominated candidate is always
/// dominated by one on the front.)
pub fn dominated_by(figures: &[Figures], i: usize) -> Option<usize> {
    let mut best = beaten(figures, figures.get(i)?)?;
    // The first that dominates may itself be dominated; the one on the front is found by
    // following the line of dominators to one that no other dominates.
    while let Some(better) = beaten(figures, &figures[best]) {
        best = better;
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn figures(failures: u64, healthy: u64, delay: Option<u64>, not_closed: u64) -> Figures {
        Figures {
            failures_through: failures,
            healthy_lost: healthy,
            delay_ms: delay,
            not_closed_ms: not_closed,
        }
    }

    #[test]
    fn a_missed_outage_is_worse_than_any_delay() {
        let late = figures(5, 5, Some(u64::MAX - 1), 5);
        let missed = figures(5, 5, None, 5);
        assert!(late.dominates(&missed));
        assert!(!missed.dominates(&late));
    }

    #[test]
    fn equal_figures_are_all_on_the_front() {
        let same = figures(1, 2, Some(3), 4);
        assert!(!same.dominates(&same));
        assert_eq!(front(&[same, same]), [0, 1]);
    }

    #[test]
    fn a_dominated_candidate_is_shown_beside_one_on_the_front() {
        // 2 is beaten by 1, which is beaten by 0: 2 is shown beside 0, on the front.
        let all = [
            figures(1, 1, Some(1), 1),
            figures(2, 2, Some(2), 2),
            figures(3, 3, Some(3), 3),
        ];
        assert_eq!(front(&all), [0]);
        assert_eq!(dominated_by(&all, 2), Some(0));
        assert_eq!(dominated_by(&all, 0), None);
        assert_eq!(dominated_by(&all, 7), None, "no such candidate");
    }

    fn any_figures() -> impl Strategy<Value = Figures> {
        // Small ranges, so that ties and dominance are common.
        (
            0..4u64,
            0..4u64,
            proptest::option::weighted(0.8, 0..4u64),
            0..4u64,
        )
            .prop_map(|(f, h, d, n)| figures(f, h, d, n))
    }

    proptest! {
        #[test]
        fn the_front_is_exactly_what_nothing_dominates(all in prop::collection::vec(any_figures(), 0..40)) {
            let on_front = front(&all);
            for (i, candidate) in all.iter().enumerate() {
                let beaten = all.iter().any(|other| other.dominates(candidate));
                prop_assert_eq!(on_front.contains(&i), !beaten, "candidate {}: {:?}", i, candidate);
                match dominated_by(&all, i) {
                    Some(j) => {
                        prop_assert!(beaten);
                        prop_assert!(all[j].dominates(candidate));
                        prop_assert!(on_front.contains(&j), "shown beside one on the front");
                    }
                    None => prop_assert!(!beaten),
                }
            }
        }
    }
}
