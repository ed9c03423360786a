//! The `metrics` feature end to end: a Prometheus exporter on a loopback port, a breaker driven
//! open and closed again, and the series read back over HTTP.

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicU64, Ordering};

use breaker_runtime::{
    Breaker, BreakerError, CallEvent, CallObserver, Config, Injection, Policy, State,
    add_call_observer, registry,
};
use metrics_exporter_prometheus::PrometheusBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

static OWN_REJECTED: AtomicU64 = AtomicU64::new(0);
static OWN_FINISHED: AtomicU64 = AtomicU64::new(0);

struct OwnCount;

impl CallObserver for OwnCount {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if breaker.name() != "scraped" {
            return;
        }
        match event {
            CallEvent::Rejected => OWN_REJECTED.fetch_add(1, Ordering::Relaxed),
            CallEvent::Finished { .. } => OWN_FINISHED.fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
    }
}

async fn scrape(port: u16) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the exporter listens");
    let request =
        format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(
        response.starts_with("HTTP/1.1 200"),
        "scrape answered: {response}"
    );
    response
}

/// The value of the series whose line starts with `series`.
fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find(|l| l.starts_with(series))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn series_are_served_over_http_after_the_breaker_opens_and_closes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    PrometheusBuilder::new()
        .with_http_listener(([127, 0, 0, 1], port))
        .install()
        .unwrap();
    breaker_runtime::metrics::install().unwrap();
    assert!(
        breaker_runtime::metrics::install().is_err(),
        "installed once, so nothing is counted twice"
    );
    // An observer of the service's own beside the metrics: both see every call.
    add_call_observer(OwnCount);

    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name("scraped")
            .count_window(4)
            .break_duration(Duration::from_millis(50))
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    for _ in 0..4 {
        breaker
            .call(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) })
            .await
            .unwrap()
            .ok();
    }
    assert_eq!(breaker.state(), State::Open);
    assert!(
        breaker
            .call(async { Ok::<_, std::io::Error>(()) })
            .await
            .is_err(),
        "rejected while open"
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    breaker
        .call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(breaker.state(), State::Closed);

    drive_policies().await;
    let timed = drive_timed().await;
    drive_injected().await;

    // The exporter's listener starts in the background; give it a moment.
    let mut body = String::new();
    for _ in 0..50 {
        if let Ok(Ok(stream)) = tokio::time::timeout(
            Duration::from_millis(200),
            tokio::net::TcpStream::connect(("127.0.0.1", port)),
        )
        .await
        {
            drop(stream);
            body = scrape(port).await;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let b = r#"breaker="scraped""#;
    assert_eq!(
        value(&body, &format!("circuit_breaker_state{{{b}}}")),
        Some(0.0),
        "closed again:\n{body}"
    );
    for (from, to) in [
        ("closed", "open"),
        ("open", "half_open"),
        ("half_open", "closed"),
    ] {
        let series = format!(r#"circuit_breaker_transitions_total{{{b},from="{from}",to="{to}"}}"#);
        assert_eq!(value(&body, &series), Some(1.0), "{series}:\n{body}");
    }
    let calls = |outcome: &str| {
        value(
            &body,
            &format!(r#"circuit_breaker_calls_total{{{b},outcome="{outcome}"}}"#),
        )
    };
    assert_eq!(calls("failure"), Some(4.0), "{body}");
    assert_eq!(calls("rejected"), Some(1.0), "{body}");
    assert_eq!(calls("success"), Some(1.0), "{body}");
    assert_eq!(
        value(
            &body,
            &format!("circuit_breaker_call_duration_seconds_count{{{b}}}")
        ),
        Some(5.0),
        "{body}"
    );
    assert_eq!(
        OWN_REJECTED.load(Ordering::Relaxed),
        1,
        "the service's own observer"
    );
    assert_eq!(OWN_FINISHED.load(Ordering::Relaxed), 5);

    let i = r#"breaker="injected""#;
    assert_eq!(
        value(
            &body,
            &format!(r#"circuit_breaker_calls_total{{{i},outcome="failure",injected="true"}}"#)
        ),
        Some(2.0),
        "injected calls are marked:\n{body}"
    );
    assert_eq!(
        value(
            &body,
            &format!(r#"circuit_breaker_calls_total{{{i},outcome="success"}}"#)
        ),
        Some(1.0),
        "and the others are not:\n{body}"
    );
    assert_eq!(
        value(
            &body,
            &format!(r#"circuit_breaker_calls_total{{{i},outcome="failure"}}"#)
        ),
        None,
        "{body}"
    );
    assert_eq!(
        value(
            &body,
            &format!(r#"circuit_breaker_injected_total{{{i},fault="failure"}}"#)
        ),
        Some(2.0),
        "{body}"
    );

    let t = r#"breaker="timed""#;
    assert_eq!(
        value(
            &body,
            &format!("circuit_breaker_rejected_since_transition{{{t}}}")
        ),
        Some(4.0),
        "refreshed by the rejection a second later:\n{body}"
    );
    let window = |stat: &str| {
        value(
            &body,
            &format!(r#"circuit_breaker_window_call_duration_seconds{{{t},stat="{stat}"}}"#),
        )
        .unwrap_or_else(|| panic!("{stat}:\n{body}"))
    };
    let snapshot = timed.snapshot();
    assert_eq!(
        window("mean"),
        snapshot.mean_duration.unwrap().as_secs_f64()
    );
    assert_eq!(window("max"), snapshot.max_duration.unwrap().as_secs_f64());
    assert!(
        (0.030..0.5).contains(&window("mean")) && (0.040..0.5).contains(&window("max")),
        "calls of 20 and 40 ms: {body}"
    );
    assert_eq!(
        value(
            &body,
            &format!("circuit_breaker_rejected_since_transition{{{b}}}")
        ),
        Some(0.0),
        "closed again, it turned nobody away since:\n{body}"
    );

    let g = r#"breaker="guarded""#;
    let retries = |outcome: &str| {
        value(
            &body,
            &format!(r#"circuit_breaker_retries_total{{{g},outcome="{outcome}"}}"#),
        )
        .unwrap_or(0.0)
    };
    let (retried, refused) = (retries("retried"), retries("budget_exhausted"));
    assert_eq!(
        retried + refused,
        200.0,
        "each failed call retried or was refused:\n{body}"
    );
    assert!(retried >= 100.0, "the budget's floor: {retried}");
    assert!(refused >= 1.0, "the budget ran out: {refused}");
    for series in [
        "circuit_breaker_bulkhead_rejected_total",
        "circuit_breaker_deadline_exceeded_total",
    ] {
        assert_eq!(
            value(&body, &format!("{series}{{{g}}}")),
            Some(1.0),
            "{series}:\n{body}"
        );
    }
}

/// A breaker with a failure injected into two calls, and one call without.
async fn drive_injected() {
    let breaker = Arc::new(Breaker::new(
        Config::builder().name("injected").build().unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
        .inject(Injection::new().fail(100.0), Duration::from_secs(60))
        .unwrap();
    for _ in 0..2 {
        let answer = breaker.call(async { Ok::<_, std::io::Error>(()) }).await;
        assert!(answer.unwrap_err().is_injected());
    }
    breaker.stop_injection().unwrap();
    breaker
        .call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap()
        .unwrap();
}

/// A breaker whose two timed calls (20 and 40 ms, on the running clock) trip it, which then
/// turns four calls away, the last a second after the others so the gauges are read again.
async fn drive_timed() -> Arc<Breaker> {
    let timed = Arc::new(Breaker::new(
        Config::builder()
            .name("timed")
            .count_window(2)
            .break_duration(Duration::from_secs(600))
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&timed)).unwrap();
    for took in [20, 40] {
        timed
            .call(async move {
                tokio::time::sleep(Duration::from_millis(took)).await;
                reset()
            })
            .await
            .unwrap()
            .ok();
    }
    assert_eq!(timed.state(), State::Open);
    for _ in 0..3 {
        assert!(
            timed
                .call(async { Ok::<_, std::io::Error>(()) })
                .await
                .is_err()
        );
    }
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    assert!(
        timed
            .call(async { Ok::<_, std::io::Error>(()) })
            .await
            .is_err()
    );
    timed
}

fn reset() -> Result<(), std::io::Error> {
    Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset))
}

/// Calls through a breaker named `guarded` under three policies: 200 failing calls with one
/// retry each (the budget's floor, 10 a second over its 10 s, lets 100 and then some retry;
/// it refuses the rest), one call
/// over a full bulkhead, one call past its deadline.
async fn drive_policies() {
    let breaker = Arc::new(Breaker::new(
        Config::builder().name("guarded").build().unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    // Disabled, so that 200 failures in a row do not open it: the retries are what is counted.
    breaker.disable();
    let retrying = Policy::builder()
        .retries(1)
        .backoff(Duration::from_micros(1), Duration::from_micros(1))
        .build()
        .unwrap();
    for _ in 0..200 {
        let answer = retrying.call(&breaker, || async { reset() }).await;
        assert!(answer.unwrap().is_err(), "the last attempt's failure");
    }

    let bulkhead = Policy::builder().max_concurrent(1).build().unwrap();
    let release = tokio::sync::Notify::new();
    let released = &release;
    let holder = bulkhead.call(&breaker, move || async move {
        released.notified().await;
        Ok::<_, std::io::Error>(())
    });
    let over = async {
        tokio::task::yield_now().await;
        let answer = bulkhead
            .call(&breaker, || async { Ok::<_, std::io::Error>(()) })
            .await;
        release.notify_one();
        answer
    };
    let (first, second) = tokio::join!(holder, over);
    assert!(first.is_ok());
    assert!(
        matches!(second, Err(BreakerError::BulkheadFull { .. })),
        "{second:?}"
    );

    let deadline = Policy::builder()
        .deadline(Duration::from_millis(10))
        .build()
        .unwrap();
    let answer = deadline
        .call(&breaker, || async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok::<_, std::io::Error>(())
        })
        .await;
    assert!(answer.unwrap_err().is_deadline());
}
