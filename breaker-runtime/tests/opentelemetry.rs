//! The `opentelemetry` feature end to end: an SDK meter provider with a periodic reader over the
//! in-memory exporter, breakers driven into every state, and the exported instruments read back.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::opentelemetry::{install, state_value};
use breaker_runtime::{Breaker, BreakerError, Config, Injection, Mode, Policy, State, registry};
use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider, Temporality,
};

fn reset() -> Result<(), io::Error> {
    Err(io::Error::from(io::ErrorKind::ConnectionReset))
}

fn registered(config: Config) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(config));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

/// Whether the attributes are exactly `want`, in any order.
fn same_attributes<'a>(have: impl Iterator<Item = &'a KeyValue>, want: &[(&str, &str)]) -> bool {
    let have: Vec<_> = have.collect();
    have.len() == want.len()
        && want.iter().all(|(key, value)| {
            have.iter()
                .any(|kv| kv.key.as_str() == *key && kv.value.as_str() == *value)
        })
}

/// The instrument called `name` in the last export.
fn metric<'a>(exported: &'a [ResourceMetrics], name: &str) -> &'a Metric {
    let last = exported.last().expect("at least one export");
    last.scope_metrics()
        .flat_map(|scope| scope.metrics())
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no instrument {name} in {last:?}"))
}

/// The counter's cumulative value for exactly these attributes (`None`: no such series).
fn counted(exported: &[ResourceMetrics], name: &str, attributes: &[(&str, &str)]) -> Option<u64> {
    let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric(exported, name).data() else {
        panic!("{name} is not a u64 sum");
    };
    assert!(sum.is_monotonic(), "{name} is a counter");
    assert_eq!(sum.temporality(), Temporality::Cumulative);
    sum.data_points()
        .find(|p| same_attributes(p.attributes(), attributes))
        .map(|p| p.value())
}

/// The state gauge's value for a breaker (`None`: not reported).
fn state_of(exported: &[ResourceMetrics], breaker: &str) -> Option<i64> {
    let AggregatedMetrics::I64(MetricData::Gauge(gauge)) =
        metric(exported, "circuit_breaker.state").data()
    else {
        panic!("the state is not an i64 gauge");
    };
    gauge
        .data_points()
        .find(|p| same_attributes(p.attributes(), &[("breaker", breaker)]))
        .map(|p| p.value())
}

/// How many durations the histogram holds for a breaker (`None`: no series).
fn durations(exported: &[ResourceMetrics], breaker: &str) -> Option<u64> {
    let m = metric(exported, "circuit_breaker.call.duration");
    assert_eq!(m.unit(), "s");
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = m.data() else {
        panic!("the durations are not an f64 histogram");
    };
    histogram
        .data_points()
        .find(|p| same_attributes(p.attributes(), &[("breaker", breaker)]))
        .map(|p| p.count())
}

/// A gauge's value for a breaker and, if given, a `stat` (`None`: not reported).
fn gauge_of<T: Copy>(
    exported: &[ResourceMetrics],
    name: &str,
    attributes: &[(&str, &str)],
    data: impl Fn(&AggregatedMetrics) -> Option<&opentelemetry_sdk::metrics::data::Gauge<T>>,
) -> Option<T> {
    let gauge = data(metric(exported, name).data()).unwrap_or_else(|| panic!("{name} is a gauge"));
    gauge
        .data_points()
        .find(|p| same_attributes(p.attributes(), attributes))
        .map(|p| p.value())
}

#[test]
fn state_values_are_those_of_the_metrics_gauge() {
    let values = [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::Disabled,
    ]
    .map(state_value);
    assert_eq!(values, [0, 1, 2, 3, 4]);
}

#[tokio::test(start_paused = true)]
async fn instruments_report_states_transitions_calls_and_durations() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    install(&provider.meter("breaker-runtime-test")).unwrap();
    assert!(
        install(&provider.meter("breaker-runtime-test-again")).is_err(),
        "installed once, so nothing is counted twice"
    );

    // Opens on its fifth call: 2 failures in 5 is the threshold's 40 %.
    let tripped = registered(
        Config::builder()
            .name("otel-tripped")
            .count_window(5)
            .threshold(40.0)
            .build()
            .unwrap(),
    );
    for _ in 0..3 {
        tripped
            .call(async { Ok::<_, io::Error>(()) })
            .await
            .unwrap()
            .unwrap();
    }
    for _ in 0..2 {
        assert!(tripped.call(async { reset() }).await.unwrap().is_err());
    }
    assert_eq!(tripped.state(), State::Open);
    for _ in 0..4 {
        let answer = tripped.call(async { Ok::<_, io::Error>(()) }).await;
        assert!(answer.unwrap_err().is_rejection());
    }

    // Two calls of 30 and 90 ms on the paused clock, timed because an observer is installed.
    let timed = registered(Config::builder().name("otel-timed").build().unwrap());
    for took in [30, 90] {
        timed
            .call(async move {
                tokio::time::sleep(std::time::Duration::from_millis(took)).await;
                Ok::<_, io::Error>(())
            })
            .await
            .unwrap()
            .unwrap();
    }

    let steady = registered(Config::builder().name("otel-steady").build().unwrap());
    for _ in 0..2 {
        steady
            .call(async { Ok::<_, io::Error>(()) })
            .await
            .unwrap()
            .unwrap();
    }

    // Two calls with a failure injected and one without: only the two carry `injected`.
    let injected = registered(Config::builder().name("otel-injected").build().unwrap());
    injected
        .inject(
            Injection::new().fail(100.0),
            std::time::Duration::from_secs(60),
        )
        .unwrap();
    for _ in 0..2 {
        let answer = injected.call(async { Ok::<_, io::Error>(()) }).await;
        assert!(answer.unwrap_err().is_injected());
    }
    injected.stop_injection().unwrap();
    injected
        .call(async { Ok::<_, io::Error>(()) })
        .await
        .unwrap()
        .unwrap();

    let probing = registered(
        Config::builder()
            .name("otel-probing")
            .count_window(1)
            .build()
            .unwrap(),
    );
    assert!(probing.call(async { reset() }).await.unwrap().is_err());
    assert!(probing.half_open());

    let forced = registered(Config::builder().name("otel-forced").build().unwrap());
    forced.force_open();
    assert!(
        forced
            .call(async { Ok::<_, io::Error>(()) })
            .await
            .unwrap_err()
            .is_rejection()
    );

    // Opens on its failure, and in shadow mode lets the next call run.
    let shadow = registered(
        Config::builder()
            .name("otel-shadow")
            .count_window(1)
            .mode(Mode::Shadow)
            .build()
            .unwrap(),
    );
    assert!(shadow.call(async { reset() }).await.unwrap().is_err());
    assert!(shadow.state().rejects());
    shadow
        .call(async { Ok::<_, io::Error>(()) })
        .await
        .expect("shadow mode lets it run")
        .unwrap();

    let guarded = registered(Config::builder().name("otel-guarded").build().unwrap());
    guarded.disable();
    drive_policies(&guarded).await;

    provider.force_flush().unwrap();
    let exported = exporter.get_finished_metrics().unwrap();

    for (breaker, state) in [
        ("otel-steady", State::Closed),
        ("otel-tripped", State::Open),
        ("otel-probing", State::HalfOpen),
        ("otel-forced", State::ForcedOpen),
        ("otel-guarded", State::Disabled),
    ] {
        assert_eq!(
            state_of(&exported, breaker),
            Some(state_value(state)),
            "{breaker}"
        );
    }
    assert_eq!(state_of(&exported, "otel-tripped"), Some(1));
    assert_eq!(state_of(&exported, "otel-steady"), Some(0));

    let transitions = |breaker, from, to| {
        counted(
            &exported,
            "circuit_breaker.transitions",
            &[("breaker", breaker), ("from", from), ("to", to)],
        )
    };
    assert_eq!(transitions("otel-tripped", "closed", "open"), Some(1));
    assert_eq!(transitions("otel-tripped", "open", "half_open"), None);
    assert_eq!(transitions("otel-steady", "closed", "open"), None);
    assert_eq!(transitions("otel-probing", "closed", "open"), Some(1));
    assert_eq!(transitions("otel-probing", "open", "half_open"), Some(1));
    assert_eq!(transitions("otel-forced", "closed", "forced_open"), Some(1));
    assert_eq!(transitions("otel-guarded", "closed", "disabled"), Some(1));

    let calls = |breaker, outcome| {
        counted(
            &exported,
            "circuit_breaker.calls",
            &[("breaker", breaker), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("otel-tripped", "success"), Some(3));
    assert_eq!(calls("otel-tripped", "failure"), Some(2));
    assert_eq!(calls("otel-tripped", "rejected"), Some(4));
    assert_eq!(calls("otel-steady", "success"), Some(2));
    assert_eq!(
        counted(
            &exported,
            "circuit_breaker.calls",
            &[
                ("breaker", "otel-injected"),
                ("outcome", "failure"),
                ("injected", "true")
            ],
        ),
        Some(2)
    );
    assert_eq!(
        calls("otel-injected", "failure"),
        None,
        "no injected call goes unmarked"
    );
    assert_eq!(
        calls("otel-injected", "success"),
        Some(1),
        "nor is a plain one marked"
    );
    assert_eq!(
        counted(
            &exported,
            "circuit_breaker.injected",
            &[("breaker", "otel-injected"), ("fault", "failure")],
        ),
        Some(2)
    );
    assert_eq!(calls("otel-steady", "rejected"), None);
    assert_eq!(calls("otel-forced", "rejected"), Some(1));
    assert_eq!(calls("otel-shadow", "failure"), Some(1));
    assert_eq!(calls("otel-shadow", "success"), Some(1));
    assert_eq!(
        calls("otel-shadow", "rejected"),
        None,
        "shadow mode rejects nothing"
    );
    // Two failed attempts of the retried call, the bulkhead's holder, the call past its deadline.
    assert_eq!(calls("otel-guarded", "failure"), Some(2));
    assert_eq!(calls("otel-guarded", "success"), Some(1));
    assert_eq!(calls("otel-guarded", "cancelled"), Some(1));

    // Every finished call, and no rejection, has a duration.
    assert_eq!(durations(&exported, "otel-tripped"), Some(5));
    assert_eq!(durations(&exported, "otel-steady"), Some(2));
    assert_eq!(durations(&exported, "otel-forced"), None);

    // Read from the snapshots at collection.
    let rejected = |breaker| {
        gauge_of(
            &exported,
            "circuit_breaker.rejected_since_transition",
            &[("breaker", breaker)],
            |data| match data {
                AggregatedMetrics::U64(MetricData::Gauge(g)) => Some(g),
                _ => None,
            },
        )
    };
    assert_eq!(rejected("otel-tripped"), Some(4));
    assert_eq!(rejected("otel-forced"), Some(1));
    assert_eq!(rejected("otel-steady"), Some(0));
    let window = |breaker, stat| {
        gauge_of(
            &exported,
            "circuit_breaker.window.call.duration",
            &[("breaker", breaker), ("stat", stat)],
            |data| match data {
                AggregatedMetrics::F64(MetricData::Gauge(g)) => Some(g),
                _ => None,
            },
        )
    };
    assert_eq!(window("otel-timed", "mean"), Some(0.06));
    assert_eq!(window("otel-timed", "max"), Some(0.09));
    assert_eq!(
        window("otel-forced", "max"),
        None,
        "forced open, the window holds nothing"
    );

    let one = |name, breaker| counted(&exported, name, &[("breaker", breaker)]);
    assert_eq!(
        one("circuit_breaker.shadow_rejected", "otel-shadow"),
        Some(1)
    );
    assert_eq!(
        one("circuit_breaker.bulkhead_rejected", "otel-guarded"),
        Some(1)
    );
    assert_eq!(
        one("circuit_breaker.deadline_exceeded", "otel-guarded"),
        Some(1)
    );
    let retries = |outcome| {
        counted(
            &exported,
            "circuit_breaker.retries",
            &[("breaker", "otel-guarded"), ("outcome", outcome)],
        )
    };
    assert_eq!(retries("retried"), Some(1));
    assert_eq!(
        retries("budget_exhausted"),
        None,
        "within the budget's floor"
    );

    for name in [
        "circuit_breaker.state",
        "circuit_breaker.transitions",
        "circuit_breaker.calls",
        "circuit_breaker.call.duration",
        "circuit_breaker.shadow_rejected",
        "circuit_breaker.retries",
        "circuit_breaker.bulkhead_rejected",
        "circuit_breaker.deadline_exceeded",
    ] {
        assert!(
            !metric(&exported, name).description().is_empty(),
            "{name} is described"
        );
    }
    provider.shutdown().unwrap();
}

/// Through a disabled breaker, so nothing opens it: one failing call retried once, one call over
/// a full bulkhead, one call cut by its deadline (on the paused clock).
async fn drive_policies(breaker: &Breaker) {
    let retrying = Policy::builder()
        .retries(1)
        .backoff(Duration::from_millis(1), Duration::from_millis(1))
        .build()
        .unwrap();
    let answer = retrying.call(breaker, || async { reset() }).await;
    assert!(answer.unwrap().is_err(), "the last attempt's failure");

    let bulkhead = Policy::builder().max_concurrent(1).build().unwrap();
    let release = tokio::sync::Notify::new();
    let released = &release;
    let holder = bulkhead.call(breaker, move || async move {
        released.notified().await;
        Ok::<_, io::Error>(())
    });
    let over = async {
        tokio::task::yield_now().await;
        let answer = bulkhead
            .call(breaker, || async { Ok::<_, io::Error>(()) })
            .await;
        release.notify_one();
        answer
    };
    let (first, second) = tokio::join!(holder, over);
    assert!(first.unwrap().is_ok());
    assert!(
        matches!(second, Err(BreakerError::BulkheadFull { .. })),
        "{second:?}"
    );

    let deadline = Policy::builder()
        .deadline(Duration::from_millis(10))
        .build()
        .unwrap();
    let answer = deadline
        .call(breaker, std::future::pending::<Result<(), io::Error>>)
        .await;
    assert!(answer.unwrap_err().is_deadline());
}
