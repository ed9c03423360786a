use breaker_runtime::{BreakerError, circuit_breaker};

struct Message {
    body: String,
}

#[circuit_breaker(fallback = queue_send)]
async fn send(message: Message) -> Result<usize, BreakerError> {
    Ok(message.body.len())
}

async fn queue_send(message: Message) -> Result<usize, BreakerError> {
    Ok(message.body.len())
}

fn main() {
    let _ = send(Message {
        body: String::new(),
    });
}
