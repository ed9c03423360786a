//! What every request that changes a breaker passes first: the token, then the breaker's name;
//! and the answers such a request gets, each marked for the audit line.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::audit::{Audit, audited};
use super::credentials;
use super::{Endpoint, json, with_snapshot};
use crate::core::breaker::Breaker;
use crate::core::breaker::snapshot::Snapshot;
use crate::registry::registry;

/// An operator's request: the breaker and the command it asks for, which every answer to it
/// names in the audit line.
pub(super) struct Asked<'a> {
    pub(super) breaker: &'a str,
    pub(super) command: &'static str,
}

impl Asked<'_> {
    /// The breaker asked for, if the endpoint takes changes and the request carries its token;
    /// otherwise the answer: 403 while no token is configured, 401 for a missing or wrong
    /// bearer (the log says which), 404 for an unknown breaker, 429 past the breaker's limit of
    /// operator requests a second. The token is checked before the name, so that a request
    /// without it learns nothing about which breakers exist, and the limit last, so that only
    /// the token's holder spends it.
    pub(super) fn operated(
        &self,
        endpoint: &Endpoint,
        headers: &HeaderMap,
    ) -> Result<Arc<Breaker>, Refused> {
        let Some(token) = &endpoint.token else {
            return Err(Refused::from(self.refuse(
                StatusCode::FORBIDDEN,
                "operator commands are off: configure a token (Endpoint::token)",
            )));
        };
        let offered = credentials::bearer(headers);
        let told = "a command needs `Authorization: Bearer <token>`";
        match offered {
            None => {
                return Err(Refused::from(self.refuse_saying(
                    StatusCode::UNAUTHORIZED,
                    told,
                    "no bearer token",
                )));
            }
            Some(offered) if !credentials::same(offered.as_bytes(), token.as_bytes()) => {
                return Err(Refused::from(self.refuse_saying(
                    StatusCode::UNAUTHORIZED,
                    told,
                    "a wrong token",
                )));
            }
            Some(_) => {}
        }
        let breaker = registry().get(self.breaker).ok_or_else(|| {
            let message = unknown_breaker(self.breaker);
            Refused::from(self.refuse(StatusCode::NOT_FOUND, &message))
        })?;
        if !endpoint.limit.take(self.breaker) {
            let message = format!(
                "over the limit of {} operator requests a second for this breaker; try again in a second",
                endpoint.limit.limit()
            );
            let mut answer = self.refuse(StatusCode::TOO_MANY_REQUESTS, &message);
            answer
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return Err(Refused::from(answer));
        }
        Ok(breaker)
    }

    /// The body, or the answer to one over `limit` bytes: 413, naming the limit.
    pub(super) fn body(
        &self,
        body: Result<Bytes, BytesRejection>,
        limit: usize,
    ) -> Result<Bytes, Refused> {
        body.map_err(|rejection| {
            Refused::from(if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                let message = format!("the body is over the limit of {limit} bytes");
                self.refuse(StatusCode::PAYLOAD_TOO_LARGE, &message)
            } else {
                self.refuse(rejection.status(), "the body could not be read")
            })
        })
    }

    /// A refusal, as JSON: `{"error": message}`.
    pub(super) fn refuse(&self, status: StatusCode, message: &str) -> Response {
        self.refuse_saying(status, message, message)
    }

    /// A refusal that tells the client `message` and the log `logged`.
    fn refuse_saying(&self, status: StatusCode, message: &str, logged: &str) -> Response {
        self.audited(refuse(status, message), logged.to_string())
    }

    /// 200 with the breaker's snapshot, the command `done`.
    pub(super) fn answer(&self, snapshot: &Snapshot, done: String) -> Response {
        self.audited(with_snapshot(snapshot), done)
    }

    /// Any other answer, marked with its outcome.
    pub(super) fn audited(&self, response: Response, outcome: String) -> Response {
        let audit = Audit {
            breaker: self.breaker.to_string(),
            command: self.command,
            outcome,
        };
        audited(response, audit)
    }
}

/// A request turned away before it reached the breaker: its answer, boxed, so that the
/// `Result` a handler checks first stays small.
pub(super) struct Refused(Box<Response>);

impl From<Response> for Refused {
    fn from(response: Response) -> Refused {
        Refused(Box::new(response))
    }
}

impl Refused {
    /// The answer.
    pub(super) fn answer(self) -> Response {
        *self.0
    }
}

/// A refusal, as JSON: `{"error": message}`.
pub(super) fn refuse(status: StatusCode, message: &str) -> Response {
    json(status, serde_json::json!({ "error": message }).to_string())
}

/// The answer to a name no breaker has: the name as given, and the nearest names that exist.
pub(super) fn unknown_breaker(name: &str) -> String {
    let breakers = registry().breakers();
    let names: Vec<&str> = breakers.iter().map(|b| b.name().as_str()).collect();
    let near = breaker_options::nearest(name, names.iter().copied());
    match near.as_slice() {
        [] => format!("no breaker is named `{name}`; `GET /` lists them"),
        near => {
            let near: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "no breaker is named `{name}`; the nearest names: {}",
                near.join(", ")
            )
        }
    }
}

/// What every read passes when the endpoint has a read token: that token or the operator's,
/// as a bearer or as a Basic password. Refused, the answer asks a browser for the token
/// (`WWW-Authenticate: Basic`), so that a person opening the page is asked for it once.
pub(super) async fn reading(
    State(endpoint): State<Endpoint>,
    request: Request,
    next: Next,
) -> Response {
    let Some(read) = endpoint.read_token.as_deref() else {
        return next.run(request).await;
    };
    let tokens: &[&str] = match endpoint.token.as_deref() {
        Some(operator) => &[read, operator],
        None => &[read],
    };
    if credentials::carries_any(request.headers(), tokens) {
        return next.run(request).await;
    }
    let mut answer = refuse(
        StatusCode::UNAUTHORIZED,
        "reading the breakers needs the read token: `Authorization: Bearer <token>`, or as the password of HTTP Basic",
    );
    let headers = answer.headers_mut();
    headers.append(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Basic realm="breakers", charset="UTF-8""#),
    );
    headers.append(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Bearer realm="breakers""#),
    );
    answer
}
