use breaker_runtime::circuit_breaker;

#[circuit_breaker]
struct Client;

fn main() {
    let _ = Client;
}
