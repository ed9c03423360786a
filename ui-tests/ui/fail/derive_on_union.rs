use breaker_runtime::IsFailure;

#[derive(IsFailure)]
union Code {
    number: u32,
    bytes: [u8; 4],
}

fn classified<T: IsFailure>() {}

fn main() {
    classified::<Code>();
}
