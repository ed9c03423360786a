use breaker_runtime::{IsFailure, circuit_breaker};

#[derive(Debug, IsFailure)]
enum Reply {
    #[breaker(healthy)]
    Done,
    Down,
}

#[circuit_breaker]
async fn charge() -> Reply {
    Reply::Done
}

fn main() {
    let _ = charge();
    let _ = Reply::Down;
}
