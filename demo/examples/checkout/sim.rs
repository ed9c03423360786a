//! One run of seeded checkout traffic on tokio's paused clock: three simulated minutes in a few
//! seconds, the same orders every time for the same seed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::trace::{Entry, Limits, Recent};
use breaker_runtime::{Breaker, Mode, State, registry};
use tokio::task::{JoinError, JoinSet};
use tokio::time::Instant;

use crate::shop::{Order, Outbox, PaymentApi, Weather, charge, charge_unguarded};

/// The traffic and the dependency's bad spell.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// Orders per second, on average (arrivals are a Poisson process).
    pub rate: f64,
    /// How long orders keep arriving.
    pub duration: Duration,
    pub weather: Weather,
    /// How long a customer waits for the checkout page before giving up: the order is lost.
    pub patience: Duration,
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    Unguarded,
    Breaker,
    /// The same breaker in shadow mode, recording its trace: every call runs, so the trace has
    /// every call's real outcome, the one to tune the breaker's options from.
    Shadow,
}

/// What one run saw.
#[derive(Default)]
pub struct Run {
    /// (arrival, caller latency) of every order, in seconds.
    pub latencies: Vec<(f64, f64)>,
    pub peak_connections: usize,
    pub calls_while_sick: usize,
    pub charged: usize,
    pub queued: usize,
    pub failed: usize,
    pub lost: usize,
    pub reconciled: usize,
    pub declined_later: usize,
    /// Orders still in the outbox at the end.
    pub still_queued: usize,
    /// (seconds since start, from, to) for every transition of the breaker.
    pub transitions: Vec<(f64, State, State)>,
    /// The breaker's trace, in shadow mode.
    pub trace: Vec<Entry>,
    /// What the breaker's flight recorder held ten seconds after the dependency recovered, in
    /// shadow mode: what an operator reads after the incident, no trace started beforehand.
    pub flight: Option<Recent>,
}

/// When the incident is looked into: this long after the dependency recovered.
pub const LOOKED_INTO_AFTER: Duration = Duration::from_secs(10);

impl Run {
    fn record(
        &mut self,
        done: Result<(Duration, Duration, Outcome), JoinError>,
        patience: Duration,
    ) {
        let Ok((arrived, latency, outcome)) = done else {
            return;
        };
        self.latencies
            .push((arrived.as_secs_f64(), latency.as_secs_f64()));
        match outcome {
            _ if latency > patience => self.lost += 1,
            Outcome::Charged => self.charged += 1,
            Outcome::Queued => self.queued += 1,
            Outcome::Failed => self.failed += 1,
        }
    }

    /// Seconds from the dependency's recovery to the circuit closing, if it closed after it.
    pub fn closed_after_recovery(&self, scenario: &Scenario) -> Option<f64> {
        let recovered = scenario.weather.slow_until.as_secs_f64();
        self.transitions
            .iter()
            .find(|(at, _, to)| *to == State::Closed && *at >= recovered)
            .map(|(at, _, _)| at - recovered)
    }

    /// Caller latencies of the orders that arrived while the dependency was sick.
    pub fn sick_latencies(&self, scenario: &Scenario) -> Vec<f64> {
        let (from, until) = (
            scenario.weather.slow_from.as_secs_f64(),
            scenario.weather.slow_until.as_secs_f64(),
        );
        self.latencies
            .iter()
            .filter(|(at, _)| *at >= from && *at < until)
            .map(|(_, l)| *l)
            .collect()
    }
}

/// The breaker `charge` is guarded by, found by its default name.
pub fn charge_breaker() -> Arc<Breaker> {
    registry()
        .breakers()
        .into_iter()
        .find(|b| b.name().ends_with("shop::charge"))
        .expect("the attribute registers charge's breaker")
}

/// Runs the scenario on a fresh paused runtime, one run at a time: every run drives the one
/// breaker `charge` is guarded by, and the demo's tests run in parallel.
pub fn run(scenario: &Scenario, guard: Guard) -> Run {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(simulate(*scenario, guard))
}

/// Where the last run's clock stopped. Each run's paused clock starts at the moment its runtime
/// was built, before the last run's simulated minutes ended: a run's clock goes on from there
/// instead, as one process's clock would, so that what a breaker recorded in one run (its
/// flight recorder keeps it) never dates from inside the next.
static LAST_END: Mutex<Option<Instant>> = Mutex::new(None);

async fn simulate(scenario: Scenario, guard: Guard) -> Run {
    let last_end = *LAST_END.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(last_end) = last_end {
        // In whole milliseconds, the grain of the runtime's timers from its start: a timeout
        // then fires on its millisecond as in a first run.
        let behind = last_end
            .saturating_duration_since(Instant::now())
            .as_millis();
        let behind = u64::try_from(behind)
            .unwrap_or(u64::MAX)
            .saturating_add(1_000);
        tokio::time::advance(Duration::from_millis(behind)).await;
    }
    let run = simulate_from_now(scenario, guard).await;
    *LAST_END.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    run
}

async fn simulate_from_now(scenario: Scenario, guard: Guard) -> Run {
    let start = Instant::now();
    let api = Arc::new(PaymentApi::new(scenario.weather, start));
    let outbox = Arc::new(Outbox::default());
    let breaker = charge_breaker();
    breaker.reset();
    if guard == Guard::Shadow {
        breaker.set_mode(Mode::Shadow);
        // Every order of the run: a run holds at most a million.
        breaker.start_trace(Limits {
            max_entries: 1_000_000,
            max_bytes: 100 * 1024 * 1024,
        });
    }
    let transitions = Arc::new(Mutex::new(Vec::new()));
    let _subscription = {
        let transitions = Arc::clone(&transitions);
        breaker.on_transition(move |t| {
            let at = t.at.saturating_duration_since(start).as_secs_f64();
            transitions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((at, t.from, t.to));
        })
    };

    let reconciler = tokio::spawn(reconcile(
        Arc::clone(&outbox),
        Arc::clone(&breaker),
        scenario.duration,
        scenario.duration + Duration::from_secs(600),
    ));
    // After the incident, the operator reads what the recorder holds since the traffic began
    // (the runs before this one, in the same process, recorded before it).
    let looked_into = (guard == Guard::Shadow).then(|| {
        let breaker = Arc::clone(&breaker);
        let since_start = scenario.weather.slow_until + LOOKED_INTO_AFTER;
        tokio::spawn(async move {
            tokio::time::sleep_until(start + since_start).await;
            breaker.recent(since_start)
        })
    });
    let mut run = Run::default();
    // A finished task's allocation lives as long as its handle: reaping them while orders
    // arrive keeps memory to the orders in flight, plus one (arrival, latency) pair per order.
    let mut handlers = JoinSet::new();
    for (arrival, order) in orders(&scenario, &api, &outbox) {
        tokio::time::sleep_until(start + arrival).await;
        handlers.spawn(checkout(order, guard, arrival));
        while let Some(done) = handlers.try_join_next() {
            run.record(done, scenario.patience);
        }
    }
    while let Some(done) = handlers.join_next().await {
        run.record(done, scenario.patience);
    }
    let _ = reconciler.await;
    if let Some(looked_into) = looked_into {
        run.flight = looked_into.await.ok();
    }
    run.peak_connections = api.peak_connections();
    run.calls_while_sick = api.calls_while_sick();
    run.reconciled = outbox.reconciled.load(Ordering::Relaxed);
    run.declined_later = outbox.declined_later.load(Ordering::Relaxed);
    run.still_queued = outbox.len();
    run.transitions = transitions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if guard == Guard::Shadow {
        breaker.stop_trace();
        run.trace = breaker.trace();
        breaker.set_mode(Mode::Enforce);
    }
    run
}

enum Outcome {
    Charged,
    Queued,
    Failed,
}

/// The checkout page's handler: it runs to the end even if the customer has gone.
async fn checkout(order: Order, guard: Guard, arrived: Duration) -> (Duration, Duration, Outcome) {
    let started = Instant::now();
    let answer = match guard {
        Guard::Breaker | Guard::Shadow => charge(&order).await,
        Guard::Unguarded => charge_unguarded(&order).await,
    };
    let outcome = match answer {
        Ok(receipt) if receipt.queued => Outcome::Queued,
        Ok(_) => Outcome::Charged,
        Err(_) => Outcome::Failed,
    };
    (arrived, started.elapsed(), outcome)
}

/// How many queued orders the reconciler charges each second: enough to drain a minute's
/// outbox in about two, without a burst of connections.
const RECONCILE_PER_SECOND: usize = 100;

/// Once a second, while the circuit is closed, charges what the fallback queued. A charge that
/// fails again goes back into the outbox through the same fallback. Stops when the traffic is
/// over and the outbox empty, or at `give_up_at`.
async fn reconcile(
    outbox: Arc<Outbox>,
    breaker: Arc<Breaker>,
    traffic_ends: Duration,
    give_up_at: Duration,
) {
    let start = Instant::now();
    while start.elapsed() < give_up_at {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if outbox.len() == 0 {
            if start.elapsed() >= traffic_ends {
                break;
            }
            continue;
        }
        if breaker.state() != State::Closed {
            continue;
        }
        let batch: Vec<_> = outbox
            .take(RECONCILE_PER_SECOND)
            .into_iter()
            .map(|order| {
                tokio::spawn(async move {
                    match charge(&order).await {
                        Ok(receipt) if !receipt.queued => {
                            order.outbox.reconciled.fetch_add(1, Ordering::Relaxed);
                        }
                        // Back in the outbox, through the fallback.
                        Ok(_) => {}
                        Err(_) => {
                            order.outbox.declined_later.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for task in batch {
            let _ = task.await;
        }
    }
}

/// The run's orders, the same for the same seed: when each arrives (a Poisson process at
/// `scenario.rate`) and what it is.
pub fn orders(
    scenario: &Scenario,
    api: &Arc<PaymentApi>,
    outbox: &Arc<Outbox>,
) -> impl Iterator<Item = (Duration, Order)> + use<> {
    let mut rng = SplitMix(scenario.seed);
    let mut arrival = Duration::ZERO;
    let (rate, duration) = (scenario.rate, scenario.duration);
    let (api, outbox) = (Arc::clone(api), Arc::clone(outbox));
    (0..).map_while(move |id| {
        arrival += Duration::from_secs_f64(-(1.0 - rng.unit()).ln() / rate);
        (arrival < duration).then(|| {
            let order = Order {
                id,
                jitter: 0.9 + 0.2 * rng.unit(),
                declined: rng.unit() < 0.02,
                api: Arc::clone(&api),
                outbox: Arc::clone(&outbox),
            };
            (arrival, order)
        })
    })
}

/// A small seeded generator (SplitMix64), so a seed always means the same traffic.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The `q`-quantile (0 to 1) of `values`, by nearest rank.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
