//! The `tower` feature: a layer with one breaker per key, a classifier, the timeout, rejections
//! told apart, and a bound on the number of keys.

use std::time::Duration;

use breaker_runtime::tower::{
    CircuitBreakerError, CircuitBreakerLayer, OVERFLOW_KEY, grpc_service,
};
use breaker_runtime::{Config, State, Verdict, registry};
use tower::{Layer, Service, ServiceExt};

/// A backend that fails for user 0, answers slowly for user 1, and answers the rest.
fn backend() -> impl Service<u32, Response = u32, Error = &'static str, Future = impl Send> + Clone
{
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
        .key(|user: &u32| {
            if *user == 0 {
                "flaky".to_string()
            } else {
                "steady".to_string()
            }
        })
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
        .key(|user: &u32| format!("user-{user}"))
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
    let inner = tower::service_fn(|request: http::Request<()>| async move {
        if request.uri().path().starts_with("/shop.Payments/") {
            Err("payments down")
        } else {
            Ok(())
        }
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
    service
        .ready()
        .await
        .unwrap()
        .call(call("/shop.Catalog/List"))
        .await
        .unwrap();
    assert_eq!(
        service.breaker("shop.Payments").unwrap().state(),
        State::Open
    );
    assert_eq!(
        service.breaker("shop.Catalog").unwrap().state(),
        State::Closed
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
