//! `GET {name}/trace`: the calls a breaker recorded, as JSON Lines for `breaker-replay`.
//!
//! Without a query, the trace started with `trace_start` (no token: reading it is like reading a
//! snapshot). With `?last=5m`, what the flight recorder kept of the last five minutes, the
//! breaker's transitions among the calls: behind the read token when one is set, like every
//! read, and otherwise behind the operator's token when one is set, since it holds every call
//! of the recent past. Streamed, a chunk of lines at a time, so the recorder's
//! calls are in memory once (as values) and never as one whole text.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use breaker_options::grammar;

use super::Endpoint;
use super::guard::{refuse, unknown_breaker};
use crate::core::trace::{Recent, to_json_lines};
use crate::registry::registry;

/// The media type of JSON Lines as tools send and expect it.
const JSON_LINES: &str = "application/x-ndjson";
/// Lines per chunk of a streamed answer.
const CHUNK: usize = 1_000;

pub(super) async fn get(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    // `key=value` pairs; the one value taken (a span such as `5m`) needs no decoding.
    let query: Vec<(&str, &str)> = query
        .as_deref()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    if let Some((unknown, _)) = query.iter().find(|(key, _)| *key != "last") {
        let message = format!(
            "unknown query `{}`: `GET {{name}}/trace` takes `last` (such as `?last=5m`, the flight recorder's last five minutes), or nothing (the trace started with `trace_start`)",
            clip(unknown)
        );
        return refuse(StatusCode::BAD_REQUEST, &message);
    }
    let Some(&(_, last)) = query.iter().find(|(key, _)| *key == "last") else {
        let Some(breaker) = registry().get(&name) else {
            return refuse(StatusCode::NOT_FOUND, &unknown_breaker(&name));
        };
        return lines(Body::from(to_json_lines(&breaker.trace())));
    };
    // The read token where one is set (the reading guard checked it); otherwise the
    // operator's, where one is set: the recorder holds every call of the recent past.
    if let (None, Some(token)) = (&endpoint.read_token, &endpoint.token) {
        if !super::credentials::bears(&headers, token) {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "the flight recorder's calls need `Authorization: Bearer <token>`",
            );
        }
    }
    let span = match grammar::nonzero_duration(last) {
        Ok(span) => span,
        Err(problem) => {
            let message = format!(
                "invalid `last`: {problem}; write a span such as `?last=5m` (at most what `record` keeps)"
            );
            return refuse(StatusCode::BAD_REQUEST, &message);
        }
    };
    let Some(breaker) = registry().get(&name) else {
        return refuse(StatusCode::NOT_FOUND, &unknown_breaker(&name));
    };
    lines(streamed(breaker.recent(span)))
}

/// The recorder's lines, a chunk at a time, each made as the client reads.
fn streamed(recent: Recent) -> Body {
    let chunks = futures_util::stream::unfold(recent.into_lines(), |mut lines| async move {
        let chunk: String = lines.by_ref().take(CHUNK).map(|line| line + "\n").collect();
        if chunk.is_empty() {
            return None;
        }
        Some((Ok::<_, std::convert::Infallible>(chunk), lines))
    });
    Body::from_stream(chunks)
}

fn lines(body: Body) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, JSON_LINES)
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// At most 64 characters of what a client sent, for an answer that echoes it.
fn clip(text: &str) -> String {
    text.chars().take(64).collect()
}
