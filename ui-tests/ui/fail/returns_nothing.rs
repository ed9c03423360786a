use breaker_runtime::circuit_breaker;

#[circuit_breaker]
async fn notify() {}

fn main() {
    let _ = notify();
}
