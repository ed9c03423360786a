//! The chaos soak for as long as asked (10 minutes unless told otherwise), printing its
//! figures: `cargo run --release -p breaker-tests --example soak -- 600`.

use std::time::Duration;

use breaker_tests::soak;

fn main() {
    let seconds = std::env::args()
        .nth(1)
        .map_or(600, |s| s.parse().expect("seconds, a whole number"));
    let figures = soak::run(Duration::from_secs(seconds));
    let calls = figures.calls.0 + figures.calls.1;
    println!("{figures:#?}");
    println!(
        "{calls} calls ({} through the attribute, {} through the layer), {} commands, {} dependency panics, in {:.1?}: every call ended once, nothing leaked",
        figures.calls.0,
        figures.calls.1,
        figures.commands,
        figures.dependency_panics,
        figures.elapsed
    );
}
