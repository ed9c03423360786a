//! The consumer's instruments as a Prometheus scrape shows them (feature `metrics`).

use std::sync::Arc;
use std::time::Duration;

use breaker_consumer::{CancellationToken, Consumer, Delivery, Failure, Handled, MemoryQueue};
use breaker_runtime::{Breaker, Config, IsFailure};
use metrics_exporter_prometheus::PrometheusBuilder;

#[derive(Debug, thiserror::Error, IsFailure)]
#[error("never")]
struct Never;

/// The value of the one sample of `series` in `scrape`.
fn sample(scrape: &str, series: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test(start_paused = true)]
async fn degraded_is_1_while_the_source_fails_and_0_once_it_fetches() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let scrape = recorder.handle();
    metrics::set_global_recorder(recorder).expect("the only recorder of this binary");

    let queue = MemoryQueue::<u32>::new(5);
    let breaker = Arc::new(Breaker::new(
        Config::builder().name("shipping").build().unwrap(),
    ));
    let consumer = Arc::new(
        Consumer::builder(queue.clone(), breaker)
            .name("orders")
            .build(),
    );
    let degraded = r#"breaker_consumer_degraded{consumer="orders"}"#;
    let errors = r#"breaker_consumer_source_errors_total{consumer="orders"}"#;
    assert_eq!(
        sample(&scrape.render(), degraded),
        Some(0.0),
        "there from the start"
    );

    let shutdown = CancellationToken::new();
    let run = tokio::spawn({
        let consumer = Arc::clone(&consumer);
        let shutdown = shutdown.clone();
        async move {
            consumer
                .run(
                    |_d: Delivery<u32, u64>, _token| async {
                        Ok::<_, Failure<Never>>(Handled::Done)
                    },
                    shutdown,
                )
                .await
        }
    });
    queue.disconnect();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let during = scrape.render();
    assert_eq!(sample(&during, degraded), Some(1.0), "{during}");
    let failed = sample(&during, errors).expect("the errors counted");
    assert_eq!(failed, consumer.stats().source_errors as f64, "{during}");

    queue.reconnect();
    queue.publish(1);
    while queue.stats().acked < 1 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = scrape.render();
    assert_eq!(sample(&after, degraded), Some(0.0), "{after}");
    shutdown.cancel();
    run.await.unwrap();
}
