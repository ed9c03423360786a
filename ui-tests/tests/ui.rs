//! Every misuse of `#[circuit_breaker]` and `#[derive(IsFailure)]` (`ui/fail`), with the message
//! a user reads, and every function shape the attribute promises to accept (`ui/pass`).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
