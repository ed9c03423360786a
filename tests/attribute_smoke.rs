use breaker_runtime::{BreakerError, IsFailure, circuit_breaker};

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
    #[breaker(healthy)]
    Declined,
    Breaker(BreakerError),
}

impl From<BreakerError> for PayError {
    fn from(e: BreakerError) -> Self {
        PayError::Breaker(e)
    }
}

struct Order {
    fail: bool,
}

#[circuit_breaker(threshold = "50%", window = "4", timeout_ms = 2000)]
async fn charge(order: &Order) -> Result<u32, PayError> {
    if order.fail {
        return Err(PayError::Unavailable);
    }
    Ok(7)
}

#[circuit_breaker(window = "4", fallback = queue_charge)]
async fn charge2(order: &Order, amount: u64) -> Result<u32, PayError> {
    if order.fail {
        Err(PayError::Unavailable)
    } else if amount == 0 {
        Err(PayError::Declined)
    } else {
        Ok(1)
    }
}

async fn queue_charge(_order: &Order, _amount: u64) -> Result<u32, PayError> {
    Ok(99)
}

#[tokio::test(start_paused = true)]
async fn smoke() {
    assert_eq!(charge(&Order { fail: false }).await.unwrap(), 7);
    for _ in 0..4 {
        let _ = charge(&Order { fail: true }).await;
    }
    assert!(
        matches!(charge(&Order { fail: false }).await, Err(PayError::Breaker(e)) if e.is_rejection())
    );
    assert_eq!(charge2(&Order { fail: true }, 5).await.unwrap(), 99);
    assert!(matches!(
        charge2(&Order { fail: false }, 0).await,
        Err(PayError::Declined)
    ));
}
