//! The operator's view over HTTP (feature `http-endpoint`): every breaker as JSON for tools, a
//! live page for people, and, with a token, the operator's commands.
//!
//! [`router`] (read-only) or [`Endpoint::router`] returns an axum [`Router`] to mount where the
//! service likes, on an internal port: it says which dependencies are failing, and with a token
//! it lets its holder open and close circuits and change a breaker's options.
//!
//! Mount it under a prefix with `nest_service`, as below: then `/breakers` and `/breakers/`
//! both answer `GET /`. (axum's `nest` matches the prefix without the slash only, so with it
//! `/breakers/` is a 404.) The paths below are relative to the prefix.
//!
//! | request | answer |
//! |---|---|
//! | `GET /` | every breaker's snapshot as JSON (`Accept: text/html`: the live page) |
//! | `GET /events` | server-sent events: the same JSON at once, after every transition and each second |
//! | `GET /health` | for a readiness probe, no token: `{"status": "up" \| "degraded" \| "down", "breakers": 3, "degraded": [{"name", "state", "mode", "critical"}], "down": ["payments"]}`; 200 while up or degraded (a breaker that is not closed, its fallback answering), 503 only while a breaker named by [`Endpoint::critical`] turns calls away (open or held open, enforcing). [`Endpoint::without_health`] leaves it out. A breaker named `health` is read at `GET /` |
//! | `GET /{name}` | that breaker's snapshot as JSON, as `GET /` lists it; 404 for an unknown name, which the answer echoes with the nearest names that exist |
//! | `POST /{name}/{command}` | `force_open`, `disable`, `reset`, `half_open`, `shadow`, `enforce`, `reset_config` (back to the options the breaker was built with), `trace_start` (record the breaker's calls, a new trace, at most [`trace::Limits::DEFAULT`](crate::trace::Limits::DEFAULT)), `trace_stop`: 200 with the breaker's snapshot; 403 while no token is configured, 401 for a missing or wrong `Authorization: Bearer` (one answer for both), 404 for an unknown breaker (the nearest names in the answer), 400 for an unknown command (the nearest command, and every command, `drill` and `inject` among them), 400 for a body (commands take none), 413 past 1 KiB |
//! | `POST /{name}/drill` | a [drill](crate::Breaker::drill): the circuit held open for the body's `{"open_for": "30s"}` (a duration as in the attribute), then put back as it was: 200 with the breaker's snapshot; 400 for a missing or bad body or duration, 409 when the breaker refuses (a drill running, held open by an operator, shadow mode); 403, 401 and 404 as for the commands; 413 past 1 KiB. `DELETE /{name}/drill` stops it early and puts the state back: 200 with the snapshot, 409 when no drill runs |
//! | `POST /{name}/inject` | [fault injection](crate::Breaker::inject): the body's `{"fail": "10%", "delay": "2s", "delay_share": "5%", "for": "5m", "seed": 7}` (shares and durations as in the attribute; `for` required, at most 24 h; `fail`, `delay` or both; `delay_share` 100% when a delay has none; `seed` optional) injected into the breaker's calls until `for` has passed: 200 with the breaker's snapshot, whose `injection` reads it; 400 for a missing or bad body or field (saying which), 409 when the breaker refuses (one running, shadow mode); 403, 401 and 404 as for the commands; 413 past 1 KiB. `DELETE /{name}/inject` stops it: 200 with the snapshot, 409 when none runs |
//! | `GET /{name}/trace` | the calls the breaker recorded since `trace_start`, as JSON Lines (`application/x-ndjson`, one `{"at_ms": 0, "duration_ms": 80, "outcome": "success"}` a call: [`trace`](crate::trace)), for `breaker-replay`; empty if it never traced; 404 for an unknown breaker. Like every read, behind the read token when one is set. `?last=5m`: what the flight recorder kept of the last five minutes, transitions included; without a read token, behind the operator's when one is set |
//! | `PUT /{name}/config` | some of the breaker's options, as a JSON map spelled as in the attribute (`{"threshold": "40%", "window": "30s"}`), the others kept: 200 with the snapshot, whose `config` is the one now in force; 403, 401 and 404 as for the commands; 400 for a body that is not a map, an empty map, an unknown option, `name`, an option around the calls (`retries`, ...) or a refused value, as `{"error": "...", "option": "threshold"}` (`option` is `null` when no single option is at fault); 413 past 16 KiB |
//!
//! ```
//! use axum::body::Body;
//! use breaker_runtime::endpoint::Endpoint;
//! use tower::ServiceExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let read_only: axum::Router = breaker_runtime::endpoint::router();
//! let operated: axum::Router = Endpoint::new().token("s3cret-from-the-environment").router();
//! let app = axum::Router::<()>::new().nest_service("/breakers", operated);
//! for path in ["/breakers", "/breakers/"] {
//!     let request = http::Request::get(path).body(Body::empty()).unwrap();
//!     assert_eq!(app.clone().oneshot(request).await.unwrap().status(), 200, "{path}");
//! }
//! let command = http::Request::post("/some-breaker/reset").body(Body::empty()).unwrap();
//! assert_eq!(read_only.oneshot(command).await.unwrap().status(), 403, "read-only");
//! # }
//! ```
//!
//! Every read but `GET /health` needs a token once [`Endpoint::read_token`] sets one: that
//! token or the operator's, as `Authorization: Bearer` or as the password of HTTP Basic (a
//! browser asks for it on the page's 401, and sends it with the events stream); a read without
//! it answers 401 with `WWW-Authenticate`. The operator's requests take the operator's token
//! as a bearer only, and each breaker takes at most [`Endpoint::command_limit`] of them a
//! second (10 unless set): past it, 429 with `Retry-After: 1`.
//!
//! Every refusal answers `{"error": "..."}` (a refused option adds `"option"`), a body over the
//! limit included (`"the body is over the limit of 1024 bytes"`), and so do a path the endpoint
//! does not have (404, listing the routes) and a method a path does not take (405, with
//! `Allow`, saying what the path takes: a `POST {name}/config` answers that options are changed
//! with a `PUT` and a JSON map).
//!
//! Every request of the operator's (a command, a drill, an injection, a change of options, and
//! their stops), accepted or refused, is one log line: `info` when applied, `warn` when refused,
//! with the fields `breaker`, `command`, `status`, `outcome` (what was applied, or why it was
//! refused: for a 401, `no bearer token` or `a wrong token`, which the client is not told) and
//! `peer`, never the token. The peer's address is known when the router is served with
//! `into_make_service_with_connect_info::<SocketAddr>()`, and reads `unknown` otherwise; an
//! `X-Forwarded-For` header is logged beside it as `forwarded_for`, the client's own claim.
//!
//! ```
//! use std::net::SocketAddr;
//! use breaker_runtime::endpoint::Endpoint;
//!
//! # async fn run() -> std::io::Result<()> {
//! let router = Endpoint::new().token("s3cret-from-the-environment").router();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9100").await?;
//! axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await
//! # }
//! ```
//!
//! | file | its job |
//! |---|---|
//! | `guard.rs` | the token and the breaker's name, checked before any change, the read token before any read, and the answers |
//! | `credentials.rs` | the tokens a request offers (bearer, or Basic's password), compared in constant time |
//! | `limit.rs` | the operator's requests a breaker takes in a second |
//! | `health.rs` | the breakers' part of a readiness probe |
//! | `audit.rs` | one log line for every operator request, with its peer |
//! | `commands.rs` | the operator's commands |
//! | `config.rs` | a live breaker's options changed, and the change logged |
//! | `drill.rs` | a drill started and stopped |
//! | `inject.rs` | faults injected into a breaker's calls, and stopped |
//! | `history.rs` | the recent transitions the page shows |
//! | `trace.rs` | a breaker's recorded calls, for replay |
//! | `unrouted.rs` | the answers to a path it does not have and a method a path does not take |
//! | `page.html` | the live page: no external asset, updated by server-sent events |

mod audit;
mod commands;
mod config;
mod credentials;
mod drill;
mod guard;
mod health;
mod history;
mod inject;
mod limit;
mod stop;
mod trace;
mod unrouted;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use futures_util::Stream;

use crate::core::breaker::observer;
use crate::registry::registry;
use guard::{refuse, unknown_breaker};

/// The page, whole: it loads nothing else.
const PAGE: &str = include_str!("page.html");

/// How often the events repeat the snapshots, so counts and the time to the next probe move
/// between transitions.
const REFRESH: Duration = Duration::from_secs(1);

/// The endpoint's settings: read-only unless it has a token, and open to every reader unless
/// it has a read token.
#[derive(Clone, Default)]
pub struct Endpoint {
    token: Option<Arc<str>>,
    /// The token every read but `GET /health` needs, when set.
    read_token: Option<Arc<str>>,
    limit: limit::CommandLimit,
    /// The breakers whose open circuit makes `GET /health` answer 503.
    critical: Arc<[String]>,
    /// Whether `GET /health` is left out.
    without_health: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("commands", &self.token.is_some())
            .field("reads_need_a_token", &self.read_token.is_some())
            .field("commands_per_second", &self.limit.limit())
            .field("critical", &self.critical)
            .field("health", &!self.without_health)
            .finish()
    }
}

/// The read-only endpoint: snapshots, the page and the events; every command answers 403.
pub fn router() -> Router {
    Endpoint::new().router()
}

impl Endpoint {
    /// Read-only: no command is taken.
    pub fn new() -> Endpoint {
        Endpoint::default()
    }

    /// Takes the operator's commands and changes of options from requests that carry `Authorization: Bearer <token>`
    /// (compared in constant time). Read the token from the environment or a secret store, not
    /// from code; an empty token turns commands off.
    pub fn token(mut self, token: impl Into<String>) -> Endpoint {
        let token = token.into();
        self.token = (!token.is_empty()).then(|| Arc::from(token));
        self
    }

    /// Asks every read (the snapshots, the page, its events stream, the traces) for a token:
    /// this one or the operator's ([`token`](Self::token)), as `Authorization: Bearer <token>`
    /// or as the password of HTTP Basic (any user name), which a browser asks its user for
    /// when the page answers 401. Without one, anyone who reaches the endpoint reads every
    /// breaker's names, states, options and last errors. `GET /health` stays open (names and
    /// states only: [`without_health`](Self::without_health) leaves it out). An empty token
    /// sets none.
    ///
    /// ```
    /// use axum::body::Body;
    /// use breaker_runtime::endpoint::Endpoint;
    /// use tower::ServiceExt;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let app = Endpoint::new().read_token("r3ad").token("0perate").router();
    /// let read = |auth: Option<&str>| {
    ///     let mut request = http::Request::get("/");
    ///     if let Some(auth) = auth {
    ///         request = request.header("authorization", auth);
    ///     }
    ///     app.clone().oneshot(request.body(Body::empty()).unwrap())
    /// };
    /// assert_eq!(read(None).await.unwrap().status(), 401);
    /// assert_eq!(read(Some("Bearer r3ad")).await.unwrap().status(), 200);
    /// assert_eq!(read(Some("Bearer 0perate")).await.unwrap().status(), 200, "the operator reads too");
    /// // A browser's Basic credentials, the token as the password: base64("ops:r3ad").
    /// assert_eq!(read(Some("Basic b3BzOnIzYWQ=")).await.unwrap().status(), 200);
    /// # }
    /// ```
    pub fn read_token(mut self, token: impl Into<String>) -> Endpoint {
        let token = token.into();
        self.read_token = (!token.is_empty()).then(|| Arc::from(token));
        self
    }

    /// How many of the operator's requests (commands, drills, injections, changes of options
    /// and their stops) one breaker takes in a second, counted on tokio's clock; past it, 429
    /// with `Retry-After: 1`. 10 unless set; 0 for no limit. Only requests that carry the
    /// token and name a breaker that exists are counted, so a caller without the token cannot
    /// spend the operator's budget.
    pub fn command_limit(mut self, per_second: u32) -> Endpoint {
        self.limit = limit::CommandLimit::per_second(per_second);
        self
    }

    /// Names the breakers the service cannot do without: while one of them turns calls away
    /// (open or held open, and enforcing), `GET /health` answers 503, so that a readiness probe
    /// takes the service out of rotation. Every other breaker that is not closed only makes it
    /// degraded (200): its fallback answers. Names the registry does not hold are kept, and
    /// count once a breaker of that name exists.
    pub fn critical<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Endpoint {
        self.critical = names.into_iter().map(Into::into).collect();
        self
    }

    /// Leaves `GET /health` out (it answers 404 like any path the endpoint does not have), for
    /// a service that answers its probes elsewhere or will not tell its breakers' names and
    /// states without a token.
    pub fn without_health(mut self) -> Endpoint {
        self.without_health = true;
        self
    }

    /// The routes, to mount where the service likes: under a prefix, with `nest_service` (see
    /// [the module](self)), so that the prefix answers with and without a trailing slash.
    ///
    /// Building them makes every breaker time its calls from then on (as an installed call
    /// observer does: a clock reading at each end of a call), so the page shows how long the
    /// window's calls take.
    pub fn router(self) -> Router {
        history::start();
        observer::time_calls();
        // Every request of the operator's is logged once answered, with who sent it.
        let operated = Router::new()
            .route("/{name}/{command}", post(commands::command))
            .route("/{name}/drill", post(drill::start).delete(drill::stop))
            .route("/{name}/inject", post(inject::start).delete(inject::stop))
            .route(
                "/{name}/config",
                put(config::put).layer(DefaultBodyLimit::max(config::MAX_BODY)),
            )
            // Before the audit, so that a method a route does not take is audited too.
            .method_not_allowed_fallback(unrouted::wrong_method)
            .route_layer(axum::middleware::from_fn(audit::audit));
        let mut routes = Router::new();
        if !self.without_health {
            routes = routes.route("/health", get(health::get));
        }
        // Behind the read token, when one is set.
        let read = Router::new()
            .route("/", get(breakers))
            .route("/events", get(events))
            .route("/{name}", get(breaker))
            .route("/{name}/trace", get(trace::get))
            .route_layer(axum::middleware::from_fn_with_state(
                self.clone(),
                guard::reading,
            ));
        routes
            .merge(read)
            .merge(operated)
            .method_not_allowed_fallback(unrouted::wrong_method)
            .fallback(unrouted::not_found)
            .layer(axum::middleware::from_fn(unrouted::refusals_as_json))
            .layer(DefaultBodyLimit::max(commands::MAX_BODY))
            .with_state(self)
    }
}

/// Every breaker's snapshot and the recent transitions, as the page and tools read them.
fn state_json() -> String {
    let mut breakers: Vec<_> = registry().breakers().iter().map(|b| b.snapshot()).collect();
    breakers.sort_by(|a, b| a.name().cmp(b.name()));
    serde_json::json!({
        "breakers": breakers,
        "transitions": history::recent(),
    })
    .to_string()
}

async fn breakers(headers: HeaderMap) -> Response {
    let wants_page = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if wants_page {
        return ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response();
    }
    json(StatusCode::OK, state_json())
}

/// `GET {name}`: that breaker's snapshot, as `GET /` lists it.
async fn breaker(Path(name): Path<String>) -> Response {
    match registry().get(&name) {
        Some(breaker) => with_snapshot(&breaker.snapshot()),
        None => refuse(StatusCode::NOT_FOUND, &unknown_breaker(&name)),
    }
}

/// 200 with a breaker's snapshot: what every request that changes a breaker answers.
fn with_snapshot(snapshot: &crate::core::breaker::snapshot::Snapshot) -> Response {
    json(
        StatusCode::OK,
        serde_json::to_string(snapshot).unwrap_or_default(),
    )
}

fn json(status: StatusCode, body: String) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn events(State(_): State<Endpoint>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let changed = history::changes();
    let stream = futures_util::stream::unfold((changed, true), |(mut changed, first)| async move {
        if !first {
            // The next transition, or the refresh, whichever comes first.
            let _ = tokio::time::timeout(REFRESH, changed.changed()).await;
        }
        let event = Event::default().event("breakers").data(state_json());
        Some((Ok(event), (changed, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
