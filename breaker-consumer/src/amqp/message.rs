//! What a delivery carries to the handler, and the handle it is settled with.

use std::future::Future;
use std::time::Duration;

use lapin::acker::Acker;
use lapin::{BasicProperties, ChannelStatus};

use super::AmqpError;
use super::limit::{Limit, returns};
use crate::source::Delivery;

/// The longest a settlement (`basic.ack`, `nack`, `reject`) waits to be sent. lapin 3.7 was
/// seen never to answer an ack asked after the broker closed the connection, on a channel whose
/// consumer had been cancelled (a pause): the handler held its slot for good, and a shutdown
/// waited on it. The channel's state is checked first; this bounds what that check misses.
const SETTLE_WITHIN: Duration = Duration::from_secs(10);

/// Sends a settlement of a delivery that came on `channel`: `Ok(true)` once sent, `Ok(false)`
/// if the channel has closed (the broker took the delivery back with it).
pub(super) async fn sent(
    channel: &ChannelStatus,
    settlement: impl Future<Output = lapin::Result<bool>>,
) -> Result<bool, AmqpError> {
    if !channel.connected() {
        return Ok(false);
    }
    match tokio::time::timeout(SETTLE_WITHIN, settlement).await {
        Ok(answer) => Ok(answer?),
        Err(_) => Err(AmqpError::Unanswered),
    }
}

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
#[derive(Debug, Clone)]
pub struct Tag {
    pub(super) acker: Acker,
    /// The channel it came on, as lapin sees it.
    pub(super) channel: ChannelStatus,
    /// The broker dead-letters this delivery if it goes back: it is at the queue's delivery
    /// limit.
    pub(super) at_limit: bool,
}

pub(super) fn delivery_of(
    delivery: lapin::message::Delivery,
    channel: &ChannelStatus,
    limit: &Limit,
) -> Delivery<Message, Tag> {
    Delivery {
        attempt: attempt(&delivery.properties, delivery.redelivered),
        id: Tag {
            at_limit: limit.at(&delivery.properties),
            channel: channel.clone(),
            acker: delivery.acker,
        },
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
    match returns(properties) {
        Some(before) => before.saturating_add(1),
        None if redelivered => 2,
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lapin::types::{AMQPValue, FieldTable};

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
