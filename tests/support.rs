//! Helpers shared by the integration tests.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_runtime::{Breaker, Config, ConfigBuilder, State, Transition};

#[path = "soak/mod.rs"]
pub mod soak;

/// SplitMix64: a task's draws, reproducible from its seed (the stress run and the soak).
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A builder with a count window of `n` and no timeout, the base most tests vary.
pub fn count(n: u32) -> ConfigBuilder {
    Config::builder().count_window(n).no_timeout()
}

/// A breaker from a builder that must be valid.
pub fn breaker(builder: ConfigBuilder) -> Breaker {
    Breaker::new(builder.build().expect("test configurations are valid"))
}

/// A call that fails as a dependency does.
pub fn down() -> Result<(), io::Error> {
    Err(io::ErrorKind::ConnectionRefused.into())
}

/// A call that succeeds.
pub fn up() -> Result<(), io::Error> {
    Ok(())
}

/// A call that fails as a dependency does when `fail`, and succeeds otherwise.
pub fn answer(fail: bool) -> Result<(), io::Error> {
    if fail { down() } else { up() }
}

/// Runs one call through the breaker, returning whether it was rejected.
pub async fn call(breaker: &Breaker, result: Result<(), io::Error>) -> bool {
    matches!(breaker.call(async { result }).await, Err(e) if e.is_rejection())
}

/// A call that takes `delay` of tokio time, then answers `result`.
pub async fn after(delay: Duration, result: Result<(), io::Error>) -> Result<(), io::Error> {
    tokio::time::sleep(delay).await;
    result
}

/// Runs a call whose body panics on a task of its own, and says whether the panic reached the
/// task's awaiter (as it must: the breaker records it and lets it continue).
pub async fn panicking_call(breaker: &Arc<Breaker>) -> bool {
    let breaker = Arc::clone(breaker);
    let task = tokio::spawn(async move {
        let blow_up = std::hint::black_box(true);
        breaker
            .call(async move {
                if blow_up {
                    panic!("a bug in the dependency's client");
                }
                up()
            })
            .await
    });
    task.await.is_err_and(|e| e.is_panic())
}

/// Milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Every transition of `b` from now on, as (from, to), in order.
pub fn record_transitions(b: &Breaker) -> Arc<Mutex<Vec<(State, State)>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    b.on_transition(move |t: &Transition| sink.lock().unwrap().push((t.from, t.to)))
        .forever();
    seen
}

/// The crates a user depends on or installs, in the order they can be published.
pub const PUBLISHED: [&str; 6] = [
    "breaker-options",
    "breaker-macros",
    "breaker-runtime",
    "breaker-consumer",
    "breaker-fleet",
    "breaker-replay",
];

/// The repository's root, where the workspace's manifest is.
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
