//! How a fleet window is cut into time buckets: one per flush, so that a finished bucket holds
//! one share from every member.

use std::time::Duration;

/// The bucket `now` falls in, and how many finished buckets make up `span`. Buckets are
/// [`width`] wide.
pub(crate) fn buckets(now: Duration, span: Duration, bucket: Duration) -> (u64, u64) {
    let width = width(span, bucket).as_nanos().max(1);
    let current = u64::try_from(now.as_nanos() / width).unwrap_or(u64::MAX);
    let count = u64::try_from(span.as_nanos().div_ceil(width)).unwrap_or(MAX_BUCKETS);
    (current, count.clamp(1, MAX_BUCKETS))
}

/// How wide a bucket is: `bucket`, or wider for a span longer than [`MAX_BUCKETS`] of them.
pub(crate) fn width(span: Duration, bucket: Duration) -> Duration {
    let shortest = span.as_nanos().div_ceil(u128::from(MAX_BUCKETS));
    bucket.max(Duration::from_nanos(
        u64::try_from(shortest).unwrap_or(u64::MAX),
    ))
}

/// The most buckets a fleet window holds.
pub(crate) const MAX_BUCKETS: u64 = 600;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_cut_into_buckets_of_one_flush() {
        let (current, count) = buckets(
            Duration::from_millis(1_250),
            Duration::from_secs(10),
            Duration::from_millis(100),
        );
        assert_eq!((current, count), (12, 100));
    }

    #[test]
    fn a_long_span_gets_wider_buckets_not_a_shorter_window() {
        let span = Duration::from_secs(3600);
        let (_, count) = buckets(Duration::ZERO, span, Duration::from_millis(100));
        assert_eq!(count, MAX_BUCKETS);
        let (current, _) = buckets(Duration::from_secs(12), span, Duration::from_millis(100));
        assert_eq!(current, 2, "buckets of 6 s");
    }
}
