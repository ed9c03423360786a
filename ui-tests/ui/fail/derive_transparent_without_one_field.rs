use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
    #[breaker(transparent)]
    Io(std::io::Error, std::io::Error),
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
