use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
#[breaker(default = "ok")]
enum PayError {
    Unavailable,
    Declined,
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
