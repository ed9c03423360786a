//! RabbitMQ (AMQP 0-9-1) through `lapin` on tokio: a consumer cancelled while the circuit is
//! open, a prefetch that follows what the circuit admits, and the broker's own redelivery and
//! dead-lettering.

mod error;
mod held;
mod link;
mod message;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lapin::options::{BasicAckOptions, BasicRejectOptions};
use tokio::sync::Mutex;

use crate::source::{Delivery, Settlement, Source, Want};
pub use error::AmqpError;
use held::Held;
use link::{Link, next, ready};
use message::delivery_of;
pub use message::{Message, Tag};

/// A RabbitMQ queue consumed with `basic.consume`.
///
/// - **Flow** follows the circuit. Closed, the prefetch (`basic.qos`) is the consumer's
///   concurrency; half-open, it is the breaker's `probes`, so the broker itself never has more
///   than `probes` messages out to this consumer. Open, the consumer is cancelled
///   (`basic.cancel`) and every message the broker had already pushed and the handlers had not
///   taken goes back with `basic.nack` and `requeue`. A change of prefetch cancels and consumes
///   again, since RabbitMQ applies a consumer's prefetch when it starts.
/// - **Ack** is `basic.ack`. **Retry** is `basic.nack` with `requeue`: RabbitMQ returns the
///   message to the queue and flags it `redelivered`; with
///   [`redeliver_after`](Self::redeliver_after) the requeue waits that long. **Dead-letter** is `basic.reject`
///   without requeue: the message goes to the queue's dead-letter exchange
///   (`x-dead-letter-exchange`), or is dropped if it has none.
/// - **The maximum deliveries** are the broker's: a quorum queue with `x-delivery-limit`
///   dead-letters a message returned more often than that. The attempt number comes from the
///   quorum queue's `x-delivery-count` header, or from the `redelivered` flag on a classic
///   queue (2 for any redelivery, which is all it tells).
/// - **Probes take what the broker sends first**: AMQP cannot ask for fresh messages. Where a
///   returned message goes decides what that is. A quorum queue (RabbitMQ 3.x, as the tests
///   see it) returns it to the back, so each probe round takes other messages and no one
///   message collects the failed rounds of an outage. A classic queue puts it back in its
///   place, so a failed probe's message is the next probe; classic queues keep no delivery
///   limit, so that costs it nothing but its `redelivered` flag. Either way the break grows
///   after each failed round, so an outage of length `T` takes about
///   `log2(max_break / break) + T / max_break` rounds.
/// - **Losing the connection** fails the fetch; the consumer waits and tries again, and the
///   next fetch connects anew. The broker takes back every unsettled delivery of the lost
///   connection; settling one of those fails with [`AmqpError::ChannelClosed`], recorded
///   nowhere but in the consumer's `source_errors`.
///
/// It consumes a queue that exists (declared by whoever owns the topology); connecting checks
/// that it does. For `amqps://`, turn on one of `lapin`'s TLS features in your own manifest.
pub struct AmqpQueue {
    uri: String,
    queue: String,
    wait: Duration,
    link: Mutex<Link>,
    given_back: AtomicU64,
    held: Held,
}

impl AmqpQueue {
    /// Connects to `uri` (`amqp://user:password@host:port/vhost`) to consume `queue`, which
    /// must exist.
    pub async fn connect(uri: &str, queue: &str) -> Result<AmqpQueue, AmqpError> {
        let source = AmqpQueue {
            uri: uri.to_owned(),
            queue: queue.to_owned(),
            wait: Duration::from_secs(1),
            link: Mutex::new(Link {
                prefetch: 1,
                ..Link::default()
            }),
            given_back: AtomicU64::new(0),
            held: Held::default(),
        };
        source
            .link
            .lock()
            .await
            .connect(&source.uri, &source.queue)
            .await?;
        Ok(source)
    }

    /// The longest a fetch waits for a message to arrive (1 s by default).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// How long a retried delivery is held, unacknowledged, before it goes back to the queue
    /// (nothing by default: RabbitMQ's own way, at once). RabbitMQ hands a requeued message
    /// out again straight away, so without a delay a message that failed because the
    /// downstream just went down comes back and fails again, and may burn its delivery limit
    /// before the breaker has seen enough to open. A second or so lets the breaker judge on
    /// other messages first. A held delivery counts against the prefetch of the consumer it
    /// came to; [`close`](Self::close) sends every held one back at once.
    pub fn redeliver_after(mut self, delay: Duration) -> Self {
        self.held = Held::after(delay);
        self
    }

    /// The queue it consumes.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// Messages the broker had pushed that went back unhandled when the consumer was
    /// cancelled (a pause, or a change of prefetch): the prefetch caveat, counted. Each has
    /// had a delivery counted by the broker.
    pub fn given_back(&self) -> u64 {
        self.given_back.load(Ordering::Relaxed)
    }

    /// Sends back the retried deliveries it holds, stops consuming, gives back what the broker
    /// pushed that no handler took, and closes the connection. Deliveries still unsettled go
    /// back to the queue. Dropped without it, the same happens when the broker sees the
    /// connection go.
    pub async fn close(&self) -> Result<(), AmqpError> {
        self.held.flush().await;
        let mut link = self.link.lock().await;
        let Some((connection, channel)) = link.open.take() else {
            return Ok(());
        };
        // A channel or a connection the broker or the network closed already needs no cancel
        // or close of ours, and refuses one (lapin's `InvalidChannelState` and
        // `InvalidConnectionState`): the broker dropped the consumer and took back what it had
        // out when it closed them, which is what closing is for.
        let stopped = if channel.status().connected() {
            link.stop(&channel, &self.given_back).await
        } else {
            Ok(())
        };
        link.consumer = None;
        if connection.status().connected() {
            connection.close(200, "consumer closed").await?;
        }
        stopped
    }
}

impl Source for AmqpQueue {
    type Payload = Message;
    type Id = Tag;
    type Error = AmqpError;

    async fn fetch(&self, want: Want) -> Result<Vec<Delivery<Message, Tag>>, AmqpError> {
        let mut link = self.link.lock().await;
        let consuming = match link
            .consumer(&self.uri, &self.queue, &self.given_back)
            .await
        {
            Ok(consuming) => consuming,
            Err(error) => {
                link.lose();
                return Err(error);
            }
        };
        let Ok(first) = tokio::time::timeout(self.wait, next(&mut consuming.stream)).await else {
            return Ok(Vec::new());
        };
        let mut fetched = Vec::with_capacity(want.max);
        let mut arrived = Some(first);
        while let Some(item) = arrived {
            match item {
                Some(Ok(delivery)) => fetched.push(delivery_of(delivery)),
                // Cancelled by the broker (the queue was deleted, say): the next fetch
                // consumes again.
                None => {
                    link.consumer = None;
                    break;
                }
                // What was fetched before the failure is handed out all the same: settling it
                // fails, and the broker delivers it again.
                Some(Err(error)) => {
                    link.lose();
                    if fetched.is_empty() {
                        return Err(error.into());
                    }
                    break;
                }
            }
            if fetched.len() >= want.max {
                break;
            }
            arrived = match link.consumer.as_mut() {
                Some(consuming) => ready(&mut consuming.stream).await,
                None => None,
            };
        }
        Ok(fetched)
    }

    async fn settle(&self, id: Tag, settlement: Settlement) -> Result<(), AmqpError> {
        let Tag(acker) = id;
        let sent = match settlement {
            Settlement::Ack => acker.ack(BasicAckOptions::default()).await?,
            Settlement::Retry if self.held.delay().is_zero() => acker.nack(held::requeue()).await?,
            Settlement::Retry => {
                if !acker.usable() {
                    return Err(AmqpError::ChannelClosed);
                }
                self.held.requeue(acker);
                true
            }
            Settlement::DeadLetter => acker.reject(BasicRejectOptions { requeue: false }).await?,
        };
        if sent {
            Ok(())
        } else {
            Err(AmqpError::ChannelClosed)
        }
    }

    async fn pause(&self) -> Result<(), AmqpError> {
        let mut link = self.link.lock().await;
        let Some(channel) = link.open.as_ref().map(|(_, channel)| channel.clone()) else {
            return Ok(());
        };
        if link.stop(&channel, &self.given_back).await.is_err() {
            // A connection that failed delivers nothing and the broker takes back what it had
            // out: paused all the same. The next fetch connects anew.
            link.lose();
        }
        Ok(())
    }

    async fn resume(&self, in_flight: usize) -> Result<(), AmqpError> {
        let mut link = self.link.lock().await;
        link.prefetch = u16::try_from(in_flight).unwrap_or(u16::MAX).max(1);
        Ok(())
    }
}
