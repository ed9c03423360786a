//! `registry().health()` and `GET /health` over a real server (issue 47): a breaker that is not
//! closed makes the service degraded, never down (spinnaker/echo #706: Resilience4j's default
//! health indicator took every pod out of rotation when one breaker tripped, though its
//! fallback answered); only a breaker named critical that turns calls away answers 503.
//! Resilience4j's `CircuitBreakersHealthIndicatorTest`, state by state, in this library's terms.

use std::sync::Arc;

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, HealthStatus, Mode, State, registry};

#[path = "support/http.rs"]
mod http;

use http::{request, serve};

fn registered(name: &'static str) -> Arc<Breaker> {
    let config = Config::builder()
        .name(name)
        .count_window(2)
        .build()
        .unwrap();
    let breaker = Arc::new(Breaker::new(config));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

fn opened(breaker: &Breaker) {
    for _ in 0..2 {
        breaker.try_acquire().unwrap().failure();
    }
    assert_eq!(breaker.state(), State::Open);
}

async fn health(port: u16) -> (u16, serde_json::Value) {
    let (status, body) = request(port, "GET", "/health", &[], "").await;
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("JSON: {body}")),
    )
}

// One test: the registry is the process's, and each step depends on every breaker's state.
#[tokio::test]
async fn only_a_critical_breaker_that_turns_calls_away_takes_the_service_down() {
    let payments = registered("health::payments");
    let recommendations = registered("health::recommendations");
    let token = "health-token-77a1";
    let port = serve(
        Endpoint::new()
            .token(token)
            .critical(["health::payments", "health::not-built-yet"])
            .router(),
    )
    .await;

    // Resilience4j: closed is UP. No token is asked, though one is configured.
    let (status, body) = health(port).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "up");
    assert_eq!(body["breakers"], 2);
    assert_eq!(body["degraded"], serde_json::json!([]));

    // A breaker that is not critical opens: its fallback answers, the service is degraded.
    opened(&recommendations);
    let (status, body) = health(port).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "degraded");
    assert_eq!(
        body["degraded"],
        serde_json::json!([{"name": "health::recommendations", "state": "open", "mode": "enforce", "critical": false}])
    );
    assert_eq!(body["down"], serde_json::json!([]));

    // Resilience4j: half-open is UNKNOWN; here the critical breaker's probes go through, and
    // the service is degraded, not down.
    opened(&payments);
    // An operator's half-open, rather than waiting out the break on the wall clock.
    assert!(payments.half_open());
    let probe = payments.try_acquire().unwrap();
    assert_eq!(payments.state(), State::HalfOpen);
    let (status, body) = health(port).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "degraded");

    // Resilience4j: open is DOWN; here only for the breaker named critical.
    probe.failure();
    assert_eq!(payments.state(), State::Open);
    let (status, body) = health(port).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["status"], "down");
    assert_eq!(body["down"], serde_json::json!(["health::payments"]));
    let listed = body["degraded"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|d| d["name"] == "health::payments" && d["critical"] == true)
    );

    // In shadow mode an open circuit turns nothing away: degraded, not down.
    payments.set_mode(Mode::Shadow);
    assert_eq!(health(port).await.0, 200);
    payments.set_mode(Mode::Enforce);

    // Held open by an operator (Resilience4j's FORCED_OPEN): down while it is critical.
    payments.reset();
    payments.force_open();
    assert_eq!(health(port).await.0, 503);
    // Held closed (Resilience4j's DISABLED): calls run; listed as not closed, not down.
    payments.disable();
    let (status, body) = health(port).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["degraded"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["state"] == "disabled")
    );

    payments.reset();
    recommendations.reset();
    let (status, body) = health(port).await;
    assert_eq!((status, body["status"].as_str()), (200, Some("up")));

    // The same from code.
    opened(&payments);
    let health = registry().health();
    assert_eq!(health.status(&["health::payments"]), HealthStatus::Down);
    assert_eq!(health.status(&[] as &[&str]), HealthStatus::Degraded);
    payments.reset();
}

#[tokio::test]
async fn health_can_be_left_out() {
    let port = serve(Endpoint::new().without_health().router()).await;
    let (status, body) = request(port, "GET", "/health", &[], "").await;
    assert_eq!(status, 404, "{body}");
}
