//! Messages decoded from JSON into the handler's own type (feature `json`), so that a handler
//! takes an `Order`, not a map of raw bytes. A message that does not decode can never succeed:
//! it is poison, dead-lettered without reaching the handler, and the breaker records nothing.
//!
//! ```
//! use std::sync::Arc;
//! use breaker_consumer::json::json;
//! use breaker_consumer::{Consumer, Delivery, Failure, Handled, MemoryQueue};
//! use breaker_runtime::{Breaker, Config, IsFailure};
//! use tokio_util::sync::CancellationToken;
//!
//! #[derive(serde::Deserialize)]
//! struct Order {
//!     id: u32,
//!     grams: u32,
//! }
//!
//! #[derive(Debug, thiserror::Error, IsFailure)]
//! #[error("the carrier API is down")]
//! struct ShipError;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let queue = MemoryQueue::new(5);
//! queue.publish(r#"{"id": 7, "grams": 300}"#.to_owned());
//! queue.publish("not json".to_owned());
//! let consumer = Consumer::builder(queue.clone(), Arc::new(Breaker::new(Config::default()))).build();
//! let shutdown = CancellationToken::new();
//! let stop = shutdown.clone();
//! let watcher = async {
//!     while queue.stats().acked + (queue.stats().dead as u64) < 2 {
//!         tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//!     }
//!     stop.cancel();
//! };
//! let handler = json(|order: Delivery<Order, _>, _cancelled| async move {
//!     assert_eq!((order.payload.id, order.payload.grams), (7, 300));
//!     Ok::<_, Failure<ShipError>>(Handled::Done)
//! });
//! let (stats, ()) = tokio::join!(consumer.run(handler, shutdown), watcher);
//! assert_eq!((stats.acked, stats.dead_lettered), (1, 1));
//! assert_eq!(queue.dead_letters(), ["not json"]);
//! # }
//! ```

use std::collections::HashMap;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use breaker_runtime::IsFailure;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::reply::{Failure, Handled};
use crate::source::Delivery;

/// A payload that is one document: its bytes are the JSON.
pub trait Body {
    /// The document's bytes.
    fn body(&self) -> &[u8];
}

impl Body for Vec<u8> {
    fn body(&self) -> &[u8] {
        self
    }
}

impl Body for String {
    fn body(&self) -> &[u8] {
        self.as_bytes()
    }
}

#[cfg(feature = "amqp")]
impl Body for crate::amqp::Message {
    fn body(&self) -> &[u8] {
        &self.body
    }
}

/// A payload of named fields, one of which holds the JSON: a Redis stream entry
/// ([`redis::Fields`](crate::redis::Fields) is a `HashMap<String, Vec<u8>>`).
pub trait Fields {
    /// The bytes of the field `name`, if the message has it.
    fn field(&self, name: &str) -> Option<&[u8]>;
}

impl Fields for HashMap<String, Vec<u8>> {
    fn field(&self, name: &str) -> Option<&[u8]> {
        self.get(name).map(Vec::as_slice)
    }
}

/// Why a decoded handler did not finish its message.
#[derive(Debug)]
pub enum JsonError<E> {
    /// The message is not the JSON of the handler's type: poison, dead-lettered.
    Decode(serde_json::Error),
    /// The message has no field of the name [`json_field`] was given: poison, dead-lettered.
    Missing(&'static str),
    /// The handler's own error, counted as its [`IsFailure`] says.
    Handler(E),
}

impl<E: fmt::Display> fmt::Display for JsonError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Decode(error) => write!(f, "the message is not the JSON expected: {error}"),
            JsonError::Missing(name) => write!(f, "the message has no field `{name}`"),
            JsonError::Handler(error) => error.fmt(f),
        }
    }
}

impl<E: Error + 'static> Error for JsonError<E> {
    /// The handler's error itself, so that a type given to
    /// [`exclude`](crate::ConsumerBuilder::exclude) is found in the chain.
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            JsonError::Decode(error) => Some(error),
            JsonError::Missing(_) => None,
            JsonError::Handler(error) => Some(error),
        }
    }
}

impl<E: IsFailure> IsFailure for JsonError<E> {
    fn is_failure(&self) -> bool {
        match self {
            JsonError::Handler(error) => error.is_failure(),
            JsonError::Decode(_) | JsonError::Missing(_) => false,
        }
    }

    /// A message that does not decode says nothing about the downstream, even with
    /// [`count_permanent`](crate::ConsumerBuilder::count_permanent).
    fn is_ignored(&self) -> bool {
        match self {
            JsonError::Handler(error) => error.is_ignored(),
            JsonError::Decode(_) | JsonError::Missing(_) => true,
        }
    }

    fn failure_message(&self) -> Option<&dyn fmt::Display> {
        match self {
            JsonError::Handler(error) => error.failure_message(),
            JsonError::Decode(_) | JsonError::Missing(_) => None,
        }
    }
}

/// `handler`, given each message's body decoded from JSON into `T`. A body that does not
/// decode is answered `Failure::Permanent(JsonError::Decode(..))` without calling `handler`,
/// with a `warn` naming the delivery and serde's error.
pub fn json<T, P, I, H, Fut, E>(
    handler: H,
) -> impl Fn(Delivery<P, I>, CancellationToken) -> Decoded<Fut, E> + Send + Sync + 'static
where
    T: DeserializeOwned,
    P: Body,
    I: fmt::Debug,
    H: Fn(Delivery<T, I>, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Handled, Failure<E>>>,
    E: Error,
{
    move |delivery: Delivery<P, I>, cancelled| {
        let decoded = serde_json::from_slice(delivery.payload.body()).map_err(JsonError::Decode);
        run(&handler, delivery, decoded, cancelled)
    }
}

/// `handler`, given the JSON in the field `name` of each message (a Redis stream entry's
/// field), decoded into `T`. A message without the field, or whose field does not decode, is
/// answered `Failure::Permanent` without calling `handler`, with a `warn`.
pub fn json_field<T, P, I, H, Fut, E>(
    name: &'static str,
    handler: H,
) -> impl Fn(Delivery<P, I>, CancellationToken) -> Decoded<Fut, E> + Send + Sync + 'static
where
    T: DeserializeOwned,
    P: Fields,
    I: fmt::Debug,
    H: Fn(Delivery<T, I>, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Handled, Failure<E>>>,
    E: Error,
{
    move |delivery: Delivery<P, I>, cancelled| {
        let decoded = match delivery.payload.field(name) {
            Some(bytes) => serde_json::from_slice(bytes).map_err(JsonError::Decode),
            None => Err(JsonError::Missing(name)),
        };
        run(&handler, delivery, decoded, cancelled)
    }
}

/// Calls `handler` with the decoded payload, or answers the decode's failure.
fn run<T, P, I, H, Fut, E>(
    handler: &H,
    delivery: Delivery<P, I>,
    decoded: Result<T, JsonError<E>>,
    cancelled: CancellationToken,
) -> Decoded<Fut, E>
where
    I: fmt::Debug,
    H: Fn(Delivery<T, I>, CancellationToken) -> Fut,
    E: Error,
{
    match decoded {
        Ok(payload) => Decoded {
            state: State::Running {
                handler: handler(
                    Delivery {
                        id: delivery.id,
                        attempt: delivery.attempt,
                        payload,
                    },
                    cancelled,
                ),
            },
        },
        Err(error) => {
            tracing::warn!(id = ?delivery.id, %error, "a message the handler cannot take: dead-lettered");
            Decoded {
                state: State::Failed { error: Some(error) },
            }
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of a decoded handler: the handler's own, or its message's decode failure.
    pub struct Decoded<Fut, E> {
        #[pin]
        state: State<Fut, E>,
    }
}

pin_project_lite::pin_project! {
    #[project = StateProjection]
    enum State<Fut, E> {
        Running {
            #[pin]
            handler: Fut,
        },
        // Answered at the first poll.
        Failed {
            error: Option<JsonError<E>>,
        },
    }
}

impl<Fut, E> Future for Decoded<Fut, E>
where
    Fut: Future<Output = Result<Handled, Failure<E>>>,
{
    type Output = Result<Handled, Failure<JsonError<E>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProjection::Running { handler } => handler.poll(cx).map(|answer| {
                answer.map_err(|failure| match failure {
                    Failure::Retry(error) => Failure::Retry(JsonError::Handler(error)),
                    Failure::Permanent(error) => Failure::Permanent(JsonError::Handler(error)),
                })
            }),
            StateProjection::Failed { error } => match error.take() {
                Some(error) => Poll::Ready(Err(Failure::Permanent(error))),
                None => Poll::Pending,
            },
        }
    }
}
