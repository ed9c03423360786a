//! A queue consumer that stops pulling while its circuit breaker is open.
//!
//! A worker whose downstream is down takes a message, fails it, and burns one delivery
//! attempt; after the queue's maximum deliveries the message is dead-lettered though nothing
//! was wrong with it. A [`Consumer`] pulls through a [`Breaker`](breaker_runtime::Breaker):
//! while the circuit is open it fetches nothing, so messages stay on the queue untouched, in
//! order, with no delivery counted; half-open, a few real messages go through as probes;
//! closed, full concurrency is back.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use breaker_consumer::{Consumer, Failure, Handled, MemoryQueue};
//! use breaker_runtime::{Breaker, Config, IsFailure};
//! use tokio_util::sync::CancellationToken;
//!
//! #[derive(Debug, thiserror::Error, IsFailure)]
//! enum ShipError {
//!     #[error("the carrier API is down")]
//!     Unavailable,
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let queue = MemoryQueue::new(5);
//! for order in 0..100 {
//!     queue.publish(order);
//! }
//! let breaker = Arc::new(Breaker::new(
//!     Config::builder().count_window(10).break_duration(Duration::from_secs(30)).build().unwrap(),
//! ));
//! let consumer = Consumer::builder(queue.clone(), breaker).concurrency(4).build();
//!
//! let shutdown = CancellationToken::new();
//! let stop = shutdown.clone();
//! let outage_ends = tokio::time::Instant::now() + Duration::from_secs(60);
//! let worker = consumer.run(
//!     move |delivery, _cancelled| async move {
//!         if tokio::time::Instant::now() < outage_ends {
//!             return Err(Failure::Retry(ShipError::Unavailable));
//!         }
//!         let _ = delivery.payload; // ship it
//!         Ok(Handled::Done)
//!     },
//!     shutdown,
//! );
//! let watcher = async {
//!     while queue.stats().acked < 100 {
//!         tokio::time::sleep(Duration::from_secs(1)).await;
//!     }
//!     stop.cancel();
//! };
//! let (stats, ()) = tokio::join!(worker, watcher);
//! assert!(queue.dead_letters().is_empty(), "nothing dead-lettered for the outage");
//! assert!(stats.pauses >= 1);
//! # }
//! ```
//!
//! # The handler's shape
//!
//! A handler is `Fn(Delivery<Payload, Id>, CancellationToken) -> impl Future<Output =
//! Result<Handled, Failure<E>>>`, with `E` the handler's error (an
//! [`IsFailure`](breaker_runtime::IsFailure)). Written inline in [`Consumer::run`], as above,
//! its argument types come from the source and its error from what it returns. Rust needs them written in two cases: a closure kept in a
//! variable before it is passed (name the delivery with [`DeliveryOf`]), and a handler that
//! never returns an error (name its error type on the `Ok`):
//!
//! ```
//! # use std::sync::Arc;
//! # use breaker_consumer::{Consumer, DeliveryOf, Failure, Handled, MemoryQueue};
//! # use breaker_runtime::{Breaker, Config, IsFailure};
//! # use tokio_util::sync::CancellationToken;
//! # #[derive(Debug, thiserror::Error, IsFailure)]
//! # #[error("the carrier API is down")]
//! # struct ShipError;
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! # let queue = MemoryQueue::<u32>::new(5);
//! # let consumer = Consumer::builder(queue, Arc::new(Breaker::new(Config::default()))).build();
//! # let shutdown = CancellationToken::new();
//! # shutdown.cancel();
//! let log_only = |delivery: DeliveryOf<MemoryQueue<u32>>, _cancelled| async move {
//!     println!("order {}", delivery.payload);
//!     Ok::<_, Failure<ShipError>>(Handled::Done)
//! };
//! consumer.run(log_only, shutdown).await;
//! # }
//! ```
//!
//! # What counts
//!
//! The handler answers [`Handled::Done`] (a success), [`Handled::Skipped`] (answered without
//! the downstream: no handler for the type, a duplicate; recorded neither way), or a
//! [`Failure`]. A [`Failure::Retry`] (what `?` makes of the handler's error) counts as its
//! [`IsFailure`](breaker_runtime::IsFailure) says, so a business error (declined, not found)
//! counts as the downstream answering; an error whose `source()` chain holds a type given to
//! [`exclude`](ConsumerBuilder::exclude) records nothing. A [`Failure::Permanent`] (poison: the
//! message can never succeed) records nothing unless
//! [`count_permanent`](ConsumerBuilder::count_permanent) is set. A handler that outlives the
//! breaker's timeout is a failure. A handler that panics has a bug, or met a message it cannot
//! take, which says nothing about the downstream: its message is dead-lettered, nothing is
//! recorded, and a `warn` names the delivery and the panic's message (NimBus's rule: a poison
//! message does not mean a failing dependency);
//! [`count_panics`](ConsumerBuilder::count_panics) makes a panic the downstream's failure and
//! sends the message back instead. A handler whose [`CancellationToken`] fired
//! (the circuit opened while it ran) and that then returns an error has honoured it: nothing is
//! recorded.
//!
//! # How each delivery is settled
//!
//! | the handler | the breaker records | the broker is told |
//! |---|---|---|
//! | `Ok(Handled::Done)` | success | ack |
//! | `Ok(Handled::Skipped)` | nothing | ack |
//! | `Err(Failure::Retry(e))` | as `e.is_failure()` says, or nothing if excluded | retry (redelivery, counted against the broker's maximum) |
//! | `Err(Failure::Permanent(e))` | nothing (or as `e` says, with `count_permanent`) | dead-letter |
//! | any error after its token fired | nothing | retry |
//! | panicked | nothing (failure, with `count_panics`) | dead-letter (retry, with `count_panics`) |
//! | outlived the timeout | failure | retry |
//!
//! A message that arrives after the circuit opened, between the fetch and its admission, goes
//! back unhandled with nothing recorded (`Stats::released`).
//!
//! # Losing the broker
//!
//! A broker that does not answer is not a downstream failure: the consumer logs it, waits
//! (100 ms doubling to 10 s) and tries again, and records nothing in the breaker; meanwhile
//! [`Consumer::status`] is [`Status::Degraded`] with the error, so that a health check does
//! not call a consumer that handles nothing healthy. A settlement
//! that fails leaves the delivery with the broker, which hands it out again its own way, so a
//! message may be handled twice but is never lost: handlers should be idempotent, as with any
//! at-least-once queue.
//!
//! # The prefetch caveat
//!
//! A message fetched before a pause has had its delivery counted, even if it then goes back
//! unhandled. The consumer fetches no more than it can run at once, so that is at most
//! `concurrency` messages per opening. A broker that pushes (RabbitMQ) sends up to its
//! prefetch ahead of the handlers; [`amqp::AmqpQueue`] keeps the prefetch at what the circuit
//! admits and gives back, with a requeue, what was pushed and not taken when it pauses: those
//! too have had a delivery counted, and are at most `concurrency` per opening.
//!
//! # Brokers
//!
//! [`MemoryQueue`] is always there. The `redis` feature brings [`redis::RedisStream`] (Redis
//! Streams consumer groups), the `amqp` feature [`amqp::AmqpQueue`] (RabbitMQ, through
//! `lapin` on tokio).
//!
//! # Adding a broker
//!
//! Implement [`Source`]: `fetch` what a [`Want`] asks (waiting a bounded time for messages,
//! and preferring fresh ones for probes),
//! `settle` one as [`Settlement::Ack`], [`Settlement::Retry`] or [`Settlement::DeadLetter`]
//! the broker's way, and, for a broker that pushes messages, `pause` and `resume`. The
//! [`MemoryQueue`] is the model: read it first; `AmqpQueue` shows a broker that pushes.

#![deny(missing_docs)]
// On docs.rs every feature is documented, each gated item marked with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "amqp")]
pub mod amqp;
mod backoff;
mod builder;
mod consumer;
mod flow;
mod handling;
#[cfg(feature = "json")]
pub mod json;
mod memory;
mod metrics;
mod openings;
#[cfg(feature = "redis")]
pub mod redis;
mod reply;
mod source;
mod stats;
mod status;
mod trouble;
mod unwind;

pub use builder::ConsumerBuilder;
pub use consumer::Consumer;
pub use memory::{Disconnected, MemoryQueue, QueueStats};
pub use reply::{Failure, Handled};
pub use source::{Deliveries, Delivery, DeliveryOf, Settlement, Source, Want};
pub use stats::Stats;
pub use status::Status;
pub use tokio_util::sync::CancellationToken;
