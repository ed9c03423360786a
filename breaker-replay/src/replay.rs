//! The trace driven through a real [`Breaker`] on tokio's paused clock: each call admitted at
//! its recorded time, running for its recorded duration, and ending as recorded, so that the
//! runtime's own admission, timeout, slow-call and probe rules decide everything.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use breaker_runtime::trace::{Entry, Outcome, bucket_start};
use breaker_runtime::{Breaker, Config, OwnedPermit, Record, State, Verdict, Window};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

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
/// milliseconds. (tokio's timers reach about two.)
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
    /// The runtime it runs on could not be built.
    #[error("cannot start the replay's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The thread it ran on stopped without an answer.
    #[error("the replay's thread stopped without an answer")]
    Thread,
}

/// Replays `trace` through a breaker built with `config`, on a paused clock of its own.
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
/// starting in that millisecond started after it.
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
    // A runtime of its own, on a thread of its own: it may be called from inside another
    // runtime, and several candidates replay at once.
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .start_paused(true)
                    .build()?;
                let local = tokio::task::LocalSet::new();
                Ok(local.block_on(&runtime, drive(trace, config.clone())))
            })
            .join()
            .map_err(|_| ReplayError::Thread)?
    })
}

/// Replays `trace` under each configuration, all at once (a thread each, up to the machine's
/// parallelism), answering in the order given.
pub fn replay_all(trace: &[Entry], configs: &[Config]) -> Result<Vec<Replay>, ReplayError> {
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut replays = Vec::with_capacity(configs.len());
    for chunk in configs.chunks(width.max(1)) {
        let answers: Vec<Result<Replay, ReplayError>> = std::thread::scope(|scope| {
            let running: Vec<_> = chunk
                .iter()
                .map(|config| scope.spawn(move || replay(trace, config)))
                .collect();
            running
                .into_iter()
                .map(|handle| handle.join().unwrap_or(Err(ReplayError::Thread)))
                .collect()
        });
        for answer in answers {
            replays.push(answer?);
        }
    }
    Ok(replays)
}

async fn drive(trace: &[Entry], config: Config) -> Replay {
    let timeout = config.timeout();
    let start = begin(config.window()).await;
    // The replayed breaker keeps no flight record: the trace is the record, and a candidate's
    // replay should cost what its judgement costs.
    let config = config
        .to_builder()
        .record(Record::Off)
        .build()
        .unwrap_or(config);
    let breaker = Arc::new(Breaker::new(config));
    let seen: Arc<Mutex<Vec<(Instant, State, State)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let _subscription = breaker.on_transition(move |t| {
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((t.at, t.from, t.to));
    });
    let fates = Rc::new(RefCell::new(vec![Fate::Rejected; trace.len()]));
    let mut running = JoinSet::new();
    let mut index = 0;
    while index < trace.len() {
        let now_ms = trace[index].at_ms;
        sleep_until(at(start, now_ms)).await;
        // The calls that end at this instant were woken with this task: they record first.
        tokio::task::yield_now().await;
        while running.try_join_next().is_some() {}
        while let Some(entry) = trace.get(index).filter(|e| e.at_ms == now_ms) {
            let Ok(permit) = breaker.try_acquire_owned() else {
                index += 1;
                continue;
            };
            if entry.outcome == Outcome::Rejected {
                // Unused, the permit counts as cancelled: nothing is recorded.
                drop(permit);
                fates.borrow_mut()[index] = Fate::Unknown;
                index += 1;
                continue;
            }
            let fate = Rc::clone(&fates);
            let call = run(permit, *entry, start, timeout);
            if entry.duration_ms == 0 {
                // Ends at once: recorded before the next call of this instant is admitted.
                fates.borrow_mut()[index] = Fate::Ran(call.await);
            } else {
                running.spawn_local(async move {
                    let ending = call.await;
                    fate.borrow_mut()[index] = Fate::Ran(ending);
                });
            }
            index += 1;
        }
    }
    while running.join_next().await.is_some() {}
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
    let fates = fates.borrow().clone();
    Replay {
        changes,
        fates,
        end_ms,
    }
}

/// Where the replay's clock counts the trace from. A time window's buckets have their edges
/// fixed on the process's clock, and a breaker's trace counts from one
/// ([`bucket_start`](breaker_runtime::trace::bucket_start)): the replay starts at one too, so
/// that each call falls in the bucket it fell in when recorded. At the first whole millisecond
/// of the runtime's timers at or after the edge: a timer fires on one, and a call recorded at
/// `at_ms` was admitted within the millisecond that follows.
async fn begin(window: Window) -> Instant {
    let grid = Instant::now();
    let Window::Time(span) = window else {
        return grid;
    };
    // The edge before `grid + span` is after `grid`: a bucket is shorter than the window.
    let edge = bucket_start(window, grid + span);
    let ms = edge
        .saturating_duration_since(grid)
        .as_nanos()
        .div_ceil(1_000_000);
    let begin = grid + Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX));
    sleep_until(begin).await;
    begin
}

/// The instant `ms` milliseconds after `start` (`ms` is within [`MAX_SPAN_MS`], checked before
/// the replay starts).
fn at(start: Instant, ms: u64) -> Instant {
    start
        .checked_add(Duration::from_millis(ms.min(MAX_SPAN_MS)))
        .unwrap_or(start)
}

/// The admitted call, as the trace recorded it, under the breaker's own timeout.
fn run(
    permit: OwnedPermit,
    entry: Entry,
    start: Instant,
    timeout: Option<Duration>,
) -> impl Future<Output = Ending> + 'static {
    let recorded = entry.outcome;
    let waited = Duration::from_millis(entry.duration_ms);
    // A recorded timeout ran at least its duration: a candidate timeout within it cuts it.
    let never_answers = recorded == Outcome::Timeout && timeout.is_some_and(|t| t <= waited);
    let ends = at(start, entry.at_ms.saturating_add(entry.duration_ms));
    async move {
        let body = async move {
            if !waited.is_zero() {
                sleep_until(ends).await;
            }
            if never_answers {
                std::future::pending::<()>().await;
            }
            recorded
        };
        match permit.run(body, verdict).await {
            Err(_) => Ending::TimedOut,
            Ok(Outcome::Failure | Outcome::Timeout) => Ending::Failed,
            Ok(Outcome::Ignored | Outcome::Rejected) => Ending::Ignored,
            Ok(_) => Ending::Answered,
        }
    }
}

fn verdict(outcome: &Outcome) -> Verdict {
    match outcome {
        Outcome::Failure | Outcome::Timeout => Verdict::Failure,
        Outcome::Ignored | Outcome::Rejected => Verdict::Ignore,
        _ => Verdict::Success,
    }
}
