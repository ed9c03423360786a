//! The `http-endpoint` feature against a real server on a loopback port: the JSON, the page,
//! the events, and the operator's commands with and without their token.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, Mode, State, registry};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const TOKEN: &str = "test-token-7c1f";

#[path = "support/http.rs"]
mod http;
use http::{request, serve};

fn registered(name: &'static str) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name(name)
            .count_window(2)
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

#[tokio::test]
async fn the_read_only_endpoint_lists_every_breaker_and_refuses_commands() {
    let breaker = registered("endpoint-listed");
    breaker.force_open();
    let port = serve(breaker_runtime::endpoint::router()).await;

    let (status, body) = request(port, "GET", "/", &[], "").await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let listed = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "endpoint-listed")
        .expect("listed");
    assert_eq!(listed["state"], "forced_open");
    assert_eq!(listed["mode"], "enforce");

    let (status, page) = request(port, "GET", "/", &[("Accept", "text/html")], "").await;
    assert_eq!(status, 200);
    assert!(
        page.contains("new EventSource") && !page.contains("http://") && !page.contains("https://"),
        "a page that loads nothing from outside"
    );
    assert!(
        page.contains("config_changed_ms_ago") && page.contains("c.break_duration_ms"),
        "the page shows the config in force, and when it last changed"
    );

    let (status, _) = request(
        port,
        "POST",
        "/endpoint-listed/reset",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    )
    .await;
    assert_eq!(status, 403, "read-only: commands are off without a token");
    assert_eq!(breaker.state(), State::ForcedOpen);
}

#[tokio::test]
async fn commands_need_the_token_and_answer_every_mistake_with_its_status() {
    let breaker = registered("endpoint-operated");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];

    let (status, _) = request(port, "POST", "/endpoint-operated/force_open", &[], "").await;
    assert_eq!(status, 401, "no token");
    let (status, _) = request(
        port,
        "POST",
        "/endpoint-operated/force_open",
        &[("Authorization", "Bearer test-token-7c1e")],
        "",
    )
    .await;
    assert_eq!(status, 401, "a wrong token");
    assert_eq!(breaker.state(), State::Closed);

    let (status, body) = request(port, "POST", "/endpoint-operated/force_open", &auth, "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(breaker.state(), State::ForcedOpen);
    assert!(body.contains("\"forced_open\""));
    let (status, _) = request(port, "POST", "/endpoint-operated/half_open", &auth, "").await;
    assert_eq!((status, breaker.state()), (200, State::HalfOpen));
    let (status, _) = request(port, "POST", "/endpoint-operated/shadow", &auth, "").await;
    assert_eq!((status, breaker.mode()), (200, Mode::Shadow));
    let (status, _) = request(port, "POST", "/endpoint-operated/enforce", &auth, "").await;
    assert_eq!((status, breaker.mode()), (200, Mode::Enforce));
    let (status, _) = request(port, "POST", "/endpoint-operated/disable", &auth, "").await;
    assert_eq!((status, breaker.state()), (200, State::Disabled));
    let (status, _) = request(port, "POST", "/endpoint-operated/reset", &auth, "").await;
    assert_eq!((status, breaker.state()), (200, State::Closed));

    let (status, _) = request(port, "POST", "/no-such-breaker/reset", &auth, "").await;
    assert_eq!(status, 404);
    let (status, body) = request(port, "POST", "/endpoint-operated/explode", &auth, "").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("force_open"),
        "the error lists the commands: {body}"
    );
    let (status, _) = request(port, "GET", "/endpoint-operated/reset", &auth, "").await;
    assert_eq!(status, 405);
    let (status, _) = request(
        port,
        "POST",
        "/endpoint-operated/reset",
        &auth,
        &"x".repeat(4_096),
    )
    .await;
    assert_eq!(status, 413);
    let (status, _) = request(port, "POST", "/endpoint-operated/reset", &auth, "{}").await;
    assert_eq!(status, 400, "a command takes no body");
    // A name with the characters attribute names have, percent-encoded.
    let odd = registered("endpoint::odd#2");
    let (status, _) = request(port, "POST", "/endpoint%3A%3Aodd%232/force_open", &auth, "").await;
    assert_eq!((status, odd.state()), (200, State::ForcedOpen));
}

#[tokio::test]
async fn mounted_under_a_prefix_it_answers_with_and_without_the_trailing_slash() {
    let breaker = registered("endpoint-mounted");
    let app = axum::Router::new().nest_service("/breakers", Endpoint::new().token(TOKEN).router());
    let port = serve(app).await;

    for path in ["/breakers", "/breakers/"] {
        let (status, body) = request(port, "GET", path, &[], "").await;
        assert_eq!(status, 200, "GET {path}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            json["breakers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|b| b["name"] == "endpoint-mounted"),
            "GET {path} lists the breakers: {body}"
        );
        let (status, page) = request(port, "GET", path, &[("Accept", "text/html")], "").await;
        assert_eq!(status, 200, "GET {path} as a page");
        assert!(page.contains("new EventSource"), "GET {path} is the page");
    }

    // The page asks for `events` beside itself, which is `/breakers/events` from either.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(b"GET /breakers/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let status_line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(status_line, "HTTP/1.1 200 OK");

    let bearer = format!("Bearer {TOKEN}");
    let (status, _) = request(
        port,
        "POST",
        "/breakers/endpoint-mounted/force_open",
        &[("Authorization", bearer.as_str())],
        "",
    )
    .await;
    assert_eq!((status, breaker.state()), (200, State::ForcedOpen));
}

#[tokio::test]
async fn the_events_send_the_breakers_at_once_and_again_after_a_transition() {
    let breaker = registered("endpoint-evented");
    let port = serve(breaker_runtime::endpoint::router()).await;
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let mut next_data = async || loop {
        let line = lines.next_line().await.unwrap().unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            return data.to_string();
        }
    };
    let first = tokio::time::timeout(Duration::from_secs(5), next_data())
        .await
        .unwrap();
    assert!(first.contains("endpoint-evented") && first.contains("\"closed\""));
    breaker.force_open();
    let after = tokio::time::timeout(Duration::from_secs(5), next_data())
        .await
        .unwrap();
    assert!(
        after.contains("\"forced_open\""),
        "the transition is pushed: {after}"
    );
    assert!(
        after.contains("\"to\":\"forced_open\""),
        "and listed among the recent transitions"
    );
}

/// A breaker in the registry, built with options a change can be told apart from.
fn built(name: &'static str) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(
        Config::builder()
            .name(name)
            .count_window(4)
            .probes(3)
            .timeout(Duration::from_secs(2))
            .build()
            .unwrap(),
    ));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

/// `PUT /{name}/config` with the token, its status and its body as JSON.
async fn put_config(port: u16, name: &str, body: &str) -> (u16, serde_json::Value) {
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = request(
        port,
        "PUT",
        &format!("/{name}/config"),
        &[("Authorization", &bearer)],
        body,
    )
    .await;
    let json = serde_json::from_str(&body).unwrap_or_else(|_| panic!("JSON: {body}"));
    (status, json)
}

/// The breaker named `name` as `GET /` lists it.
async fn listed(port: u16, name: &str) -> serde_json::Value {
    let (status, body) = request(port, "GET", "/", &[], "").await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .cloned()
        .expect("listed")
}

#[tokio::test]
async fn a_put_changes_the_options_it_names_and_get_shows_them_in_force() {
    let breaker = built("endpoint-config-put");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let before = listed(port, "endpoint-config-put").await;
    assert_eq!(before["config_changed_ms_ago"], serde_json::Value::Null);

    let (status, snapshot) = put_config(
        port,
        "endpoint-config-put",
        r#"{"threshold": "40%", "window": "30s"}"#,
    )
    .await;
    assert_eq!(status, 200, "{snapshot}");
    assert_eq!(snapshot["config"]["threshold"], 40.0, "{snapshot}");
    assert_eq!(snapshot["config"]["window"]["ms"], 30_000);

    let after = listed(port, "endpoint-config-put").await;
    assert_eq!(after["config"]["threshold"], 40.0, "{after}");
    assert_eq!(after["config"]["window"]["ms"], 30_000);
    assert!(after["config_changed_ms_ago"].is_u64(), "{after}");
    assert_eq!(breaker.config().threshold().percent(), 40.0);
}

#[tokio::test]
async fn a_put_keeps_the_options_it_does_not_name() {
    let _breaker = built("endpoint-config-partial");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let (status, snapshot) =
        put_config(port, "endpoint-config-partial", r#"{"threshold": "25%"}"#).await;
    assert_eq!(status, 200, "{snapshot}");
    let config = &listed(port, "endpoint-config-partial").await["config"];
    assert_eq!(config["threshold"], 25.0, "{config}");
    assert_eq!(config["window"]["calls"], 4);
    assert_eq!(config["probes"], 3);
    assert_eq!(config["timeout_ms"], 2_000);
    assert_eq!(config["break_duration_ms"], 30_000);
}

#[tokio::test]
async fn a_refused_value_is_a_400_that_names_the_option_and_changes_nothing() {
    let breaker = built("endpoint-config-refused");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let (status, error) =
        put_config(port, "endpoint-config-refused", r#"{"threshold": "140%"}"#).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["option"], "threshold", "{error}");
    assert!(
        error["error"].as_str().unwrap().contains("threshold"),
        "{error}"
    );

    // A rule between options: more calls before judging than the window holds.
    let (status, error) = put_config(port, "endpoint-config-refused", r#"{"min_calls": 5}"#).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["option"], "min_calls", "{error}");

    let (status, error) = put_config(
        port,
        "endpoint-config-refused",
        r#"{"window": "30s", "break_duration": "0s"}"#,
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["option"], "break_duration", "{error}");
    assert_eq!(breaker.config().threshold().percent(), 50.0);
    assert_eq!(
        listed(port, "endpoint-config-refused").await["config_changed_ms_ago"],
        serde_json::Value::Null
    );
}

#[tokio::test]
async fn unknown_options_the_name_and_the_options_around_calls_are_refused() {
    let _breaker = built("endpoint-config-unknown");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let name = "endpoint-config-unknown";
    let (status, error) = put_config(port, name, r#"{"treshold": "40%"}"#).await;
    assert_eq!(
        (status, &error["option"]),
        (400, &"treshold".into()),
        "{error}"
    );
    assert!(
        error["error"].as_str().unwrap().contains("threshold"),
        "lists the options: {error}"
    );
    let (status, error) = put_config(port, name, r#"{"name": "other"}"#).await;
    assert_eq!((status, &error["option"]), (400, &"name".into()), "{error}");
    let (status, error) = put_config(port, name, r#"{"threshold": "40%", "retries": 2}"#).await;
    assert_eq!(
        (status, &error["option"]),
        (400, &"retries".into()),
        "{error}"
    );

    let (status, error) = put_config(port, name, "{}").await;
    assert_eq!(status, 400);
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("at least one option"),
        "{error}"
    );
    for body in ["", "not json", r#"["threshold"]"#, r#""40%""#] {
        let (status, error) = put_config(port, name, body).await;
        assert_eq!(status, 400, "{body:?}: {error}");
    }
}

#[tokio::test]
async fn changing_options_needs_the_token_and_a_known_breaker() {
    let breaker = built("endpoint-config-guarded");
    let operated = serve(Endpoint::new().token(TOKEN).router()).await;
    let body = r#"{"threshold": "40%"}"#;
    let path = "/endpoint-config-guarded/config";

    let (status, _) = request(operated, "PUT", path, &[], body).await;
    assert_eq!(status, 401, "no token");
    let (status, _) = request(
        operated,
        "PUT",
        path,
        &[("Authorization", "Bearer test-token-7c1e")],
        body,
    )
    .await;
    assert_eq!(status, 401, "a wrong token");

    let read_only = serve(breaker_runtime::endpoint::router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let (status, _) = request(read_only, "PUT", path, &[("Authorization", &bearer)], body).await;
    assert_eq!(status, 403, "no token configured");
    assert_eq!(breaker.config().threshold().percent(), 50.0);

    let (status, _) = put_config(operated, "no-such-breaker", body).await;
    assert_eq!(status, 404);
    let (status, _) = request(operated, "POST", path, &[("Authorization", &bearer)], body).await;
    assert_eq!(status, 405, "a change of options is a PUT");
}

#[tokio::test]
async fn a_config_body_may_pass_the_commands_limit_but_not_16_kib() {
    let _breaker = built("endpoint-config-large");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let indented = format!(r#"{{{}"threshold": "40%"}}"#, " ".repeat(4_096));
    let (status, snapshot) = put_config(port, "endpoint-config-large", &indented).await;
    assert_eq!(status, 200, "{snapshot}");

    let bearer = format!("Bearer {TOKEN}");
    let huge = format!(r#"{{{}"threshold": "40%"}}"#, " ".repeat(20_000));
    let (status, _) = request(
        port,
        "PUT",
        "/endpoint-config-large/config",
        &[("Authorization", &bearer)],
        &huge,
    )
    .await;
    assert_eq!(status, 413);
}

#[tokio::test]
async fn reset_config_brings_back_the_options_the_breaker_was_built_with() {
    let breaker = built("endpoint-config-reset");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let (status, _) = put_config(
        port,
        "endpoint-config-reset",
        r#"{"threshold": "40%", "window": "30s", "probes": 1}"#,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(breaker.config().threshold().percent(), 40.0);

    let path = "/endpoint-config-reset/reset_config";
    let (status, _) = request(port, "POST", path, &[], "").await;
    assert_eq!(status, 401);
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = request(port, "POST", path, &[("Authorization", &bearer)], "").await;
    assert_eq!(status, 200, "{body}");
    let config = &listed(port, "endpoint-config-reset").await["config"];
    assert_eq!(config["threshold"], 50.0, "{config}");
    assert_eq!(config["window"]["calls"], 4);
    assert_eq!(config["probes"], 3);
    assert_eq!(config["timeout_ms"], 2_000);
}

#[tokio::test]
async fn a_trace_starts_and_stops_behind_the_token_and_reads_as_json_lines() {
    let breaker = built("endpoint-trace");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let authorized = [("Authorization", bearer.as_str())];

    let (status, body) = request(port, "GET", "/endpoint-trace/trace", &[], "").await;
    assert_eq!((status, body.as_str()), (200, ""), "never traced: empty");
    let (status, _) = request(port, "POST", "/endpoint-trace/trace_start", &[], "").await;
    assert_eq!(status, 401);
    assert!(!breaker.is_tracing());

    let (status, body) =
        request(port, "POST", "/endpoint-trace/trace_start", &authorized, "").await;
    assert_eq!(status, 200, "{body}");
    assert!(breaker.is_tracing());
    assert_eq!(listed(port, "endpoint-trace").await["tracing"], true);
    breaker.try_acquire().unwrap().success();
    breaker.try_acquire().unwrap().failure();
    let (status, body) = request(port, "POST", "/endpoint-trace/trace_stop", &authorized, "").await;
    assert_eq!(status, 200, "{body}");
    breaker.try_acquire().unwrap().success();

    let (status, body) = request(port, "GET", "/endpoint-trace/trace", &[], "").await;
    assert_eq!(status, 200);
    let outcomes: Vec<_> = breaker_runtime::trace::parse(&body)
        .unwrap()
        .into_iter()
        .map(|entry| entry.outcome.as_str())
        .collect();
    assert_eq!(outcomes, ["success", "failure"], "{body}");
    for line in body.lines() {
        let fields: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).unwrap();
        let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
        assert_eq!(keys, ["at_ms", "duration_ms", "outcome"], "{line}");
    }

    let (status, _) = request(port, "GET", "/no-such-breaker/trace", &[], "").await;
    assert_eq!(status, 404);
    let (status, _) = request(
        port,
        "POST",
        "/no-such-breaker/trace_start",
        &authorized,
        "",
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_drill_starts_and_stops_behind_the_token_and_answers_with_the_snapshot() {
    let breaker = built("endpoint-drill");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let authorized = [("Authorization", bearer.as_str())];
    let path = "/endpoint-drill/drill";
    let body = r#"{"open_for": "10m"}"#;

    let (status, _) = request(port, "POST", path, &[], body).await;
    assert_eq!(status, 401);
    let (status, _) = request(port, "DELETE", path, &[], "").await;
    assert_eq!(status, 401);
    assert_eq!(breaker.state(), State::Closed);
    let (status, _) = request(port, "POST", "/no-such-breaker/drill", &authorized, body).await;
    assert_eq!(status, 404);

    let (status, body_back) = request(port, "POST", path, &authorized, body).await;
    assert_eq!(status, 200, "{body_back}");
    let snapshot: serde_json::Value = serde_json::from_str(&body_back).unwrap();
    assert_eq!(snapshot["name"], "endpoint-drill");
    assert_eq!(snapshot["state"], "forced_open");
    let ends_in = snapshot["drill_ends_in_ms"]
        .as_u64()
        .expect("a drill's end");
    assert!((590_000..=600_000).contains(&ends_in), "{ends_in}");
    let ends = breaker.drill_ends().expect("drilling");
    let left = ends - tokio::time::Instant::now();
    assert!(
        left > Duration::from_secs(590) && left <= Duration::from_secs(600),
        "{left:?}"
    );
    assert!(breaker.try_acquire().unwrap_err().is_rejection());

    let (status, refused) = request(port, "POST", path, &authorized, body).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(
        breaker.drill_ends(),
        Some(ends),
        "the running drill is kept"
    );

    let (status, body_back) = request(port, "DELETE", path, &authorized, "").await;
    assert_eq!(status, 200, "{body_back}");
    let snapshot: serde_json::Value = serde_json::from_str(&body_back).unwrap();
    assert_eq!(snapshot["state"], "closed");
    assert_eq!(snapshot["drill_ends_in_ms"], serde_json::Value::Null);
    assert_eq!(breaker.drill_ends(), None);
    let (status, refused) = request(port, "DELETE", path, &authorized, "").await;
    assert_eq!(status, 409, "nothing left to stop");
    assert!(refused.contains("no drill is running"), "{refused}");
    let (status, refused) = request(port, "DELETE", path, &authorized, "{}").await;
    assert_eq!(status, 400, "a stop with a body");
    assert!(
        refused.contains("stopping a drill takes no body"),
        "{refused}"
    );
    breaker.try_acquire().unwrap().success();
}

#[tokio::test]
async fn a_drill_with_a_missing_or_bad_length_is_a_400_and_changes_nothing() {
    let breaker = built("endpoint-drill-bad");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let authorized = [("Authorization", bearer.as_str())];
    for bad in [
        "",
        "30s",
        r#"{}"#,
        r#"{"open_for": "0s"}"#,
        r#"{"open_for": "30 seconds"}"#,
        r#"{"open_for": 30}"#,
        r#"{"open_for": "30s", "then": "close"}"#,
    ] {
        let (status, body) =
            request(port, "POST", "/endpoint-drill-bad/drill", &authorized, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(error["error"].is_string(), "{body}");
    }
    let (status, body) = request(
        port,
        "POST",
        "/endpoint-drill-bad/drill",
        &authorized,
        &format!(r#"{{"open_for": "{}s"}}"#, "9".repeat(2_000)),
    )
    .await;
    assert_eq!(status, 413, "bounded like the commands: {body}");
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(breaker.drill_ends(), None);

    let (status, _) = request(
        port,
        "POST",
        "/endpoint-drill-bad/drill",
        &[],
        r#"{"open_for": "30s"}"#,
    )
    .await;
    assert_eq!(status, 401);
    let read_only = serve(breaker_runtime::endpoint::router()).await;
    let (status, _) = request(
        read_only,
        "POST",
        "/endpoint-drill-bad/drill",
        &authorized,
        r#"{"open_for": "30s"}"#,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(breaker.state(), State::Closed);
}

#[tokio::test]
async fn an_injection_starts_and_stops_behind_the_token_and_the_snapshot_reads_it() {
    let breaker = built("endpoint-inject");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let authorized = [("Authorization", bearer.as_str())];
    let path = "/endpoint-inject/inject";
    let body = r#"{"fail": "100%", "delay": "2s", "delay_share": "5%", "for": "5m", "seed": 7}"#;

    let (status, _) = request(port, "POST", path, &[], body).await;
    assert_eq!(status, 401);
    let (status, _) = request(port, "DELETE", path, &[], "").await;
    assert_eq!(status, 401);
    assert_eq!(breaker.injection(), None);
    let (status, _) = request(port, "POST", "/no-such-breaker/inject", &authorized, body).await;
    assert_eq!(status, 404);
    let read_only = serve(breaker_runtime::endpoint::router()).await;
    let (status, _) = request(read_only, "POST", path, &authorized, body).await;
    assert_eq!(status, 403);
    assert_eq!(breaker.injection(), None);

    let (status, body_back) = request(port, "POST", path, &authorized, body).await;
    assert_eq!(status, 200, "{body_back}");
    let snapshot: serde_json::Value = serde_json::from_str(&body_back).unwrap();
    assert_eq!(snapshot["name"], "endpoint-inject");
    let injection = &snapshot["injection"];
    assert_eq!(injection["fail_percent"], 100.0, "{injection}");
    assert_eq!(injection["delay_ms"], 2000.0, "{injection}");
    assert_eq!(injection["delay_percent"], 5.0, "{injection}");
    assert_eq!(
        (injection["drawn"].as_u64(), injection["injected"].as_u64()),
        (Some(0), Some(0))
    );
    let ends_in = injection["ends_in_ms"]
        .as_u64()
        .expect("an injection's end");
    assert!((290_000..=300_000).contains(&ends_in), "{ends_in}");
    let running = breaker.injection().expect("injecting");
    assert_eq!(running.injection.seed_given(), Some(7));

    // Every call now fails by injection (a twentieth waits 2 s first; seed 7 spares the first).
    let answer = breaker.call(async { Ok::<_, std::io::Error>(()) }).await;
    assert!(answer.unwrap_err().is_injected());
    assert_eq!(
        listed(port, "endpoint-inject").await["injection"]["injected"],
        1
    );

    let (status, refused) = request(port, "POST", path, &authorized, body).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused.contains("running already"), "{refused}");
    assert_eq!(
        breaker.injection().unwrap().ends,
        running.ends,
        "the running one is kept"
    );

    let (status, body_back) = request(port, "DELETE", path, &authorized, "").await;
    assert_eq!(status, 200, "{body_back}");
    let snapshot: serde_json::Value = serde_json::from_str(&body_back).unwrap();
    assert_eq!(snapshot["injection"], serde_json::Value::Null);
    assert_eq!(breaker.injection(), None);
    let (status, refused) = request(port, "DELETE", path, &authorized, "").await;
    assert_eq!(status, 409, "nothing left to stop");
    assert!(refused.contains("no injection is running"), "{refused}");
    let (status, refused) = request(port, "DELETE", path, &authorized, "{}").await;
    assert_eq!(status, 400, "a stop with a body");
    assert!(
        refused.contains("stopping an injection takes no body"),
        "{refused}"
    );
    breaker
        .call(async { Ok::<_, std::io::Error>(()) })
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn bad_injection_terms_are_a_400_that_says_which_and_change_nothing() {
    let breaker = built("endpoint-inject-bad");
    let port = serve(Endpoint::new().token(TOKEN).router()).await;
    let bearer = format!("Bearer {TOKEN}");
    let authorized = [("Authorization", bearer.as_str())];
    let path = "/endpoint-inject-bad/inject";
    for (bad, says) in [
        ("", "a JSON map"),
        (r#"{"fail": "10%"}"#, "`for` is required"),
        (r#"{"fail": "10", "for": "1m"}"#, "fail:"),
        (r#"{"fail": "150%", "for": "1m"}"#, "fail:"),
        (r#"{"delay": "soon", "for": "1m"}"#, "delay:"),
        (r#"{"fail": "10%", "for": "25h"}"#, "at most 24 h"),
        (r#"{"for": "1m"}"#, "nothing to inject"),
        (
            r#"{"fail": "10%", "for": "1m", "share": "5%"}"#,
            "unknown field `share`",
        ),
    ] {
        let (status, body) = request(port, "POST", path, &authorized, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        let error = error["error"].as_str().unwrap();
        assert!(error.contains(says), "{bad}: {error}");
    }
    let (status, body) = request(
        port,
        "POST",
        path,
        &authorized,
        &format!(r#"{{"fail": "10%", "for": "{}s"}}"#, "9".repeat(2_000)),
    )
    .await;
    assert_eq!(status, 413, "bounded like the commands: {body}");
    assert_eq!(breaker.injection(), None);

    breaker.set_mode(Mode::Shadow);
    let (status, body) = request(
        port,
        "POST",
        path,
        &authorized,
        r#"{"fail": "10%", "for": "1m"}"#,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("shadow mode"), "{body}");
    assert_eq!(breaker.injection(), None);
    breaker.set_mode(Mode::Enforce);
}
