//! The `DELETE` that ends early what an operator started on a breaker (a drill, an injection):
//! behind the token, without a body, and a conflict when nothing of the kind runs.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::guard::{operated, refuse};
use super::{Endpoint, with_snapshot};
use crate::core::breaker::Breaker;

/// What is stopped, as the answers name it.
pub(super) struct Running {
    /// The command's name in the log (`drill_stop`).
    pub(super) action: &'static str,
    /// The thing, with its article (`a drill`).
    pub(super) a: &'static str,
    /// The thing (`drill`).
    pub(super) noun: &'static str,
}

/// Stops what `stop` stops on the breaker named `name`, answering its snapshot; `stop` says
/// whether anything ran.
pub(super) fn stop_running(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    name: &str,
    body: &[u8],
    running: Running,
    stop: impl FnOnce(&Breaker) -> bool,
) -> Response {
    let breaker = match operated(endpoint, headers, name, running.action) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.into_response(),
    };
    if !body.is_empty() {
        let message = format!("stopping {} takes no body", running.a);
        return refuse(StatusCode::BAD_REQUEST, &message);
    }
    if !stop(&breaker) {
        let message = format!("no {} is running", running.noun);
        return refuse(StatusCode::CONFLICT, &message);
    }
    with_snapshot(&breaker.snapshot())
}
