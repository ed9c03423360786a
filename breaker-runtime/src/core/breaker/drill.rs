//! Drills: the circuit held open on purpose for a while, then put back as it was, so that
//! fallbacks, stale answers, rejections' metrics and waiting get exercised before an outage
//! needs them.
//!
//! A drill is an operator's hold ([`State::ForcedOpen`]) that remembers what to put back and
//! when. It lives under the cold lock; the closed call path never looks at it. Its end is a
//! task on the tokio runtime that started it, sleeping on tokio's clock, so a paused clock
//! drives it and no call has to arrive for it to end.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::base::clock::{self, Nanos, duration_nanos};
use std::sync::PoisonError;

use crate::base::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::core::breaker::transition::Change;
use crate::core::breaker::{Breaker, Cold};
use crate::core::opening::Opened;
use crate::core::state::{State, Word};
use crate::core::window::Tally;

/// Why a drill did not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DrillError {
    /// A drill of no length would exercise nothing.
    #[error("a drill must last longer than zero")]
    Zero,
    /// The drill's end is a task on a tokio runtime, and there was none to spawn it on.
    #[error("a drill must start inside a tokio runtime, which ends it")]
    NoRuntime,
    /// The breaker is in shadow mode: it turns no call away, so a drill would exercise no
    /// fallback. Switch it to enforce first.
    #[error("a breaker in shadow mode turns no call away: switch it to enforce to drill it")]
    Shadow,
    /// An operator holds the circuit open already, until [`reset`](Breaker::reset).
    #[error("the circuit is held open by an operator already")]
    ForcedOpen,
    /// Another drill is running; stop it first ([`Breaker::stop_drill`]).
    #[error(
        "a drill is running already and ends in {}; stop it first with `stop_drill`",
        crate::outcome::error::humane(ends.saturating_duration_since(Instant::now()))
    )]
    Drilling {
        /// When the running drill ends, on tokio's clock.
        ends: Instant,
    },
}

/// Where a breaker keeps its drill, allocated by its first: most breakers are never drilled.
pub(super) struct Slot {
    /// When the running drill ends (0: none), read without the lock so that a rejection or a
    /// look at the state past the end knows to put the state back. Written under the cold
    /// lock.
    ends: AtomicU64,
    /// The running drill. Locked only under the cold lock, which orders every change of it
    /// with the transitions: a lock of its own only because the cold state has no room.
    running: Mutex<Option<Drill>>,
}

impl Slot {
    fn running(&self) -> MutexGuard<'_, Option<Drill>> {
        // Taken only under the cold lock, where no code that can panic runs.
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running drill.
pub(super) struct Drill {
    /// The generation of the forced-open period the drill began: any other transition moves
    /// the word past it, and the drill is over.
    generation: u32,
    ends: Nanos,
    open_for: Duration,
    /// The state to put back.
    restore: State,
    /// For an open circuit: when its own break ends, which the drill does not move.
    open_until: Nanos,
    /// For an open circuit: why it opened, which the drill's hold overwrote.
    opened: Option<Box<Opened>>,
    /// The task that ends it, stopped when something else ends it first.
    task: Option<AbortHandle>,
}

/// How a drill ended, for its log line.
#[derive(Clone, Copy)]
enum Ended {
    Elapsed,
    Stopped,
}

impl Ended {
    fn as_str(self) -> &'static str {
        match self {
            Ended::Elapsed => "elapsed",
            Ended::Stopped => "stopped",
        }
    }
}

/// A drill that an operator's command or an order from outside ended: taken under the lock,
/// logged and its task stopped once the lock is released.
#[must_use]
pub(super) struct Overtaken(Drill);

impl Breaker {
    /// Holds the circuit open for `open_for`, then puts it back as it was: a drill, to
    /// exercise the fallbacks in staging. Returns when it ends, on tokio's clock.
    ///
    /// While it runs, calls are turned away exactly as when an operator holds the circuit open
    /// (the state reads [`ForcedOpen`](State::ForcedOpen)): fallbacks run, rejections are
    /// counted, waiters wait. Its start and end are transitions, announced as usual, and
    /// logged with the breaker, the length and how it ended.
    ///
    /// At its end the state it interrupted is put back:
    ///
    /// - closed comes back closed, with an empty window (the calls admitted before the drill
    ///   belong to a period that is over, and record nothing, like any late outcome);
    /// - open comes back open for what is left of its own break (a drill never shortens
    ///   it), or, once that has passed, open with the break over, so the next call probes;
    /// - half-open comes back half-open, with a fresh period of probes;
    /// - disabled comes back disabled.
    ///
    /// Anything else that changes the state during the drill wins, and the drill is over
    /// without putting anything back: an operator's [`reset`](Self::reset),
    /// [`force_open`](Self::force_open), [`disable`](Self::disable) or
    /// [`half_open`](Self::half_open), or an order from outside
    /// ([`apply_order`](Self::apply_order), taken during a drill unless the drill interrupted
    /// a disabled circuit, whose operator's hold still wins over orders). A reconfiguration or
    /// a change of mode does not transition, and leaves the drill running.
    ///
    /// It ends by itself, by a task spawned on the current tokio runtime (none: an error)
    /// that sleeps until the end, so no call need arrive; [`stop_drill`](Self::stop_drill)
    /// ends it early. Once the end has passed, a call or [`drill_ends`](Self::drill_ends)
    /// puts the state back without waiting for that task (the call is admitted as by the
    /// state put back), and [`state`](Self::state) reads the state it puts back. (On a paused
    /// clock, after `tokio::time::advance`, the task runs when the test next yields; a
    /// [`snapshot`](Self::snapshot) taken before then still reads the drill.)
    ///
    /// Refused in shadow mode (the breaker turns nothing away, so nothing would be
    /// exercised), on a circuit an operator holds open, during another drill, and for a zero
    /// length. A breaker switched to shadow mode during a drill lets calls through until it
    /// ends, as for any open circuit.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Arc::new(Breaker::new(Config::default()));
    /// let ends = breaker.drill(Duration::from_secs(30)).unwrap();
    /// assert_eq!(breaker.state(), State::ForcedOpen);
    /// assert_eq!(breaker.drill_ends(), Some(ends));
    /// assert!(breaker.try_acquire().unwrap_err().is_rejection());
    ///
    /// tokio::time::sleep(Duration::from_secs(31)).await;
    /// assert_eq!(breaker.state(), State::Closed, "put back as it was");
    /// assert_eq!(breaker.drill_ends(), None);
    /// # }
    /// ```
    pub fn drill(self: &Arc<Self>, open_for: Duration) -> Result<Instant, DrillError> {
        if open_for.is_zero() {
            return Err(DrillError::Zero);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| DrillError::NoRuntime)?;
        // Allocated before the lock is taken.
        let slot = self.outside().drill.get_or_init(|| {
            Box::new(Slot {
                ends: AtomicU64::new(0),
                running: Mutex::new(None),
            })
        });
        let (announcement, generation, ends, restore) = {
            let mut cold = self.cold();
            loop {
                let seen = self.word();
                if seen.shadow() {
                    return Err(DrillError::Shadow);
                }
                if let Some(drill) = slot.running().as_ref() {
                    return Err(DrillError::Drilling {
                        ends: clock::to_instant(drill.ends),
                    });
                }
                let restore = seen.state();
                if restore == State::ForcedOpen {
                    return Err(DrillError::ForcedOpen);
                }
                // Relaxed: written before the word that announced the opening, read here after
                // it, under the lock that every later opening takes.
                let open_until = self.open_until.load(Ordering::Relaxed);
                let now = clock::now();
                let change = Change::local(Tally::EMPTY, now);
                // The hold records its own opening over the one the circuit may be in: kept, to
                // be put back with the open circuit.
                let opened = if restore == State::Open {
                    cold.opened.take()
                } else {
                    None
                };
                let Some(mut announcement) =
                    self.transition(&mut cold, seen, State::ForcedOpen, change)
                else {
                    // The first call after the break moved the circuit meanwhile: look again.
                    if opened.is_some() {
                        cold.opened = opened;
                    }
                    continue;
                };
                // A drill's hold says so, in the snapshot and in its log line.
                announcement.drilled();
                if let Some(hold) = cold.opened.as_deref_mut() {
                    hold.evidence.drilled();
                }
                let generation = self.word().generation();
                // At least 1: 0 stands for no drill.
                let ends = now.saturating_add(duration_nanos(open_for)).max(1);
                // Relaxed: read without the lock only to know whether to take it.
                slot.ends.store(ends, Ordering::Relaxed);
                *slot.running() = Some(Drill {
                    generation,
                    ends,
                    open_for,
                    restore,
                    open_until,
                    opened,
                    task: None,
                });
                break (announcement, generation, ends, restore);
            }
        };
        self.emit(announcement);
        tracing::info!(
            breaker = %self.name(),
            open_for = ?open_for,
            restores = restore.as_str(),
            "circuit breaker drill started"
        );
        let ends_at = clock::to_instant(ends);
        let breaker = Arc::downgrade(self);
        let task = runtime.spawn(async move {
            tokio::time::sleep_until(ends_at).await;
            if let Some(breaker) = breaker.upgrade() {
                breaker.end_drill(generation, Ended::Elapsed);
            }
        });
        // Kept with the drill unless something ended it while the task was being spawned.
        let _cold = self.cold();
        match slot.running().as_mut() {
            Some(drill) if drill.generation == generation => {
                drill.task = Some(task.abort_handle());
            }
            _ => task.abort(),
        }
        Ok(ends_at)
    }

    /// Ends the running drill now and puts the state back as its end would have
    /// ([`drill`](Self::drill)). Returns the state put back; `None` when no drill was running
    /// (the state is left as it is).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Arc::new(Breaker::new(Config::default()));
    /// breaker.drill(Duration::from_secs(600)).unwrap();
    /// assert_eq!(breaker.stop_drill(), Some(State::Closed));
    /// assert_eq!(breaker.state(), State::Closed);
    /// assert_eq!(breaker.stop_drill(), None, "nothing left to stop");
    /// # }
    /// ```
    pub fn stop_drill(&self) -> Option<State> {
        let generation = {
            let _cold = self.cold();
            self.drill_slot()?.running().as_ref()?.generation
        };
        self.end_drill(generation, Ended::Stopped)
    }

    /// When the running drill ends, on tokio's clock; `None` when no drill is running. A drill
    /// past its end whose task has not run yet is ended here.
    pub fn drill_ends(&self) -> Option<Instant> {
        self.end_overdue_drill();
        let _cold = self.cold();
        let ends = self.drill_slot()?.running().as_ref()?.ends;
        Some(clock::to_instant(ends))
    }

    /// When the running drill ends, read without the lock and without ending one that is past
    /// its end: for the snapshot, which observers read from where no transition may run.
    pub(super) fn drill_end_reading(&self) -> Option<Instant> {
        let ends = self.drill_slot()?.ends.load(Ordering::Relaxed);
        (ends != 0).then(|| clock::to_instant(ends))
    }

    /// Ends a drill whose end has passed, if its task has not yet: whether it did. Outside a
    /// drill, a load; during one, a clock reading too; the lock only once it is over.
    #[inline]
    pub(super) fn end_overdue_drill(&self) -> bool {
        let Some(slot) = self.drill_slot() else {
            return false;
        };
        let ends = slot.ends.load(Ordering::Relaxed);
        ends != 0 && clock::now() >= ends && self.end_drill_past_its_end()
    }

    /// The state a drill past its end puts back, without putting it back: reading the state
    /// announces no transition, so that it never calls a listener from where it is read.
    pub(super) fn state_after_drill(&self) -> Option<State> {
        let ends = self.drill_slot()?.ends.load(Ordering::Relaxed);
        if ends == 0 || clock::now() < ends {
            return None;
        }
        let cold = self.cold();
        let (generation, restore) = self.drilling(&cold)?;
        let ends = self.drill_slot()?.running().as_ref()?.ends;
        (self.word().is(generation, State::ForcedOpen) && clock::now() >= ends).then_some(restore)
    }

    #[cold]
    #[inline(never)]
    fn end_drill_past_its_end(&self) -> bool {
        let generation = {
            let _cold = self.cold();
            match self
                .drill_slot()
                .and_then(|s| s.running().as_ref().map(|d| (d.generation, d.ends)))
            {
                Some((generation, ends)) if clock::now() >= ends => generation,
                _ => return false,
            }
        };
        self.end_drill(generation, Ended::Elapsed).is_some()
    }

    /// Where the drill is kept, once one was started.
    fn drill_slot(&self) -> Option<&Slot> {
        self.outside.get()?.drill.get().map(|slot| &**slot)
    }

    /// The running drill, taken under the cold lock (`_held`): it is over.
    fn take_drill(&self, _held: &mut Cold) -> Option<Drill> {
        let slot = self.drill_slot()?;
        let drill = slot.running().take()?;
        slot.ends.store(0, Ordering::Relaxed);
        Some(drill)
    }

    /// The generation of the running drill, read under the cold lock (`_held`).
    fn drilling(&self, _held: &Cold) -> Option<(u32, State)> {
        let slot = self.drill_slot()?;
        let running = slot.running();
        running.as_ref().map(|d| (d.generation, d.restore))
    }

    /// Puts back what the drill of `generation` interrupted, if that drill is still running.
    fn end_drill(&self, generation: u32, how: Ended) -> Option<State> {
        let (announcement, drill) = {
            let mut cold = self.cold();
            if self.drilling(&cold)?.0 != generation {
                return None;
            }
            let mut drill = self.take_drill(&mut cold)?;
            let seen = self.word();
            // Every transition but the drill's own takes the drill first: a word that moved
            // on without it is a bug elsewhere, and then putting nothing back is the safe way.
            if !seen.is(generation, State::ForcedOpen) {
                return None;
            }
            let now = clock::now();
            let mut change = Change::local(Tally::EMPTY, now);
            if drill.restore == State::Open {
                change.open_for = Some(drill.open_until.saturating_sub(now));
            }
            // From forced open, which only the lock changes: this cannot lose a race.
            let announcement = self.transition(&mut cold, seen, drill.restore, change)?;
            if let Some(opened) = drill.opened.take() {
                cold.opened = Some(opened);
            }
            (announcement, drill)
        };
        if let (Ended::Stopped, Some(task)) = (how, &drill.task) {
            task.abort();
        }
        self.emit(announcement);
        tracing::info!(
            breaker = %self.name(),
            open_for = ?drill.open_for,
            ended = how.as_str(),
            restored = drill.restore.as_str(),
            "circuit breaker drill ended"
        );
        Some(drill.restore)
    }

    /// Ends the running drill, if any, because another change of state wins over it: called
    /// under the lock by every such change, before it is made.
    pub(super) fn overtake_drill(&self, cold: &mut Cold) -> Option<Overtaken> {
        self.take_drill(cold).map(Overtaken)
    }

    /// Whether an order from outside must leave the circuit as it is: an operator holds it,
    /// and a drill is no operator's hold, unless it interrupted one.
    pub(super) fn held_against_orders(&self, cold: &Cold, seen: Word) -> bool {
        match self.drilling(cold) {
            Some((_, restore)) => restore == State::Disabled,
            None => matches!(seen.state(), State::ForcedOpen | State::Disabled),
        }
    }
}

impl Overtaken {
    /// Logs the drill's end by `by`, and stops its task; with no lock held.
    pub(super) fn log(self, breaker: &Breaker, by: &str) {
        let drill = self.0;
        if let Some(task) = &drill.task {
            task.abort();
        }
        tracing::info!(
            breaker = %breaker.name(),
            open_for = ?drill.open_for,
            ended = by,
            restored = "nothing",
            "circuit breaker drill ended"
        );
    }
}
