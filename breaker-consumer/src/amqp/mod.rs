//! RabbitMQ (AMQP 0-9-1) through `lapin` on tokio: a consumer cancelled while the circuit is
//! open, a prefetch that follows what the circuit admits, and the broker's own redelivery and
//! dead-lettering.

mod error;
mod held;
mod limit;
mod link;
mod message;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lapin::options::{BasicAckOptions, BasicRejectOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use tokio::sync::Mutex;

use crate::source::{Delivery, Settlement, Source, Want};
pub use error::AmqpError;
use held::Held;
use limit::Limit;
use link::{Link, Target, next, ready};
pub use message::{Message, Tag};
use message::{delivery_of, sent};

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
/// - **Dead letters are counted on every path** once the consumer knows the queue's limit
///   ([`delivery_limit`](Self::delivery_limit)): those of the handler's word in the consumer's
///   `Stats::dead_lettered`, those of the broker's limit in `Stats::limit_reached`, so that
///   `Stats::dead_letters()` agrees with the dead-letter queue. The rule, as RabbitMQ 3.10
///   keeps it (and the tests measure it): with `x-delivery-limit` N, a message is delivered
///   N + 1 times; `x-delivery-count` is absent on its first delivery to a consumer (a
///   `basic.get` says 0), then 1, 2, ... N; every return adds one (a requeue, a message given
///   back at a pause, and one left unsettled on a channel or connection that closes alike),
///   and the return that takes it past N dead-letters it instead. So a delivery that arrived
///   with `x-delivery-count` N or more and goes back, however, is counted as reached. A
///   delivery at the limit still out when the process dies is dead-lettered by the broker
///   uncounted: no one is left to count it.
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
///   connection; settling one of those fails with [`AmqpError::ChannelClosed`], at once,
///   recorded nowhere but in the consumer's `source_errors`. (lapin 3.7 was seen never to
///   answer a settlement asked after the connection dropped during a pause, so the channel is
///   checked first, and every settlement is bounded at 10 s, [`AmqpError::Unanswered`]: a
///   handler in flight when the connection drops frees its slot.)
/// - **The queue going away** is waited out, never the end of the consumer. A queue deleted
///   (`rabbitmqctl delete_queue`, a `queue.delete` by its owner) cancels the consumer
///   (`basic.cancel` from the broker); a queue that is not durable is gone after a restart of
///   the node, which also drops the connection. Each fetch then fails with
///   [`AmqpError::NoQueue`] ("the queue ... does not exist"), which the consumer counts in its
///   `source_errors` and backs off on (100 ms doubling to 10 s), its status `Degraded` with
///   that reason; the first fetch after the queue exists again consumes it, without a restart
///   of the process. Messages published while the queue did not exist were routed nowhere: they are
///   the publisher's to send again.
///
/// Who declares the queue is the user's choice. [`connect`](Self::connect) consumes a queue
/// declared by whoever owns the topology: it checks that the queue exists (a passive declare)
/// on every connection, and while it does not, waits (erroring, as above) until the owner
/// declares it again: the consumer never makes a queue whose arguments (type, limit,
/// dead-letter exchange) it does not know. [`declare`](Self::declare) is for a consumer that
/// owns its queue: it declares it, with the arguments given, on every connection and after
/// the broker cancels it, so that a deleted queue, or a non-durable one lost with a restart
/// of the node, comes back by itself. For `amqps://`, turn on one of `lapin`'s TLS features in
/// your own manifest.
pub struct AmqpQueue {
    target: Target,
    wait: Duration,
    link: Mutex<Link>,
    given_back: AtomicU64,
    held: Held,
    limit: Limit,
}

impl AmqpQueue {
    /// Connects to `uri` (`amqp://user:password@host:port/vhost`) to consume `queue`, which
    /// must exist: declared by whoever owns the topology. A queue that goes away later
    /// (deleted, or gone with a restart of the node) is waited for: see the type's docs.
    pub async fn connect(uri: &str, queue: &str) -> Result<AmqpQueue, AmqpError> {
        AmqpQueue::open(uri, queue, None).await
    }

    /// Connects to `uri` to consume `queue`, declaring it with `options` and `arguments`
    /// (`x-queue-type`, `x-delivery-limit`, `x-dead-letter-exchange`...) first, and again on
    /// every connection after a lost one or a cancel by the broker: a queue that is not
    /// durable, gone with a restart of the node, or one deleted, comes back by itself. The
    /// declaration must match the queue's if it exists (RabbitMQ refuses a declare whose
    /// arguments differ with `406 PRECONDITION_FAILED`, which fails here).
    pub async fn declare(
        uri: &str,
        queue: &str,
        options: QueueDeclareOptions,
        arguments: FieldTable,
    ) -> Result<AmqpQueue, AmqpError> {
        AmqpQueue::open(uri, queue, Some((options, arguments))).await
    }

    async fn open(
        uri: &str,
        queue: &str,
        declare: Option<(QueueDeclareOptions, FieldTable)>,
    ) -> Result<AmqpQueue, AmqpError> {
        let source = AmqpQueue {
            target: Target {
                uri: uri.to_owned(),
                queue: queue.to_owned(),
                declare,
            },
            wait: Duration::from_secs(1),
            link: Mutex::new(Link {
                prefetch: 1,
                ..Link::default()
            }),
            given_back: AtomicU64::new(0),
            held: Held::default(),
            limit: Limit::default(),
        };
        source.link.lock().await.connect(&source.target).await?;
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

    /// The queue's `x-delivery-limit`, so that the consumer's count of dead letters agrees
    /// with the broker's: a delivery that arrives with `x-delivery-count` at `limit` or more
    /// and goes back (a [`Settlement::Retry`], given back at a pause, or left out when its
    /// channel closes) is dead-lettered by RabbitMQ, and counted in
    /// [`limit_reached`](Source::limit_reached). Without it (by default) those are not counted.
    pub fn delivery_limit(mut self, limit: u32) -> Self {
        self.limit = Limit::new(limit);
        self
    }

    /// The queue it consumes.
    pub fn queue(&self) -> &str {
        &self.target.queue
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
            link.stop(&channel, &self.limit, &self.given_back).await
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
            .consumer(&self.target, &self.limit, &self.given_back)
            .await
        {
            Ok(consuming) => consuming,
            Err(error) => {
                link.lose();
                return Err(error);
            }
        };
        let channel = consuming.channel.clone();
        let Ok(first) = tokio::time::timeout(self.wait, next(&mut consuming.stream)).await else {
            return Ok(Vec::new());
        };
        let mut fetched = Vec::with_capacity(want.max);
        let mut arrived = Some(first);
        while let Some(item) = arrived {
            match item {
                Some(Ok(delivery)) => fetched.push(delivery_of(delivery, &channel, &self.limit)),
                // Cancelled by the broker (the queue was deleted, say): the next fetch checks
                // the queue (or declares it) and consumes again.
                None => {
                    link.cancelled_by_broker();
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

    async fn settle(&self, tag: Tag, settlement: Settlement) -> Result<(), AmqpError> {
        let (channel, at_limit) = (&tag.channel, tag.at_limit);
        let sent = match settlement {
            Settlement::Ack => sent(channel, tag.acker.ack(BasicAckOptions::default())).await,
            Settlement::Retry if self.held.delay().is_zero() => {
                sent(channel, tag.acker.nack(held::requeue())).await
            }
            Settlement::Retry if tag.acker.usable() && channel.connected() => {
                // Counted when it goes back.
                self.held.requeue(tag, &self.limit);
                return Ok(());
            }
            Settlement::Retry => Ok(false),
            Settlement::DeadLetter => {
                let reject = BasicRejectOptions { requeue: false };
                sent(channel, tag.acker.reject(reject)).await
            }
        };
        // Back to the queue: requeued, or, failed, left out on a channel that closed (the
        // broker returns what was out on it).
        let returned = settlement == Settlement::Retry || !matches!(sent, Ok(true));
        self.limit.returned(at_limit && returned);
        match sent {
            Ok(true) => Ok(()),
            Ok(false) => Err(AmqpError::ChannelClosed),
            Err(error) => Err(error),
        }
    }

    async fn pause(&self) -> Result<(), AmqpError> {
        let mut link = self.link.lock().await;
        let Some(channel) = link.open.as_ref().map(|(_, channel)| channel.clone()) else {
            return Ok(());
        };
        if link
            .stop(&channel, &self.limit, &self.given_back)
            .await
            .is_err()
        {
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

    fn limit_reached(&self) -> u64 {
        self.limit.reached()
    }
}
