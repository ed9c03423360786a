use breaker_runtime::circuit_breaker;

#[circuit_breaker(retries = 3)]
async fn notify() {}

fn main() {
    let _ = notify();
}
