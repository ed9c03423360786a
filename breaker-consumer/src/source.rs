//! What a broker must offer the consumer: fetch, settle, and (where the broker pushes) pause and
//! resume. Implement [`Source`] to add a broker.

use std::fmt;
use std::future::Future;

/// One message as the broker handed it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery<P, I> {
    /// The broker's handle on this delivery, to settle it with.
    pub id: I,
    /// Which delivery of the message this is: 1 the first time, 2 after one redelivery.
    pub attempt: u32,
    /// The message itself.
    pub payload: P,
}

/// What the consumer asks of one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Want {
    /// Hand out no more than this many deliveries (at least 1).
    pub max: usize,
    /// The deliveries will run as half-open probes. A source should prefer messages never
    /// delivered before: a probe tests the downstream, and a message that already failed may
    /// fail for its own reasons, and would carry every failed round of an outage to the dead
    /// letters.
    pub probes: bool,
}

impl Want {
    /// Up to `max` deliveries for closed-circuit handlers.
    pub fn up_to(max: usize) -> Want {
        Want {
            max: max.max(1),
            probes: false,
        }
    }

    /// Up to `max` deliveries to run as probes.
    pub fn probes(max: usize) -> Want {
        Want {
            max: max.max(1),
            probes: true,
        }
    }
}

/// The delivery a handler of source `S` receives: `DeliveryOf<RedisStream>` is
/// `Delivery<Fields, String>`, `DeliveryOf<AmqpQueue>` is `Delivery<Message, Tag>`. For a
/// handler closure written apart from [`Consumer::run`](crate::Consumer::run), whose argument
/// types Rust cannot infer from its body.
pub type DeliveryOf<S> = Delivery<<S as Source>::Payload, <S as Source>::Id>;

/// What one fetch of a source hands out.
pub type Deliveries<S> = Vec<Delivery<<S as Source>::Payload, <S as Source>::Id>>;

/// How a delivery ends on the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settlement {
    /// Handled: remove the message for good.
    Ack,
    /// Not handled this time: the broker delivers it again later, its own way (a requeue, a
    /// claim after an idle time), and counts the delivery against its maximum.
    Retry,
    /// Never handle it again: move it where dead letters go.
    DeadLetter,
}

/// A broker queue the consumer pulls from.
///
/// The consumer calls [`fetch`](Source::fetch) only when it has room for handlers and the
/// circuit admits calls, and asks for no more messages than it may run ([`Want`]): while the
/// circuit is open it does not call it at all. Every delivery it gets is settled exactly once, unless the
/// process dies first, in which case the broker's own redelivery applies.
///
/// A broker that pushes messages (AMQP) holds back by [`pause`](Source::pause), called before
/// the consumer sleeps through a break, and [`resume`](Source::resume) with the number of
/// messages it may hold unsettled. A broker that is pulled (Redis Streams, the in-memory
/// queue) keeps the defaults, which do nothing.
///
/// Errors are the connection's, never the handler's: the consumer logs them, waits with a
/// growing backoff and tries again, and records nothing in the breaker.
pub trait Source: Send + Sync + 'static {
    /// The message a handler receives.
    type Payload: Send + 'static;
    /// The broker's handle on one delivery.
    type Id: Clone + fmt::Debug + Send + Sync + 'static;
    /// What goes wrong talking to the broker.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Up to `want.max` deliveries. It may wait for messages to arrive, for a bounded time (a
    /// second or so), and then returns what it has, possibly nothing.
    fn fetch(
        &self,
        want: Want,
    ) -> impl Future<Output = Result<Deliveries<Self>, Self::Error>> + Send;

    /// Ends one delivery on the broker.
    fn settle(
        &self,
        id: Self::Id,
        settlement: Settlement,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The circuit opened: stop the broker from handing out messages, and give back any it
    /// already pushed. Called once per pause.
    fn pause(&self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        async { Ok(()) }
    }

    /// The circuit admits calls again: the broker may hand out up to `in_flight` messages at
    /// a time (the probes while half-open, the concurrency once closed).
    fn resume(&self, in_flight: usize) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = in_flight;
        async { Ok(()) }
    }

    /// Messages this source moved to the dead letters on its own, since it was built, for
    /// reaching the delivery limit: the consumer adds them to its
    /// [`Stats::limit_reached`](crate::Stats::limit_reached), so that its dead-letter count
    /// agrees with the broker's. A source whose broker dead-letters by itself counts what it
    /// can see of that (0 by default).
    fn limit_reached(&self) -> u64 {
        0
    }

    /// How long a delivery handed out and not settled stays with this consumer before the
    /// broker may hand it to another (Redis's idle time before a claim, a visibility
    /// timeout), if the broker takes it back on a timer. The consumer warns when a handler may
    /// run longer than that: the message would be handled twice at once. `None` (the
    /// default) for a broker that takes a delivery back only with its consumer's connection.
    fn claimed_after(&self) -> Option<std::time::Duration> {
        None
    }
}
