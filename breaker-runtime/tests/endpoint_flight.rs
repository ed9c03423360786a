//! `GET {name}/trace?last=`: the flight recorder over a real server, streamed as JSON Lines,
//! behind the token, its mistakes answered.

use std::sync::Arc;

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::trace::{Outcome, parse_recent};
use breaker_runtime::{Breaker, Config, State, registry};

#[path = "support/http.rs"]
mod http;

use http::{request, serve};

const TOKEN: &str = "flight-token-5c1e";

/// The body of a chunked answer, its chunks joined (a streamed body is sent chunked).
fn dechunked(body: &str) -> String {
    let mut rest = body;
    let mut joined = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n").expect("a chunk's size line");
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            return joined;
        }
        joined.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
}

#[tokio::test]
async fn the_recorders_calls_are_streamed_behind_the_token() {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name("flight::ledger")
            .count_window(2)
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    // More than one chunk's worth of lines (1 000 a chunk), and a transition among them.
    for _ in 0..1_500 {
        breaker.try_acquire().unwrap().success();
    }
    // One failure of the last two: the default 50%.
    breaker.try_acquire().unwrap().failure();
    assert!(breaker.try_acquire().is_err());
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];

    let (status, body) = request(port, "GET", "/flight::ledger/trace?last=5m", &auth, "").await;
    assert_eq!(status, 200, "{body}");
    let recent = parse_recent(&dechunked(&body)).unwrap();
    assert_eq!(recent.calls.len(), 1_502);
    assert_eq!(recent.calls[1_501].outcome, Outcome::Rejected);
    assert_eq!(
        recent.changes.iter().map(|c| c.to).collect::<Vec<_>>(),
        [State::Open]
    );

    for (headers, status) in [
        (&[][..], 401),
        (&[("Authorization", "Bearer not-it")][..], 401),
    ] {
        let (got, body) = request(port, "GET", "/flight::ledger/trace?last=5m", headers, "").await;
        assert_eq!(got, status, "{body}");
        assert!(body.contains("Authorization: Bearer"), "{body}");
    }
    let (status, body) = request(port, "GET", "/flight::ledger/trace?last=soon", &auth, "").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("invalid `last`") && body.contains("?last=5m"),
        "{body}"
    );
    let (status, body) = request(port, "GET", "/flight::ledger/trace?since=5m", &auth, "").await;
    assert_eq!(status, 400);
    assert!(body.contains("unknown query `since`"), "{body}");
    let (status, body) = request(port, "GET", "/flight::ledgr/trace?last=5m", &auth, "").await;
    assert_eq!(status, 404);
    assert!(body.contains("flight::ledger"), "the nearest name: {body}");
}

#[tokio::test]
async fn without_a_token_configured_the_read_only_endpoint_answers_it() {
    let breaker = Arc::new(Breaker::new(
        Config::builder().name("flight::open").build().unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker.try_acquire().unwrap().success();
    let port = serve(Endpoint::new().router()).await;
    let (status, body) = request(port, "GET", "/flight::open/trace?last=1m", &[], "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(parse_recent(&dechunked(&body)).unwrap().calls.len(), 1);
}
