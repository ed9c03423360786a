//! The chaos soak (issue 48): 8 tasks call one breaker through the attribute and 8 more call
//! 1 000 keys through the tower layer, on a multi-thread runtime, against a dependency that
//! fails, slows down and panics on a schedule, while another task sends every operator
//! command at random every few milliseconds.
//!
//! It checks, as it runs and at the end: every call ends exactly once (the callers' counts and
//! the call observer's agree: each call admitted or rejected once, each admitted call finished
//! once); no breaker stays half-open past its probes' time while calls come; no panic escapes
//! but the dependency's own; resident memory and open file descriptors flat after the
//! warm-up. A broken check panics with what it saw; [`run`] returns the figures.
//!
//! `cargo run --release -p breaker-tests --example soak -- 600` runs it for 10 minutes;
//! `tests/soak.rs` runs it for 5 seconds in the test suite.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use breaker_runtime::tower::CircuitBreakerLayer;
use breaker_runtime::trace::Limits;
use breaker_runtime::{
    Breaker, BreakerError, CallEvent, CallObserver, Config, Injection, IsFailure, Mode, Record,
    State, add_call_observer, circuit_breaker, registry,
};
use tower::{Layer, ServiceExt};

use crate::mix;

/// The attribute's breaker.
pub const ATTRIBUTE: &str = "soak::dependency";
/// The tower keys' breakers are named this and their key.
pub const PREFIX: &str = "soak::key::";
const KEYS: u64 = 1_000;
const CALLERS: u64 = 8;
/// What the dependency's own panics say: any other panic escaping a call is a finding.
const DEPENDENCY_PANIC: &str = "the dependency panics on schedule";
/// How long a breaker may stay half-open while calls come: its probes give their slots up
/// after the break (50 ms) and time out after 20 ms; the rest is room for a loaded machine.
const LONGEST_HALF_OPEN: Duration = Duration::from_secs(2);

/// The dependency's answer.
#[derive(Debug, IsFailure)]
pub enum DepError {
    /// It is down.
    Down,
    /// The breaker's answer.
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for DepError {
    fn from(e: BreakerError) -> Self {
        DepError::Breaker(e)
    }
}

static ORIGIN: OnceLock<Instant> = OnceLock::new();

/// The dependency's schedule, a phase every 250 ms: healthy, failing, slow, panicking, mixed.
fn phase() -> u64 {
    let origin = ORIGIN.get_or_init(Instant::now);
    (origin.elapsed().as_millis() / 250 % 5) as u64
}

async fn behave(draw: u64) -> Result<u64, DepError> {
    let slow = || tokio::time::sleep(Duration::from_millis(30));
    match (phase(), draw % 100) {
        (1, d) if d < 70 => Err(DepError::Down),
        (2, d) if d < 50 => {
            slow().await;
            Ok(d)
        }
        (3, d) if d < 5 => panic!("{DEPENDENCY_PANIC}"),
        (4, d) if d < 20 => Err(DepError::Down),
        (4, d) if d < 25 => {
            slow().await;
            Ok(d)
        }
        (4, d) if d < 27 => panic!("{DEPENDENCY_PANIC}"),
        (_, d) => Ok(d),
    }
}

#[circuit_breaker(
    name = "soak::dependency",
    window = "20",
    threshold = "50%",
    timeout_ms = 20,
    break_duration = "50ms",
    probes = 2
)]
async fn dependency(draw: u64) -> Result<u64, DepError> {
    behave(draw).await
}

/// What the soak saw.
#[derive(Debug, Default)]
pub struct Figures {
    /// Calls the callers made (through the attribute, through the layer).
    pub calls: (u64, u64),
    /// Calls the dependency's own panic ended.
    pub dependency_panics: u64,
    /// Operator commands sent.
    pub commands: u64,
    /// The longest a soak breaker stayed half-open while calls came.
    pub longest_half_open: Duration,
    /// Resident memory in KiB: at the end of the warm-up, the most after it, at the end.
    pub rss_kib: (u64, u64, u64),
    /// Open file descriptors: at the end of the warm-up, the most after it.
    pub fds: (u64, u64),
    /// How long it ran.
    pub elapsed: Duration,
}

/// Counts the soak breakers' calls as the call observer sees them.
#[derive(Default)]
struct Ledger {
    admitted: AtomicU64,
    rejected: AtomicU64,
    shadow_rejected: AtomicU64,
    finished: AtomicU64,
}

struct Counting(Arc<Ledger>);

impl CallObserver for Counting {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if !breaker.name().as_str().starts_with("soak::") {
            return;
        }
        let counter = match event {
            CallEvent::Admitted => &self.0.admitted,
            CallEvent::Rejected => &self.0.rejected,
            CallEvent::ShadowRejected => &self.0.shadow_rejected,
            CallEvent::Finished { .. } => &self.0.finished,
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A call's end, as its caller saw it: the panics escaping it must be the dependency's own.
fn settled<T>(joined: Result<T, tokio::task::JoinError>, panics: &AtomicU64) {
    if let Err(error) = joined {
        let panic = error.into_panic();
        let said = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic that is not text");
        assert!(
            said.contains(DEPENDENCY_PANIC),
            "a panic escaped a call: {said}"
        );
        panics.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs the soak for `length` on a runtime of its own. Once per process: it installs a call
/// observer and registers its breakers.
pub fn run(length: Duration) -> Figures {
    let ledger = Arc::new(Ledger::default());
    add_call_observer(Counting(Arc::clone(&ledger)));
    // The dependency's own panics are its schedule, not news: thousands of them would bury
    // the one that matters, which the default hook still prints.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let own = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|said| said.contains(DEPENDENCY_PANIC));
        if !own {
            default_hook(info);
        }
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(soak(length, &ledger))
}

async fn soak(length: Duration, ledger: &Ledger) -> Figures {
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let panics = Arc::new(AtomicU64::new(0));
    let layer = CircuitBreakerLayer::new(
        Config::builder()
            .name("soak::tower")
            .count_window(10)
            .timeout(Duration::from_millis(20))
            .break_duration(Duration::from_millis(50))
            .probes(2)
            // A recorder per key would grow until each ring is full, which is growth by design:
            // the keys record nothing, so that flat memory means no leak.
            .record(Record::Off)
            .build()
            .unwrap(),
    )
    .prefix(PREFIX)
    .key(|request: &u64| Cow::Owned((request % KEYS).to_string()));
    let service = layer.layer(tower::service_fn(|request: u64| behave(mix(request))));

    let mut callers = Vec::new();
    for task in 0..CALLERS {
        let (stopped, panicked) = (Arc::clone(&stop), Arc::clone(&panics));
        callers.push(tokio::spawn(async move {
            let mut calls = 0;
            while !stopped.load(Ordering::Relaxed) {
                let draw = mix(task << 40 | calls);
                settled(tokio::spawn(dependency(draw)).await, &panicked);
                calls += 1;
            }
            (calls, 0)
        }));
        let (stopped, panicked) = (Arc::clone(&stop), Arc::clone(&panics));
        let service = service.clone();
        callers.push(tokio::spawn(async move {
            let mut calls = 0;
            while !stopped.load(Ordering::Relaxed) {
                let request = mix(task << 40 | calls | 1 << 63);
                let call = service.clone().oneshot(request);
                settled(tokio::spawn(call).await, &panicked);
                calls += 1;
            }
            (0, calls)
        }));
    }
    let commands = tokio::spawn(operate(Arc::clone(&stop)));
    let watch = tokio::spawn(watch_half_open(Arc::clone(&stop)));

    // Memory and descriptors, sampled; the warm-up is the first third.
    let warm_up = length / 3;
    let mut rss = (0, 0, 0);
    let mut fds = (0, 0);
    while started.elapsed() < length {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (now_rss, now_fds) = (resident_kib(), open_fds());
        if started.elapsed() < warm_up {
            (rss.0, fds.0) = (now_rss, now_fds);
        } else {
            rss.1 = rss.1.max(now_rss);
            fds.1 = fds.1.max(now_fds);
        }
        rss.2 = now_rss;
    }
    stop.store(true, Ordering::Relaxed);
    let mut calls = (0, 0);
    for caller in callers {
        let (a, b) = caller.await.expect("a caller panicked");
        calls = (calls.0 + a, calls.1 + b);
    }
    let commands = commands.await.expect("the operator panicked");
    let longest_half_open = watch.await.expect("the watch panicked");

    // Every call ended exactly once.
    let admitted = ledger.admitted.load(Ordering::Relaxed);
    let rejected = ledger.rejected.load(Ordering::Relaxed);
    let shadow = ledger.shadow_rejected.load(Ordering::Relaxed);
    let finished = ledger.finished.load(Ordering::Relaxed);
    assert_eq!(
        admitted + rejected + shadow,
        calls.0 + calls.1,
        "each call admitted or rejected once: admitted {admitted}, rejected {rejected}, shadow {shadow}"
    );
    assert_eq!(
        finished,
        admitted + shadow,
        "each call let through ended once"
    );
    assert!(
        longest_half_open < LONGEST_HALF_OPEN,
        "a breaker stayed half-open for {longest_half_open:?}"
    );
    // Flat: past the warm-up, memory within a quarter (and 32 MiB) of where it was.
    assert!(
        rss.1 <= rss.0 + (rss.0 / 4).max(32 * 1024),
        "resident memory grew after the warm-up: {rss:?} KiB"
    );
    assert!(
        fds.1 <= fds.0 + 8,
        "file descriptors grew after the warm-up: {fds:?}"
    );
    Figures {
        calls,
        dependency_panics: panics.load(Ordering::Relaxed),
        commands,
        longest_half_open,
        rss_kib: rss,
        fds,
        elapsed: started.elapsed(),
    }
}

/// Sends an operator command every 1 to 4 ms, at random, to the attribute's breaker or a key's.
async fn operate(stop: Arc<AtomicBool>) -> u64 {
    let mut sent = 0;
    while !stop.load(Ordering::Relaxed) {
        let draw = mix(sent ^ 0x5eed);
        tokio::time::sleep(Duration::from_millis(1 + draw % 4)).await;
        let name = if draw & 1 == 0 {
            ATTRIBUTE.to_string()
        } else {
            format!("{PREFIX}{}", (draw >> 8) % KEYS)
        };
        let Some(breaker) = registry().get(&name) else {
            continue;
        };
        let short = Duration::from_millis(5 + (draw >> 20) % 45);
        match (draw >> 16) % 14 {
            0 => {
                let _ =
                    breaker.update(Config::builder().count_window(5 + (draw >> 24) as u32 % 30));
            }
            1 => {
                let _ =
                    breaker.update(Config::builder().threshold(30.0 + ((draw >> 24) % 40) as f64));
            }
            2 => {
                breaker.reset_config();
            }
            3 => {
                let _ = breaker.drill(short);
            }
            4 => {
                let injection = Injection::new()
                    .fail(10.0)
                    .delay(Duration::from_millis(5), 10.0);
                let _ = breaker.inject(injection, short * 4);
            }
            5 => breaker.force_open(),
            6 => breaker.disable(),
            7 => {
                breaker.half_open();
            }
            8 | 9 => breaker.reset(),
            10 => breaker.set_mode(Mode::Shadow),
            11 => breaker.set_mode(Mode::Enforce),
            // A started trace keeps up to its limits (3 MiB at the default's) until the next
            // start replaces it: on 1 001 breakers that is growth by design, to a ceiling of
            // gigabytes. A trace of at most 1 000 calls reaches its ceiling within seconds.
            12 => breaker.start_trace(Limits {
                max_entries: 1_000,
                max_bytes: 64 * 1024,
            }),
            _ => breaker.stop_trace(),
        }
        sent += 1;
    }
    sent
}

/// The longest stretch a soak breaker stayed half-open, sampled every 5 ms. A breaker whose
/// stretch began before an operator's order that kept it so is measured from that stretch
/// too: the commands only ever end a half-open period sooner.
async fn watch_half_open(stop: Arc<AtomicBool>) -> Duration {
    let mut since: HashMap<String, Instant> = HashMap::new();
    let mut longest = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let now = Instant::now();
        for breaker in registry().breakers() {
            let name = breaker.name().as_str();
            if !name.starts_with("soak::") {
                continue;
            }
            if breaker.state() == State::HalfOpen {
                let began = *since.entry(name.to_string()).or_insert(now);
                longest = longest.max(now - began);
            } else {
                since.remove(name);
            }
        }
    }
    longest
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}
