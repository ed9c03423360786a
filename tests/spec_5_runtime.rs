//! SPEC section 5: the registry, operator commands, events and listeners.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::__private::{DECLARATIONS, Declaration, Handle};
use breaker_runtime::{
    Config, Location, Name, OpenReason, Rate, RegistryError, Settings, State, Verdict, registry,
};
use breaker_tests::{after, breaker, call, count, down, ms, up};

const fn declared_config(threshold_ppm: u32) -> Config {
    Config::__checked(
        Name::from_static("unset"),
        Settings {
            threshold: Rate::from_ppm(threshold_ppm),
            ..Settings::DEFAULT
        },
    )
}

macro_rules! declare {
    ($decl:ident, $handle:ident, $name:expr, $default:literal, $ppm:literal) => {
        #[breaker_runtime::__private::linkme::distributed_slice(DECLARATIONS)]
        #[linkme(crate = breaker_runtime::__private::linkme)]
        static $decl: Declaration = Declaration {
            name: $name,
            default_name: $default,
            config: declared_config($ppm),
            location: Location {
                file: file!(),
                line: line!(),
                column: column!(),
            },
            fallbacks: breaker_runtime::__private::Fallbacks::new(None, false),
        };
        static $handle: Handle = Handle::new(&$decl);
    };
}

declare!(
    CHARGE,
    CHARGE_BREAKER,
    Some("spec5-payments"),
    "spec_5::charge",
    500_000
);
declare!(
    REFUND,
    REFUND_BREAKER,
    Some("spec5-payments"),
    "spec_5::refund",
    500_000
);
declare!(
    VOID,
    VOID_BREAKER,
    Some("spec5-payments"),
    "spec_5::void",
    100_000
);
declare!(
    FETCH_A,
    FETCH_A_BREAKER,
    None,
    "spec_5::Client::fetch",
    500_000
);
declare!(
    FETCH_B,
    FETCH_B_BREAKER,
    None,
    "spec_5::Client::fetch",
    500_000
);

#[test]
fn the_registry_lists_every_declared_breaker_before_its_first_call() {
    let payments = registry()
        .get("spec5-payments")
        .expect("declared, never called");
    assert_eq!(payments.state(), State::Closed);
    assert_eq!(registry().declared_at("spec5-payments").len(), 3);
    let names: Vec<_> = registry()
        .snapshot()
        .into_iter()
        .map(|s| s.name().to_string())
        .collect();
    for name in [
        "spec5-payments",
        "spec_5::Client::fetch",
        "spec_5::Client::fetch#2",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} is listed: {names:?}"
        );
    }
}

#[test]
fn declarations_sharing_a_name_share_one_breaker() {
    assert!(std::ptr::eq(CHARGE_BREAKER.get(), REFUND_BREAKER.get()));
    assert!(std::ptr::eq(CHARGE_BREAKER.get(), VOID_BREAKER.get()));
    assert!(std::ptr::eq(
        CHARGE_BREAKER.get(),
        &*registry().get("spec5-payments").unwrap()
    ));
}

#[test]
fn declarations_of_one_name_with_different_options_are_reported() {
    let conflict = registry()
        .conflicts()
        .iter()
        .find(|c| c.name == "spec5-payments")
        .expect("the 10% declaration differs");
    assert_eq!(conflict.differing.len(), 1);
    assert_eq!(conflict.differing[0].1.threshold().percent(), 10.0);
    assert_eq!(conflict.kept.1.threshold().percent(), 50.0);
}

#[test]
fn functions_without_a_name_each_get_their_own_breaker_with_a_unique_name() {
    let (a, b) = (FETCH_A_BREAKER.get(), FETCH_B_BREAKER.get());
    assert!(!std::ptr::eq(a, b));
    assert_ne!(a.name(), b.name());
    assert!(a.name().starts_with("spec_5::Client::fetch"));
}

#[test]
fn breakers_built_by_hand_join_the_registry_once_per_name() {
    let b = Arc::new(breaker(count(4).name("spec5-by-hand")));
    registry().register(Arc::clone(&b)).unwrap();
    let again = Arc::new(breaker(count(4).name("spec5-by-hand")));
    assert_eq!(
        registry().register(again),
        Err(RegistryError::NameTaken(Name::from_static("spec5-by-hand")))
    );
    assert!(Arc::ptr_eq(&registry().get("spec5-by-hand").unwrap(), &b));
    assert!(registry().unregister("spec5-by-hand").is_some());
    assert!(registry().get("spec5-by-hand").is_none());
    assert!(
        registry().unregister("spec5-payments").is_none(),
        "declared breakers stay"
    );
}

#[tokio::test(start_paused = true)]
async fn force_open_is_sticky_until_reset() {
    let b = breaker(count(2).break_duration(ms(10)));
    b.force_open();
    tokio::time::advance(Duration::from_secs(3600)).await;
    let err = b.call(async { up() }).await.unwrap_err();
    assert!(err.is_rejection());
    assert_eq!(err.retry_after(), None);
    assert_eq!(b.state(), State::ForcedOpen);
    b.reset();
    assert!(!call(&b, up()).await);
}

#[tokio::test(start_paused = true)]
async fn disable_runs_every_call_and_records_nothing_until_reset() {
    let b = breaker(count(2));
    b.disable();
    for _ in 0..10 {
        assert!(!call(&b, down()).await);
    }
    assert_eq!(b.state(), State::Disabled);
    assert_eq!(b.snapshot().calls, 0);
    b.reset();
    call(&b, down()).await;
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn reset_closes_with_an_empty_window_and_the_base_break() {
    let b = breaker(
        count(2)
            .break_duration(ms(100))
            .max_break_duration(Duration::from_secs(10)),
    );
    call(&b, down()).await;
    call(&b, down()).await;
    tokio::time::advance(ms(100)).await;
    call(&b, down()).await; // failed probe: the break is now 200 ms
    b.reset();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().calls, 0);
    call(&b, down()).await;
    call(&b, down()).await;
    tokio::time::advance(ms(100)).await;
    assert!(!call(&b, up()).await, "the break is back at 100 ms");
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_shows_state_counts_rates_and_last_transition() {
    let b = breaker(count(10).name("spec5-snapshot").min_calls(10));
    assert_eq!(b.snapshot().last_transition, None);
    call(&b, down()).await;
    call(&b, up()).await;
    call(&b, up()).await;
    call(&b, up()).await;
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures, s.failure_rate),
        (State::Closed, 4, 1, 25.0)
    );
    assert_eq!(s.name(), "spec5-snapshot");
    tokio::time::advance(ms(7)).await;
    let forced_at = tokio::time::Instant::now();
    b.force_open();
    assert_eq!(b.snapshot().last_transition, Some(forced_at));
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_keeps_the_counts_and_the_rule_that_opened_it() {
    let b = breaker(count(4).break_duration(ms(100)));
    assert_eq!(b.snapshot().last_opened, None, "never opened");
    for result in [down(), up(), down(), down()] {
        call(&b, result).await;
    }
    let tripped_at = tokio::time::Instant::now();
    let s = b.snapshot();
    assert_eq!(s.state, State::Open);
    assert_eq!(
        (s.calls, s.failures, s.slow, s.failure_rate),
        (4, 3, 0, 75.0),
        "the window that opened it, not an empty one"
    );
    let opened = s.last_opened.expect("it opened");
    assert_eq!(opened.reason, OpenReason::FailureRate);
    assert_eq!((opened.calls, opened.failures), (4, 3));
    assert_eq!((opened.at, opened.threshold), (tripped_at, 50.0));
    assert_eq!(
        opened.to_string(),
        "failure rate 75% reached the threshold of 50% over 4 calls (3 failed, 0 slow)"
    );

    tokio::time::advance(ms(100)).await;
    call(&b, down()).await; // the probe fails: open again
    let s = b.snapshot();
    assert_eq!(s.state, State::Open);
    let reopened = s.last_opened.unwrap();
    assert_eq!(reopened.reason, OpenReason::ProbeFailed);
    assert_eq!(
        (s.calls, reopened.calls, reopened.failures),
        (4, 4, 3),
        "the trip's evidence"
    );
    assert!(
        reopened
            .to_string()
            .starts_with("a probe failed; it first opened when the failure rate 75%")
    );

    tokio::time::advance(ms(200)).await;
    call(&b, up()).await; // the probe succeeds: closed, with an empty window
    let s = b.snapshot();
    assert_eq!((s.state, s.calls), (State::Closed, 0));
    assert_eq!(
        s.last_opened.map(|o| o.reason),
        Some(OpenReason::ProbeFailed),
        "the last opening is kept after the circuit closes"
    );

    b.force_open();
    let s = b.snapshot();
    assert_eq!(
        (s.calls, s.last_opened.unwrap().reason),
        (0, OpenReason::Forced)
    );
}

#[tokio::test(start_paused = true)]
async fn a_breaker_opened_by_slow_calls_says_so() {
    let b = breaker(
        count(2)
            .slow_call(ms(50))
            .slow_threshold(50.0)
            .threshold(100.0),
    );
    call(&b, up()).await;
    let _ = b.call(after(ms(60), up())).await;
    let s = b.snapshot();
    assert_eq!(s.state, State::Open);
    assert_eq!((s.calls, s.failures, s.slow, s.slow_rate), (2, 0, 1, 50.0));
    let opened = s.last_opened.unwrap();
    assert_eq!(
        (opened.reason, opened.threshold),
        (OpenReason::SlowRate, 50.0)
    );
    assert_eq!(
        opened.to_string(),
        "slow-call rate 50% reached the threshold of 50% over 2 calls (0 failed, 1 slow)"
    );
}

#[test]
fn a_listener_may_call_back_into_the_breaker() {
    let b = Arc::new(breaker(count(2)));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (weak, sink) = (Arc::downgrade(&b), Arc::clone(&seen));
    b.on_transition(move |t| {
        let b = weak.upgrade().unwrap();
        sink.lock().unwrap().push((t.to, b.snapshot().state));
        if t.to == State::ForcedOpen {
            b.reset(); // re-entrant: would deadlock if the listener ran under a lock
        }
    })
    .forever();
    b.force_open();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (State::ForcedOpen, State::ForcedOpen),
            (State::Closed, State::Closed)
        ]
    );
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn registry_listeners_hear_every_registered_breaker_and_no_other() {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&heard);
    let _subscription = registry().on_transition(move |t| {
        if t.breaker.starts_with("spec5-listen") {
            sink.lock().unwrap().push(t.breaker.to_string());
        }
    });
    let registered = Arc::new(breaker(count(2).name("spec5-listen-registered")));
    registry().register(Arc::clone(&registered)).unwrap();
    let loose = breaker(count(2).name("spec5-listen-loose"));
    registered.force_open();
    loose.force_open();
    assert_eq!(
        *heard.lock().unwrap(),
        vec!["spec5-listen-registered".to_string()]
    );
}

#[test]
fn dropping_a_subscription_unsubscribes() {
    let b = breaker(count(2));
    let heard = Arc::new(Mutex::new(0));
    let sink = Arc::clone(&heard);
    let subscription = b.on_transition(move |_| *sink.lock().unwrap() += 1);
    b.force_open();
    drop(subscription);
    b.reset();
    assert_eq!(*heard.lock().unwrap(), 1);
}

#[test]
fn a_panicking_listener_does_not_break_the_breaker() {
    let b = breaker(count(2));
    b.on_transition(|_| panic!("listener bug")).forever();
    b.force_open();
    b.reset();
    assert_eq!(b.state(), State::Closed);
}

#[test]
fn a_call_polled_after_it_completed_panics_with_a_message_instead_of_hanging() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let b = Arc::new(breaker(count(4)));
    let mut cx = Context::from_waker(Waker::noop());
    let mut call = Box::pin(b.call(async { up() }));
    assert!(matches!(
        call.as_mut().poll(&mut cx),
        Poll::Ready(Ok(Ok(())))
    ));
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = call.as_mut().poll(&mut cx);
    }));
    let message = again.expect_err("polled again");
    assert_eq!(
        message.downcast_ref::<&str>(),
        Some(&"a circuit breaker call was polled after it completed")
    );

    let mut owned = Box::pin(
        b.try_acquire_owned()
            .unwrap()
            .run(async { up() }, |r: &Result<(), std::io::Error>| {
                Verdict::of(r)
            }),
    );
    assert!(owned.as_mut().poll(&mut cx).is_ready());
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = owned.as_mut().poll(&mut cx);
    }));
    assert!(again.is_err(), "an owned call too");
}
