//! The consumer's own instruments, through the `metrics` facade (feature `metrics`): whether
//! its source fails, and how often. Without the feature these do nothing.

/// `breaker_consumer_degraded{consumer}`: 1 while the source's fetches fail, 0 otherwise.
/// The reason is in [`Consumer::status`](crate::Consumer::status) and the log, not in a
/// label: an error's text would make a new series of every message.
pub(crate) fn degraded(consumer: &str, degraded: bool) {
    #[cfg(feature = "metrics")]
    ::metrics::gauge!("breaker_consumer_degraded", "consumer" => consumer.to_owned())
        .set(if degraded { 1.0 } else { 0.0 });
    #[cfg(not(feature = "metrics"))]
    let _ = (consumer, degraded);
}

/// `breaker_consumer_source_errors_total{consumer}`: every failed call to the broker's fetch.
pub(crate) fn source_error(consumer: &str) {
    #[cfg(feature = "metrics")]
    ::metrics::counter!("breaker_consumer_source_errors_total", "consumer" => consumer.to_owned())
        .increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = consumer;
}
