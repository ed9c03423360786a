//! The replay as it ran before issue 46: one tokio task per call on a paused clock, each call
//! sleeping to its recorded end under `Permit::run`'s own timeout. Kept as the reference the
//! simulated replay is held to: same trace, same options, same replay.

#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use breaker_replay::{Change, Ending, Fate, Replay};
use breaker_runtime::trace::{Entry, Outcome, bucket_start_of};
use breaker_runtime::{Breaker, Config, OwnedPermit, Record, State, Verdict, Window, WindowKind};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until};

const MAX_SPAN_MS: u64 = breaker_replay::replay::MAX_SPAN_MS;

/// `trace` replayed under `config` on tasks, as `breaker_replay::replay` did before issue 46.
pub fn replay_on_tasks(trace: &[Entry], config: &Config) -> Replay {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .start_paused(true)
                    .build()
                    .expect("a runtime");
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, drive(trace, config.clone()))
            })
            .join()
            .expect("the reference replay's thread")
    })
}

async fn drive(trace: &[Entry], config: Config) -> Replay {
    let timeout = config.timeout();
    let start = begin(config.window(), config.window_kind()).await;
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
/// ([`bucket_start_of`](breaker_runtime::trace::bucket_start_of)): the replay starts at one too, so
/// that each call falls in the bucket it fell in when recorded. At the first whole millisecond
/// of the runtime's timers at or after the edge: a timer fires on one, and a call recorded at
/// `at_ms` was admitted within the millisecond that follows.
async fn begin(window: Window, kind: WindowKind) -> Instant {
    let grid = Instant::now();
    let Window::Time(span) = window else {
        return grid;
    };
    // The edge before `grid + ahead` is after `grid`: a bucket is shorter than the window, and
    // a fixed window's interval a few nanoseconds longer at most.
    let ahead = match kind {
        WindowKind::Sliding => span,
        WindowKind::Fixed => span * 2,
    };
    let edge = bucket_start_of(window, kind, grid + ahead);
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
