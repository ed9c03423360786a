//! What goes wrong talking to RabbitMQ.

/// What goes wrong talking to RabbitMQ. Its `Display` says what is wrong in a few words, for the
/// consumer's log line and for whoever reads its status.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AmqpError {
    /// The broker or the connection failed: the broker cannot be reached, closed the
    /// connection, or refused what was asked.
    #[error("talking to RabbitMQ failed: {0}")]
    Broker(#[from] lapin::Error),
    /// The queue is not there (RabbitMQ's `404 NOT_FOUND`): deleted by its owner, or gone with a
    /// restart of the node because it was not durable, and not declared again yet. The
    /// consumer keeps asking, and consumes again as soon as the queue exists.
    #[error(
        "the queue '{queue}' does not exist on RabbitMQ (deleted, or not declared yet): consuming again once it is declared"
    )]
    NoQueue {
        /// The queue's name.
        queue: String,
    },
    /// The delivery came on a channel that has closed since: the broker has already taken it
    /// back and delivers it again.
    #[error("the delivery's channel closed; the broker delivers the message again")]
    ChannelClosed,
    /// A settlement was not sent in time (10 s): the connection is most likely lost, and the
    /// broker delivers the message again.
    #[error(
        "settling a delivery got no answer in 10 s; the connection is likely lost, and the broker delivers the message again"
    )]
    Unanswered,
}

impl AmqpError {
    /// `error`, told apart as [`NoQueue`](Self::NoQueue) if it is the broker's answer that
    /// `queue` does not exist.
    pub(super) fn about(queue: &str, error: lapin::Error) -> AmqpError {
        match error.kind() {
            lapin::ErrorKind::ProtocolError(amqp) if amqp.get_id() == 404 => AmqpError::NoQueue {
                queue: queue.to_owned(),
            },
            _ => AmqpError::Broker(error),
        }
    }
}
