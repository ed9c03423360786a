//! The `tower` feature: a layer with one breaker per key, a classifier, the timeout, rejections
//! told apart, and a bound on the number of keys.

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::time::Duration;

use breaker_runtime::tower::{
    CircuitBreakerError, CircuitBreakerLayer, OVERFLOW_KEY, grpc_service,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use breaker_runtime::{Config, State, Verdict, registry};
use tower::{Layer, Service, ServiceExt};

/// A backend that fails for user 0, answers slowly for user 1, and answers the rest.
fn backend() -> impl Service<
    u32,
    Response = u32,
    Error = &'static str,
    Future = impl Future<Output = Result<u32, &'static str>> + Send,
> + Clone {
    tower::service_fn(|user: u32| async move {
        match user {
            0 => Err("down"),
            1 => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(1)
            }
            n => Ok(n * 10),
        }
    })
}

fn config() -> Config {
    Config::builder()
        .count_window(2)
        .timeout(Duration::from_millis(100))
        .break_duration(Duration::from_secs(60))
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn each_key_has_its_own_breaker_and_rejections_are_told_apart() {
    let mut service = CircuitBreakerLayer::new(config())
        .prefix("tower-test-")
        .key(|user: &u32| Cow::Borrowed(if *user == 0 { "flaky" } else { "steady" }))
        .layer(backend());
    for _ in 0..2 {
        let err = service.ready().await.unwrap().call(0).await.unwrap_err();
        assert!(
            matches!(err, CircuitBreakerError::Inner("down")),
            "the inner error as it is"
        );
    }
    let rejected = service.ready().await.unwrap().call(0).await.unwrap_err();
    assert!(rejected.is_rejection(), "the flaky key is open");
    assert_eq!(
        service.ready().await.unwrap().call(7).await.unwrap(),
        70,
        "the steady key is not"
    );
    assert_eq!(
        registry().get("tower-test-flaky").unwrap().state(),
        State::Open
    );
    assert_eq!(service.breaker("steady").unwrap().state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_slow_inner_call_is_cut_at_the_timeout() {
    let mut service = CircuitBreakerLayer::new(config())
        .prefix("tower-timeout-")
        .layer(backend());
    let err = service.ready().await.unwrap().call(1).await.unwrap_err();
    assert!(matches!(err, CircuitBreakerError::Timeout(_)));
    assert_eq!(service.breaker("").unwrap().snapshot().failures, 1);
}

#[tokio::test(start_paused = true)]
async fn a_classifier_decides_what_counts() {
    // Errors are answers here; only responses above 100 are failures.
    let mut service = CircuitBreakerLayer::new(config())
        .prefix("tower-classified-")
        .classifier(|result: &Result<u32, &'static str>| match result {
            Ok(n) if *n > 100 => Verdict::Failure,
            _ => Verdict::Success,
        })
        .layer(backend());
    for _ in 0..3 {
        let _ = service.ready().await.unwrap().call(0).await;
    }
    assert_eq!(
        service.breaker("").unwrap().state(),
        State::Closed,
        "errors did not count"
    );
    assert_eq!(
        service.ready().await.unwrap().call(20).await.unwrap(),
        200,
        "a failure is still returned"
    );
    assert_eq!(
        service.breaker("").unwrap().state(),
        State::Open,
        "one large answer in the window of 2 is 50%"
    );
}

#[tokio::test(start_paused = true)]
async fn keys_beyond_the_bound_share_the_overflow_breaker() {
    let mut service = CircuitBreakerLayer::new(config())
        .prefix("tower-bounded-")
        .max_keys(3)
        .key(|user: &u32| Cow::Owned(format!("user-{user}")))
        .layer(backend());
    for user in 2..100 {
        assert_eq!(
            service.ready().await.unwrap().call(user).await.unwrap(),
            user * 10
        );
    }
    assert!(service.breaker("user-2").is_some() && service.breaker("user-3").is_some());
    assert!(
        service.breaker("user-50").is_none(),
        "no breaker of its own past the bound"
    );
    assert_eq!(
        service.breaker(OVERFLOW_KEY).unwrap().snapshot().calls,
        2,
        "the window of 2 is full of them"
    );
}

#[tokio::test(start_paused = true)]
async fn a_grpc_layer_gives_each_remote_service_its_own_breaker() {
    // The payments service refuses every call with UNAVAILABLE in a trailers-only answer; the
    // catalog answers NOT_FOUND the same way, which is the server answering.
    let inner = tower::service_fn(|request: http::Request<()>| async move {
        let code = if request.uri().path().starts_with("/shop.Payments/") {
            "14"
        } else {
            "5"
        };
        Ok::<_, std::io::Error>(
            http::Response::builder()
                .header("grpc-status", code)
                .body(())
                .unwrap(),
        )
    });
    let mut service = CircuitBreakerLayer::for_grpc(config())
        .prefix("tower-grpc-")
        .layer(inner);
    let call = |path: &'static str| http::Request::builder().uri(path).body(()).unwrap();
    for _ in 0..2 {
        let _ = service
            .ready()
            .await
            .unwrap()
            .call(call("/shop.Payments/Charge"))
            .await;
    }
    assert!(
        service
            .ready()
            .await
            .unwrap()
            .call(call("/shop.Payments/Refund"))
            .await
            .unwrap_err()
            .is_rejection()
    );
    for _ in 0..4 {
        service
            .ready()
            .await
            .unwrap()
            .call(call("/shop.Catalog/List"))
            .await
            .unwrap();
    }
    assert_eq!(
        service.breaker("shop.Payments").unwrap().state(),
        State::Open
    );
    assert_eq!(
        service.breaker("shop.Catalog").unwrap().state(),
        State::Closed,
        "NOT_FOUND at creation is an answer"
    );
}

#[test]
fn grpc_requests_are_keyed_by_service() {
    for (path, service) in [
        ("/shop.Payments/Charge", "shop.Payments"),
        ("/Health/Check", "Health"),
        ("/", ""),
    ] {
        let request = http::Request::builder().uri(path).body(()).unwrap();
        assert_eq!(grpc_service(&request), service);
    }
}

/// An inner service that counts the requests its `call` receives, and fails while told to.
#[derive(Clone)]
struct Counting {
    calls: Arc<AtomicUsize>,
    failing: Arc<AtomicBool>,
}

impl Counting {
    fn new() -> Self {
        Counting {
            calls: Arc::new(AtomicUsize::new(0)),
            failing: Arc::new(AtomicBool::new(true)),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Service<u32> for Counting {
    type Response = u32;
    type Error = io::Error;
    type Future = std::future::Ready<Result<u32, io::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: u32) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::future::ready(if self.failing.load(Ordering::SeqCst) {
            Err(io::Error::from(io::ErrorKind::ConnectionRefused))
        } else {
            Ok(request)
        })
    }
}

fn opening(name: &str) -> Config {
    Config::builder()
        .name(name.to_string())
        .count_window(2)
        .break_duration(Duration::from_secs(60))
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_rejected_request_never_reaches_the_inner_service() {
    let backend = Counting::new();
    let mut service =
        CircuitBreakerLayer::<u32>::new(opening("tower-never-reached")).layer(backend.clone());
    for _ in 0..2 {
        let _ = service.ready().await.unwrap().call(1).await;
    }
    assert_eq!(backend.calls(), 2);
    assert_eq!(service.breaker("").unwrap().state(), State::Open);
    for _ in 0..1_000 {
        let answer = service.ready().await.unwrap().call(1);
        assert!(answer.await.unwrap_err().is_rejection());
    }
    assert_eq!(
        backend.calls(),
        2,
        "the inner `call` never ran for a rejection"
    );
}

#[test]
fn behind_a_buffer_a_rejected_request_never_reaches_the_backend() {
    // The buffer's worker runs on another thread; a request handed to the buffer would reach
    // the backend whatever became of its response future. Many rounds, each with a fresh
    // circuit, so a race would show.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for round in 0..20 {
            let backend = Counting::new();
            let buffered = tower::buffer::Buffer::new(backend.clone(), 8);
            let layer =
                CircuitBreakerLayer::<u32>::new(opening(&format!("tower-buffered-{round}")));
            let service = layer.layer(buffered);
            for _ in 0..2 {
                let _ = service.clone().oneshot(1).await;
            }
            assert_eq!(layer.breaker("").unwrap().state(), State::Open);
            let requests = (0..100).map(|_| {
                let service = service.clone();
                tokio::spawn(async move { service.oneshot(1).await })
            });
            for request in requests.collect::<Vec<_>>() {
                assert!(request.await.unwrap().unwrap_err().is_rejection());
            }
            assert_eq!(
                backend.calls(),
                2,
                "round {round}: the backend saw a rejected request"
            );
        }
    });
}

#[tokio::test(start_paused = true)]
async fn a_rejection_leaks_no_capacity_the_inner_service_reserved() {
    // One slot of concurrency below the breaker: every rejected request's handle reserved it in
    // `poll_ready`; were it leaked, the request after recovery could never get ready.
    let backend = Counting::new();
    let limited = tower::limit::ConcurrencyLimit::new(backend.clone(), 1);
    let layer = CircuitBreakerLayer::<u32>::new(opening("tower-no-leak"));
    let service = layer.layer(limited);
    for _ in 0..2 {
        let _ = service.clone().oneshot(1).await;
    }
    for _ in 0..100 {
        assert!(service.clone().oneshot(1).await.unwrap_err().is_rejection());
    }
    layer.breaker("").unwrap().reset();
    backend.failing.store(false, Ordering::SeqCst);
    let answered = tokio::time::timeout(Duration::from_secs(1), service.clone().oneshot(9)).await;
    assert_eq!(answered.expect("the slot is free").unwrap(), 9);
}

#[tokio::test(start_paused = true)]
async fn clones_of_the_layer_and_of_its_services_share_one_breaker_per_key() {
    let layer = CircuitBreakerLayer::<u32>::new(opening("tower-shared"));
    let copy = layer.clone();
    let first = layer.layer(Counting::new());
    let second = copy.layer(Counting::new());
    let _ = first.clone().oneshot(1).await;
    let _ = second.clone().oneshot(1).await;
    let breaker = layer.breaker("").unwrap();
    assert!(Arc::ptr_eq(&breaker, &copy.breaker("").unwrap()));
    assert!(Arc::ptr_eq(
        &breaker,
        &second.breaker("tower-shared").unwrap()
    ));
    assert_eq!(
        breaker.state(),
        State::Open,
        "one failure from each service, one window"
    );
    assert!(first.oneshot(1).await.unwrap_err().is_rejection());
}

#[tokio::test(start_paused = true)]
async fn without_a_prefix_or_a_key_the_breaker_is_named_after_the_config() {
    let _service =
        CircuitBreakerLayer::<u32>::new(opening("tower-named-by-config")).layer(Counting::new());
    let listed = registry()
        .get("tower-named-by-config")
        .expect("listed before any request");
    assert_eq!(listed.name(), "tower-named-by-config");

    let service = CircuitBreakerLayer::<u32>::new(opening("tower-empty-key"))
        .prefix("")
        .key(|_: &u32| Cow::Borrowed(""))
        .layer(Counting::new());
    let _ = service.clone().oneshot(1).await;
    assert!(
        registry().get("tower-empty-key").is_some(),
        "an empty key stands for the config's name, so no breaker is nameless"
    );
}

#[tokio::test(start_paused = true)]
async fn two_layers_whose_breakers_take_one_name_are_both_listed_and_the_clash_reported() {
    let config = || opening("tower-clash");
    let first = CircuitBreakerLayer::<u32>::new(config()).layer(Counting::new());
    let second = CircuitBreakerLayer::<u32>::new(config()).layer(Counting::new());
    assert!(!Arc::ptr_eq(
        &first.breaker("").unwrap(),
        &second.breaker("").unwrap()
    ));
    assert!(registry().get("tower-clash").is_some());
    assert!(registry().get("tower-clash#2").is_some());
    let clash = registry()
        .clashes()
        .into_iter()
        .find(|clash| clash.wanted == "tower-clash")
        .expect("the clash is reported");
    assert_eq!(clash.given, "tower-clash#2");
    assert!(
        clash.at.file.ends_with("tower.rs"),
        "where the second layer was built"
    );

    drop(second);
    assert!(
        registry().get("tower-clash#2").is_none(),
        "its breakers left with the layer"
    );
    assert!(
        registry()
            .clashes()
            .iter()
            .all(|clash| clash.wanted != "tower-clash")
    );
    drop(first);
    assert!(registry().get("tower-clash").is_none());
}

#[tokio::test(start_paused = true)]
async fn a_dropped_response_future_frees_its_probe_slot() {
    let pending = tower::service_fn(|_: u32| std::future::pending::<Result<u32, &'static str>>());
    let layer = CircuitBreakerLayer::<u32>::new(opening("tower-cancelled-probe"));
    let service = layer.layer(pending);
    let breaker = layer.breaker("").unwrap();
    breaker.force_open();
    breaker.reset();
    for _ in 0..2 {
        breaker.try_acquire().unwrap().failure();
    }
    tokio::time::advance(Duration::from_secs(60)).await;
    let mut handle = service.clone();
    let probe = handle.ready().await.unwrap().call(1);
    assert_eq!(breaker.state(), State::HalfOpen);
    assert!(
        service.clone().oneshot(1).await.unwrap_err().is_rejection(),
        "the one slot is taken"
    );
    drop(probe);
    assert_eq!(breaker.snapshot().probes_in_flight, 0);
    assert!(
        breaker.try_acquire().unwrap().is_probe(),
        "the slot is free again"
    );
}

#[tokio::test]
async fn axum_routes_take_the_layer_and_answer_503_while_it_is_open() {
    use std::convert::Infallible;

    use axum::Router;
    use axum::body::Body;
    use axum::error_handling::HandleErrorLayer;
    use axum::response::{IntoResponse, Response};
    use axum::routing::get;
    use http::StatusCode;

    let handled = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&handled);
    let breaker_layer = CircuitBreakerLayer::new(opening("tower-axum")).classifier(
        |result: &Result<Response, Infallible>| match result {
            Ok(response) => Verdict::of(&response.status()),
            Err(never) => match *never {},
        },
    );
    let app = Router::new()
        .route(
            "/",
            get(move || {
                seen.fetch_add(1, Ordering::SeqCst);
                async { StatusCode::BAD_GATEWAY }
            }),
        )
        .layer(
            tower::ServiceBuilder::new()
                .layer(HandleErrorLayer::new(
                    |error: CircuitBreakerError<Infallible>| async move {
                        (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response()
                    },
                ))
                .layer(breaker_layer.clone()),
        );
    let get_root = || {
        http::Request::builder()
            .uri("/")
            .body(Body::empty())
            .unwrap()
    };
    for _ in 0..2 {
        let response = app.clone().oneshot(get_root()).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    }
    assert_eq!(breaker_layer.breaker("").unwrap().state(), State::Open);
    let response = app.clone().oneshot(get_root()).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        handled.load(Ordering::SeqCst),
        2,
        "the handler never saw the rejected request"
    );
}
