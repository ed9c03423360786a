//! The live page in a real browser: headless Chromium (`.ci/run` installs it) loads the page
//! from a test server, a breaker is driven open by failing calls, and the page shows it open
//! within a second, pushed by the server-sent events; its status line counts the breakers, in
//! the singular for one.
//!
//! With `BREAKER_SCREENSHOT=<path>` (relative to `breaker-runtime/`), the test also writes the
//! page's screenshot there; the one docs/features.md shows is made with
//! `BREAKER_SCREENSHOT=../docs/endpoint-page.png cargo test -p breaker-runtime --features http-endpoint --test browser`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, Injection, Mode, State, registry};
use breaker_test_servers::{Chromium, Page};

/// The breaker the test opens; the others are there for the screenshot.
const OPENED: &str = "ledger-db";

/// The operator's token, which the page asks for to stop a drill or an injection.
const TOKEN: &str = "browser-test-token";

fn registered(config: Config) -> Arc<Breaker> {
    let breaker = Arc::new(Breaker::new(config));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

/// One call through `breaker`, failing with `failure` if there is one, taking `took`.
async fn call(breaker: &Breaker, failure: Option<&str>, took: Duration) {
    let outcome = breaker
        .call(async {
            if !took.is_zero() {
                tokio::time::sleep(took).await;
            }
            match failure {
                Some(message) => Err(std::io::Error::other(message.to_string())),
                None => Ok(()),
            }
        })
        .await;
    assert!(outcome.is_ok(), "admitted: {outcome:?}");
}

/// What the state column of `name`'s row shows ("closed", "open", "half-open"…), if the page
/// has that row.
fn shown(page: &mut Page, name: &str) -> Option<String> {
    let name = serde_json::to_string(name).unwrap();
    let expression = format!(
        r##"(() => {{
            const row = [...document.querySelectorAll("#breakers tr")].find((r) => r.dataset.breaker === {name});
            return row ? row.querySelector(".state").textContent : null;
        }})()"##
    );
    page.evaluate(&expression).as_str().map(str::to_string)
}

/// Reads the page every 50 ms until `name`'s row shows `state`, and returns how long after
/// `since` it first did; panics after `deadline`.
fn until_shown(
    page: &mut Page,
    name: &str,
    state: &str,
    since: Instant,
    deadline: Duration,
) -> Duration {
    loop {
        let now = shown(page, name);
        let elapsed = since.elapsed();
        if now.as_deref() == Some(state) {
            return elapsed;
        }
        if elapsed > deadline {
            let status = page.evaluate(r#"document.getElementById("status").textContent"#);
            panic!(
                "after {elapsed:?} the page shows {name} as {now:?}, not {state:?} (status: {status})"
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Reads the page's status line every 50 ms until it reads `expected`; panics after 5 s.
fn until_status(page: &mut Page, expected: &str) {
    let since = Instant::now();
    loop {
        let status = page.evaluate(r#"document.getElementById("status").textContent"#);
        if status.as_str() == Some(expected) {
            return;
        }
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "the status reads {status}, not {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The text of the first `selector` in `name`'s row, if the page shows one.
fn line_of(page: &mut Page, name: &str, selector: &str) -> Option<String> {
    let name = serde_json::to_string(name).unwrap();
    let selector = serde_json::to_string(selector).unwrap();
    page.evaluate(&format!(
        r##"(() => {{
            const row = [...document.querySelectorAll("#breakers tr")].find((r) => r.dataset.breaker === {name});
            const line = row && row.querySelector({selector});
            return line ? line.textContent : null;
        }})()"##
    ))
    .as_str()
    .map(str::to_string)
}

/// Presses the stop button of class `class` in `name`'s row, answering the page's prompt for
/// the operator's token.
fn press_stop(page: &mut Page, name: &str, class: &str) {
    let name = serde_json::to_string(name).unwrap();
    let pressed = page.evaluate(&format!(
        r##"(() => {{
            window.prompt = () => "{TOKEN}";
            const row = [...document.querySelectorAll("#breakers tr")].find((r) => r.dataset.breaker === {name});
            const button = row && row.querySelector("button.{class}");
            if (!button) return false;
            button.click();
            return true;
        }})()"##
    ));
    assert_eq!(
        pressed.as_bool(),
        Some(true),
        "no button.{class} in {name}'s row"
    );
}

/// Waits until `done`, reading it every 50 ms; panics with `failed` after 5 s.
fn until(done: impl Fn() -> bool, failed: &str) {
    let since = Instant::now();
    while !done() {
        assert!(since.elapsed() < Duration::from_secs(5), "{failed}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_page_shows_a_breaker_open_within_a_second_of_its_opening() {
    // The server on a runtime of its own, so that the browser's blocking reads never hold it up.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let port = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = Endpoint::new().token(TOKEN).router();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        port
    });

    let config =
        |name: &'static str, window: u32| Config::builder().name(name).count_window(window);
    let opened = registered(config(OPENED, 10).build().unwrap());
    let payments = registered(
        config("payments-api", 20)
            .slow_call(Duration::from_millis(20))
            .slow_threshold(30.0)
            .build()
            .unwrap(),
    );
    let search = registered(config("search-index", 10).build().unwrap());
    let recommendations = registered(config("recommendations", 2).build().unwrap());
    let geo = registered(config("geo-lookup", 4).mode(Mode::Shadow).build().unwrap());
    runtime.block_on(async {
        for _ in 0..5 {
            call(&opened, None, Duration::ZERO).await;
        }
        for i in 0..17 {
            let took = Duration::from_millis(if i % 6 == 0 { 25 } else { 0 });
            call(&payments, None, took).await;
        }
        for _ in 0..2 {
            call(&payments, Some("503 Service Unavailable"), Duration::ZERO).await;
        }
        for _ in 0..2 {
            call(&recommendations, Some("deadline exceeded"), Duration::ZERO).await;
        }
        for fails in [true, false, true, true] {
            call(&geo, fails.then_some("geo timed out"), Duration::ZERO).await;
        }
    });
    search.force_open();
    for _ in 0..7 {
        assert!(search.try_acquire().is_err(), "rejected while forced open");
    }
    assert!(recommendations.half_open());
    assert_eq!(geo.state(), State::Open, "open, in shadow mode");
    geo.start_trace(breaker_runtime::trace::Limits::DEFAULT);

    let chromium = Chromium::start();
    let mut page = chromium.open(&format!("http://127.0.0.1:{port}/"));
    // Generous: a slow machine may take a while to start the browser and render.
    until_shown(
        &mut page,
        OPENED,
        "closed",
        Instant::now(),
        Duration::from_secs(10),
    );
    assert_eq!(
        shown(&mut page, "search-index").as_deref(),
        Some("forced-open")
    );
    let marks = |page: &mut Page, name: &str| {
        let name = serde_json::to_string(name).unwrap();
        page.evaluate(&format!(
            r##"(() => {{
                const row = [...document.querySelectorAll("#breakers tr")].find((r) => r.dataset.breaker === {name});
                return row ? row.querySelectorAll(".tracing").length : -1;
            }})()"##
        ))
        .as_i64()
    };
    assert_eq!(
        marks(&mut page, "geo-lookup"),
        Some(1),
        "geo-lookup records its calls"
    );
    assert_eq!(
        marks(&mut page, "search-index"),
        Some(0),
        "search-index does not"
    );

    // A drill shows with its end and a way to stop it, from the page's next refresh.
    let ends = runtime
        .block_on(async { payments.drill(Duration::from_secs(600)) })
        .expect("payments-api is closed: it can be drilled");
    assert!(ends > tokio::time::Instant::now());
    let drill_line = |page: &mut Page| {
        page.evaluate(
            r##"(() => {
                const row = [...document.querySelectorAll("#breakers tr")].find((r) => r.dataset.breaker === "payments-api");
                const drill = row && row.querySelector(".drill");
                return drill ? drill.textContent + "|" + drill.querySelectorAll("button.stop-drill").length : null;
            })()"##,
        )
        .as_str()
        .map(str::to_string)
    };
    let since = Instant::now();
    let shown = loop {
        if let Some(line) = drill_line(&mut page) {
            break line;
        }
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "the page shows no drill for payments-api"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(shown.starts_with("drill, ends in"), "{shown}");
    assert!(shown.ends_with("stop|1"), "one stop button: {shown}");
    // Its stop button asks for the token and stops the drill.
    press_stop(&mut page, "payments-api", "stop-drill");
    until(
        || payments.drill_ends().is_none(),
        "the drill was not stopped",
    );
    assert_eq!(payments.state(), State::Closed, "put back as it was");

    // A running injection shows what it injects, its end, and a stop button that works too.
    runtime
        .block_on(async {
            payments.inject(
                Injection::new()
                    .fail(10.0)
                    .delay(Duration::from_secs(2), 5.0),
                Duration::from_secs(600),
            )
        })
        .expect("payments-api enforces: faults can be injected");
    let since = Instant::now();
    let shown = loop {
        if let Some(line) = line_of(&mut page, "payments-api", ".injection") {
            break line;
        }
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "the page shows no injection for payments-api"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        shown
            .starts_with("injecting 10% failures, 5% delays of 2.00 s: 0\u{a0}calls of 0, ends in"),
        "{shown}"
    );
    assert!(shown.ends_with("stop"), "{shown}");
    press_stop(&mut page, "payments-api", "stop-injection");
    until(
        || payments.injection().is_none(),
        "the injection was not stopped",
    );

    runtime.block_on(async {
        for _ in 0..5 {
            call(
                &opened,
                Some("connection refused by ledger-db:5432"),
                Duration::ZERO,
            )
            .await;
        }
    });
    let opened_at = Instant::now();
    assert_eq!(opened.state(), State::Open, "5 failures in 10 calls: 50%");
    let took = until_shown(&mut page, OPENED, "open", opened_at, Duration::from_secs(5));
    eprintln!("the page showed {OPENED} open {took:?} after it opened");
    // The issue asks for a second; half of it tells the pushed transition apart from the
    // page's once-a-second refresh, which alone would pass half the time.
    assert!(
        took <= Duration::from_millis(500),
        "the page showed {OPENED} open only {took:?} after it opened"
    );

    let png = page.screenshot();
    assert!(
        png.len() > 8 && png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "a PNG: {} bytes",
        png.len()
    );
    if let Some(path) = std::env::var_os("BREAKER_SCREENSHOT") {
        std::fs::write(&path, &png).unwrap();
    }

    // The status line counts the breakers, in the singular for one: the page's refresh shows
    // the registry as it is within a second.
    until_status(&mut page, "5 breakers, live");
    for name in [
        "payments-api",
        "search-index",
        "recommendations",
        "geo-lookup",
    ] {
        assert!(
            registry().unregister(name).is_some(),
            "{name} was registered"
        );
    }
    until_status(&mut page, "1 breaker, live");
}
