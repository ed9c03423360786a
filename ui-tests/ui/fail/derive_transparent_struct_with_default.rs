use breaker_runtime::IsFailure;

#[derive(Debug, IsFailure)]
#[breaker(transparent, default = "healthy")]
struct PayError(std::io::Error);

fn classified<T: IsFailure>() {}

fn main() {
    classified::<PayError>();
}
