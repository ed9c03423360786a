use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
enum PayError {
    #[breaker(transparent)]
    Unavailable,
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
