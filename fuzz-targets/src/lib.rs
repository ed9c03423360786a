//! What each fuzz target does with one input, as plain functions: `fuzz/` (cargo-fuzz, nightly)
//! calls them under libFuzzer, and `tests/corpora.rs` replays every committed input through
//! them on stable, so that CI keeps what the fuzzers found.
//!
//! A target fails by panicking: on a panic of the code under test, and on a property broken
//! (each target says which it checks beyond "does not crash").

#![deny(missing_docs)]

mod config_file;
mod consumer;
mod endpoint;
mod fleet;
mod news;
mod options;
mod trace;

pub use config_file::config_file;
pub use consumer::consumer;
pub use endpoint::endpoint;
pub use fleet::fleet;
pub use news::news;
pub use options::options;
pub use trace::trace;

/// What a target does with one input.
pub type Target = fn(&[u8]);

/// Every target, by the name its corpus folder has.
pub const TARGETS: [(&str, Target); 7] = [
    ("options", options),
    ("trace", trace),
    ("endpoint", endpoint),
    ("config_file", config_file),
    ("news", news),
    ("fleet", fleet),
    ("consumer", consumer),
];
