use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
#[breaker(default = "healthy", default = "ignore")]
enum PayError {
    Unavailable,
    Declined,
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
