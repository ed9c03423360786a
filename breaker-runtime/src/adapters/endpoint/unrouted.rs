//! The answers to a request no route takes: a path the endpoint does not have (404), or a
//! method its path does not take (405), each as JSON naming what the path takes, in the shape
//! of every other refusal, where axum would answer with an empty body; and any refusal made
//! before a handler runs (an extractor's, such as a path that is not UTF-8 once decoded),
//! put in that shape too.

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use super::audit::{Audit, audited};
use super::guard::refuse;

/// Every route, as the 404 lists them.
const ROUTES: &str = "GET /, GET /events, GET /health, GET /{name}, GET /{name}/trace, \
                      POST /{name}/{command}, PUT /{name}/config, \
                      POST or DELETE /{name}/drill, POST or DELETE /{name}/inject";

/// A path no route has.
pub(super) async fn not_found(uri: Uri) -> Response {
    let message = format!(
        "no route is `{}`; the routes are {ROUTES}",
        echoed(uri.path())
    );
    refuse(StatusCode::NOT_FOUND, &message)
}

/// A method the path does not take: the methods it takes, and what each does.
pub(super) async fn wrong_method(method: Method, uri: Uri) -> Response {
    let path = uri.path();
    let takes = match last_segment(path) {
        Some("config") => "`PUT` with a JSON map of options, such as {\"threshold\": \"40%\"}",
        Some("drill") => {
            "`POST` with {\"open_for\": \"5m\"} to start a drill and `DELETE` to stop it"
        }
        Some("inject") => {
            "`POST` with {\"fail\": \"10%\", \"for\": \"5m\"} to inject faults and `DELETE` to stop them"
        }
        Some("trace") => {
            "`GET`: the calls recorded since `trace_start`, as JSON Lines; `?last=5m`: the flight recorder's last five minutes"
        }
        Some(_) => "`POST`, with no body: an operator's command",
        _ => "`GET`: snapshots as JSON (`Accept: text/html` for the page)",
    };
    let message = format!(
        "`{method}` is not taken at `{}`; it takes {takes}",
        echoed(path)
    );
    // Read by the audit line when the path is an operator's; a read route logs nothing.
    let audit = Audit {
        breaker: echoed(path.split('/').find(|s| !s.is_empty()).unwrap_or("")).into_owned(),
        command: "wrong method",
        outcome: message.clone(),
    };
    audited(refuse(StatusCode::METHOD_NOT_ALLOWED, &message), audit)
}

/// The path as the answer echoes it: whole up to 200 characters, since it is the client's to
/// make as long as the server lets it.
fn echoed(path: &str) -> std::borrow::Cow<'_, str> {
    match path.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &path[..end]).into(),
        None => path.into(),
    }
}

/// The last of exactly two segments (`{name}/{command}`), where a command's route has one.
fn last_segment(path: &str) -> Option<&str> {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    match (segments.next(), segments.next(), segments.next()) {
        (Some(_), Some(last), None) => Some(last),
        _ => None,
    }
}

/// The longest refusal text kept when one made outside the handlers is put in JSON: axum's
/// own are a line.
const MAX_REFUSAL: usize = 1_024;

/// Puts every refusal (4xx, 5xx) that is not JSON yet, which only axum's extractors make
/// before a handler runs, in the shape of every other: `{"error": "..."}`, with its text.
pub(super) async fn refusals_as_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let json = HeaderValue::from_static("application/json");
    if status.as_u16() < 400 || response.headers().get(header::CONTENT_TYPE) == Some(&json) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_REFUSAL)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string())
        .unwrap_or_default();
    let text = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_string()
    } else {
        text
    };
    let mut answer = refuse(status, &text);
    // What the refusal said besides its body (`Allow`, `Retry-After`, ...) stays.
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            answer.headers_mut().append(name, value.clone());
        }
    }
    *answer.extensions_mut() = parts.extensions;
    answer
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_path_has_two_segments() {
        assert_eq!(super::last_segment("/payments/config"), Some("config"));
        assert_eq!(super::last_segment("/payments"), None);
        assert_eq!(super::last_segment("/"), None);
        assert_eq!(super::last_segment("/payments/config/threshold"), None);
    }

    #[test]
    fn a_long_path_is_echoed_cut() {
        let long = format!("/{}", "é".repeat(300));
        let echoed = super::echoed(&long);
        assert_eq!(
            echoed.chars().count(),
            201,
            "200 characters and the ellipsis"
        );
        assert!(echoed.ends_with('…'));
        assert_eq!(super::echoed("/payments"), "/payments");
    }
}
