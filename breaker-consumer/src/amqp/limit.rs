//! The queue's delivery limit as the consumer was told it, and the messages the broker
//! dead-lettered for it, counted from this side.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use lapin::BasicProperties;

use super::message::returns;

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
