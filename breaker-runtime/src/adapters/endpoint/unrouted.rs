//! The answers to a request no route takes: a path the endpoint does not have (404), or a
//! method its path does not take (405), each as JSON naming what the path takes, in the shape
//! of every other refusal, where axum would answer with an empty body.

use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;

use super::audit::{Audit, audited};
use super::guard::refuse;

/// Every route, as the 404 lists them.
const ROUTES: &str = "GET /, GET /events, GET /{name}, GET /{name}/trace, \
                      POST /{name}/{command}, PUT /{name}/config, \
                      POST or DELETE /{name}/drill, POST or DELETE /{name}/inject";

/// A path no route has.
pub(super) async fn not_found(uri: Uri) -> Response {
    let message = format!("no route is `{}`; the routes are {ROUTES}", uri.path());
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
        Some("trace") => "`GET`: the calls recorded since `trace_start`, as JSON Lines",
        Some(_) if segments(path) == 2 => "`POST`, with no body: an operator's command",
        _ => "`GET`: snapshots as JSON (`Accept: text/html` for the page)",
    };
    let message = format!("`{method}` is not taken at `{path}`; it takes {takes}");
    // Read by the audit line when the path is an operator's; a read route logs nothing.
    let audit = Audit {
        breaker: path
            .split('/')
            .find(|s| !s.is_empty())
            .unwrap_or("")
            .to_string(),
        command: "wrong method",
        outcome: message.clone(),
    };
    audited(refuse(StatusCode::METHOD_NOT_ALLOWED, &message), audit)
}

fn last_segment(path: &str) -> Option<&str> {
    (segments(path) == 2)
        .then(|| path.rsplit('/').next())
        .flatten()
}

fn segments(path: &str) -> usize {
    path.split('/').filter(|s| !s.is_empty()).count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_path_has_two_segments() {
        assert_eq!(super::last_segment("/payments/config"), Some("config"));
        assert_eq!(super::last_segment("/payments"), None);
        assert_eq!(super::last_segment("/"), None);
    }
}
