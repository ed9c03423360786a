//! The operator's commands: off without a token, and with one only for its bearer.

use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::Endpoint;
use super::guard::Asked;
use crate::core::breaker::Requester;
use crate::core::config::Mode;
use crate::core::trace::Limits;

/// The largest body a command takes: commands take none, so anything more is refused (413).
pub(super) const MAX_BODY: usize = 1_024;

/// Every command `POST {name}/{command}` takes, in the order the errors list them.
const COMMANDS: [&str; 9] = [
    "force_open",
    "disable",
    "reset",
    "half_open",
    "shadow",
    "enforce",
    "reset_config",
    "trace_start",
    "trace_stop",
];

/// The commands with a body of their own, as the unknown command's answer lists them.
const WITH_A_BODY: &str = r#"`drill` ({"open_for": "5m"}) and `inject` ({"fail": "10%", "for": "5m"}), and `PUT {name}/config` for options"#;

pub(super) async fn command(
    State(endpoint): State<Endpoint>,
    Path((name, command)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<axum::body::Bytes, BytesRejection>,
) -> Response {
    let asked = Asked {
        breaker: &name,
        command: COMMANDS
            .iter()
            .find(|known| **known == command)
            .copied()
            .unwrap_or("unknown"),
    };
    let breaker = match asked.operated(&endpoint, &headers) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.answer(),
    };
    let body = match asked.body(body, MAX_BODY) {
        Ok(body) => body,
        Err(refused) => return refused.answer(),
    };
    if !body.is_empty() {
        return asked.refuse(StatusCode::BAD_REQUEST, "a command takes no body");
    }
    let before = breaker.state();
    match asked.command {
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
            let near = breaker_options::nearest(&command, COMMANDS);
            let near = match near.first() {
                Some(near) => format!(" (did you mean `{near}`?)"),
                None => String::new(),
            };
            let message = format!(
                "unknown command `{command}`{near}; the commands are {}, and with a body {WITH_A_BODY}",
                COMMANDS.join(", ")
            );
            return asked.refuse(StatusCode::BAD_REQUEST, &message);
        }
    }
    let snapshot = breaker.snapshot();
    let done = format!(
        "applied: {} to {}, mode {}",
        before.as_str(),
        snapshot.state.as_str(),
        snapshot.mode.as_str()
    );
    asked.answer(&snapshot, done)
}
