//! RabbitMQ (AMQP 0-9-1) through `lapin` on tokio: a consumer cancelled while the circuit is
//! open, a prefetch that follows what the circuit admits, and the broker's own redelivery and
//! dead-lettering.

use std::fmt;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use futures_core::Stream;
use lapin::options::{
    BasicCancelOptions, BasicConsumeOptions, BasicNackOptions, BasicQosOptions, BasicRejectOptions,
    QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use tokio::sync::Mutex;

use crate::source::{Delivery, Settlement, Source, Want};

/// One message as RabbitMQ delivered it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Message {
    /// The body.
    pub body: Vec<u8>,
    /// Its properties and headers.
    pub properties: BasicProperties,
    /// The exchange it was published to (empty for the default exchange).
    pub exchange: String,
    /// The routing key it was published with.
    pub routing_key: String,
    /// Whether the broker delivered it before (the AMQP `redelivered` flag).
    pub redelivered: bool,
}

/// The handle to settle one delivery with: it belongs to the channel the delivery came on.
#[derive(Clone)]
pub struct Tag(lapin::acker::Acker);

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("amqp::Tag")
    }
}

/// What goes wrong talking to RabbitMQ.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AmqpError {
    /// The broker or the connection failed.
    #[error(transparent)]
    Broker(#[from] lapin::Error),
    /// The delivery came on a channel that has closed since: the broker has already taken it
    /// back and delivers it again.
    #[error("the delivery's channel closed; the broker delivers the message again")]
    ChannelClosed,
}

/// A RabbitMQ queue consumed with `basic.consume`.
///
/// - **Flow** follows the circuit. Closed, the prefetch (`basic.qos`) is the consumer's
///   concurrency; half-open, it is the breaker's `probes`, so the broker itself never has more
///   than `probes` messages out to this consumer. Open, the consumer is cancelled
///   (`basic.cancel`) and every message the broker had already pushed and the handlers had not
///   taken goes back with `basic.nack` and `requeue`. A change of prefetch cancels and consumes
///   again, since RabbitMQ applies a consumer's prefetch when it starts.
/// - **Ack** is `basic.ack`. **Retry** is `basic.nack` with `requeue`: RabbitMQ returns the
///   message to the queue and flags it `redelivered`. **Dead-letter** is `basic.reject`
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
}

/// The connection, and the consumer while flowing. Only the consumer loop takes it (fetch,
/// pause, resume are never concurrent); settling goes through each delivery's own handle.
#[derive(Default)]
struct Link {
    open: Option<(Connection, Channel)>,
    consumer: Option<Consuming>,
    prefetch: u16,
}

struct Consuming {
    stream: lapin::Consumer,
    prefetch: u16,
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

    /// Stops consuming, gives back what the broker pushed that no handler took, and closes the
    /// connection. Deliveries still unsettled go back to the queue.
    pub async fn close(&self) -> Result<(), AmqpError> {
        let mut link = self.link.lock().await;
        let Some((connection, channel)) = link.open.take() else {
            return Ok(());
        };
        let stopped = link.stop(&channel, &self.given_back).await;
        link.consumer = None;
        connection.close(200, "consumer closed").await?;
        stopped
    }
}

impl Link {
    /// A fresh connection and channel, after checking that the queue exists.
    async fn connect(&mut self, uri: &str, queue: &str) -> Result<Channel, AmqpError> {
        self.consumer = None;
        let properties = ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio::current());
        let connection = Connection::connect(uri, properties).await?;
        let channel = connection.create_channel().await?;
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        channel
            .queue_declare(queue, passive, FieldTable::default())
            .await?;
        self.open = Some((connection, channel.clone()));
        Ok(channel)
    }

    /// The channel, connecting again if the last one was lost.
    async fn channel(&mut self, uri: &str, queue: &str) -> Result<Channel, AmqpError> {
        match &self.open {
            Some((connection, channel))
                if connection.status().connected() && channel.status().connected() =>
            {
                Ok(channel.clone())
            }
            _ => self.connect(uri, queue).await,
        }
    }

    /// The consumer at the prefetch wanted now, started (again) if needed.
    async fn consumer(
        &mut self,
        uri: &str,
        queue: &str,
        given_back: &AtomicU64,
    ) -> Result<&mut Consuming, AmqpError> {
        let channel = self.channel(uri, queue).await?;
        match self.consumer.take() {
            Some(current) if current.prefetch == self.prefetch => {
                return Ok(self.consumer.insert(current));
            }
            Some(stale) => stale.cancel(&channel, given_back).await?,
            None => {}
        }
        channel
            .basic_qos(self.prefetch, BasicQosOptions::default())
            .await?;
        let stream = channel
            .basic_consume(
                queue,
                "",
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await?;
        Ok(self.consumer.insert(Consuming {
            stream,
            prefetch: self.prefetch,
        }))
    }

    /// Stops consuming, if it was.
    async fn stop(&mut self, channel: &Channel, given_back: &AtomicU64) -> Result<(), AmqpError> {
        match self.consumer.take() {
            Some(consuming) => consuming.cancel(channel, given_back).await,
            None => Ok(()),
        }
    }

    /// Forgets a connection that failed; the next fetch connects anew.
    fn lose(&mut self) {
        self.open = None;
        self.consumer = None;
    }
}

impl Consuming {
    /// Cancels the consumer and gives back what the broker pushed that no handler took.
    async fn cancel(mut self, channel: &Channel, given_back: &AtomicU64) -> Result<(), AmqpError> {
        let tag = self.stream.tag();
        channel
            .basic_cancel(tag.as_str(), BasicCancelOptions::default())
            .await?;
        // The broker sends nothing after its cancel-ok: what is buffered now is all there is.
        while let Some(Some(Ok(delivery))) = ready(&mut self.stream).await {
            delivery
                .acker
                .nack(BasicNackOptions {
                    multiple: false,
                    requeue: true,
                })
                .await?;
            given_back.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
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
            Settlement::Ack => {
                acker
                    .ack(lapin::options::BasicAckOptions::default())
                    .await?
            }
            Settlement::Retry => {
                acker
                    .nack(BasicNackOptions {
                        multiple: false,
                        requeue: true,
                    })
                    .await?
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

/// The next delivery, waiting for it.
async fn next(stream: &mut lapin::Consumer) -> Option<lapin::Result<lapin::message::Delivery>> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

/// The next delivery if one is there now (`Some(None)` once the consumer is cancelled), or
/// `None` if nothing is buffered.
async fn ready(
    stream: &mut lapin::Consumer,
) -> Option<Option<lapin::Result<lapin::message::Delivery>>> {
    poll_fn(|cx| match Pin::new(&mut *stream).poll_next(cx) {
        Poll::Ready(item) => Poll::Ready(Some(item)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}

fn delivery_of(delivery: lapin::message::Delivery) -> Delivery<Message, Tag> {
    Delivery {
        attempt: attempt(&delivery.properties, delivery.redelivered),
        id: Tag(delivery.acker),
        payload: Message {
            body: delivery.data,
            properties: delivery.properties,
            exchange: delivery.exchange.to_string(),
            routing_key: delivery.routing_key.to_string(),
            redelivered: delivery.redelivered,
        },
    }
}

/// Which delivery this is: a quorum queue counts earlier deliveries in `x-delivery-count`; a
/// classic queue only says whether there was one.
fn attempt(properties: &BasicProperties, redelivered: bool) -> u32 {
    let counted = properties
        .headers()
        .as_ref()
        .and_then(|headers| headers.inner().get("x-delivery-count"))
        .and_then(count);
    match counted {
        Some(before) => before.saturating_add(1),
        None if redelivered => 2,
        None => 1,
    }
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

    fn with_count(value: AMQPValue) -> BasicProperties {
        let mut headers = FieldTable::default();
        headers.insert("x-delivery-count".into(), value);
        BasicProperties::default().with_headers(headers)
    }

    #[test]
    fn a_quorum_queue_counts_earlier_deliveries_in_a_header() {
        assert_eq!(attempt(&with_count(AMQPValue::LongLongInt(3)), true), 4);
        assert_eq!(attempt(&with_count(AMQPValue::LongInt(0)), false), 1);
    }

    #[test]
    fn a_classic_queue_only_says_whether_it_delivered_before() {
        assert_eq!(attempt(&BasicProperties::default(), false), 1);
        assert_eq!(attempt(&BasicProperties::default(), true), 2);
    }

    #[test]
    fn a_count_that_is_no_number_falls_back_to_the_flag() {
        let odd = with_count(AMQPValue::LongString("three".into()));
        assert_eq!(attempt(&odd, true), 2);
        assert_eq!(attempt(&with_count(AMQPValue::LongLongInt(-1)), false), 1);
    }
}
