//! `POST {name}/drill` and `DELETE {name}/drill`: a drill started and stopped by its operator,
//! behind the same token as the commands; the breaker logs both.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::Endpoint;
use super::commands::MAX_BODY;
use super::guard::Asked;
use super::stop::{Running, stop_running};
use crate::core::breaker::DrillError;
use crate::outcome::error::humane;

const EXAMPLE: &str = r#"{"open_for": "30s"}"#;

pub(super) async fn start(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let asked = Asked {
        breaker: &name,
        command: "drill",
    };
    let breaker = match asked.operated(&endpoint, &headers) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.answer(),
    };
    let body = match asked.body(body, MAX_BODY) {
        Ok(body) => body,
        Err(refused) => return refused.answer(),
    };
    let open_for = match open_for(&body) {
        Ok(open_for) => open_for,
        Err(message) => return asked.refuse(StatusCode::BAD_REQUEST, &message),
    };
    // Refused only for the breaker's state (a drill running, an operator's hold, shadow
    // mode): the request was well formed, the breaker is not ready for it.
    if let Err(error) = breaker.drill(open_for) {
        let message = match error {
            DrillError::Drilling { ends } => format!(
                "a drill is running already and ends in {}; stop it first with `DELETE {name}/drill`",
                humane(ends.saturating_duration_since(tokio::time::Instant::now()))
            ),
            error => error.to_string(),
        };
        return asked.refuse(StatusCode::CONFLICT, &message);
    }
    asked.answer(
        &breaker.snapshot(),
        format!("held open for {}", humane(open_for)),
    )
}

pub(super) async fn stop(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let running = Running {
        action: "drill_stop",
        a: "a drill",
        noun: "drill",
    };
    stop_running(&endpoint, &headers, &name, body, running, |breaker| {
        breaker.stop_drill().is_some()
    })
}

/// The drill's length from a body such as [`EXAMPLE`], in the attribute's grammar.
fn open_for(body: &[u8]) -> Result<Duration, String> {
    let spelled = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) if map.len() == 1 => map.get("open_for").cloned(),
        _ => None,
    };
    match spelled {
        Some(Value::String(text)) => breaker_options::grammar::nonzero_duration(&text)
            .map_err(|error| format!("open_for: {error}")),
        _ => Err(format!(
            "the body must be a JSON map with one duration, such as {EXAMPLE}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn the_length_is_spelled_as_in_the_attribute() {
        assert_eq!(
            super::open_for(br#"{"open_for": "90s"}"#),
            Ok(Duration::from_secs(90))
        );
        for bad in [
            &br#"{"open_for": "0s"}"#[..],
            br#"{"open_for": "30"}"#,
            br#"{"open_for": 30}"#,
            br#"{"open_for": "30s", "extra": 1}"#,
            br#"{"for": "30s"}"#,
            br#"["30s"]"#,
            b"",
        ] {
            assert!(
                super::open_for(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
