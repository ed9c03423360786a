//! Many tasks on a multi-thread runtime, random outcomes, panics, cancellations and forced
//! transitions, for a bounded number of calls. Afterwards every call is accounted for: each
//! was admitted or rejected, and each admitted call ended exactly once, recorded or cancelled.
//!
//! Counted by a process-wide call observer, so this suite is a binary of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use breaker_runtime::{Breaker, CallEvent, CallObserver, Config, Ending, State, add_call_observer};
use breaker_tests::mix;

#[derive(Default)]
struct Ledger {
    admitted: AtomicU64,
    rejected: AtomicU64,
    recorded: AtomicU64,
    cancelled: AtomicU64,
    panicked: AtomicU64,
}

struct Counting(Arc<Ledger>);

impl CallObserver for Counting {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if breaker.name() != "stressed" {
            return;
        }
        let counter = match event {
            CallEvent::Admitted => &self.0.admitted,
            CallEvent::Rejected => &self.0.rejected,
            CallEvent::Finished {
                ending: Ending::Cancelled,
                ..
            } => &self.0.cancelled,
            CallEvent::Finished { ending, .. } => {
                if ending == Ending::Panic {
                    self.0.panicked.fetch_add(1, Ordering::Relaxed);
                }
                &self.0.recorded
            }
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn every_call_is_admitted_or_rejected_and_every_admitted_call_ends_once() {
    const CALLS: u64 = 20_000;
    const CONCURRENCY: u64 = 64;

    let ledger = Arc::new(Ledger::default());
    add_call_observer(Counting(Arc::clone(&ledger)));
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name("stressed")
            .count_window(20)
            .threshold(50.0)
            .break_duration(Duration::from_millis(1))
            .probes(2)
            .timeout(Duration::from_millis(2))
            .slow_call(Duration::from_micros(500))
            .build()
            .unwrap(),
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .unwrap();
    let cancelled_by_callers = Arc::new(AtomicU64::new(0));
    let panicked_in_bodies = Arc::new(AtomicU64::new(0));

    runtime.block_on(async {
        let done = Arc::new(AtomicBool::new(false));
        let operator = {
            let (breaker, done) = (Arc::clone(&breaker), Arc::clone(&done));
            tokio::spawn(async move {
                let mut n = 0u64;
                while !done.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(7)).await;
                    match mix(n) % 5 {
                        0 => breaker.force_open(),
                        1 => breaker.disable(),
                        _ => breaker.reset(),
                    }
                    n += 1;
                }
            })
        };
        let mut workers = Vec::new();
        for worker in 0..CONCURRENCY {
            let breaker = Arc::clone(&breaker);
            let cancelled = Arc::clone(&cancelled_by_callers);
            let panicked = Arc::clone(&panicked_in_bodies);
            workers.push(tokio::spawn(async move {
                for i in (worker..CALLS).step_by(CONCURRENCY as usize) {
                    let roll = mix(i);
                    let body = async move {
                        match roll % 32 {
                            0 => tokio::time::sleep(Duration::from_millis(3)).await, // runs into the timeout
                            1 => tokio::time::sleep(Duration::from_millis(1)).await, // slow
                            _ => tokio::task::yield_now().await,
                        }
                        match (roll >> 8) % 20 {
                            0 => Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
                            1 => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
                            _ => Ok(()),
                        }
                    };
                    let call = breaker.call(body);
                    if (roll >> 16).is_multiple_of(10) {
                        // The caller gives up first: the call is cancelled if it was admitted.
                        if tokio::time::timeout(Duration::from_micros(200), call)
                            .await
                            .is_err()
                        {
                            cancelled.fetch_add(1, Ordering::Relaxed);
                        }
                    } else if (roll >> 16) % 97 == 1 {
                        let breaker = Arc::clone(&breaker);
                        let task = tokio::spawn(async move {
                            breaker
                                .call(async {
                                    if std::hint::black_box(true) {
                                        panic!("stress: a panicking body");
                                    }
                                    Ok::<(), std::io::Error>(())
                                })
                                .await
                        });
                        if task.await.is_err_and(|e| e.is_panic()) {
                            panicked.fetch_add(1, Ordering::Relaxed);
                        }
                    } else if call.await.is_err_and(|e| e.is_rejection()) {
                        // A rejected caller backs off a little, as a real one would.
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
            }));
        }
        for worker in workers {
            worker.await.expect("workers do not panic");
        }
        done.store(true, Ordering::Relaxed);
        operator.await.unwrap();
    });

    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let (admitted, rejected, recorded, cancelled) = (
        load(&ledger.admitted),
        load(&ledger.rejected),
        load(&ledger.recorded),
        load(&ledger.cancelled),
    );
    let panics = load(&panicked_in_bodies);
    assert_eq!(
        admitted + rejected,
        CALLS,
        "every call was admitted or rejected"
    );
    assert_eq!(
        admitted,
        recorded + cancelled,
        "every admitted call ended exactly once"
    );
    assert_eq!(
        cancelled,
        load(&cancelled_by_callers),
        "a call ends cancelled exactly when its caller gave up on it"
    );
    assert_eq!(
        load(&ledger.panicked),
        panics,
        "each panic was recorded as one"
    );
    assert!(
        admitted > 1_000 && rejected > 0 && cancelled > 0 && panics > 0,
        "the run exercised every path: {admitted} admitted, {rejected} rejected, {cancelled} cancelled, {panics} panics"
    );

    // Nothing is wedged: once reset, the breaker admits and probes as before.
    breaker.reset();
    let probe = breaker.try_acquire().expect("a reset breaker admits");
    probe.success();
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.snapshot().probes_in_flight, 0);

    // The observer also sees the rejections that the coarse clock answers, far from a long
    // break opened outside any runtime.
    let long = Breaker::new(
        Config::builder()
            .name("stressed")
            .count_window(1)
            .break_duration(Duration::from_secs(60))
            .build()
            .unwrap(),
    );
    long.try_acquire().unwrap().failure();
    let before = load(&ledger.rejected);
    for _ in 0..10 {
        assert!(long.try_acquire().unwrap_err().is_rejection());
    }
    assert_eq!(load(&ledger.rejected) - before, 10);
}
