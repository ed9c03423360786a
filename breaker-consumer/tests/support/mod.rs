//! A downstream that fails on demand and counts what reaches it, and a consumer run in the
//! background, for the consumer's tests.

#![allow(dead_code)]

pub mod logs;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use breaker_consumer::{CancellationToken, Consumer, Delivery, Failure, Handled, Source, Stats};
use breaker_runtime::{Breaker, Config, IsFailure, State};
use tokio::task::JoinHandle;

#[derive(Debug, thiserror::Error, IsFailure)]
pub enum DownstreamError {
    #[error("the downstream is unavailable")]
    Unavailable,
    #[error("the downstream declined")]
    #[breaker(healthy)]
    Declined,
    #[error("the request was refused locally")]
    Local(#[source] LocalRefusal),
}

/// An error the consumer can be told to exclude, found in the chain of another.
#[derive(Debug, thiserror::Error)]
#[error("refused before reaching the downstream")]
pub struct LocalRefusal;

/// A downstream that is up or down, takes `work` per call, and counts calls and concurrency.
#[derive(Debug)]
pub struct Downstream {
    healthy: AtomicBool,
    work: Duration,
    pub calls: AtomicU64,
    in_flight: AtomicUsize,
    pub max_in_flight: AtomicUsize,
}

impl Downstream {
    pub fn new(work: Duration) -> Arc<Downstream> {
        Arc::new(Downstream {
            healthy: AtomicBool::new(true),
            work,
            calls: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        })
    }

    pub fn set_healthy(&self, healthy: bool) {
        self.healthy.store(healthy, Ordering::SeqCst);
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn reset_max_in_flight(&self) {
        self.max_in_flight.store(0, Ordering::SeqCst);
    }

    /// One call: fails at its end if the downstream is down by then. Cancellation-aware when
    /// given a token: returns `Unavailable` as soon as it fires.
    pub async fn call(&self, cancel: Option<&CancellationToken>) -> Result<(), DownstreamError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        let _leaving = Leaving(&self.in_flight);
        match cancel {
            Some(token) => {
                tokio::select! {
                    () = tokio::time::sleep(self.work) => {}
                    () = token.cancelled() => return Err(DownstreamError::Unavailable),
                }
            }
            None => tokio::time::sleep(self.work).await,
        }
        if self.healthy.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(DownstreamError::Unavailable)
        }
    }
}

struct Leaving<'a>(&'a AtomicUsize);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A breaker of `window` calls that opens at 50% and breaks for `break_secs`, doubling after
/// each failed probe round up to 16 times that.
pub fn breaker(window: u32, probes: u32, break_secs: u64) -> Arc<Breaker> {
    Arc::new(Breaker::new(
        Config::builder()
            .count_window(window)
            .probes(probes)
            .break_duration(Duration::from_secs(break_secs))
            .max_break_duration(Duration::from_secs(break_secs * 16))
            .no_timeout()
            .build()
            .unwrap(),
    ))
}

/// What the plain handler's future resolves to, boxed.
pub type Answer =
    std::pin::Pin<Box<dyn Future<Output = Result<Handled, Failure<DownstreamError>>> + Send>>;

/// The plain handler: call the downstream, honouring cancellation.
pub fn handler<P: Send + 'static, I: Send + 'static>(
    downstream: &Arc<Downstream>,
) -> impl Fn(Delivery<P, I>, CancellationToken) -> Answer + Send + Sync + 'static {
    let downstream = Arc::clone(downstream);
    move |_delivery, cancel| {
        let downstream = Arc::clone(&downstream);
        Box::pin(async move {
            downstream.call(Some(&cancel)).await?;
            Ok(Handled::Done)
        })
    }
}

/// A consumer running in the background until [`Running::stop`].
pub struct Running {
    shutdown: CancellationToken,
    task: JoinHandle<Stats>,
}

impl Running {
    pub fn start<S, H, Fut, E>(consumer: Arc<Consumer<S>>, handler: H) -> Running
    where
        S: Source,
        H: Fn(Delivery<S::Payload, S::Id>, CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Handled, Failure<E>>> + Send + 'static,
        E: IsFailure + std::error::Error + Send + 'static,
    {
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let task = tokio::spawn(async move { consumer.run(handler, stop).await });
        Running { shutdown, task }
    }

    pub async fn stop(self) -> Stats {
        self.shutdown.cancel();
        self.task.await.unwrap()
    }
}

/// Waits on tokio's clock, in steps of 10 ms, until `done` holds; panics after `limit`.
pub async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = tokio::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the consumer has paused for the opening it is in and has settled every delivery
/// it handed out, or until the break ends. From the pause on, its fetch loop waits for
/// admission, so no read is in flight: one sent just before the opening has landed and its
/// deliveries are back. `pauses` is the count seen at the last call, brought up to date.
/// `false` if the circuit left open first (the break was over before the consumer was quiet:
/// read the next one instead).
pub async fn quiet_while_open<S: Source>(
    consumer: &Consumer<S>,
    breaker: &Breaker,
    pauses: &mut u64,
) -> bool {
    loop {
        let stats = consumer.stats();
        let settled = stats.acked + stats.retried + stats.dead_lettered;
        if stats.pauses > *pauses && settled == stats.handled + stats.released {
            *pauses = stats.pauses;
            return true;
        }
        if breaker.state() != State::Open {
            *pauses = stats.pauses;
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Why a break was not judged, counted for a failure's message.
#[derive(Debug, Default)]
pub struct Skipped {
    /// The consumer was not paused and quiet before the break ended.
    pub not_quiet: u32,
    /// The broker's readings took too long to fit in what was left of the break.
    pub slow_readings: u32,
    /// A probe round, or the end of the break, came between the two readings.
    pub round_between: u32,
}

pub fn is_open(breaker: &Breaker) -> bool {
    breaker.state() == State::Open
}

/// Watches the half-open stretches of a breaker: probe rounds begun (a failed round is over in
/// milliseconds, too soon to see by polling the state), and the most calls the downstream had
/// in flight during any of them, read as each ends.
pub struct ProbeWatch {
    pub rounds: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
    _subscription: breaker_runtime::Subscription,
}

impl ProbeWatch {
    pub fn install(breaker: &Breaker, downstream: &Arc<Downstream>) -> ProbeWatch {
        let (rounds, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let subscription = breaker.on_transition({
            let (rounds, peak, downstream) = (
                Arc::clone(&rounds),
                Arc::clone(&peak),
                Arc::clone(downstream),
            );
            move |t| match t.to {
                State::HalfOpen => {
                    rounds.fetch_add(1, Ordering::SeqCst);
                    downstream.reset_max_in_flight();
                }
                _ if t.from == State::HalfOpen => {
                    peak.fetch_max(downstream.max_in_flight(), Ordering::SeqCst);
                }
                _ => {}
            }
        });
        ProbeWatch {
            rounds,
            peak,
            _subscription: subscription,
        }
    }

    pub fn rounds(&self) -> usize {
        self.rounds.load(Ordering::SeqCst)
    }

    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }
}
