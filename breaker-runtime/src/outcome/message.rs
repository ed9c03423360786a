//! A failure's words, borrowed from the value that failed: what the breaker keeps as the
//! failure that opened the circuit, read only when a failure is recorded.

use std::fmt;

/// A failure's words, as the most telling trait the type has.
pub enum Message<'a> {
    /// By `Display`.
    Display(&'a dyn fmt::Display),
    /// By `Debug`.
    Debug(&'a dyn fmt::Debug),
}

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Display(message) => message.fmt(f),
            Message::Debug(message) => write!(f, "{message:?}"),
        }
    }
}
