//! The endpoint against a caller it must not trust (issue 48), over a real HTTP client and a
//! served router: no token, a wrong token, the read token on a command, a body over the
//! limit, and a flood of commands.

use std::sync::Arc;
use std::time::{Duration, Instant};

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, registry};
use reqwest::StatusCode;

#[path = "support/http.rs"]
mod http;

const READ: &str = "trust-read-5e1f";
const OPERATE: &str = "trust-operate-9c2d";

fn registered(name: &'static str) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(Config::builder().name(name).build().unwrap()));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

async fn served(endpoint: Endpoint) -> String {
    format!("http://127.0.0.1:{}", http::serve(endpoint.router()).await)
}

async fn error_of(response: reqwest::Response) -> String {
    let text = response.text().await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&text).expect("a JSON refusal");
    body["error"].as_str().expect("an error").to_string()
}

#[tokio::test]
async fn every_read_but_health_needs_the_read_token_or_the_operators() {
    registered("trust::reads");
    let base = served(Endpoint::new().read_token(READ).token(OPERATE)).await;
    let client = reqwest::Client::new();
    let reads = ["/", "/events", "/trust::reads", "/trust::reads/trace"];

    for path in reads {
        let url = format!("{base}{path}");
        let none = client.get(&url).send().await.unwrap();
        assert_eq!(none.status(), StatusCode::UNAUTHORIZED, "{path}");
        let asks: Vec<_> = none
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect();
        assert!(
            asks.iter().any(|a| a.starts_with("Basic ")),
            "{path}: {asks:?}"
        );
        assert!(error_of(none).await.contains("read token"), "{path}");

        let wrong = client.get(&url).bearer_auth("trust-read-5e1e").send().await;
        assert_eq!(wrong.unwrap().status(), StatusCode::UNAUTHORIZED, "{path}");
        let wrong_basic = client
            .get(&url)
            .basic_auth("ops", Some("nope"))
            .send()
            .await;
        assert_eq!(
            wrong_basic.unwrap().status(),
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
    }
    // The page, as a browser asks for it, and the page's own events once the browser has
    // the token as Basic credentials.
    let page = client
        .get(&base)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::UNAUTHORIZED);
    for auth in [
        client.get(&base).bearer_auth(READ),
        client.get(&base).bearer_auth(OPERATE),
        client.get(&base).basic_auth("anyone", Some(READ)),
        client
            .get(format!("{base}/trust::reads"))
            .basic_auth("", Some(OPERATE)),
        client
            .get(format!("{base}/trust::reads/trace?last=1m"))
            .bearer_auth(READ),
    ] {
        let answer = auth.send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{}", answer.url());
    }
    let mut events = client
        .get(format!("{base}/events"))
        .basic_auth("ops", Some(READ))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let first = events.chunk().await.unwrap().expect("the first event");
    assert!(String::from_utf8_lossy(&first).contains("trust::reads"));

    // Health stays open: names and states only.
    let health = client.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test]
async fn commands_need_the_operators_token_and_the_read_token_is_not_it() {
    let breaker = registered("trust::commands");
    let client = reqwest::Client::new();
    let read_only = served(Endpoint::new().read_token(READ)).await;
    let url = format!("{read_only}/trust::commands/force_open");
    let answer = client.post(&url).bearer_auth(READ).send().await.unwrap();
    assert_eq!(
        answer.status(),
        StatusCode::FORBIDDEN,
        "no operator token: no commands"
    );

    let operated = served(Endpoint::new().read_token(READ).token(OPERATE)).await;
    let url = format!("{operated}/trust::commands/force_open");
    for request in [
        client.post(&url),
        client.post(&url).bearer_auth(READ),
        client.post(&url).basic_auth("ops", Some(OPERATE)),
        client.post(&url).bearer_auth("trust-operate-9c2"),
    ] {
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
        assert!(error_of(answer).await.contains("Bearer"));
    }
    assert!(!breaker.state().rejects(), "nothing was applied");
    let answer = client.post(&url).bearer_auth(OPERATE).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert!(breaker.state().rejects());
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_the_json_error() {
    registered("trust::bodies");
    let base = served(Endpoint::new().token(OPERATE)).await;
    let client = reqwest::Client::new();
    for (path, method, limit) in [
        ("/trust::bodies/reset", reqwest::Method::POST, 1_024),
        ("/trust::bodies/drill", reqwest::Method::POST, 1_024),
        ("/trust::bodies/inject", reqwest::Method::POST, 1_024),
        ("/trust::bodies/config", reqwest::Method::PUT, 16 * 1_024),
    ] {
        let answer = client
            .request(method, format!("{base}{path}"))
            .bearer_auth(OPERATE)
            .body(vec![b' '; limit + 1])
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert!(
            error_of(answer)
                .await
                .contains(&format!("limit of {limit} bytes")),
            "{path}"
        );
    }
}

#[tokio::test]
async fn a_flood_of_commands_is_turned_away_past_the_limit_and_told_when_to_come_back() {
    registered("trust::flooded");
    registered("trust::calm");
    let base = served(Endpoint::new().token(OPERATE).command_limit(3)).await;
    let client = reqwest::Client::new();
    let command = |breaker: &str, token: &str| {
        client
            .post(format!("{base}/{breaker}/reset"))
            .bearer_auth(token)
            .send()
    };

    // Requests without the right token are not counted: they cannot spend the budget.
    for _ in 0..10 {
        let answer = command("trust::flooded", "wrong").await.unwrap();
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    let started = Instant::now();
    let mut statuses = Vec::new();
    for _ in 0..20 {
        let answer = command("trust::flooded", OPERATE).await.unwrap();
        let status = answer.status();
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(answer.headers()["retry-after"], "1");
            assert!(error_of(answer).await.contains("limit of 3"));
        } else {
            assert_eq!(status, StatusCode::OK);
        }
        statuses.push(status);
    }
    let elapsed = started.elapsed();
    // Each second takes at most 3; the 20 requests spanned at most this many seconds.
    let seconds = elapsed.as_secs() + 2;
    let taken = statuses.iter().filter(|s| **s == StatusCode::OK).count() as u64;
    assert_eq!(
        &statuses[..3],
        [StatusCode::OK; 3],
        "the first three are taken"
    );
    assert!(taken <= 3 * seconds, "{taken} taken in {elapsed:?}");
    assert!(
        taken < 20 || elapsed > Duration::from_secs(6),
        "20 requests in {elapsed:?} were all taken"
    );
    // Another breaker has its own budget.
    let calm = command("trust::calm", OPERATE).await.unwrap();
    assert_eq!(calm.status(), StatusCode::OK);
}

/// Found by the `endpoint` fuzz target: axum refused a path that is not UTF-8 once decoded in
/// plain text, where every refusal of the endpoint is JSON.
#[tokio::test]
async fn a_refusal_made_before_any_handler_is_json_too() {
    let base = served(Endpoint::new().token(OPERATE)).await;
    let client = reqwest::Client::new();
    for (method, path) in [
        (reqwest::Method::GET, "/%da"),
        (reqwest::Method::POST, "/%ff/reset"),
        (reqwest::Method::PUT, "/%e2%82/config"),
    ] {
        let answer = client
            .request(method, format!("{base}{path}"))
            .bearer_auth(OPERATE)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_client_error(), "{path}");
        assert_eq!(
            answer.headers()["content-type"],
            "application/json",
            "{path}"
        );
        assert!(error_of(answer).await.contains("UTF-8"), "{path}");
    }
}
