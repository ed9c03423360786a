// Compiles today, but should not: `#[breaker(..)]` on a field is accepted (it is a registered
// helper attribute) and silently ignored, so `Io` stays a failure whatever the io::Error says.
// Move to `ui/fail/` once the derive refuses marks on fields.
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
