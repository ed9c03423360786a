//! The window a breaker judges its rates over.

use std::fmt;
use std::time::Duration;

/// The sliding window of recorded outcomes the failure rate is judged over.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, Window};
///
/// let by_count = Config::builder().count_window(100).build().unwrap();
/// assert_eq!(by_count.window(), Window::Count(100));
/// let by_time = Config::builder().time_window(Duration::from_secs(60)).build().unwrap();
/// assert_eq!(by_time.window().to_string(), "last 60s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Window {
    /// The last `n` recorded outcomes.
    Count(u32),
    /// Every outcome recorded in the last `d` (and none older than `d + d/10`).
    Time(Duration),
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::Count(n) => write!(f, "last {n} calls"),
            Window::Time(d) => write!(f, "last {d:?}"),
        }
    }
}
