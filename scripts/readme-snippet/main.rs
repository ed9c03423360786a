#[tokio::main]
async fn main() {
    for order in 0..30 {
        let receipt = charge(&Order).await.expect("the fallback answers every charge");
        assert_eq!(receipt, Receipt("queued"), "charge {order}");
    }
    assert_eq!(
        REACHED.load(Ordering::SeqCst),
        20,
        "the circuit opens once the window of 20 is all failures, and the API is called no more"
    );
    let state = breaker_runtime::registry()
        .get("readme_snippet::charge")
        .expect("charge's breaker is registered under its path")
        .state();
    assert_eq!(state, breaker_runtime::State::Open);
    assert_eq!(refund(&ChargeId).await.unwrap(), Refund);
    assert!(!PayError::Declined.is_failure(), "a declined card is an answer");
    println!("the README's charge example, built on the packages: 30 charges answered, 20 reached the API, circuit open");
}
