//! Requeues held back for a while: RabbitMQ hands a requeued message out again at once, and a
//! message that failed because the downstream went down would come straight back and fail
//! again, burning its deliveries before the breaker has seen enough to open.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lapin::options::BasicNackOptions;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::limit::Limit;
use super::message::{Tag, sent};

/// Requeues waiting for their time.
#[derive(Default)]
pub(super) struct Held {
    after: Duration,
    flush: CancellationToken,
    waiting: Mutex<JoinSet<()>>,
}

impl Held {
    pub(super) fn after(after: Duration) -> Held {
        Held {
            after,
            ..Held::default()
        }
    }

    pub(super) fn delay(&self) -> Duration {
        self.after
    }

    /// Requeues the delivery once `after` has passed, or at once on [`flush`](Self::flush).
    /// The delivery stays unacknowledged until then, so the broker counts it against the
    /// prefetch of the consumer it came to. One at the delivery limit is counted in `limit`
    /// when it goes back (by the requeue, or by its channel's closing meanwhile).
    pub(super) fn requeue(&self, tag: Tag, limit: &Limit) {
        let limit = limit.clone();
        let (after, flush) = (self.after, self.flush.clone());
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        while waiting.try_join_next().is_some() {}
        waiting.spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(after) => {}
                () = flush.cancelled() => {}
            }
            // A channel that closed meanwhile has given the message back already.
            match sent(&tag.channel, tag.acker.nack(requeue())).await {
                Ok(true) => {}
                Ok(false) => tracing::debug!("a held requeue found its channel closed"),
                Err(error) => tracing::debug!(%error, "a held requeue failed"),
            }
            limit.returned(tag.at_limit);
        });
    }

    /// Requeues everything held, now, and waits until it is sent.
    pub(super) async fn flush(&self) {
        self.flush.cancel();
        let waiting =
            std::mem::take(&mut *self.waiting.lock().unwrap_or_else(PoisonError::into_inner));
        waiting.join_all().await;
    }
}

/// `basic.nack` of one delivery, back to the queue.
pub(super) fn requeue() -> BasicNackOptions {
    BasicNackOptions {
        multiple: false,
        requeue: true,
    }
}
