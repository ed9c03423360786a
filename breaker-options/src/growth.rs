//! How much longer each break gets after a failed probe.

use std::fmt;

/// The largest growth factor: past it, a second failed probe already reaches any sensible cap.
pub const MAX_BREAK_GROWTH: f64 = 10.0;

/// The factor a break is multiplied by after each failed probe in a row, up to
/// `max_break_duration`; kept in hundredths, so `1.5` and `2` are exact.
///
/// ```
/// use breaker_options::BreakGrowth;
///
/// assert_eq!(BreakGrowth::from_factor(1.5).unwrap().factor(), 1.5);
/// assert_eq!(BreakGrowth::DEFAULT.factor(), 2.0);
/// assert!(BreakGrowth::from_factor(0.5).is_none(), "a break never shrinks");
/// assert!(BreakGrowth::from_factor(11.0).is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BreakGrowth(u16);

impl BreakGrowth {
    /// Doubling: the default.
    pub const DEFAULT: BreakGrowth = BreakGrowth(200);

    /// The growth of `factor`, from 1 (no growth) to [`MAX_BREAK_GROWTH`], rounded to the
    /// hundredth; `None` outside.
    pub fn from_factor(factor: f64) -> Option<BreakGrowth> {
        if !(1.0..=MAX_BREAK_GROWTH).contains(&factor) {
            return None;
        }
        // In range, so the cast is exact: 100 to 1 000.
        Some(BreakGrowth((factor * 100.0).round() as u16))
    }

    /// The growth of `hundredths / 100`, for values already checked (100 to 1 000).
    #[doc(hidden)]
    pub const fn from_hundredths(hundredths: u16) -> BreakGrowth {
        BreakGrowth(hundredths)
    }

    /// The factor.
    pub fn factor(self) -> f64 {
        f64::from(self.0) / 100.0
    }

    /// The factor in hundredths: 200 for doubling.
    pub const fn hundredths(self) -> u16 {
        self.0
    }
}

impl Default for BreakGrowth {
    fn default() -> Self {
        BreakGrowth::DEFAULT
    }
}

impl fmt::Debug for BreakGrowth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BreakGrowth({}x)", self.factor())
    }
}
