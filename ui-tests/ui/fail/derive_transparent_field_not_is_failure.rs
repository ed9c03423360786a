use breaker_runtime::IsFailure;

#[derive(Debug)]
struct Opaque;

#[derive(Debug, IsFailure)]
enum PayError {
    #[breaker(transparent)]
    Backend(Opaque),
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
