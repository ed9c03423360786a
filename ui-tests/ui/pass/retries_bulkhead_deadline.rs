//! Every option around the call at once, on the shapes that must keep working with retries: a
//! by-value argument, a pattern, a `mut` binding, a `&mut` argument and a method on `&self`.
use breaker_runtime::{BreakerError, circuit_breaker};

#[derive(Clone)]
struct Order {
    id: u32,
}

#[circuit_breaker(
    retries = 3,
    backoff = "10ms..1s",
    retry_budget = "10%",
    deadline = "5s",
    max_concurrent = 8,
    max_wait = "20ms"
)]
async fn place(
    order: Order,
    (a, b): (u32, u32),
    mut tries: u32,
    log: &mut Vec<u32>,
) -> Result<u32, BreakerError> {
    tries += 1;
    log.push(order.id + a + b + tries);
    Ok(order.id)
}

struct Client;

impl Client {
    #[circuit_breaker(retries = 1, retry_budget = "off")]
    async fn fetch(&self, key: String) -> Result<usize, BreakerError> {
        Ok(key.len())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut log = Vec::new();
    assert_eq!(place(Order { id: 1 }, (2, 3), 0, &mut log).await, Ok(1));
    assert_eq!(log, [7]);
    assert_eq!(Client.fetch("abc".into()).await, Ok(3));
}
