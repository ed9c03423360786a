//! `GET {name}/trace`: the calls a breaker recorded, as JSON Lines for `breaker-replay`. Reading
//! needs no token, like the snapshots; starting and stopping the trace are commands behind it.

use axum::body::Body;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::guard::{refuse, unknown_breaker};
use crate::core::trace::to_json_lines;
use crate::registry::registry;

/// The media type of JSON Lines as tools send and expect it.
const JSON_LINES: &str = "application/x-ndjson";

pub(super) async fn get(Path(name): Path<String>) -> Response {
    let Some(breaker) = registry().get(&name) else {
        return refuse(StatusCode::NOT_FOUND, &unknown_breaker(&name));
    };
    let body = to_json_lines(&breaker.trace());
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, JSON_LINES)
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
