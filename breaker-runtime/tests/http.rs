//! The `http` and `reqwest` features against a real HTTP server on loopback (axum) that answers
//! 200, 404, 429, 500, or slowly, on command.

use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use breaker_runtime::{Breaker, Config, State, Verdict};

async fn server() -> String {
    let app = Router::new()
        .route("/ok", get(|| async { "fine" }))
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
        .route("/busy", get(|| async { StatusCode::TOO_MANY_REQUESTS }))
        .route(
            "/broken",
            get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "late"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

fn breaker() -> Breaker {
    Breaker::new(
        Config::builder()
            .name("http")
            .count_window(4)
            .timeout(Duration::from_millis(300))
            .break_duration(Duration::from_secs(60))
            .build()
            .unwrap(),
    )
}

async fn get_through(
    breaker: &Breaker,
    client: &reqwest::Client,
    url: &str,
) -> Result<Result<reqwest::Response, reqwest::Error>, breaker_runtime::BreakerError> {
    breaker
        .call_with(client.get(url).send(), Verdict::of_result)
        .await
}

#[tokio::test]
async fn not_found_is_an_answer_and_too_many_requests_is_ignored() {
    let (base, client, b) = (server().await, reqwest::Client::new(), breaker());
    for _ in 0..10 {
        let response = get_through(&b, &client, &format!("{base}/missing"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), 404);
        get_through(&b, &client, &format!("{base}/busy"))
            .await
            .unwrap()
            .unwrap();
    }
    let s = b.snapshot();
    assert_eq!(
        (s.state, s.calls, s.failures),
        (State::Closed, 4, 0),
        "404s are successes; 429s are not recorded"
    );
}

#[tokio::test]
async fn server_errors_open_the_circuit_and_the_rejection_is_told_apart() {
    let (base, client, b) = (server().await, reqwest::Client::new(), breaker());
    get_through(&b, &client, &format!("{base}/ok"))
        .await
        .unwrap()
        .unwrap();
    for _ in 0..3 {
        let response = get_through(&b, &client, &format!("{base}/broken"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            response.status(),
            500,
            "the failure is still the caller's to see"
        );
    }
    assert_eq!(b.state(), State::Open, "3 failures of 4");
    let rejected = get_through(&b, &client, &format!("{base}/ok"))
        .await
        .unwrap_err();
    assert!(rejected.is_rejection());
}

#[tokio::test]
async fn slow_answers_time_out_and_unreachable_servers_fail() {
    let (base, client, b) = (server().await, reqwest::Client::new(), breaker());
    let timed_out = get_through(&b, &client, &format!("{base}/slow"))
        .await
        .unwrap_err();
    assert!(timed_out.is_timeout());

    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = get_through(&b, &client, &format!("http://127.0.0.1:{closed_port}/"))
        .await
        .unwrap();
    let error = unreachable.unwrap_err();
    assert!(error.is_connect(), "{error}");
    assert_eq!(Verdict::of(&error), Verdict::Failure);
    assert_eq!(
        b.snapshot().failures,
        2,
        "the timeout and the refused connection"
    );
}

#[test]
fn statuses_classify_as_the_contract_says() {
    use breaker_runtime::IsFailure;
    for (status, verdict) in [
        (StatusCode::OK, Verdict::Success),
        (StatusCode::NOT_FOUND, Verdict::Success),
        (StatusCode::UNAUTHORIZED, Verdict::Success),
        (StatusCode::TOO_MANY_REQUESTS, Verdict::Ignore),
        (StatusCode::INTERNAL_SERVER_ERROR, Verdict::Failure),
        (StatusCode::SERVICE_UNAVAILABLE, Verdict::Failure),
    ] {
        assert_eq!(Verdict::of(&status), verdict, "{status}");
        let response = http::Response::builder().status(status).body(()).unwrap();
        assert_eq!(Verdict::of(&response), verdict, "{status} response");
        assert_eq!(response.is_failure(), verdict == Verdict::Failure);
    }
}
