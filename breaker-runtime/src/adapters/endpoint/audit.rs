//! One log line for every operator request, accepted or refused: the breaker, the command, the
//! outcome and the peer's address, never the token.
//!
//! Each handler says what it did in an [`Audit`] it puts in its response's extensions; this
//! layer, around the operator's routes, adds who asked and writes the line once the answer is
//! made. A refusal is a `warn`, an accepted command an `info`.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

/// What a handler did, for the log: the breaker and command it was asked for, and its outcome
/// in words ("applied", or why it refused). A refusal for the token says here, not to the
/// client, whether the token was missing or wrong.
#[derive(Debug, Clone)]
pub(super) struct Audit {
    pub(super) breaker: String,
    pub(super) command: &'static str,
    pub(super) outcome: String,
}

/// Marks `response` with what the handler did.
pub(super) fn audited(mut response: Response, audit: Audit) -> Response {
    response.extensions_mut().insert(audit);
    response
}

/// Logs the request once its answer is made.
pub(super) async fn audit(request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(
            || "unknown".to_string(),
            |ConnectInfo(peer)| peer.to_string(),
        );
    // What a proxy in front says the client was: logged as its claim, beside the peer.
    let forwarded = request
        .headers()
        .get("x-forwarded-for")
        .and_then(|value: &HeaderValue| value.to_str().ok())
        .map(|value| value.chars().take(200).collect::<String>());
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let status = response.status();
    let audit = response.extensions().get::<Audit>().cloned();
    let (breaker, command, outcome) = match &audit {
        Some(a) => (a.breaker.as_str(), a.command, a.outcome.as_str()),
        // Refused before any handler ran (a method the route does not take).
        None => ("", "", status.canonical_reason().unwrap_or("refused")),
    };
    let forwarded = forwarded.as_deref().unwrap_or("");
    if status.is_success() {
        tracing::info!(
            breaker,
            command,
            status = status.as_u16(),
            outcome,
            peer = %peer,
            forwarded_for = forwarded,
            "operator command `{command}` on `{breaker}` from {peer}: {outcome}"
        );
    } else {
        tracing::warn!(
            breaker,
            command,
            status = status.as_u16(),
            outcome,
            peer = %peer,
            forwarded_for = forwarded,
            method = %method,
            path = %path,
            "operator command `{command}` on `{breaker}` from {peer} refused ({}): {outcome}",
            status.as_u16()
        );
    }
    response
}
