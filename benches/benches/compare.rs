//! Our breaker against its peers, case by case, in one run so ratios can be read within it.
//!
//! `cargo bench -p breaker-benches --bench compare`
//!
//! Each criterion group is one case; each function in it is one library (or one API of ours).
//! Every guarded call runs the same body: a ready future returning `Ok::<u64, io::Error>(1)`,
//! polled once with a no-op waker. Async paths are polled the same way;
//! sync APIs (failsafe, recloser) are given a closure that polls that same future. No tokio
//! runtime is involved anywhere: nothing here ever waits on a timer.
//!
//! What each peer's path includes:
//!
//! * **failsafe 1.3** (sync `CircuitBreaker::call`): `parking_lot::Mutex` lock to ask, the body,
//!   a second lock to record. Its async `futures::CircuitBreaker::call` also clones and drops the
//!   `Arc` of its state machine per call. It has no count window: the closest policy,
//!   `consecutive_failures`, stands in for it; its time-based policy is
//!   `success_rate_over_time_window` (an EMA plus a windowed adder). In half-open it admits every
//!   call and the first success closes it.
//! * **recloser 1.4** (sync `Recloser::call`, async `AsyncRecloser::call`): a crossbeam-epoch
//!   pin, an atomic load of the state, the body, then a spin-locked ring-buffer write. The async
//!   path also clones and drops an `Arc`. No time window. In half-open it admits every call and
//!   decides once its half-open ring is full (`half_open_len` + 1 records).
//! * **breaker 2.0** (async `CircuitBreaker::call(|| fut)`, its only call API): a
//!   `parking_lot::RwLock` read to ask (reading `Instant::now()` when open), the body, a write
//!   lock to record into a `VecDeque` ring. No time window. Half-open: up to
//!   `half_open_max_calls` probes at once, `success_threshold` successes close it.
//! * **tower-resilience-circuitbreaker 0.14** (a `tower::Service` wrapped by its layer):
//!   `ServiceExt::ready()` (one atomic load when closed; a `try_lock` of the circuit otherwise),
//!   then `call`, which boxes a future that takes the circuit's `tokio::sync::Mutex` twice, clones
//!   the breaker's name `String` into an event per admission and per record, reads
//!   `Instant::now()` twice and calls the inner service. The inner service returns a
//!   `std::future::Ready` (the async block cannot be named as a `Service::Future`); it is polled
//!   once exactly like the async block. Its count-based window is not sliding (counts grow until
//!   the next transition); its time-based window is a `VecDeque` of every call, scanned in full on
//!   every record, so its cost grows with the calls in the window (see `closed_time_window`).
//!
//! Cases a peer lacks are left out of that group (listed in each group's comment).
//!
//! The attribute's rejection is timed on `guarded_down`, whose error type holds the
//! `BreakerError` itself: with `io::Error` every rejection would be boxed into it.

use std::future::Future;
use std::hint::black_box;
use std::io;
use std::pin::pin;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

mod common;

use common::{Dependency, poll_once};

use breaker_runtime::{
    Breaker, BreakerError, Config, ConfigBuilder, Record, State, WindowKind, circuit_breaker,
};
use criterion::measurement::WallTime;
use criterion::{Bencher, BenchmarkGroup, Criterion, criterion_group, criterion_main};
use tower::{Layer, Service, ServiceExt};
use tower_resilience_circuitbreaker::{
    CircuitBreakerError, CircuitBreakerLayer, CircuitState, DefaultClassifier, SlidingWindowType,
};

// --- The body and how it is polled -------------------------------------------------------------

/// The dependency answering at once.
async fn body() -> io::Result<u64> {
    black_box(Ok::<u64, io::Error>(1))
}

/// The dependency refusing the connection: a failure for every library.
async fn failing() -> io::Result<u64> {
    Err(io::Error::from(io::ErrorKind::ConnectionRefused))
}

/// Polls until ready: under contention tower's `tokio::sync::Mutex` may answer `Pending` once.
#[inline(always)]
fn poll_until_ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
        std::hint::spin_loop();
    }
}

// --- Our breaker ---------------------------------------------------------------------------------

fn ours(builder: ConfigBuilder) -> Breaker {
    Breaker::new(builder.build().expect("valid config"))
}

/// The permit API around the same body: ask, run, classify and record.
#[inline(always)]
fn ours_permit(breaker: &Breaker) -> Result<io::Result<u64>, BreakerError> {
    let permit = breaker.try_acquire()?;
    let value = poll_once(body());
    permit.record_value(&value);
    Ok(value)
}

/// The permit API with every 100th call failing (1%: the circuit stays closed).
#[inline(always)]
fn ours_permit_mixed(breaker: &Breaker, n: u64) -> Result<io::Result<u64>, BreakerError> {
    let permit = breaker.try_acquire()?;
    let value = if n % 100 == 0 {
        poll_once(failing())
    } else {
        poll_once(body())
    };
    permit.record_value(&value);
    Ok(value)
}

#[circuit_breaker(window = "100", timeout = "off")]
async fn guarded() -> Result<u64, io::Error> {
    black_box(Ok(1))
}

#[circuit_breaker(window = "100", timeout = "1s")]
async fn guarded_with_timeout() -> Result<u64, io::Error> {
    black_box(Ok(1))
}

/// An error type of the service's own: `io::Error` would box every rejection it carries.
#[derive(Debug)]
enum DownError {
    Breaker(BreakerError),
    Refused,
}

impl From<BreakerError> for DownError {
    fn from(error: BreakerError) -> Self {
        DownError::Breaker(error)
    }
}

impl breaker_runtime::IsFailure for DownError {
    fn is_failure(&self) -> bool {
        matches!(self, DownError::Refused)
    }

    fn is_ignored(&self) -> bool {
        matches!(self, DownError::Breaker(error) if error.is_rejection())
    }
}

/// Opened (with failures) before its rejections are timed.
#[circuit_breaker(window = "100", timeout = "off", break_duration = "1h")]
async fn guarded_down(fail: bool) -> Result<u64, DownError> {
    if fail {
        black_box(Err(DownError::Refused))
    } else {
        black_box(Ok(1))
    }
}

// --- Peers ---------------------------------------------------------------------------------------

type Failsafe<P> = failsafe::StateMachine<P, ()>;
type FailsafeCount = failsafe::failure_policy::ConsecutiveFailures<failsafe::backoff::Constant>;
type FailsafeTime =
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>;

fn failsafe_consecutive(failures: u32, wait: Duration) -> Failsafe<FailsafeCount> {
    failsafe::Config::new()
        .failure_policy(failsafe::failure_policy::consecutive_failures(
            failures,
            failsafe::backoff::constant(wait),
        ))
        .build()
}

#[inline(always)]
fn failsafe_call<P: failsafe::FailurePolicy>(
    sm: &Failsafe<P>,
) -> Result<u64, failsafe::Error<io::Error>> {
    failsafe::CircuitBreaker::call(sm, || poll_once(body()))
}

fn failsafe_state<P>(sm: &Failsafe<P>) -> String {
    // Its Debug prints the state ("closed", "open", "half_open"); there is no other accessor.
    format!("{sm:?}")
}

fn recloser(closed_len: usize, half_open_len: usize, wait: Duration) -> recloser::Recloser {
    recloser::Recloser::custom()
        .error_rate(0.5)
        .closed_len(closed_len)
        .half_open_len(half_open_len)
        .open_wait(wait)
        .build()
}

#[inline(always)]
fn recloser_call(rc: &recloser::Recloser) -> Result<u64, recloser::Error<io::Error>> {
    rc.call(|| poll_once(body()))
}

fn breaker_crate(builder: breaker::CircuitBreakerConfigBuilder) -> breaker::CircuitBreaker {
    breaker::CircuitBreaker::new(builder.build())
}

#[inline(always)]
fn breaker_call(
    bk: &breaker::CircuitBreaker,
) -> Result<u64, breaker::CircuitBreakerError<io::Error>> {
    poll_once(bk.call(body))
}

type Tower = tower_resilience_circuitbreaker::CircuitBreaker<Dependency, DefaultClassifier>;
type TowerAnswer = Result<u64, CircuitBreakerError<io::Error>>;

fn tower_layer(
    builder: tower_resilience_circuitbreaker::CircuitBreakerConfigBuilder,
) -> CircuitBreakerLayer {
    builder.build().expect("valid config")
}

/// `ready().await` then `call(request).await`, each polled once.
#[inline(always)]
fn tower_call(svc: &mut Tower, request: u64) -> TowerAnswer {
    let svc = poll_once(ServiceExt::<u64>::ready(svc))?;
    poll_once(svc.call(request))
}

#[inline(always)]
fn tower_call_contended(svc: &mut Tower, request: u64) -> TowerAnswer {
    let svc = poll_until_ready(ServiceExt::<u64>::ready(svc))?;
    poll_until_ready(svc.call(request))
}

// --- Harness helpers -----------------------------------------------------------------------------

fn configure<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(40);
    group
}

/// The break used where a breaker must be tripped and probed again and again.
const SHORT_BREAK: Duration = Duration::from_micros(1);
/// The break used where a breaker must stay open.
const LONG_BREAK: Duration = Duration::from_secs(3600);

/// Lets `SHORT_BREAK` pass for every breaker tripped before the call.
fn wait_short_break() {
    let start = Instant::now();
    while start.elapsed() < SHORT_BREAK * 3 {
        std::hint::spin_loop();
    }
}

/// Times `op` on fixtures built (and checked) outside the timing, `per_fixture` calls each.
fn chunked<T>(
    iters: u64,
    per_fixture: u64,
    mut setup: impl FnMut() -> T,
    mut op: impl FnMut(&mut T),
    mut check: impl FnMut(&mut T),
) -> Duration {
    let mut left = iters;
    let mut total = Duration::ZERO;
    while left > 0 {
        let mut fixture = setup();
        let n = left.min(per_fixture);
        let start = Instant::now();
        for _ in 0..n {
            op(&mut fixture);
        }
        total += start.elapsed();
        check(&mut fixture);
        left -= n;
    }
    total
}

/// Rounds over a set of breakers: trip each (untimed), let the break pass, time one probe on
/// each, check each closed again (untimed).
fn probe_rounds<T>(
    iters: u64,
    fixtures: &mut [T],
    mut trip: impl FnMut(&mut T),
    mut probe: impl FnMut(&mut T),
    mut check: impl FnMut(&mut T),
) -> Duration {
    let mut left = iters;
    let mut total = Duration::ZERO;
    while left > 0 {
        let n = left.min(fixtures.len() as u64) as usize;
        let round = &mut fixtures[..n];
        round.iter_mut().for_each(&mut trip);
        wait_short_break();
        let start = Instant::now();
        for fixture in round.iter_mut() {
            probe(fixture);
        }
        total += start.elapsed();
        round.iter_mut().for_each(&mut check);
        left -= n as u64;
    }
    total
}

/// Two threads, each doing half of `iters` calls; returns the wall time from the moment both
/// are released until the last one finishes. Criterion divides by `iters`, the calls of both.
/// A contended case with nothing per thread: `call` from both threads, timed as one.
fn bench_two_threads(group: &mut BenchmarkGroup<'_, WallTime>, name: &str, call: impl Fn() + Sync) {
    group.bench_function(name, |b| {
        b.iter_custom(|iters| two_threads(iters, || (), |_| call()))
    });
}

fn two_threads<S: Send>(
    iters: u64,
    mut state: impl FnMut() -> S,
    op: impl Fn(&mut S) + Sync,
) -> Duration {
    let barrier = Barrier::new(2);
    let (barrier, op) = (&barrier, &op);
    std::thread::scope(|scope| {
        let workers: Vec<_> = [iters - iters / 2, iters / 2]
            .into_iter()
            .map(|n| {
                let mut st = state();
                scope.spawn(move || {
                    barrier.wait();
                    let start = Instant::now();
                    for _ in 0..n {
                        op(&mut st);
                    }
                    (start, Instant::now())
                })
            })
            .collect();
        let spans: Vec<(Instant, Instant)> = workers
            .into_iter()
            .map(|w| w.join().expect("worker"))
            .collect();
        let start = spans.iter().map(|s| s.0).min().expect("two spans");
        let end = spans.iter().map(|s| s.1).max().expect("two spans");
        end - start
    })
}

// --- Configurations shared by several cases --------------------------------------------------------

/// Ours: count window of 100, 50%, no timeout.
fn ours_count() -> Breaker {
    ours(Config::builder().count_window(100).no_timeout())
}

fn failsafe_count() -> Failsafe<FailsafeCount> {
    failsafe_consecutive(100, Duration::from_secs(30))
}

fn recloser_count() -> recloser::Recloser {
    recloser(100, 10, Duration::from_secs(30))
}

fn breaker_count() -> breaker::CircuitBreaker {
    breaker_crate(
        breaker::CircuitBreakerConfig::builder()
            .sliding_window_size(100)
            .failure_rate_threshold(0.5)
            .consecutive_failures(u32::MAX)
            .wait_duration(Duration::from_secs(30)),
    )
}

fn tower_count() -> Tower {
    tower_layer(
        CircuitBreakerLayer::builder()
            .failure_rate_threshold(0.5)
            .sliding_window_size(100)
            .wait_duration_in_open(Duration::from_secs(30)),
    )
    .layer(Dependency)
}

// --- Cases ---------------------------------------------------------------------------------------

fn floor(c: &mut Criterion) {
    let mut group = configure(c, "floor");
    let counter = AtomicU64::new(0);
    group.bench_function("AtomicU64::fetch_add", |b| {
        b.iter(|| black_box(counter.fetch_add(1, Ordering::AcqRel)))
    });
    group.bench_function("bare call", |b| b.iter(|| poll_once(body())));
    // The read a time window dates each outcome with: no window can do with less, short of a
    // ticker thread, which this library does not run.
    group.bench_function("coarsetime clock read", |b| {
        b.iter(|| black_box(coarsetime::Instant::now_without_cache_update()))
    });
    group.finish();
}

/// Closed, count window of 100, no timeout, every call succeeding. failsafe has no count window
/// (its `consecutive_failures(100)` stands in); tower's count window does not slide.
fn closed_count_window(c: &mut Criterion) {
    let mut group = configure(c, "closed_count_window");

    let count = ours_count();
    group.bench_function("ours: permit API", |b| b.iter(|| ours_permit(&count)));
    group.bench_function("ours: Breaker::call", |b| {
        b.iter(|| poll_once(count.call(body())))
    });
    group.bench_function("ours: #[circuit_breaker]", |b| {
        b.iter(|| poll_once(guarded()))
    });
    let mixed = ours_count();
    let mut n = 0u64;
    group.bench_function("ours: permit API, 1% failures", |b| {
        b.iter(|| {
            n += 1;
            ours_permit_mixed(&mixed, n)
        })
    });
    assert_eq!(mixed.state(), State::Closed);

    let fs = failsafe_count();
    group.bench_function("failsafe: sync call (consecutive_failures)", |b| {
        b.iter(|| failsafe_call(&fs))
    });
    group.bench_function("failsafe: async call (consecutive_failures)", |b| {
        b.iter(|| poll_once(failsafe::futures::CircuitBreaker::call(&fs, body())))
    });

    let rc = recloser_count();
    group.bench_function("recloser: sync call", |b| b.iter(|| recloser_call(&rc)));
    let arc = recloser::AsyncRecloser::from(recloser_count());
    group.bench_function("recloser: async call", |b| {
        b.iter(|| poll_once(arc.call(body())))
    });

    let bk = breaker_count();
    group.bench_function("breaker: async call", |b| b.iter(|| breaker_call(&bk)));

    let mut svc = tower_count();
    group.bench_function("tower-resilience: layer service (non-sliding count)", |b| {
        b.iter(|| tower_call(&mut svc, 1))
    });
    assert_eq!(svc.state_sync(), CircuitState::Closed);

    group.finish();
}

/// Times `call` through closed breakers with a time window of `span` (min calls 100).
///
/// A bucket (a tenth of the span) stops counting at two million outcomes, which a loop of calls
/// fills in a few dozen milliseconds; a fresh breaker every million calls keeps every call
/// counted, and the check after each holds it to that.
fn time_window_rounds(b: &mut Bencher<'_>, span: Duration, call: impl FnMut(&Breaker)) {
    window_rounds(b, span, WindowKind::Sliding, call)
}

/// [`time_window_rounds`] for a window of either kind. A fixed window's counts clear at each
/// edge of its interval, which may fall within a round: the check holds it to no more than
/// every call.
fn window_rounds(
    b: &mut Bencher<'_>,
    span: Duration,
    kind: WindowKind,
    mut call: impl FnMut(&Breaker),
) {
    b.iter_custom(|iters| {
        chunked(
            iters,
            1_000_000,
            || {
                let builder = Config::builder()
                    .time_window(span)
                    .window_kind(kind)
                    .min_calls(100);
                (ours(builder.no_timeout()), 0)
            },
            |(breaker, calls): &mut (Breaker, u64)| {
                call(breaker);
                *calls += 1;
            },
            |(breaker, calls)| {
                let s = breaker.snapshot();
                assert_eq!(s.state, State::Closed);
                match kind {
                    WindowKind::Sliding => assert_eq!(u64::from(s.calls), *calls),
                    WindowKind::Fixed => assert!(u64::from(s.calls) <= *calls),
                }
            },
        )
    })
}

/// Closed, time window of 30 s (min calls 100). recloser and breaker have no time window.
fn closed_time_window(c: &mut Criterion) {
    let mut group = configure(c, "closed_time_window");
    let span = Duration::from_secs(30);

    group.bench_function("ours: permit API", |b| {
        time_window_rounds(b, span, |breaker| {
            black_box(ours_permit(breaker)).ok();
        })
    });
    group.bench_function("ours: Breaker::call", |b| {
        time_window_rounds(b, span, |breaker| {
            black_box(poll_once(breaker.call(body()))).ok();
        })
    });
    group.bench_function("ours: permit API, fixed window", |b| {
        window_rounds(b, span, WindowKind::Fixed, |breaker| {
            black_box(ours_permit(breaker)).ok();
        })
    });

    let fs: Failsafe<FailsafeTime> = failsafe::Config::new()
        .failure_policy(failsafe::failure_policy::success_rate_over_time_window(
            0.5,
            100,
            span,
            failsafe::backoff::constant(Duration::from_secs(30)),
        ))
        .build();
    group.bench_function("failsafe: sync call (success_rate_over_time_window)", |b| {
        b.iter(|| failsafe_call(&fs))
    });

    // tower's time window keeps every call in a VecDeque and scans it on every record, so a call
    // costs O(calls in the window). A fresh breaker every 1000 calls keeps the window at 0..999
    // calls (about 500 on average); a busier window costs proportionally more.
    let layer = tower_layer(
        CircuitBreakerLayer::builder()
            .failure_rate_threshold(0.5)
            .sliding_window_type(SlidingWindowType::TimeBased)
            .sliding_window_duration(span)
            .minimum_number_of_calls(100),
    );
    group.bench_function(
        "tower-resilience: layer service (window of 0-999 calls)",
        |b| {
            b.iter_custom(|iters| {
                chunked(
                    iters,
                    1000,
                    || layer.layer(Dependency),
                    |svc| {
                        black_box(tower_call(svc, 1)).ok();
                    },
                    |svc| assert_eq!(svc.state_sync(), CircuitState::Closed),
                )
            })
        },
    );

    group.finish();
}

/// Ours only: no peer offers a timeout in the enabled features (breaker's needs its `timeout`
/// feature; tower-resilience's is a separate crate). The body is ready at once, so the timeout's
/// timer is never armed.
fn closed_with_timeout(c: &mut Criterion) {
    let mut group = configure(c, "closed_with_timeout");

    let untimed = ours_count();
    group.bench_function("ours: Breaker::call, no timeout", |b| {
        b.iter(|| poll_once(untimed.call(body())))
    });
    let timed = ours(
        Config::builder()
            .count_window(100)
            .timeout(Duration::from_secs(1)),
    );
    group.bench_function("ours: Breaker::call, 1 s timeout", |b| {
        b.iter(|| poll_once(timed.call(body())))
    });
    group.bench_function("ours: #[circuit_breaker], no timeout", |b| {
        b.iter(|| poll_once(guarded()))
    });
    group.bench_function("ours: #[circuit_breaker], 1 s timeout", |b| {
        b.iter(|| poll_once(guarded_with_timeout()))
    });

    group.finish();
}

/// Every breaker tripped open by failures (not forced), with a 1 h break.
fn open_rejection(c: &mut Criterion) {
    let mut group = configure(c, "open_rejection");

    let open = ours(
        Config::builder()
            .count_window(100)
            .no_timeout()
            .break_duration(LONG_BREAK),
    );
    for _ in 0..100 {
        open.try_acquire().expect("closed").failure();
    }
    assert_eq!(open.state(), State::Open);
    group.bench_function("ours: permit API", |b| b.iter(|| ours_permit(&open)));
    group.bench_function("ours: Breaker::call", |b| {
        b.iter(|| poll_once(open.call(body())))
    });
    assert_eq!(open.state(), State::Open);
    for _ in 0..100 {
        poll_once(guarded_down(true)).ok();
    }
    let down = breaker_runtime::registry()
        .breakers()
        .into_iter()
        .find(|b| b.name().ends_with("guarded_down"))
        .expect("declared");
    assert_eq!(down.state(), State::Open);
    group.bench_function("ours: #[circuit_breaker]", |b| {
        b.iter(|| poll_once(guarded_down(false)))
    });
    assert_eq!(down.state(), State::Open);

    let fs = failsafe_consecutive(1, LONG_BREAK);
    failsafe::CircuitBreaker::call(&fs, || poll_once(failing())).ok();
    assert!(!fs.is_call_permitted());
    group.bench_function("failsafe: sync call", |b| b.iter(|| failsafe_call(&fs)));

    let rc = recloser(100, 10, LONG_BREAK);
    let mut failures = 0;
    while !matches!(
        rc.call(|| poll_once(failing())),
        Err(recloser::Error::Rejected)
    ) {
        failures += 1;
        assert!(failures < 1000, "recloser never opened");
    }
    group.bench_function("recloser: sync call", |b| b.iter(|| recloser_call(&rc)));

    let bk = breaker_crate(
        breaker::CircuitBreakerConfig::builder()
            .sliding_window_size(100)
            .failure_rate_threshold(0.5)
            .consecutive_failures(u32::MAX)
            .wait_duration(LONG_BREAK),
    );
    for _ in 0..100 {
        poll_once(bk.call(failing)).ok();
    }
    assert!(bk.is_open());
    group.bench_function("breaker: async call", |b| b.iter(|| breaker_call(&bk)));

    let mut svc = tower_layer(
        CircuitBreakerLayer::builder()
            .failure_rate_threshold(0.5)
            .sliding_window_size(100)
            .wait_duration_in_open(LONG_BREAK),
    )
    .layer(Dependency);
    for _ in 0..100 {
        tower_call(&mut svc, 0).ok();
    }
    assert!(svc.is_open());
    group.bench_function("tower-resilience: layer service", |b| {
        b.iter(|| tower_call(&mut svc, 1))
    });

    group.finish();
}

/// Probe budget of the "stays half-open" functions: a breaker is built, tripped and its first
/// probe made outside the timing, then `HALF_OPEN_PROBES - 2` probes are timed, all in half-open.
const HALF_OPEN_PROBES: u32 = 1000;

/// Two ways to be half-open.
///
/// *stays half-open*: one probe admitted and recorded as a success, in a breaker that needs
/// `HALF_OPEN_PROBES` successes to close (ours `probes`, breaker `half_open_max_calls` =
/// `success_threshold`, tower `permitted_calls_in_half_open`, recloser `half_open_len`), so no
/// timed probe closes it. A fresh breaker is tripped for every `HALF_OPEN_PROBES - 2` probes,
/// untimed. failsafe cannot take part: its first half-open success closes it.
///
/// *probe closes*: the first call after the break, admitted as the single probe, whose success
/// closes the circuit: the whole half-open episode in one call (ours `probes = 1`). 128
/// breakers are tripped (untimed), the break passes, then one probe on each is timed. recloser
/// cannot take part: it needs at least two half-open records (`half_open_len` + 1) to decide.
/// One "stays half-open" case of ours: each fixture is a breaker with `probes` slots, half-open
/// after its first probe, and `per_fixture` more probes through `probe` are timed on it.
///
/// `record` is the flight recorder's option: on by default, which times every probe (two
/// readings of the coarse clock); off, the case is like for like with the peers, which keep
/// no recorder.
fn ours_stays_half_open(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    (probes, per_fixture, record): (u32, u64, Record),
    probe: fn(&mut Breaker),
) {
    let half_open = move || {
        let breaker = ours(
            Config::builder()
                .record(record)
                .count_window(1)
                .probes(probes)
                .break_duration(SHORT_BREAK)
                .no_timeout(),
        );
        breaker.try_acquire().expect("closed").failure();
        wait_short_break();
        breaker.try_acquire().expect("the first probe").success();
        assert_eq!(breaker.state(), State::HalfOpen);
        breaker
    };
    let still_half_open = |b: &mut Breaker| assert_eq!(b.state(), State::HalfOpen);
    group.bench_function(name, |b| {
        b.iter_custom(|iters| chunked(iters, per_fixture, half_open, probe, still_half_open))
    });
}

fn half_open(c: &mut Criterion) {
    let mut group = configure(c, "half_open");
    let per_fixture = u64::from(HALF_OPEN_PROBES - 2);

    // --- stays half-open ---
    ours_stays_half_open(
        &mut group,
        "stays half-open: ours permit API (probes = 1000)",
        (HALF_OPEN_PROBES, per_fixture, Record::default()),
        |b| {
            black_box(ours_permit(b)).ok();
        },
    );
    ours_stays_half_open(
        &mut group,
        "stays half-open: ours permit API (probes = 1000, record = off)",
        (HALF_OPEN_PROBES, per_fixture, Record::Off),
        |b| {
            black_box(ours_permit(b)).ok();
        },
    );
    ours_stays_half_open(
        &mut group,
        "stays half-open: ours Breaker::call (probes = 1000)",
        (HALF_OPEN_PROBES, per_fixture, Record::default()),
        |b| {
            black_box(poll_once(b.call(body()))).ok();
        },
    );
    ours_stays_half_open(
        &mut group,
        "stays half-open: ours permit API (probes = 100)",
        (100, 98, Record::default()),
        |b| {
            black_box(ours_permit(b)).ok();
        },
    );

    group.bench_function("stays half-open: breaker async call", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                per_fixture,
                || {
                    let bk = breaker_crate(
                        breaker::CircuitBreakerConfig::builder()
                            .consecutive_failures(1)
                            .half_open_max_calls(HALF_OPEN_PROBES)
                            .success_threshold(HALF_OPEN_PROBES)
                            .backoff(breaker::BackoffStrategy::Fixed(SHORT_BREAK)),
                    );
                    poll_once(bk.call(failing)).ok();
                    wait_short_break();
                    breaker_call(&bk).expect("the first probe");
                    assert!(bk.is_half_open());
                    bk
                },
                |bk| {
                    black_box(breaker_call(bk)).ok();
                },
                |bk| assert!(bk.is_half_open()),
            )
        })
    });

    let layer = tower_layer(
        CircuitBreakerLayer::builder()
            .consecutive_failures(1)
            .permitted_calls_in_half_open(HALF_OPEN_PROBES as usize)
            .wait_duration_in_open(SHORT_BREAK),
    );
    group.bench_function("stays half-open: tower-resilience layer service", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                per_fixture,
                || {
                    let mut svc = layer.layer(Dependency);
                    tower_call(&mut svc, 0).ok();
                    assert!(svc.is_open());
                    wait_short_break();
                    tower_call(&mut svc, 1).expect("the first probe");
                    assert_eq!(svc.state_sync(), CircuitState::HalfOpen);
                    svc
                },
                |svc| {
                    black_box(tower_call(svc, 1)).ok();
                },
                |svc| assert_eq!(svc.state_sync(), CircuitState::HalfOpen),
            )
        })
    });

    // recloser has no state accessor; `sanity_check_recloser_half_open` shows this fixture is
    // half-open and stays so for these probes. Note that recloser never frees a replaced state
    // (no `defer_destroy`), so every fixture leaks a few small allocations.
    group.bench_function("stays half-open: recloser sync call", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                per_fixture,
                || {
                    let rc = recloser(1, HALF_OPEN_PROBES as usize, SHORT_BREAK);
                    rc.call(|| poll_once(failing())).ok();
                    rc.call(|| poll_once(failing())).ok();
                    wait_short_break();
                    recloser_call(&rc).expect("the first probe");
                    rc
                },
                |rc| {
                    black_box(recloser_call(rc)).ok();
                },
                |_| {},
            )
        })
    });

    // --- probe closes ---
    const FLEET: usize = 128;

    let one_probe = |record| {
        (0..FLEET)
            .map(|_| {
                ours(
                    Config::builder()
                        .record(record)
                        .count_window(1)
                        .probes(1)
                        .break_duration(SHORT_BREAK)
                        .no_timeout(),
                )
            })
            .collect::<Vec<Breaker>>()
    };
    let trip_ours = |b: &mut Breaker| b.try_acquire().expect("closed").failure();
    let ours_closed = |b: &mut Breaker| assert_eq!(b.state(), State::Closed);
    // Each case of ours on its own fleet: a fleet tripped by one case is closed again by it.
    let ours_probe_closes = |group: &mut BenchmarkGroup<'_, WallTime>,
                             name: &str,
                             record: Record,
                             probe: fn(&mut Breaker)| {
        let mut fleet = one_probe(record);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| probe_rounds(iters, &mut fleet, trip_ours, probe, ours_closed))
        });
    };
    ours_probe_closes(
        &mut group,
        "probe closes: ours permit API (probes = 1)",
        Record::default(),
        |b| {
            black_box(ours_permit(b)).ok();
        },
    );
    ours_probe_closes(
        &mut group,
        "probe closes: ours Breaker::call (probes = 1)",
        Record::default(),
        |b| {
            black_box(poll_once(b.call(body()))).ok();
        },
    );
    ours_probe_closes(
        &mut group,
        "probe closes: ours permit API (probes = 1, record = off)",
        Record::Off,
        |b| {
            black_box(ours_permit(b)).ok();
        },
    );

    let mut fleet: Vec<Failsafe<FailsafeCount>> = (0..FLEET)
        .map(|_| failsafe_consecutive(1, SHORT_BREAK))
        .collect();
    group.bench_function("probe closes: failsafe sync call", |b| {
        b.iter_custom(|iters| {
            probe_rounds(
                iters,
                &mut fleet,
                |sm| {
                    failsafe::CircuitBreaker::call(sm, || poll_once(failing())).ok();
                },
                |sm| {
                    black_box(failsafe_call(sm)).ok();
                },
                |sm| assert!(failsafe_state(sm).contains("closed")),
            )
        })
    });

    let mut fleet: Vec<breaker::CircuitBreaker> = (0..FLEET)
        .map(|_| {
            breaker_crate(
                breaker::CircuitBreakerConfig::builder()
                    .consecutive_failures(1)
                    .half_open_max_calls(1)
                    .success_threshold(1)
                    .backoff(breaker::BackoffStrategy::Fixed(SHORT_BREAK)),
            )
        })
        .collect();
    group.bench_function("probe closes: breaker async call", |b| {
        b.iter_custom(|iters| {
            probe_rounds(
                iters,
                &mut fleet,
                |bk| {
                    poll_once(bk.call(failing)).ok();
                },
                |bk| {
                    black_box(breaker_call(bk)).ok();
                },
                |bk| assert!(bk.is_closed()),
            )
        })
    });

    let layer = tower_layer(
        CircuitBreakerLayer::builder()
            .consecutive_failures(1)
            .permitted_calls_in_half_open(1)
            .wait_duration_in_open(SHORT_BREAK),
    );
    let mut fleet: Vec<Tower> = (0..FLEET).map(|_| layer.layer(Dependency)).collect();
    group.bench_function("probe closes: tower-resilience layer service", |b| {
        b.iter_custom(|iters| {
            probe_rounds(
                iters,
                &mut fleet,
                |svc| {
                    tower_call(svc, 0).ok();
                },
                |svc| {
                    black_box(tower_call(svc, 1)).ok();
                },
                |svc| assert_eq!(svc.state_sync(), CircuitState::Closed),
            )
        })
    });

    group.finish();
}

/// recloser has no state accessor. With a long break, show that the half-open fixture above is
/// half-open after its first probe plus `HALF_OPEN_PROBES - 2` more: two failures then leave it
/// admitting calls, where a closed ring of one (or an open breaker) would reject.
fn sanity_check_recloser_half_open() {
    let wait = Duration::from_millis(20);
    let rc = recloser(1, HALF_OPEN_PROBES as usize, wait);
    rc.call(|| poll_once(failing())).ok();
    rc.call(|| poll_once(failing())).ok();
    assert!(
        matches!(recloser_call(&rc), Err(recloser::Error::Rejected)),
        "tripped"
    );
    std::thread::sleep(wait + Duration::from_millis(5));
    for _ in 0..HALF_OPEN_PROBES - 1 {
        recloser_call(&rc).expect("half-open admits");
    }
    rc.call(|| poll_once(failing())).ok();
    rc.call(|| poll_once(failing())).ok();
    assert!(
        recloser_call(&rc).is_ok(),
        "still half-open: a closed ring of one would have opened on two failures"
    );
}

/// Two threads on one closed breaker (count window of 100, every call succeeding unless said).
/// Criterion's time per iteration is wall time ÷ the calls of both threads.
fn contended_2_threads(c: &mut Criterion) {
    sanity_check_recloser_half_open();
    let mut group = configure(c, "contended_2_threads");

    let counter = AtomicU64::new(0);
    group.bench_function("floor: shared AtomicU64::fetch_add", |b| {
        b.iter_custom(|iters| {
            two_threads(
                iters,
                || (),
                |_| {
                    black_box(counter.fetch_add(1, Ordering::AcqRel));
                },
            )
        })
    });

    let count = ours_count();
    bench_two_threads(&mut group, "ours: permit API", || {
        black_box(ours_permit(&count)).ok();
    });
    bench_two_threads(&mut group, "ours: Breaker::call", || {
        black_box(poll_once(count.call(body()))).ok();
    });
    let mixed = ours_count();
    group.bench_function("ours: permit API, 1% failures", |b| {
        b.iter_custom(|iters| {
            two_threads(
                iters,
                || 0u64,
                |n| {
                    *n += 1;
                    black_box(ours_permit_mixed(&mixed, *n)).ok();
                },
            )
        })
    });
    assert_eq!(mixed.state(), State::Closed);

    let fs = failsafe_count();
    bench_two_threads(&mut group, "failsafe: sync call", || {
        black_box(failsafe_call(&fs)).ok();
    });

    let rc = recloser_count();
    bench_two_threads(&mut group, "recloser: sync call", || {
        black_box(recloser_call(&rc)).ok();
    });

    let bk = breaker_count();
    bench_two_threads(&mut group, "breaker: async call", || {
        black_box(breaker_call(&bk)).ok();
    });

    // Each thread drives its own clone of the service; the clones share one circuit.
    let svc = tower_count();
    group.bench_function("tower-resilience: layer service", |b| {
        b.iter_custom(|iters| {
            two_threads(
                iters,
                || svc.clone(),
                |svc| {
                    black_box(tower_call_contended(svc, 1)).ok();
                },
            )
        })
    });
    assert_eq!(svc.state_sync(), CircuitState::Closed);

    group.finish();
}

criterion_group!(
    benches,
    floor,
    closed_count_window,
    closed_time_window,
    closed_with_timeout,
    open_rejection,
    half_open,
    contended_2_threads
);
criterion_main!(benches);
