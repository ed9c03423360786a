//! How much of its recent traffic a breaker's flight recorder keeps.

use std::fmt;
use std::time::Duration;

/// What a breaker's flight recorder keeps: its calls of the last so long (at most the last
/// 20 000), or nothing.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{grammar, Record};
///
/// assert_eq!(grammar::record("30m"), Ok(Record::Last(Duration::from_secs(1_800))));
/// assert_eq!(grammar::record("off"), Ok(Record::Off));
/// assert_eq!(Record::DEFAULT, Record::Last(Duration::from_secs(600)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Record {
    /// Nothing is recorded, and nothing allocated for it.
    Off,
    /// The calls of this last span are kept (and at most the last 20 000 of them).
    Last(Duration),
}

impl Record {
    /// The process's default until it sets another: the last 10 minutes.
    pub const DEFAULT: Record = Record::Last(Duration::from_secs(600));

    /// The span kept, `None` when off.
    pub const fn span(self) -> Option<Duration> {
        match self {
            Record::Off => None,
            Record::Last(span) => Some(span),
        }
    }
}

impl Default for Record {
    fn default() -> Record {
        Record::DEFAULT
    }
}

impl fmt::Display for Record {
    /// As the attribute spells it: `off`, or the span in its largest whole unit (`10m`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Off => f.write_str("off"),
            Record::Last(span) => {
                let secs = span.as_secs();
                if span.subsec_nanos() != 0 {
                    write!(f, "{}ms", span.as_millis())
                } else if secs % 3_600 == 0 {
                    write!(f, "{}h", secs / 3_600)
                } else if secs % 60 == 0 {
                    write!(f, "{}m", secs / 60)
                } else {
                    write!(f, "{secs}s")
                }
            }
        }
    }
}
