//! `GET /health`: the breakers' part of a readiness probe, with no token (it tells names and
//! states only). 200 while the service answers, with the breakers that are not closed listed
//! as degraded; 503 only while a breaker named critical turns calls away.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Endpoint;
use crate::registry::health::HealthStatus;
use crate::registry::registry;

pub(super) async fn get(State(endpoint): State<Endpoint>) -> Response {
    let health = registry().health();
    let critical: &[String] = &endpoint.critical;
    let status = health.status(critical);
    let degraded: Vec<_> = health
        .degraded
        .iter()
        .map(|d| {
            serde_json::json!({
                "name": d.name.as_ref(),
                "state": d.state.as_str(),
                "mode": d.mode.as_str(),
                "critical": d.named_in(critical),
            })
        })
        .collect();
    let down: Vec<&str> = health
        .down(critical)
        .iter()
        .map(|d| d.name.as_ref())
        .collect();
    let body = serde_json::json!({
        "status": status.as_str(),
        "breakers": health.breakers,
        "degraded": degraded,
        "down": down,
    });
    let code = match status {
        HealthStatus::Down => StatusCode::SERVICE_UNAVAILABLE,
        HealthStatus::Up | HealthStatus::Degraded => StatusCode::OK,
    };
    (
        code,
        [
            (header::CONTENT_TYPE, "application/json"),
            // A probe wants the state now, never a cache's.
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}
