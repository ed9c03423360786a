use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
    #[breaker(default = "healthy")]
    Declined,
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
