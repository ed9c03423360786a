//! `--retries`: the same traffic with `retries = 3`, once with naive retries (no budget) and
//! once with the default retry budget, counting the calls that reached the sick payment API;
//! through the charge's breaker, and through one that never opens (as if there were only a
//! timeout), where the budget is all that stands between the API and the retries. Retry
//! outside, breaker inside, timeout innermost, as the attribute does.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::{Breaker, Config, MAX_MIN_CALLS, Policy};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::shop::{Outbox, PaymentApi};
use crate::sim::{Scenario, charge_breaker, orders};

/// How many more attempts each call may make.
const RETRIES: u32 = 3;

/// Calls that reached the API while it was sick.
pub fn run(scenario: &Scenario, budgeted: bool, breaker_opens: bool) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(simulate(*scenario, budgeted, breaker_opens))
}

async fn simulate(scenario: Scenario, budgeted: bool, breaker_opens: bool) -> usize {
    let start = Instant::now();
    let api = Arc::new(PaymentApi::new(scenario.weather, start));
    let outbox = Arc::new(Outbox::default());
    let config = charge_breaker().config().clone();
    let config = if breaker_opens {
        config
    } else {
        // The same timeout, and a window that never holds enough calls to judge.
        Config::builder()
            .settings(config.settings())
            .time_window(Duration::from_secs(60))
            .min_calls(MAX_MIN_CALLS)
            .build()
            .expect("a valid configuration")
    };
    let breaker = Arc::new(Breaker::new(config));
    let mut policy = Policy::builder()
        .retries(RETRIES)
        .backoff(Duration::from_millis(100), Duration::from_secs(10));
    if !budgeted {
        policy = policy.no_retry_budget();
    }
    let policy = Arc::new(policy.build().expect("a valid policy"));
    let mut calls = JoinSet::new();
    for (arrival, order) in orders(&scenario, &api, &outbox) {
        tokio::time::sleep_until(start + arrival).await;
        let (breaker, policy) = (Arc::clone(&breaker), Arc::clone(&policy));
        calls.spawn(async move {
            let api = Arc::clone(&order.api);
            let _ = policy.call(&breaker, || api.charge(&order)).await;
        });
        while calls.try_join_next().is_some() {}
    }
    while calls.join_next().await.is_some() {}
    api.calls_while_sick()
}

/// The table `--retries` prints: calls that reached the sick API, `[naive, budgeted]`, with
/// the breaker and with one that never opens.
pub fn table(with_breaker: [usize; 2], never_opens: [usize; 2]) -> String {
    let row = |label: &str, [naive, budgeted]: [usize; 2]| {
        format!("{label:<40}{naive:>18}{budgeted:>14}\n")
    };
    format!(
        "{:<40}{:>18}{:>14}\n",
        format!("retries = {RETRIES}: calls that reached the sick API"),
        "naive retries",
        "budgeted"
    ) + &row("  behind the breaker", with_breaker)
        + &row("  behind a breaker that never opens", never_opens)
}
