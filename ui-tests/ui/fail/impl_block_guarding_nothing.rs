use breaker_runtime::circuit_breaker;

struct Client;

#[circuit_breaker]
impl Client {
    async fn fetch(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = Client.fetch();
}
