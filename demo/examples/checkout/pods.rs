//! `--pods N`: the same traffic spread over N pods, each with its own breaker for the payment
//! API, once with every pod on its own and once with the pods sharing one circuit as a fleet
//! (the in-memory fleet transport, on the same paused clock, behind the same trait as Redis).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use breaker_fleet::{Fleet, MemoryFleet, Options};
use breaker_runtime::{Breaker, Verdict};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::shop::{Outbox, PaymentApi};
use crate::sim::{Scenario, charge_breaker, orders};

/// What one configuration of pods sent to the payment API.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pods {
    /// Calls that reached the API while it was sick.
    pub calls_while_sick: usize,
    /// Half-open probes sent, all pods together.
    pub probes: usize,
}

/// Runs the scenario over `pods` pods, sharing one circuit if `fleet`.
pub fn run(scenario: &Scenario, pods: usize, fleet: bool) -> Pods {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(simulate(*scenario, pods.max(1), fleet))
}

async fn simulate(scenario: Scenario, pods: usize, fleet: bool) -> Pods {
    let start = Instant::now();
    let api = Arc::new(PaymentApi::new(scenario.weather, start));
    let outbox = Arc::new(Outbox::default());
    // Each pod guards the call as the attribute does: the same configuration, its own breaker.
    let config = charge_breaker().config().clone();
    let breakers: Vec<Arc<Breaker>> = (0..pods)
        .map(|_| Arc::new(Breaker::new(config.clone())))
        .collect();
    let place = MemoryFleet::new();
    let members: Vec<Fleet> = if fleet {
        breakers
            .iter()
            .map(|b| Fleet::start(place.clone(), Options::default().with(Arc::clone(b))))
            .collect()
    } else {
        Vec::new()
    };
    let probes = Arc::new(AtomicUsize::new(0));
    let mut calls = JoinSet::new();
    for (arrival, order) in orders(&scenario, &api, &outbox) {
        // Round robin, as a load balancer spreads the orders over the pods.
        let breaker = Arc::clone(&breakers[order.id as usize % pods]);
        tokio::time::sleep_until(start + arrival).await;
        let probes = Arc::clone(&probes);
        calls.spawn(async move {
            let Ok(permit) = breaker.try_acquire_owned() else {
                return; // rejected: the fallback queues the order, the API sees nothing
            };
            if permit.is_probe() {
                probes.fetch_add(1, Ordering::Relaxed);
            }
            let api = Arc::clone(&order.api);
            let _ = permit.run(api.charge(&order), Verdict::of).await;
        });
        while calls.try_join_next().is_some() {}
    }
    while calls.join_next().await.is_some() {}
    for member in members {
        member.leave().await;
    }
    Pods {
        calls_while_sick: api.calls_while_sick(),
        probes: probes.load(Ordering::Relaxed),
    }
}

/// The table `--pods` prints.
pub fn table(pods: usize, alone: &Pods, fleet: &Pods) -> String {
    let mut out = format!(
        "{:<40}{:>18}{:>14}\n",
        format!("{pods} pods, the orders spread evenly"),
        "pods on their own",
        "one fleet"
    );
    out += &format!(
        "{:<40}{:>18}{:>14}\n",
        "calls that reached the sick API", alone.calls_while_sick, fleet.calls_while_sick
    );
    out += &format!(
        "{:<40}{:>18}{:>14}\n",
        "half-open probes sent", alone.probes, fleet.probes
    );
    out
}
