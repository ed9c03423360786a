use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
#[breaker(default = "transparent")]
enum PayError {
    Io(std::io::Error),
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
