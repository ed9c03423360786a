//! The chaos soak for 5 seconds (`soak/mod.rs` says what it does and checks; the example
//! `soak` runs it for as long as it is told). A binary of its own: it installs a call observer.

use std::time::Duration;

use breaker_tests::soak;

#[test]
fn five_seconds_of_chaos_lose_no_call_and_leak_nothing() {
    let figures = soak::run(Duration::from_secs(5));
    println!("{figures:#?}");
    assert!(
        figures.calls.0 > 1_000 && figures.calls.1 > 1_000,
        "{figures:?}"
    );
    assert!(figures.commands > 100, "{figures:?}");
    assert!(
        figures.dependency_panics > 0,
        "the schedule panics: {figures:?}"
    );
}
