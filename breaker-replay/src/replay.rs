//! The trace driven through a real [`Breaker`] on a simulated clock: each call admitted at its
//! recorded time and ended at its recorded end (or the candidate's timeout), so that the
//! runtime's own admission, window, slow-call and probe rules decide everything.
//!
//! No runtime, task or timer: one thread moves the breaker's clock
//! ([`SimulatedClock`]) from one instant of the trace to the next, admits calls through the
//! permit API and ends them in the order they end, tens of millions of calls a second.

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use breaker_runtime::simulation::{ClockTaken, SimulatedClock};
use breaker_runtime::trace::{Entry, Outcome, bucket_start_of};
use breaker_runtime::{Breaker, Config, Permit, Record, State, Window, WindowKind};
use tokio::time::Instant;

mod running;

use running::Running;

/// What the replayed breaker did, call by call and state by state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// Every change of state, in order.
    pub changes: Vec<Change>,
    /// What became of each call of the trace, in the trace's order.
    pub fates: Vec<Fate>,
    /// When the trace ends: the latest end of a call as recorded (`at_ms + duration_ms`), in
    /// milliseconds since the trace's start.
    pub end_ms: u64,
}

/// One change of the replayed breaker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// When, in milliseconds since the trace's start.
    pub at_ms: u64,
    /// The state it left.
    pub from: State,
    /// The state it entered.
    pub to: State,
}

/// What became of one call of the trace under the candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fate {
    /// Turned away.
    Rejected,
    /// Admitted and run, ending as the candidate judged it.
    Ran(Ending),
    /// Admitted, but the trace says the call was turned away when it was recorded, so how it
    /// would have ended is unknown: not run, nothing recorded.
    Unknown,
}

/// How an admitted call ended, as the candidate's breaker judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The dependency answered (a success, a business answer, or a slow answer).
    Answered,
    /// The dependency failed the call.
    Failed,
    /// The candidate's timeout cut the call.
    TimedOut,
    /// Neither: nothing recorded.
    Ignored,
}

/// The longest trace a replay takes, from its start to its last call's end: a year, in
/// milliseconds.
pub const MAX_SPAN_MS: u64 = 365 * 24 * 3_600_000;

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A call ends past [`MAX_SPAN_MS`].
    #[error(
        "call {call} of the trace ends {end_ms} ms after the trace's start, past the longest a replay takes ({MAX_SPAN_MS} ms, a year)"
    )]
    TooLong {
        /// The call, counting from 1.
        call: usize,
        /// When it ends.
        end_ms: u64,
    },
    /// The thread it was asked to run on already runs a simulation.
    #[error("cannot replay: {0}")]
    Clock(#[from] ClockTaken),
    /// The replay stopped without an answer (it panicked: a bug, to report).
    #[error("the replay's thread stopped without an answer")]
    Thread,
}

/// Replays `trace` through a breaker built with `config`, on a simulated clock of its own
/// (on the calling thread, which must not run another).
///
/// A call ends as recorded, except where the candidate decides otherwise:
///
/// - `success`, `healthy`, `slow`: the dependency answers after `duration_ms`; the candidate's
///   `timeout` cuts it if shorter, and its `slow_call` judges whether it was slow.
/// - `failure`: a failure after `duration_ms` (or a timeout, if the candidate's is shorter).
/// - `timeout`: the call ran at least `duration_ms` without an answer. Under a timeout of at
///   most that, it times out at the candidate's timeout; under a longer timeout or none, it
///   fails at `duration_ms`, which is all the trace knows of it.
/// - `ignored`: ignored after `duration_ms`.
/// - `rejected`: if the candidate admits it, it is [`Fate::Unknown`]: not run, nothing recorded.
///
/// Calls that end in the same millisecond as others start are recorded first: times are
/// rounded down and durations up, so a recorded end never comes before the real one, and a call
/// starting in that millisecond started after it. Calls that end in the same millisecond are
/// recorded in the order they were admitted.
///
/// ```
/// use breaker_runtime::trace::parse;
/// use breaker_runtime::{Config, State};
/// use breaker_replay::{Fate, replay};
///
/// let trace = parse("at_ms,duration_ms,outcome\n0,5,failure\n10,5,failure\n20,5,success\n")?;
/// let config = Config::builder().count_window(2).build()?;
/// let replayed = replay(&trace, &config)?;
/// assert_eq!(replayed.changes[0].to, State::Open);
/// assert_eq!(replayed.changes[0].at_ms, 15);
/// assert_eq!(replayed.fates[2], Fate::Rejected);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn replay(trace: &[Entry], config: &Config) -> Result<Replay, ReplayError> {
    if let Some((i, end_ms)) = trace
        .iter()
        .map(|e| e.at_ms.saturating_add(e.duration_ms))
        .enumerate()
        .find(|(_, end)| *end > MAX_SPAN_MS)
    {
        return Err(ReplayError::TooLong {
            call: i + 1,
            end_ms,
        });
    }
    let mut clock = SimulatedClock::start()?;
    Ok(drive(trace, config, &mut clock))
}

/// Replays `trace` under each configuration, spread over the machine's cores (a thread each,
/// taking the next candidate as it finishes one), answering in the order given.
pub fn replay_all(trace: &[Entry], configs: &[Config]) -> Result<Vec<Replay>, ReplayError> {
    replay_each(trace, configs, |_, replayed| replayed)
}

/// [`replay_all`], handing each replay to `judge` on the thread that ran it (with the
/// configuration's place in `configs`) and answering what `judge` made of each: a thousand
/// replays of a long trace are then never all held at once.
pub fn replay_each<T: Send>(
    trace: &[Entry],
    configs: &[Config],
    judge: impl Fn(usize, Replay) -> T + Sync,
) -> Result<Vec<T>, ReplayError> {
    let width = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(configs.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let done: Vec<Mutex<Option<Result<T, ReplayError>>>> =
        configs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..width {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                    let Some(config) = configs.get(i) else { break };
                    // A candidate whose replay panicked answers an error; the others go on.
                    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        replay(trace, config).map(|replayed| judge(i, replayed))
                    }))
                    .unwrap_or(Err(ReplayError::Thread));
                    *done[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(answer);
                }
            });
        }
    });
    done.into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or(Err(ReplayError::Thread))
        })
        .collect()
}

fn drive(trace: &[Entry], config: &Config, clock: &mut SimulatedClock) -> Replay {
    let timeout_ms = config.timeout().map(ceil_ms);
    let start = begin(config.window(), config.window_kind(), clock);
    // The replayed breaker keeps no flight record: the trace is the record, and a candidate's
    // replay should cost what its judgement costs.
    let config = config
        .to_builder()
        .record(Record::Off)
        .build()
        .unwrap_or_else(|_| config.clone());
    let breaker = Breaker::new(config);
    let seen: Arc<Mutex<Vec<(Instant, State, State)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let _subscription = breaker.on_transition(move |t| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((t.at, t.from, t.to));
    });
    let mut fates = vec![Fate::Rejected; trace.len()];
    let mut running = Running::default();
    let mut line = Timeline { clock, now_ms: 0 };
    for (index, entry) in trace.iter().enumerate() {
        // The clock never goes back: a call out of order is admitted when the one before it was.
        let now_ms = line.now_ms.max(entry.at_ms);
        // The calls that end by this instant are recorded first.
        end_until(&mut running, now_ms, &mut line, &mut fates);
        line.to(now_ms);
        let Ok(permit) = breaker.try_acquire() else {
            continue;
        };
        if entry.outcome == Outcome::Rejected {
            // Unused, the permit counts as cancelled: nothing is recorded.
            drop(permit);
            fates[index] = Fate::Unknown;
            continue;
        }
        let (after_ms, ending) = how_it_ends(entry, timeout_ms);
        if after_ms == 0 {
            // Ends at once: recorded before the next call of this instant is admitted.
            fates[index] = end(permit, ending);
        } else {
            running.push(now_ms.saturating_add(after_ms), index, permit, ending);
        }
    }
    end_until(&mut running, u64::MAX, &mut line, &mut fates);
    let end_ms = trace
        .iter()
        .map(|e| e.at_ms.saturating_add(e.duration_ms))
        .max()
        .unwrap_or(0);
    let changes = seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|&(when, from, to)| Change {
            at_ms: u64::try_from(when.saturating_duration_since(start).as_millis())
                .unwrap_or(u64::MAX),
            from,
            to,
        })
        .collect();
    Replay {
        changes,
        fates,
        end_ms,
    }
}

/// Ends every running call that ends by `until_ms`, in the order they end, each at its end
/// as the candidate judges it.
fn end_until(running: &mut Running<'_>, until_ms: u64, line: &mut Timeline, fates: &mut [Fate]) {
    while let Some(call) = running.pop_until(until_ms) {
        line.to(call.ends_ms);
        fates[call.index] = end(call.permit, call.ending);
    }
}

fn end(permit: Permit<'_>, ending: Ending) -> Fate {
    match ending {
        Ending::Answered => permit.success(),
        Ending::Failed | Ending::TimedOut => permit.failure(),
        Ending::Ignored => permit.ignore(),
    }
    Fate::Ran(ending)
}

/// The trace's time line on the simulated clock: milliseconds since the trace's start.
struct Timeline<'c> {
    clock: &'c mut SimulatedClock,
    now_ms: u64,
}

impl Timeline<'_> {
    /// Moves the clock on to `ms` (never back).
    #[inline]
    fn to(&mut self, ms: u64) {
        if ms > self.now_ms {
            self.clock.advance(Duration::from_millis(ms - self.now_ms));
            self.now_ms = ms;
        }
    }
}

/// When an admitted call ends, in milliseconds after its admission, and how: as recorded, or cut
/// by the candidate's timeout. An answer that comes exactly at the timeout is an answer (the
/// call is looked at before its deadline); a recorded timeout ran at least its duration, so a
/// candidate timeout within it cuts it.
fn how_it_ends(entry: &Entry, timeout_ms: Option<u64>) -> (u64, Ending) {
    let waited = entry.duration_ms;
    let cut =
        timeout_ms.filter(|&t| t < waited || (entry.outcome == Outcome::Timeout && t <= waited));
    if let Some(t) = cut {
        return (t, Ending::TimedOut);
    }
    let ending = match entry.outcome {
        Outcome::Failure | Outcome::Timeout => Ending::Failed,
        Outcome::Ignored | Outcome::Rejected => Ending::Ignored,
        _ => Ending::Answered,
    };
    (waited, ending)
}

/// A timeout in whole milliseconds, rounded up: the trace's times are whole milliseconds, and
/// a call recorded as taking `t` ms took at most that.
fn ceil_ms(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

/// Where the replay's clock counts the trace from. A time window's buckets (a fixed window's
/// intervals) have their edges fixed on the process's clock, and a breaker's trace counts from
/// one ([`bucket_start_of`](breaker_runtime::trace::bucket_start_of)): the replay starts just
/// after one too ([`ADMITTED_AFTER`]), so that each call falls in the bucket it fell in when
/// recorded.
fn begin(window: Window, kind: WindowKind, clock: &mut SimulatedClock) -> Instant {
    let grid = clock.now();
    let Window::Time(span) = window else {
        return grid;
    };
    // The edge before `grid + ahead` is after `grid`: a sliding window's bucket is a tenth of
    // the window, and a fixed window's interval its span (and a few nanoseconds more).
    let ahead = match kind {
        WindowKind::Sliding => span,
        WindowKind::Fixed => span * 2,
    };
    clock.advance_to(bucket_start_of(window, kind, grid + ahead) + ADMITTED_AFTER);
    clock.now()
}

/// How far into its recorded millisecond a call is admitted. A trace's times are rounded down
/// to the millisecond, so a call recorded at `at_ms` was admitted within the millisecond that
/// follows; a bucket edge on that millisecond's first nanosecond (or a nanosecond after, as the
/// window rounds its edges) came before it. A microsecond in, every bucket edge a time window
/// of whole tens of milliseconds draws is where the recorded run drew it.
pub const ADMITTED_AFTER: Duration = Duration::from_micros(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_that_panics_answers_an_error_and_the_others_go_on() {
        let trace = [Entry {
            at_ms: 0,
            duration_ms: 5,
            outcome: Outcome::Failure,
        }];
        let configs = vec![Config::default(); 3];
        let answers = replay_each(&trace, &configs, |i, replayed| {
            assert_ne!(i, 1, "a judge that panics on the second");
            replayed.fates.len()
        });
        assert!(matches!(answers, Err(ReplayError::Thread)));
        let answers = replay_each(&trace, &configs, |_, replayed| replayed.fates.len());
        assert_eq!(answers.unwrap(), [1, 1, 1]);
    }
}
