//! The README's "Use" example, compiled and run with the same code as there (the payment API and the
//! outbox stubbed): a fallback serves an open circuit, and without one the error type's
//! `From<BreakerError>`, written by `#[from]`, hands the rejection back.

use breaker_runtime::{BreakerError, IsFailure, circuit_breaker, registry};

include!("../scripts/readme-snippet/stubs.rs");

// ---- as in the README ----

#[circuit_breaker(threshold = "50%", window = "20", timeout_ms = 2000, fallback = queue_charge)]
async fn charge(order: &Order) -> Result<Receipt, PayError> {
    payments.charge(order).await
}

async fn queue_charge(order: &Order) -> Result<Receipt, PayError> {
    outbox.enqueue(order).await
}

#[circuit_breaker(timeout = "1s")] // no fallback: a rejection or a timeout is returned
async fn refund(id: &ChargeId) -> Result<Refund, PayError> {
    payments.refund(id).await
}

#[derive(Debug, thiserror::Error, IsFailure)]
enum PayError {
    #[error("the payment API is unavailable")]
    Unavailable, // a failure: counts against the payment API
    #[error("card declined")]
    #[breaker(healthy)]
    Declined, // a business answer: the API is working
    #[error(transparent)]
    #[breaker(transparent)] // classified as the BreakerError inside it says
    Breaker(#[from] BreakerError),
}

// ---- the example at work ----

#[tokio::test(start_paused = true)]
async fn the_readme_example_falls_back_and_hands_back_rejections() {
    assert_eq!(charge(&Order).await.unwrap(), Receipt("queued"));
    assert!(!PayError::Declined.is_failure());
    assert!(PayError::Unavailable.is_failure());

    assert_eq!(refund(&ChargeId).await.unwrap(), Refund);
    let breaker = registry().get("readme::refund").expect("declared");
    breaker.force_open();
    match refund(&ChargeId).await {
        Err(PayError::Breaker(e)) => assert!(e.is_rejection(), "{e}"),
        other => panic!("a forced-open circuit answered {other:?}"),
    }
}
