//! What goes wrong talking to RabbitMQ.

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
