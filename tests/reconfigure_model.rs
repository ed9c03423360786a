//! SPEC section 5, live reconfiguration, as a property: for any outcomes and any valid change
//! of the options the judgement reads (`threshold`, `min_calls`, `slow_call`, `slow_threshold`,
//! the window's kind and size) between two of them, the circuit after the next outcome is in
//! the state of a fresh breaker built with the new options and fed what the window kept, then
//! that outcome.
//!
//! A fresh breaker judges after every outcome it is fed, so it may open on a part of what the
//! window kept that the reconfigured breaker never judges by itself (it judges the window whole,
//! at the next outcome). In those cases the state is checked against the rule itself, computed
//! here on the window's contents.

use std::time::Duration;

use breaker_runtime::{Breaker, Config, Rate, State, Verdict};
use proptest::prelude::*;

/// How long a slow call takes: longer than every `slow_call` generated.
const SLOW: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    /// A success that took [`SLOW`].
    Slow,
    Failure,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count(u32),
    /// Seconds: every outcome of a case falls inside any of these spans.
    Time(u64),
}

#[derive(Debug, Clone, Copy)]
struct Rules {
    window: Kind,
    threshold: Rate,
    min_calls: u32,
    /// Milliseconds, and the slow threshold.
    slow: Option<(u64, Rate)>,
}

impl Rules {
    fn config(&self) -> Config {
        let mut builder = Config::builder()
            .no_timeout()
            .threshold(self.threshold.percent())
            .min_calls(self.min_calls);
        builder = match self.window {
            Kind::Count(n) => builder.count_window(n),
            Kind::Time(secs) => builder.time_window(Duration::from_secs(secs)),
        };
        if let Some((ms, rate)) = self.slow {
            builder = builder
                .slow_call(Duration::from_millis(ms))
                .slow_threshold(rate.percent());
        }
        builder.build().expect("generated rules are valid")
    }

    /// What this breaker records for `outcome`: a slow call is a plain success without
    /// `slow_call`.
    fn recorded(&self, outcome: Outcome) -> Outcome {
        match outcome {
            Outcome::Slow if self.slow.is_none() => Outcome::Success,
            other => other,
        }
    }

    /// Whether the window holding `outcomes` meets these rules.
    fn trips(&self, outcomes: &[Outcome]) -> bool {
        let calls = outcomes.len() as u32;
        let failures = outcomes.iter().filter(|o| **o == Outcome::Failure).count() as u32;
        let slow = outcomes.iter().filter(|o| **o == Outcome::Slow).count() as u32;
        calls >= self.min_calls
            && (self.threshold.reached_by(failures, calls)
                || self
                    .slow
                    .is_some_and(|(_, rate)| rate.reached_by(slow, calls)))
    }

    /// What a window of these rules holds of `outcomes`, oldest first.
    fn holds<'a>(&self, outcomes: &'a [Outcome]) -> &'a [Outcome] {
        match self.window {
            Kind::Count(n) => &outcomes[outcomes.len().saturating_sub(n as usize)..],
            Kind::Time(_) => outcomes,
        }
    }
}

/// Feeds `outcome` to `breaker` as a call; `false` if the call was turned away.
async fn feed(breaker: &Breaker, outcome: Outcome) -> bool {
    let Ok(permit) = breaker.try_acquire() else {
        return false;
    };
    match outcome {
        Outcome::Success => permit.record(Verdict::Success),
        Outcome::Failure => permit.record(Verdict::Failure),
        Outcome::Slow => {
            tokio::time::advance(SLOW).await;
            permit.record(Verdict::Success);
        }
    }
    true
}

fn run(old: Rules, before: Vec<Outcome>, new: Rules, next: Outcome) -> Result<(), TestCaseError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async move {
        let breaker = Breaker::new(old.config());
        // What the old window recorded, in order, while the circuit stayed closed.
        let mut recorded = Vec::new();
        for &outcome in &before {
            if breaker.state() != State::Closed {
                break;
            }
            prop_assert!(feed(&breaker, outcome).await);
            recorded.push(old.recorded(outcome));
        }
        let was = breaker.state();
        breaker.reconfigure(new.config()).expect("a valid change");
        prop_assert_eq!(breaker.state(), was, "a reconfiguration never transitions");
        if was != State::Closed {
            prop_assert!(
                !feed(&breaker, next).await,
                "still open: the call is turned away"
            );
            return Ok(());
        }

        let kept: Vec<Outcome> = match (old.window, new.window) {
            (Kind::Count(_), Kind::Count(n)) => {
                let held = old.holds(&recorded);
                held[held.len().saturating_sub(n as usize)..].to_vec()
            }
            (Kind::Time(_), Kind::Time(_)) => recorded.clone(),
            // A new kind starts empty.
            _ => Vec::new(),
        };
        let snapshot = breaker.snapshot();
        prop_assert_eq!(
            snapshot.calls as usize,
            kept.len(),
            "the window kept {:?}",
            &kept
        );

        prop_assert!(feed(&breaker, next).await, "closed: the call runs");
        let mut after = kept.clone();
        after.push(new.recorded(next));
        let expected = if new.trips(new.holds(&after)) {
            State::Open
        } else {
            State::Closed
        };
        prop_assert_eq!(
            breaker.state(),
            expected,
            "the new rules judge {:?} after keeping {:?}",
            next,
            &kept
        );

        // The fresh breaker, fed what the window kept and then the same outcome.
        let fresh = Breaker::new(new.config());
        let mut opened_early = false;
        for &outcome in &kept {
            feed(&fresh, outcome).await;
            opened_early |= fresh.state() != State::Closed;
        }
        if !opened_early {
            feed(&fresh, next).await;
            prop_assert_eq!(
                breaker.state(),
                fresh.state(),
                "a fresh breaker fed {:?} then {:?}",
                &kept,
                next
            );
        }
        Ok(())
    })
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        4 => Just(Outcome::Success),
        3 => Just(Outcome::Failure),
        2 => Just(Outcome::Slow),
    ]
}

fn rate() -> impl Strategy<Value = Rate> {
    prop::sample::select(vec![
        10.0, 20.0, 25.0, 30.0, 33.3333, 50.0, 60.0, 75.0, 100.0,
    ])
    .prop_map(|percent| Rate::from_percent(percent).unwrap())
}

fn rules(window: impl Strategy<Value = Kind>) -> impl Strategy<Value = Rules> {
    (
        window,
        rate(),
        1u32..=8,
        prop::option::of((prop::sample::select(vec![20u64, 50, 80]), rate())),
    )
        .prop_map(|(window, threshold, min_calls, slow)| Rules {
            window,
            threshold,
            min_calls: match window {
                Kind::Count(n) => min_calls.min(n),
                Kind::Time(_) => min_calls,
            },
            slow,
        })
}

fn count() -> impl Strategy<Value = Kind> {
    (1u32..=8).prop_map(Kind::Count)
}

fn time() -> impl Strategy<Value = Kind> {
    prop::sample::select(vec![10u64, 30]).prop_map(Kind::Time)
}

fn any_window() -> impl Strategy<Value = Kind> {
    prop_oneof![3 => count(), 1 => time()]
}

/// 1 000 cases a window kind a run; `PROPTEST_CASES` for a deeper search.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn a_count_window_judges_the_next_outcome_by_the_new_rules(
        old in rules(count()),
        before in prop::collection::vec(outcome(), 0..14),
        new in rules(count()),
        next in outcome(),
    ) {
        run(old, before, new, next)?;
    }

    #[test]
    fn a_time_window_judges_the_next_outcome_by_the_new_rules(
        old in rules(time()),
        before in prop::collection::vec(outcome(), 0..14),
        new in rules(time()),
        next in outcome(),
    ) {
        run(old, before, new, next)?;
    }

    #[test]
    fn a_change_of_window_kind_judges_the_next_outcome_by_the_new_rules(
        old in rules(any_window()),
        before in prop::collection::vec(outcome(), 0..14),
        new in rules(any_window()),
        next in outcome(),
    ) {
        run(old, before, new, next)?;
    }
}
