//! The queue's delivery limit as the consumer was told it, and the messages the broker
//! dead-lettered for it, counted from this side.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lapin::BasicProperties;
use lapin::types::AMQPValue;

/// The quorum queue's `x-delivery-limit`, if known, and how many deliveries at it went back.
/// Cheap to clone: the clones share the count.
#[derive(Debug, Clone, Default)]
pub(super) struct Limit {
    limit: Option<u32>,
    reached: Arc<AtomicU64>,
}

impl Limit {
    pub(super) fn new(limit: u32) -> Limit {
        Limit {
            limit: Some(limit),
            reached: Arc::default(),
        }
    }

    /// Whether the broker dead-letters this delivery instead of returning it to the queue,
    /// if it comes back: RabbitMQ counts each return in the message's `x-delivery-count`
    /// (absent before the first) and dead-letters a message whose count would pass the limit.
    pub(super) fn at(&self, properties: &BasicProperties) -> bool {
        self.limit
            .is_some_and(|limit| returns(properties).unwrap_or(0) >= limit)
    }

    /// A delivery went back to the broker (a requeue, or a channel that closed with it out):
    /// counted if it was at the limit.
    pub(super) fn returned(&self, at_limit: bool) {
        if at_limit {
            self.reached.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Deliveries at the limit that went back: the messages the broker dead-lettered.
    pub(super) fn reached(&self) -> u64 {
        self.reached.load(Ordering::Relaxed)
    }
}

/// The returns a quorum queue counted for this message (`x-delivery-count`), if it says.
pub(super) fn returns(properties: &BasicProperties) -> Option<u32> {
    properties
        .headers()
        .as_ref()
        .and_then(|headers| headers.inner().get("x-delivery-count"))
        .and_then(count)
}

fn count(value: &AMQPValue) -> Option<u32> {
    match value {
        AMQPValue::LongLongInt(n) => u32::try_from(*n).ok(),
        AMQPValue::LongInt(n) => u32::try_from(*n).ok(),
        AMQPValue::LongUInt(n) => Some(*n),
        AMQPValue::ShortInt(n) => u32::try_from(*n).ok(),
        AMQPValue::ShortUInt(n) => Some(u32::from(*n)),
        AMQPValue::ShortShortInt(n) => u32::try_from(*n).ok(),
        AMQPValue::ShortShortUInt(n) => Some(u32::from(*n)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lapin::types::{AMQPValue, FieldTable};

    fn arrived_with(count: Option<i64>) -> BasicProperties {
        let mut headers = FieldTable::default();
        if let Some(count) = count {
            headers.insert("x-delivery-count".into(), AMQPValue::LongLongInt(count));
        }
        BasicProperties::default().with_headers(headers)
    }

    #[test]
    fn without_a_limit_no_delivery_is_at_it() {
        assert!(!Limit::default().at(&arrived_with(Some(1_000))));
    }

    #[test]
    fn a_delivery_that_arrived_with_the_limit_or_more_is_at_it() {
        let limit = Limit::new(3);
        assert!(!limit.at(&arrived_with(None)), "the first delivery");
        assert!(!limit.at(&arrived_with(Some(2))));
        assert!(limit.at(&arrived_with(Some(3))), "its return is the fourth");
        assert!(limit.at(&arrived_with(Some(4))));
    }

    #[test]
    fn only_returns_at_the_limit_count_and_clones_share_the_count() {
        let limit = Limit::new(1);
        let held = limit.clone();
        limit.returned(false);
        limit.returned(true);
        held.returned(true);
        assert_eq!(limit.reached(), 2);
    }
}
