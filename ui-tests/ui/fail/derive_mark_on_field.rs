// A mark on a field is refused: marks go on the variant.
use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
enum PayError {
    Unavailable,
    Io(#[breaker(transparent)] std::io::Error),
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
