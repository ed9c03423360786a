//! The endpoint's answers as an operator meets them (issue 45): every command leaves one audit
//! line, every mistake is answered with what to do, one breaker reads on its own, and a live
//! change takes effect at the next outcome.
//!
//! The server runs on the test's own runtime (one thread), so what the endpoint logs is logged
//! on the test's thread and kept by its capture.

use std::sync::Arc;

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, State, Verdict, registry};

#[path = "support/http.rs"]
mod http;
#[path = "support/logged.rs"]
mod logged;

use http::{request, serve_with_peers};
use logged::{Line, Logged};

const TOKEN: &str = "audit-token-93ab";

fn registered(name: &'static str) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name(name)
            .count_window(10)
            .threshold(60.0)
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

fn json(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON: {body}"))
}

/// The audit lines logged so far: one per operator request.
fn audit_lines(logged: &Logged) -> Vec<Line> {
    logged
        .all()
        .into_iter()
        .filter(|line| line.message.starts_with("operator command "))
        .collect()
}

#[tokio::test]
async fn every_command_accepted_or_refused_is_one_line_with_the_breaker_the_outcome_and_the_peer() {
    let logged = Logged::capture();
    let _breaker = registered("audit::ledger");
    let port = serve_with_peers(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];

    let asked = [
        ("POST", "/audit::ledger/disable", &auth[..], "", 200),
        ("POST", "/audit::ledger/reset", &[][..], "", 401),
        (
            "POST",
            "/audit::ledger/reset",
            &[("Authorization", "Bearer not-the-token")][..],
            "",
            401,
        ),
        ("POST", "/audit::ledgr/reset", &auth[..], "", 404),
        ("POST", "/audit::ledger/explode", &auth[..], "", 400),
        (
            "POST",
            "/audit::ledger/drill",
            &auth[..],
            r#"{"open_for": "1m"}"#,
            200,
        ),
        (
            "POST",
            "/audit::ledger/drill",
            &auth[..],
            r#"{"open_for": "1m"}"#,
            409,
        ),
        ("DELETE", "/audit::ledger/drill", &auth[..], "", 200),
        (
            "PUT",
            "/audit::ledger/config",
            &auth[..],
            r#"{"threshold": "40%"}"#,
            200,
        ),
        (
            "POST",
            "/audit::ledger/reset",
            &auth[..],
            &"x".repeat(2_000),
            413,
        ),
        (
            "POST",
            "/audit::ledger/config",
            &auth[..],
            r#"{"threshold": "40%"}"#,
            405,
        ),
    ];
    for (method, path, headers, body, status) in asked {
        let (got, answer) = request(port, method, path, headers, body).await;
        assert_eq!(got, status, "{method} {path}: {answer}");
    }

    // Reads, and paths the endpoint does not have, are no operator's commands: no line.
    for (method, path, status) in [
        ("GET", "/", 200),
        ("GET", "/audit::ledger", 200),
        ("GET", "/audit::ledger/trace", 200),
        ("POST", "/audit::ledger", 405),
        ("GET", "/audit::ledger/config/threshold", 404),
    ] {
        let (got, answer) = request(port, method, path, &auth, "").await;
        assert_eq!(got, status, "{method} {path}: {answer}");
    }

    let lines = audit_lines(&logged);
    assert_eq!(lines.len(), asked.len(), "one line a request: {lines:#?}");
    for (line, (method, path, _, _, status)) in lines.iter().zip(asked) {
        assert_eq!(
            line.field("status"),
            Some(status.to_string().as_str()),
            "{method} {path}: {line:?}"
        );
        let peer = line.field("peer").unwrap();
        assert!(
            peer.starts_with("127.0.0.1:"),
            "the peer's address: {line:?}"
        );
        let level = if status == 200 {
            tracing::Level::INFO
        } else {
            tracing::Level::WARN
        };
        assert_eq!(line.level, level, "{line:?}");
        for field in &line.fields {
            assert!(
                !field.1.contains(TOKEN) && !field.1.contains("not-the-token"),
                "never the token: {line:?}"
            );
        }
        assert!(!line.message.contains(TOKEN), "{line:?}");
    }
    let field = |i: usize, name: &str| lines[i].field(name).unwrap_or_default().to_string();
    assert_eq!(
        (field(0, "breaker"), field(0, "command")),
        ("audit::ledger".to_string(), "disable".to_string())
    );
    assert_eq!(
        field(0, "outcome"),
        "applied: closed to disabled, mode enforce"
    );
    // The client hears the same for both; the log tells them apart.
    assert_eq!(field(1, "outcome"), "no bearer token");
    assert_eq!(field(2, "outcome"), "a wrong token");
    assert_eq!(field(3, "breaker"), "audit::ledgr");
    assert_eq!(field(4, "command"), "unknown");
    assert_eq!(field(5, "command"), "drill");
    assert!(field(6, "outcome").starts_with("a drill is running already"));
    assert_eq!(field(7, "command"), "drill_stop");
    assert_eq!(
        (field(8, "command"), field(8, "outcome")),
        ("reconfigure".to_string(), "applied: threshold".to_string())
    );
    assert_eq!(
        field(9, "outcome"),
        "the body is over the limit of 1024 bytes"
    );
}

#[tokio::test]
async fn a_wrong_and_a_missing_token_get_the_same_answer() {
    let _breaker = registered("audit::same-answer");
    let port = serve_with_peers(Endpoint::new().token(TOKEN).router()).await;
    let (missing_status, missing) =
        request(port, "POST", "/audit::same-answer/reset", &[], "").await;
    let (wrong_status, wrong) = request(
        port,
        "POST",
        "/audit::same-answer/reset",
        &[("Authorization", "Bearer nope")],
        "",
    )
    .await;
    assert_eq!((missing_status, wrong_status), (401, 401));
    assert_eq!(missing, wrong, "nothing about the token reaches the client");
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_in_the_shape_of_every_refusal_naming_the_limit() {
    let _breaker = registered("audit::big-body");
    let port = serve_with_peers(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];
    for (method, path, limit) in [
        ("POST", "/audit::big-body/reset", 1_024),
        ("POST", "/audit::big-body/drill", 1_024),
        ("POST", "/audit::big-body/inject", 1_024),
        ("DELETE", "/audit::big-body/inject", 1_024),
        ("PUT", "/audit::big-body/config", 16 * 1_024),
    ] {
        let (status, body) = request(port, method, path, &auth, &" ".repeat(limit + 1)).await;
        assert_eq!(status, 413, "{method} {path}");
        assert_eq!(
            json(&body)["error"],
            format!("the body is over the limit of {limit} bytes"),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn get_of_one_name_answers_that_breakers_snapshot_and_an_unknown_name_the_nearest() {
    let breaker = registered("audit::inventory");
    breaker.force_open();
    let port = serve_with_peers(breaker_runtime::endpoint::router()).await;
    let (status, body) = request(port, "GET", "/audit::inventory", &[], "").await;
    assert_eq!(status, 200, "{body}");
    let snapshot = json(&body);
    assert_eq!(snapshot["name"], "audit::inventory");
    assert_eq!(snapshot["state"], "forced_open");

    let (status, body) = request(port, "GET", "/audit::inventroy", &[], "").await;
    assert_eq!(status, 404);
    assert_eq!(
        json(&body)["error"],
        "no breaker is named `audit::inventroy`; the nearest names: `audit::inventory`"
    );
    let (status, body) = request(port, "GET", "/nothing-like-it-at-all", &[], "").await;
    assert_eq!(status, 404);
    assert_eq!(
        json(&body)["error"],
        "no breaker is named `nothing-like-it-at-all`; `GET /` lists them"
    );
    let (status, body) = request(port, "GET", "/audit::inventroy/trace", &[], "").await;
    assert_eq!(status, 404);
    assert!(
        json(&body)["error"]
            .as_str()
            .unwrap()
            .contains("`audit::inventory`"),
        "{body}"
    );
}

#[tokio::test]
async fn answers_name_the_fix() {
    let _breaker = registered("audit::answers");
    let port = serve_with_peers(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];

    let (status, body) = request(
        port,
        "PUT",
        "/audit::answers/config",
        &auth,
        r#"{"treshold": "40%"}"#,
    )
    .await;
    assert_eq!(status, 400);
    let error = json(&body)["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("unknown option `treshold` (did you mean `threshold`?); the options a live breaker can change are `threshold`"),
        "{error}"
    );
    assert!(
        !error.contains("`retries`"),
        "only what changes live: {error}"
    );

    let (status, body) = request(port, "POST", "/audit::answers/explode", &auth, "").await;
    assert_eq!(status, 400);
    let error = json(&body)["error"].as_str().unwrap().to_string();
    for command in [
        "force_open",
        "trace_stop",
        "`drill`",
        "`inject`",
        "PUT {name}/config",
    ] {
        assert!(error.contains(command), "{command}: {error}");
    }
    let (_, body) = request(port, "POST", "/audit::answers/forceopen", &auth, "").await;
    assert!(
        json(&body)["error"]
            .as_str()
            .unwrap()
            .starts_with("unknown command `forceopen` (did you mean `force_open`?)"),
        "{body}"
    );

    // A method the path does not take, and a path the endpoint does not have, are answered as
    // every refusal is, saying what to send instead.
    let options = r#"{"threshold": "40%"}"#;
    for (method, path, says) in [
        (
            "POST",
            "/audit::answers/config",
            "it takes `PUT` with a JSON map of options",
        ),
        (
            "GET",
            "/audit::answers/drill",
            "it takes `POST` with {\"open_for\": \"5m\"}",
        ),
        (
            "DELETE",
            "/audit::answers/reset",
            "it takes `POST`, with no body",
        ),
        ("POST", "/audit::answers", "it takes `GET`"),
    ] {
        let (status, body) = request(port, method, path, &auth, options).await;
        assert_eq!(status, 405, "{method} {path}: {body}");
        let error = json(&body)["error"].as_str().unwrap().to_string();
        assert!(
            error.starts_with(&format!("`{method}` is not taken at `{path}`; {says}")),
            "{method} {path}: {error}"
        );
    }
    // axum adds the methods the path takes, as `Allow`, to the answer the fallback makes.
    let wrong = axum::http::Request::post("/audit::answers/config")
        .body(axum::body::Body::empty())
        .unwrap();
    let answer = tower::ServiceExt::oneshot(Endpoint::new().token(TOKEN).router(), wrong)
        .await
        .unwrap();
    assert_eq!(answer.status(), 405);
    assert_eq!(answer.headers()[axum::http::header::ALLOW], "PUT");
    let (status, body) = request(port, "GET", "/audit::answers/config/threshold", &auth, "").await;
    assert_eq!(status, 404);
    let error = json(&body)["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with("no route is `/audit::answers/config/threshold`; the routes are GET /,")
            && error.contains("PUT /{name}/config"),
        "{error}"
    );

    let terms = r#"{"fail": "10%", "for": "10m"}"#;
    let (status, _) = request(port, "POST", "/audit::answers/inject", &auth, terms).await;
    assert_eq!(status, 200);
    let (status, body) = request(port, "POST", "/audit::answers/inject", &auth, terms).await;
    assert_eq!(status, 409);
    assert_eq!(
        json(&body)["error"],
        "an injection is running already and ends in 10 min; stop it first with `DELETE audit::answers/inject`"
    );
    let (status, _) = request(port, "DELETE", "/audit::answers/inject", &auth, "").await;
    assert_eq!(status, 200);

    for (body, says) in [
        (
            r#"{"threshold": 50}"#,
            "invalid `threshold`: a percentage is written as a string with its unit",
        ),
        (
            r#"{"window": 30.5}"#,
            "invalid `window`: a count of calls is a whole number",
        ),
        (
            r#"{"probes": "3"}"#,
            "invalid `probes`: a count is a whole number written bare",
        ),
    ] {
        let (status, answer) = request(port, "PUT", "/audit::answers/config", &auth, body).await;
        assert_eq!(status, 400, "{body}");
        let error = json(&answer)["error"].as_str().unwrap().to_string();
        assert!(error.starts_with(says), "{body}: {error}");
    }
}

/// The report of issue 45, through the endpoint: a threshold lowered with the window kept takes
/// effect at the next outcome, though it changes no count.
#[tokio::test]
async fn a_threshold_lowered_over_the_endpoint_opens_the_circuit_at_the_next_outcome() {
    let breaker = registered("audit::lowered");
    for verdict in [Verdict::Failure; 3]
        .into_iter()
        .chain([Verdict::Success; 7])
    {
        breaker.try_acquire().unwrap().record(verdict);
    }
    let port = serve_with_peers(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = request(
        port,
        "PUT",
        "/audit::lowered/config",
        &[("Authorization", bearer.as_str())],
        r#"{"threshold": "30%"}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        breaker.state(),
        State::Closed,
        "nothing judged at the change"
    );
    breaker.try_acquire().unwrap().record(Verdict::Failure);
    assert_eq!(breaker.state(), State::Open, "3 of 10 reach 30%");
}
