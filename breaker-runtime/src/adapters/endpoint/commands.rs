//! The operator's commands: off without a token, and with one only for its bearer; each is
//! logged with the breaker and the outcome.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::guard::{operated, refuse};
use super::{Endpoint, with_snapshot};
use crate::core::breaker::Requester;
use crate::core::config::Mode;
use crate::core::trace::Limits;

/// The largest body a command takes: commands take none, so anything more is refused (413).
pub(super) const MAX_BODY: usize = 1_024;

const COMMANDS: &str =
    "force_open, disable, reset, half_open, shadow, enforce, reset_config, trace_start, trace_stop";

pub(super) async fn command(
    State(endpoint): State<Endpoint>,
    Path((name, command)): Path<(String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let breaker = match operated(&endpoint, &headers, &name, &command) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.into_response(),
    };
    if !body.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, "a command takes no body");
    }
    let before = breaker.state();
    match command.as_str() {
        "force_open" => breaker.force_open(),
        "disable" => breaker.disable(),
        "reset" => breaker.reset(),
        "half_open" => {
            breaker.half_open();
        }
        "shadow" => breaker.set_mode(Mode::Shadow),
        "enforce" => breaker.set_mode(Mode::Enforce),
        "reset_config" => {
            breaker.reset_config_by(Requester::Endpoint);
        }
        "trace_start" => breaker.start_trace(Limits::DEFAULT),
        "trace_stop" => breaker.stop_trace(),
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("unknown command; the commands are {COMMANDS}"),
            );
        }
    }
    let snapshot = breaker.snapshot();
    tracing::info!(
        breaker = %name,
        command = %command,
        from = before.as_str(),
        to = snapshot.state.as_str(),
        mode = snapshot.mode.as_str(),
        "operator command applied"
    );
    with_snapshot(&snapshot)
}
