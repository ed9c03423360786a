//! A breaker's state taken for the next process, and put back by it (`core/saved.rs` says
//! what is carried and the rule for clocks that moved).
//!
//! Putting back starts from a reset (closed, an empty window, the break at its base length)
//! and goes forward from there as the breaker would: a closed circuit gets the outcomes its
//! window can hold, an open one a break of what is left of the saved one, its growth kept. An
//! opening put back reads as an order from outside, [`Origin::Ordered`]: the process that saved
//! it decided. Meant for a breaker no call has used yet (a process starting); a call racing it
//! counts in the closed period it finds.

use std::time::{Duration, SystemTime};

use crate::base::clock::{self, Nanos, duration_nanos};
use crate::base::sync::Ordering;
use crate::core::breaker::Breaker;
use crate::core::breaker::reconfigured::{WindowOptions, changed};
use crate::core::breaker::transition::Change;
use crate::core::config::{Settings, Window as WindowConfig, WindowKind};
use crate::core::events::Origin;
use crate::core::saved::{
    self, RestoreError, Restored, SavedBucket, SavedOutcome, SavedState, SavedWindow,
};
use crate::core::state::State;
use crate::core::window::{Held, Outcome, Tally};

impl Breaker {
    /// Its state now, to save for the next process: the state, the break's end as a
    /// wall-clock time and its length, the break's growth, what the window holds (while
    /// closed) and the options it runs with. A drill is not carried: a breaker held open for a
    /// drill is saved closed.
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, SavedWindow, State};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(4).build().unwrap());
    /// breaker.try_acquire().unwrap().failure();
    /// let saved = breaker.saved_state();
    /// assert_eq!(saved.state, State::Closed);
    /// assert_eq!(saved.window.calls(), 1);
    ///
    /// let next = Breaker::new(Config::builder().count_window(4).build().unwrap());
    /// let restored = next.restore(&saved).unwrap();
    /// assert!(restored.dropped.is_empty());
    /// assert_eq!(next.snapshot().failures, 1, "the window's failure came back");
    /// ```
    pub fn saved_state(&self) -> SavedState {
        let wall = SystemTime::now();
        let now = clock::now();
        let word = self.word();
        let drilled = self.drill_ends().is_some();
        let state = if drilled { State::Closed } else { word.state() };
        let (open_until, break_length) = if state == State::Open {
            let until = self.open_until.load(Ordering::Relaxed);
            let began = self.last_transition.load(Ordering::Relaxed);
            (
                Some(wall_time(wall, now, until)),
                Some(Duration::from_nanos(until.saturating_sub(began))),
            )
        } else {
            (None, None)
        };
        let held = if state == State::Closed && !drilled {
            self.window().held(word.generation())
        } else {
            // An open circuit's next closed period starts empty: nothing to carry.
            match self.config.window() {
                WindowConfig::Count(_) => Held::Count(Vec::new()),
                WindowConfig::Time(_) => Held::Time(Vec::new()),
            }
        };
        let window = match held {
            Held::Count(outcomes) => {
                SavedWindow::Count(outcomes.into_iter().map(saved_outcome).collect())
            }
            Held::Time(buckets) => SavedWindow::Time(
                buckets
                    .into_iter()
                    .map(|(began, tally)| SavedBucket {
                        began: wall_time(wall, now, began),
                        calls: tally.calls,
                        failures: tally.failures,
                        slow: tally.slow,
                    })
                    .collect(),
            ),
        };
        SavedState {
            name: self.name().to_string(),
            state,
            open_until,
            break_length,
            failed_probes: if state == State::Closed {
                0
            } else {
                word.failed_probes()
            },
            window,
            config: self.config().settings(),
        }
    }

    /// A breaker built from `config` and started in the state another process saved: what
    /// [`restore`](Self::restore) does, on a breaker no call has used yet (opossum's `state`
    /// option, Resilience4j's `initialState`). A refused state answers the error, and no
    /// breaker.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let config = || Config::builder().count_window(1).break_duration(Duration::from_secs(30)).build();
    /// let old = Breaker::new(config()?);
    /// old.try_acquire()?.failure();
    ///
    /// let (new, restored) = Breaker::restored(config()?, &old.saved_state())?;
    /// assert_eq!(restored.state, State::Open);
    /// assert!(new.try_acquire().unwrap_err().is_rejection(), "open for what is left of the break");
    /// # Ok(())
    /// # }
    /// ```
    pub fn restored(
        config: crate::core::config::Config,
        saved: &SavedState,
    ) -> Result<(Breaker, Restored), RestoreError> {
        let breaker = Breaker::new(config);
        let restored = breaker.restore(saved)?;
        Ok((breaker, restored))
    }

    /// Puts back a state another process saved ([`saved_state`](Self::saved_state)), as far
    /// as this breaker's own options allow, and says what it left out. A break whose end has
    /// passed is over: the circuit is half-open at its next call (it never closes without a
    /// probe). A break whose end lies further ahead than its own length (the clocks of the
    /// two processes disagree), or than the longest break this breaker's options allow, is
    /// clamped to that. A window of another kind or shape
    /// keeps what a live change of options would keep: a count window its newest outcomes, a
    /// time window of the same kind the buckets its span still covers, and another kind
    /// nothing. A saved state that contradicts itself is refused, and nothing is changed.
    pub fn restore(&self, saved: &SavedState) -> Result<Restored, RestoreError> {
        saved::check(saved)?;
        Ok(self.put_back(saved, SystemTime::now()))
    }

    /// Puts back `saved`, already checked, at wall-clock time `wall`.
    pub(crate) fn put_back(&self, saved: &SavedState, wall: SystemTime) -> Restored {
        let mut dropped = Vec::new();
        let current = self.config();
        let settings = current.settings();
        let differ = changed(&saved.config, &settings);
        if !differ.is_empty() {
            dropped.push(format!(
                "config: the saved options differ in {}; this breaker keeps its own",
                differ.join(", ")
            ));
        }
        self.reset();
        match saved.state {
            State::Closed => self.put_back_window(saved, &settings, wall, &mut dropped),
            State::Open | State::HalfOpen => {
                let remaining = match (saved.state, saved.open_until, saved.break_length) {
                    (State::Open, Some(until), Some(length)) => {
                        // No longer than the longest break this breaker's own options allow.
                        let length = length.min(current.longest_break());
                        left_of(until, length, wall, &mut dropped)
                    }
                    _ => Duration::ZERO,
                };
                self.open_restored(remaining, saved.failed_probes);
            }
            State::ForcedOpen => self.force_open(),
            State::Disabled => self.disable(),
        }
        Restored {
            name: self.name().to_string(),
            state: self.state(),
            dropped,
        }
    }

    fn put_back_window(
        &self,
        saved: &SavedState,
        now: &Settings,
        wall: SystemTime,
        dropped: &mut Vec<String>,
    ) {
        let calls = saved.window.calls();
        if calls == 0 {
            return;
        }
        let clock_now = clock::now();
        let held = match (&saved.window, now.window) {
            (SavedWindow::Count(outcomes), WindowConfig::Count(size)) => {
                if outcomes.len() > size as usize {
                    dropped.push(format!(
                        "window: kept the newest {size} of {} outcomes, all this breaker's window holds",
                        outcomes.len()
                    ));
                }
                Held::Count(outcomes.iter().map(|&o| outcome(o)).collect())
            }
            (SavedWindow::Time(buckets), WindowConfig::Time(_))
                if same_kind(&saved.config, now.window_kind) =>
            {
                Held::Time(
                    buckets
                        .iter()
                        .map(|b| {
                            let age = wall.duration_since(b.began).unwrap_or_default();
                            let began = clock_now.saturating_sub(duration_nanos(age));
                            let tally = Tally {
                                calls: b.calls,
                                failures: b.failures,
                                slow: b.slow,
                            };
                            (began, tally)
                        })
                        .collect(),
                )
            }
            _ => {
                dropped.push(format!(
                    "window: its {calls} outcomes were dropped: the saved window ({}) and this breaker's ({}) do not hold the same kind of outcomes",
                    shape(&saved.config),
                    shape(now)
                ));
                return;
            }
        };
        let kept = self.window().put_back(self.word().generation(), &held);
        if matches!(held, Held::Time(_)) && kept < calls {
            dropped.push(format!(
                "window: {} of its {calls} outcomes were older than the window's span",
                calls - kept
            ));
        }
    }

    /// Opens the circuit for `remaining` (none: half-open at the next call), its break grown
    /// by `failed_probes`, as the process that saved it decided.
    fn open_restored(&self, remaining: Duration, failed_probes: u32) {
        let announcement = {
            let mut cold = self.cold();
            let seen = self.word();
            let change = Change {
                tally: Tally::EMPTY,
                now: clock::now(),
                open_for: Some(duration_nanos(remaining)),
                origin: Origin::Ordered,
            };
            let Some(announcement) = self.transition(&mut cold, seen, State::Open, change) else {
                return;
            };
            // The break's growth, for the breaks after the next failed probe. Only the first
            // call after the break changes an open word without the lock: should it have begun
            // the half-open period already, the growth goes with the period it ends.
            let open = self.word();
            if open.state() == State::Open {
                let grown = open.with_failed_probes(failed_probes);
                let _ = self.state.compare_exchange(
                    open.0,
                    grown.0,
                    Ordering::Release,
                    Ordering::Relaxed,
                );
            }
            announcement
        };
        self.emit(announcement);
    }
}

/// What is left of a break ending at `until` at `wall`, by the rule for moved clocks.
fn left_of(
    until: SystemTime,
    length: Duration,
    wall: SystemTime,
    dropped: &mut Vec<String>,
) -> Duration {
    let Ok(left) = until.duration_since(wall) else {
        dropped.push(
            "open_until: the break had ended; the circuit is half-open at its next call"
                .to_string(),
        );
        return Duration::ZERO;
    };
    if left > length {
        dropped.push(format!(
            "open_until: {} ms ahead, further than the break's own {} ms (the clocks disagree); clamped to it",
            left.as_millis(),
            length.as_millis()
        ));
        return length;
    }
    left
}

fn same_kind(saved: &Settings, kind: WindowKind) -> bool {
    matches!(saved.window, WindowConfig::Time(_)) && saved.window_kind == kind
}

/// A window's shape as the attribute spells it, for a message.
fn shape(settings: &Settings) -> WindowOptions {
    WindowOptions(settings.window, settings.window_kind)
}

/// The wall-clock time of `at` on the breaker's clock, which reads `now` at `wall`.
fn wall_time(wall: SystemTime, now: Nanos, at: Nanos) -> SystemTime {
    if at >= now {
        wall.checked_add(Duration::from_nanos(at - now))
            .unwrap_or(wall)
    } else {
        wall.checked_sub(Duration::from_nanos(now - at))
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }
}

fn saved_outcome(outcome: Outcome) -> SavedOutcome {
    match outcome {
        Outcome::Success => SavedOutcome::Success,
        Outcome::Slow => SavedOutcome::Slow,
        Outcome::Failure => SavedOutcome::Failure,
    }
}

fn outcome(saved: SavedOutcome) -> Outcome {
    match saved {
        SavedOutcome::Success => Outcome::Success,
        SavedOutcome::Slow => Outcome::Slow,
        SavedOutcome::Failure => Outcome::Failure,
    }
}
