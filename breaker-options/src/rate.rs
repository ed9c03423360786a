//! A rate, written and read as a percentage, kept exactly.

use std::fmt;

const PARTS_PER_MILLION: u32 = 1_000_000;

/// A percentage, kept exactly (as millionths inside), so `33.3333%` means what it says. Every
/// rate in the public API reads and writes as a percentage: the builder's `threshold(50.0)`,
/// [`Rate::percent`], and a snapshot's `failure_rate`.
///
/// ```
/// use breaker_runtime::{Config, Rate};
///
/// let config = Config::builder().threshold(33.3333).build().unwrap();
/// assert_eq!(config.threshold().percent(), 33.3333);
/// assert_eq!(config.threshold().to_string(), "33.3333%");
/// // Four decimals are kept, and a fifth is rounded away.
/// assert_eq!(Rate::from_percent(33.33334), Some(config.threshold()));
/// assert_ne!(Rate::from_percent(33.3334), Some(config.threshold()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rate(u32);

/// `Rate(50%)`: the percentage, not the millionths it is kept in.
impl fmt::Debug for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rate({self})")
    }
}

impl Rate {
    /// The whole: 100%.
    pub const HUNDRED_PERCENT: Rate = Rate(PARTS_PER_MILLION);

    /// A rate from millionths (`500_000` is 50%), for the attribute's `const` expansion.
    #[doc(hidden)]
    pub const fn from_ppm(ppm: u32) -> Self {
        Rate(ppm)
    }

    /// The millionths this rate is kept in, for the attribute's expansion.
    #[doc(hidden)]
    pub const fn ppm(self) -> u32 {
        self.0
    }

    /// A rate from a percentage in (0, 100], rounded to four decimals; `None` outside.
    pub fn from_percent(percent: f64) -> Option<Self> {
        if !(percent > 0.0 && percent <= 100.0) {
            return None;
        }
        // In range (0, 100], so the product is in (0, 1e6] and the cast is exact after rounding.
        let ppm = (percent * 10_000.0).round() as u32;
        (ppm > 0).then_some(Rate(ppm))
    }

    /// The rate as a percentage.
    pub fn percent(self) -> f64 {
        f64::from(self.0) / 10_000.0
    }

    /// Whether `part` out of `whole` reaches this rate (`>=`), in exact integer arithmetic.
    ///
    /// ```
    /// use breaker_runtime::Rate;
    ///
    /// let half = Rate::from_percent(50.0).unwrap();
    /// assert!(half.reached_by(1, 2) && !half.reached_by(1, 3) && !half.reached_by(0, 0));
    /// ```
    pub fn reached_by(self, part: u32, whole: u32) -> bool {
        whole > 0
            && u64::from(part) * u64::from(PARTS_PER_MILLION)
                >= u64::from(self.0) * u64::from(whole)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.percent())
    }
}
