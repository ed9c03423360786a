//! The `DELETE` that ends early what an operator started on a breaker (a drill, an injection):
//! behind the token, without a body, and a conflict when nothing of the kind runs.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::Endpoint;
use super::commands::MAX_BODY;
use super::guard::Asked;
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
    body: Result<Bytes, BytesRejection>,
    running: Running,
    stop: impl FnOnce(&Breaker) -> bool,
) -> Response {
    let asked = Asked {
        breaker: name,
        command: running.action,
    };
    let breaker = match asked.operated(endpoint, headers) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.answer(),
    };
    let body = match asked.body(body, MAX_BODY) {
        Ok(body) => body,
        Err(refused) => return refused.answer(),
    };
    if !body.is_empty() {
        let message = format!("stopping {} takes no body", running.a);
        return asked.refuse(StatusCode::BAD_REQUEST, &message);
    }
    if !stop(&breaker) {
        let message = format!("no {} is running", running.noun);
        return asked.refuse(StatusCode::CONFLICT, &message);
    }
    asked.answer(&breaker.snapshot(), format!("{} stopped", running.noun))
}
