//! SPEC section 3 end to end through the attribute, on tokio's paused clock: the circuit opens,
//! rejects without running the body, half-opens at the break, probes, and closes; panics and
//! cancellations behave; futures run on a multi-thread runtime.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use breaker_runtime::{Breaker, BreakerError, State, circuit_breaker, registry};

fn breaker(name: &str) -> Arc<Breaker> {
    registry().get(name).unwrap()
}

fn down() -> Result<u32, std::io::Error> {
    Err(std::io::ErrorKind::ConnectionRefused.into())
}

static RAN: AtomicUsize = AtomicUsize::new(0);

#[circuit_breaker(
    threshold = "50%",
    window = "4",
    break_duration = "30s",
    timeout = "off"
)]
async fn lifecycle(fail: bool) -> Result<u32, std::io::Error> {
    RAN.fetch_add(1, Ordering::SeqCst);
    if fail { down() } else { Ok(1) }
}

#[tokio::test(start_paused = true)]
async fn the_circuit_opens_rejects_half_opens_probes_and_closes() {
    let b = breaker("spec_3_attribute::lifecycle");
    for fail in [false, false, true] {
        let _ = lifecycle(fail).await;
    }
    assert_eq!(
        b.state(),
        State::Closed,
        "1 failure in 3 outcomes, fewer than min_calls"
    );
    let _ = lifecycle(true).await;
    assert_eq!(b.state(), State::Open, "2 of 4 is 50%");

    let ran = RAN.load(Ordering::SeqCst);
    let err = lifecycle(false).await.unwrap_err();
    let rejection = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<BreakerError>())
        .expect("the breaker's answer inside");
    assert!(rejection.is_rejection());
    assert_eq!(RAN.load(Ordering::SeqCst), ran, "the body did not run");

    tokio::time::advance(Duration::from_secs(30) - Duration::from_millis(1)).await;
    assert!(
        lifecycle(false).await.is_err(),
        "still open a millisecond early"
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(
        lifecycle(false).await.unwrap(),
        1,
        "the probe ran at the break"
    );
    assert_eq!(b.state(), State::Closed);
}

#[circuit_breaker(
    window = "2",
    break_duration = "1s",
    max_break_duration = "3s",
    probes = 2,
    timeout = "off"
)]
async fn probing(fail: bool) -> Result<u32, std::io::Error> {
    if fail { down() } else { Ok(1) }
}

#[tokio::test(start_paused = true)]
async fn failed_probes_grow_the_break_and_successful_ones_close_the_circuit() {
    let b = breaker("spec_3_attribute::probing");
    let _ = probing(true).await;
    let _ = probing(true).await;
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(Duration::from_secs(1)).await;
    let _ = probing(true).await; // failed probe: the break doubles to 2 s
    tokio::time::advance(Duration::from_millis(1999)).await;
    assert!(probing(false).await.is_err(), "still open");
    tokio::time::advance(Duration::from_millis(1)).await;
    probing(false).await.unwrap();
    assert_eq!(b.state(), State::HalfOpen, "one success of two probes");
    probing(false).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[circuit_breaker(
    window = "2",
    slow_call = "100ms",
    slow_threshold = "50%",
    timeout = "off"
)]
async fn sluggish(delay_ms: u64) -> Result<u32, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn slow_successes_open_the_circuit_at_the_slow_threshold() {
    sluggish(10).await.unwrap();
    sluggish(150).await.unwrap();
    assert_eq!(breaker("spec_3_attribute::sluggish").state(), State::Open);
}

#[circuit_breaker(window = "2", timeout_ms = 100)]
async fn hangs() -> Result<u32, BreakerError> {
    std::future::pending::<()>().await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_is_cut_at_the_timeout_and_counts_as_a_failure() {
    let started = tokio::time::Instant::now();
    assert!(hangs().await.unwrap_err().is_timeout());
    assert_eq!(started.elapsed(), Duration::from_millis(100));
    assert!(hangs().await.unwrap_err().is_timeout());
    assert!(
        hangs().await.unwrap_err().is_rejection(),
        "two timeouts opened it"
    );
}

#[circuit_breaker(window = "3")]
async fn panics(blow_up: bool) -> Result<u32, BreakerError> {
    if blow_up {
        panic!("bug in the client");
    }
    Ok(1)
}

#[tokio::test]
async fn a_panicking_body_counts_as_a_failure_and_the_panic_reaches_the_caller() {
    let task = tokio::spawn(panics(true));
    assert!(task.await.unwrap_err().is_panic());
    panics(false).await.unwrap();
    let s = breaker("spec_3_attribute::panics").snapshot();
    assert_eq!((s.calls, s.failures), (2, 1));
}

#[circuit_breaker(window = "2", break_duration = "1s", timeout = "off")]
async fn cancellable(delay_ms: u64, fail: bool) -> Result<u32, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
    if fail { down() } else { Ok(1) }
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_half_open_probe_frees_its_slot() {
    let b = breaker("spec_3_attribute::cancellable");
    let _ = cancellable(0, true).await;
    let _ = cancellable(0, true).await;
    tokio::time::advance(Duration::from_secs(1)).await;
    tokio::select! {
        _ = cancellable(60_000, false) => unreachable!("the probe takes a minute"),
        _ = tokio::time::sleep(Duration::from_millis(5)) => {}
    }
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(
        b.snapshot().probes_in_flight,
        0,
        "the cancelled probe gave its slot back"
    );
    cancellable(0, false).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[circuit_breaker(window = "10000", min_calls = 10000, timeout = "off")]
async fn busy(i: usize) -> Result<usize, std::io::Error> {
    tokio::task::yield_now().await;
    if i.is_multiple_of(4) {
        Err(std::io::ErrorKind::TimedOut.into())
    } else {
        Ok(i)
    }
}

#[test]
fn futures_spawned_on_a_multi_thread_runtime_record_every_outcome() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..1_000).map(|i| tokio::spawn(busy(i))).collect();
        for task in tasks {
            let _ = task.await.unwrap();
        }
    });
    let s = breaker("spec_3_attribute::busy").snapshot();
    assert_eq!((s.calls, s.failures), (1_000, 250));
}
