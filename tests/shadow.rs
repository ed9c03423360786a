//! Shadow mode: the breaker records, judges, transitions and announces as usual, but never
//! rejects; what it would have rejected runs, and observers hear of it. On tokio's paused clock.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use breaker_runtime::{
    Breaker, CallEvent, CallObserver, Config, Mode, State, add_call_observer, circuit_breaker,
    registry,
};
use breaker_tests::{breaker, call, count, down, ms, record_transitions, up};

/// Calls each breaker named `shadow-…` would have rejected, by name.
static WOULD_REJECT: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Watch;

impl CallObserver for Watch {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if event == CallEvent::ShadowRejected {
            WOULD_REJECT
                .lock()
                .unwrap()
                .push(breaker.name().to_string());
        }
    }
}

fn would_reject(name: &str) -> usize {
    WOULD_REJECT
        .lock()
        .unwrap()
        .iter()
        .filter(|n| *n == name)
        .count()
}

fn watch() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| add_call_observer(Watch));
}

static REACHED: AtomicU32 = AtomicU32::new(0);
static FALLBACKS: AtomicU32 = AtomicU32::new(0);

async fn cached(_fail: bool) -> Result<u32, std::io::Error> {
    FALLBACKS.fetch_add(1, Ordering::Relaxed);
    Ok(0)
}

#[circuit_breaker(mode = "shadow", window = "2", break_duration = "1m", name = "shadow-quote", fallback = cached)]
async fn quote(fail: bool) -> Result<u32, std::io::Error> {
    REACHED.fetch_add(1, Ordering::Relaxed);
    if fail {
        Err(std::io::ErrorKind::ConnectionReset.into())
    } else {
        Ok(42)
    }
}

#[tokio::test(start_paused = true)]
async fn a_shadow_breaker_opens_as_usual_but_every_call_still_runs() {
    watch();
    let b = registry().get("shadow-quote").unwrap();
    assert_eq!((b.mode(), b.config().mode()), (Mode::Shadow, Mode::Shadow));
    let seen = record_transitions(&b);

    for _ in 0..2 {
        assert_eq!(
            quote(true).await.unwrap(),
            0,
            "a counted failure goes to the fallback"
        );
    }
    assert_eq!(b.state(), State::Open, "it judged as usual");
    assert_eq!(
        *seen.lock().unwrap(),
        [(State::Closed, State::Open)],
        "and announced it"
    );
    let fallbacks = FALLBACKS.load(Ordering::Relaxed);

    assert_eq!(
        quote(false).await.unwrap(),
        42,
        "the call ran: not rejected"
    );
    assert_eq!(quote(false).await.unwrap(), 42);
    assert_eq!(
        REACHED.load(Ordering::Relaxed),
        4,
        "every call reached the dependency"
    );
    assert_eq!(
        FALLBACKS.load(Ordering::Relaxed),
        fallbacks,
        "no rejection to fall back from"
    );
    assert_eq!(
        would_reject("shadow-quote"),
        2,
        "what it would have rejected is reported"
    );
    assert_eq!(b.snapshot().mode, Mode::Shadow);

    b.set_mode(Mode::Enforce);
    assert_eq!(
        quote(false).await.unwrap(),
        0,
        "enforcing now: rejected, served by the fallback"
    );
    assert_eq!(REACHED.load(Ordering::Relaxed), 4);
}

#[tokio::test(start_paused = true)]
async fn half_open_in_shadow_probes_as_usual_and_lets_the_rest_run() {
    watch();
    let b = breaker(
        count(1)
            .name("shadow-probes")
            .break_duration(ms(100))
            .mode(Mode::Shadow),
    );
    call(&b, down()).await;
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(ms(100)).await;
    let probe = b.try_acquire().unwrap();
    assert!(probe.is_probe());
    let extra = b
        .try_acquire()
        .expect("its probe slot is taken, and it lets this run");
    assert!(!extra.is_probe());
    extra.failure();
    assert_eq!(b.state(), State::HalfOpen, "the extra call decides nothing");
    probe.success();
    assert_eq!(b.state(), State::Closed, "the probe decides");
    assert_eq!(would_reject("shadow-probes"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_forced_open_shadow_breaker_lets_calls_run_until_it_enforces() {
    let b = breaker(count(4).name("shadow-forced").mode(Mode::Shadow));
    b.force_open();
    assert!(!call(&b, up()).await);
    b.set_mode(Mode::Enforce);
    assert!(call(&b, up()).await, "rejected once enforcing");
    b.set_mode(Mode::Shadow);
    assert!(!call(&b, up()).await, "and switched back, live");
}

#[tokio::test(start_paused = true)]
async fn switching_to_shadow_lets_a_waiting_task_in() {
    let b = Arc::new(breaker(count(1).break_duration(ms(60_000))));
    call(&b, down()).await;
    let waiter = tokio::spawn({
        let b = Arc::clone(&b);
        async move { b.admitted_owned().await.is_probe() }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    b.set_mode(Mode::Shadow);
    let probe = tokio::time::timeout(ms(10), waiter)
        .await
        .expect("let in at once")
        .unwrap();
    assert!(
        !probe,
        "let in as a call it would have rejected, not as a probe"
    );
    assert_eq!(b.state(), State::Open);
}

#[test]
fn the_mode_is_an_option_like_any_other() {
    let config = Config::builder().mode(Mode::Shadow).build().unwrap();
    assert_eq!(config.settings().mode, Mode::Shadow);
    assert_eq!(Config::default().mode(), Mode::Enforce);
    assert_eq!(
        Config::builder()
            .settings(config.settings())
            .build()
            .unwrap(),
        config
    );
}
