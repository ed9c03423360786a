use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
    #[breaker(healty)]
    Declined,
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
