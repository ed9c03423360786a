//! What every request that changes a breaker passes first: the token, then the breaker's name.

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Endpoint, json};
use crate::core::breaker::Breaker;
use crate::registry::registry;

/// The breaker named `name`, if the endpoint takes changes and the request carries its token;
/// otherwise the answer: 403 while no token is configured, 401 for a bad or missing bearer
/// (logged, with `action`), 404 for an unknown breaker. The token is checked before the name,
/// so that a request without it learns nothing about which breakers exist.
pub(super) fn operated(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    name: &str,
    action: &str,
) -> Result<Arc<Breaker>, Refused> {
    let Some(token) = &endpoint.token else {
        return Err(Refused(
            StatusCode::FORBIDDEN,
            "operator commands are off: configure a token (Endpoint::token)",
        ));
    };
    let offered = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !same(offered.as_bytes(), token.as_bytes()) {
        tracing::warn!(breaker = %name, command = %action, "operator command refused: bad or missing token");
        return Err(Refused(
            StatusCode::UNAUTHORIZED,
            "a command needs `Authorization: Bearer <token>`",
        ));
    }
    registry()
        .get(name)
        .ok_or(Refused(StatusCode::NOT_FOUND, "no breaker of that name"))
}

/// Why a request was turned away before it reached a breaker: small, unlike the [`Response`]
/// it becomes.
pub(super) struct Refused(StatusCode, &'static str);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        refuse(self.0, self.1)
    }
}

/// A refusal, as JSON: `{"error": message}`.
pub(super) fn refuse(status: StatusCode, message: &str) -> Response {
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
