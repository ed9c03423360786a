//! The operator's commands: off without a token, and with one only for its bearer; each is
//! logged with the breaker and the outcome.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;

use super::{Endpoint, json};
use crate::core::config::Mode;
use crate::registry::registry;

/// The largest body a command takes: commands take none, so anything more is refused (413).
pub(super) const MAX_BODY: usize = 1_024;

const COMMANDS: &str = "force_open, disable, reset, half_open, shadow, enforce";

pub(super) async fn command(
    State(endpoint): State<Endpoint>,
    Path((name, command)): Path<(String, String)>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let Some(token) = &endpoint.token else {
        return refuse(
            StatusCode::FORBIDDEN,
            "operator commands are off: configure a token (Endpoint::token)",
        );
    };
    if !body.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, "a command takes no body");
    }
    let offered = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !same(offered.as_bytes(), token.as_bytes()) {
        tracing::warn!(breaker = %name, command = %command, "operator command refused: bad or missing token");
        return refuse(
            StatusCode::UNAUTHORIZED,
            "a command needs `Authorization: Bearer <token>`",
        );
    }
    let Some(breaker) = registry().get(&name) else {
        return refuse(StatusCode::NOT_FOUND, "no breaker of that name");
    };
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
    json(
        StatusCode::OK,
        serde_json::to_string(&snapshot).unwrap_or_default(),
    )
}

fn refuse(status: StatusCode, message: &str) -> Response {
    json(status, serde_json::json!({ "error": message }).to_string())
}

/// Whether two byte strings are equal, in a time that depends on their lengths only, not on
/// where they first differ: a wrong token's answer says nothing about the right one.
fn same(offered: &[u8], expected: &[u8]) -> bool {
    let mut difference = offered.len() ^ expected.len();
    for (i, byte) in expected.iter().enumerate() {
        let other = offered.get(i).copied().unwrap_or(0);
        difference |= usize::from(byte ^ other);
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_equal_only_when_every_byte_and_the_length_agree() {
        assert!(super::same(b"s3cret", b"s3cret"));
        assert!(!super::same(b"s3cre", b"s3cret"));
        assert!(!super::same(b"s3cret!", b"s3cret"));
        assert!(!super::same(b"S3cret", b"s3cret"));
        assert!(!super::same(b"", b"s3cret"));
    }
}
