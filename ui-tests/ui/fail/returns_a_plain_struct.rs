use breaker_runtime::circuit_breaker;

struct Receipt {
    id: u64,
}

#[circuit_breaker]
async fn charge() -> Receipt {
    Receipt { id: 1 }
}

fn main() {
    let _ = charge();
}
