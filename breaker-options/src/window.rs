//! The window a breaker judges its rates over.

use std::fmt;
use std::time::Duration;

/// The window of recorded outcomes the failure rate is judged over: how much it holds. A time
/// window slides unless its [`WindowKind`] is fixed.
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

/// How a time window lets outcomes go: a little at a time, or all at once at each edge.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::{Config, WindowKind};
///
/// let fixed = Config::builder().fixed_window(Duration::from_secs(60)).build().unwrap();
/// assert_eq!(fixed.window_kind(), WindowKind::Fixed);
/// assert_eq!(fixed.window().to_string(), "last 60s");
/// assert_eq!(Config::builder().build().unwrap().window_kind(), WindowKind::Sliding);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WindowKind {
    /// The window moves with the clock, a tenth of its span at a time, and always holds about
    /// the last span's outcomes (the default; Resilience4j's sliding windows).
    #[default]
    Sliding,
    /// The window's counts all clear at each edge of an interval as long as its span, the
    /// edges on the process's clock: it holds what the current interval recorded so far
    /// (gobreaker's `Interval`, Polly's sampling duration). A time window only.
    Fixed,
}

impl WindowKind {
    /// The kind as the attribute spells it: `"sliding"` or `"fixed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WindowKind::Sliding => "sliding",
            WindowKind::Fixed => "fixed",
        }
    }
}

impl fmt::Display for WindowKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
