//! The connection and the consumer: connected on demand, consuming at the prefetch the
//! circuit admits, cancelled with what the broker pushed given back.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;

use futures_core::Stream;
use lapin::options::{
    BasicCancelOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::{Channel, ChannelStatus, Connection, ConnectionProperties};

use super::AmqpError;
use super::held::requeue;
use super::limit::Limit;
use super::message::sent;

/// The connection, and the consumer while flowing. Only the consumer loop takes it (fetch,
/// pause, resume are never concurrent); settling goes through each delivery's own handle.
#[derive(Default)]
pub(super) struct Link {
    pub(super) open: Option<(Connection, Channel)>,
    pub(super) consumer: Option<Consuming>,
    pub(super) prefetch: u16,
    /// The broker cancelled the consumer (the queue was deleted, say): the queue is checked
    /// (or declared) again before the next `basic.consume`.
    pub(super) recheck: bool,
}

/// What to consume, and whether to declare it.
pub(super) struct Target {
    pub(super) uri: String,
    pub(super) queue: String,
    /// Declared with these on every (re)connection, or checked with a passive declare if `None`.
    pub(super) declare: Option<(QueueDeclareOptions, FieldTable)>,
}

impl Target {
    /// Declares the queue, or checks that it exists: a missing queue is
    /// [`AmqpError::NoQueue`], and closes the channel.
    async fn ensure(&self, channel: &Channel) -> Result<(), AmqpError> {
        let (options, arguments) = match &self.declare {
            Some((options, arguments)) => (*options, arguments.clone()),
            None => (
                QueueDeclareOptions {
                    passive: true,
                    ..QueueDeclareOptions::default()
                },
                FieldTable::default(),
            ),
        };
        channel
            .queue_declare(&self.queue, options, arguments)
            .await
            .map(drop)
            .map_err(|error| AmqpError::about(&self.queue, error))
    }
}

pub(super) struct Consuming {
    pub(super) stream: lapin::Consumer,
    /// The channel it consumes on.
    pub(super) channel: ChannelStatus,
    prefetch: u16,
}

impl Link {
    /// A fresh connection and channel, after checking that the queue exists (or declaring it).
    /// A connection whose check fails is closed at once: a consumer waiting for its queue asks
    /// again and again, and leaves no connection behind each time.
    pub(super) async fn connect(&mut self, target: &Target) -> Result<Channel, AmqpError> {
        self.lose();
        let properties = ConnectionProperties::default()
            .with_executor(tokio_executor_trait::Tokio::current())
            .with_reactor(tokio_reactor_trait::Tokio::current());
        let connection = Connection::connect(&target.uri, properties).await?;
        let checked = match connection.create_channel().await {
            Ok(channel) => target.ensure(&channel).await.map(|()| channel),
            Err(error) => Err(error.into()),
        };
        match checked {
            Ok(channel) => {
                self.open = Some((connection, channel.clone()));
                self.recheck = false;
                Ok(channel)
            }
            Err(error) => {
                close_in_background(connection);
                Err(error)
            }
        }
    }

    /// The channel, connecting again if the last one was lost.
    async fn channel(&mut self, target: &Target) -> Result<Channel, AmqpError> {
        match &self.open {
            Some((connection, channel))
                if connection.status().connected() && channel.status().connected() =>
            {
                Ok(channel.clone())
            }
            _ => self.connect(target).await,
        }
    }

    /// The consumer at the prefetch wanted now, started (again) if needed.
    pub(super) async fn consumer(
        &mut self,
        target: &Target,
        limit: &Limit,
        given_back: &AtomicU64,
    ) -> Result<&mut Consuming, AmqpError> {
        let channel = self.channel(target).await?;
        match self.consumer.take() {
            Some(current) if current.prefetch == self.prefetch => {
                return Ok(self.consumer.insert(current));
            }
            Some(stale) => stale.cancel(&channel, limit, given_back).await?,
            None => {}
        }
        if self.recheck {
            target.ensure(&channel).await?;
            self.recheck = false;
        }
        channel
            .basic_qos(self.prefetch, BasicQosOptions::default())
            .await?;
        let stream = channel
            .basic_consume(
                &target.queue,
                "",
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|error| AmqpError::about(&target.queue, error))?;
        Ok(self.consumer.insert(Consuming {
            stream,
            channel: channel.status().clone(),
            prefetch: self.prefetch,
        }))
    }

    /// The broker cancelled the consumer (`basic.cancel` from the server: the queue was
    /// deleted): the next fetch checks the queue (or declares it) before consuming again.
    pub(super) fn cancelled_by_broker(&mut self) {
        self.consumer = None;
        self.recheck = true;
    }

    /// Stops consuming, if it was.
    pub(super) async fn stop(
        &mut self,
        channel: &Channel,
        limit: &Limit,
        given_back: &AtomicU64,
    ) -> Result<(), AmqpError> {
        match self.consumer.take() {
            Some(consuming) => consuming.cancel(channel, limit, given_back).await,
            None => Ok(()),
        }
    }

    /// Forgets a connection that failed; the next fetch connects anew. One still open (a
    /// channel error) is closed in the background, which gives its deliveries back.
    pub(super) fn lose(&mut self) {
        self.consumer = None;
        if let Some((connection, _)) = self.open.take() {
            close_in_background(connection);
        }
    }
}

/// Closes a connection that is still open, without waiting for the broker's answer.
fn close_in_background(connection: Connection) {
    if connection.status().connected() {
        tokio::spawn(async move {
            let _ = connection.close(200, "starting over").await;
        });
    }
}

impl Consuming {
    /// Cancels the consumer and gives back what the broker pushed that no handler took.
    async fn cancel(
        mut self,
        channel: &Channel,
        limit: &Limit,
        given_back: &AtomicU64,
    ) -> Result<(), AmqpError> {
        let tag = self.stream.tag();
        channel
            .basic_cancel(tag.as_str(), BasicCancelOptions::default())
            .await?;
        // The broker sends nothing after its cancel-ok: what is buffered now is all there is.
        while let Some(Some(Ok(delivery))) = ready(&mut self.stream).await {
            // Returned either way: by this nack, or by the channel's closing if it fails.
            limit.returned(limit.at(&delivery.properties));
            if !sent(channel.status(), delivery.acker.nack(requeue())).await? {
                return Err(AmqpError::ChannelClosed);
            }
            given_back.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// The next delivery, waiting for it.
pub(super) async fn next(
    stream: &mut lapin::Consumer,
) -> Option<lapin::Result<lapin::message::Delivery>> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

/// The next delivery if one is there now (`Some(None)` once the consumer is cancelled), or
/// `None` if nothing is buffered.
pub(super) async fn ready(
    stream: &mut lapin::Consumer,
) -> Option<Option<lapin::Result<lapin::message::Delivery>>> {
    poll_fn(|cx| match Pin::new(&mut *stream).poll_next(cx) {
        Poll::Ready(item) => Poll::Ready(Some(item)),
        Poll::Pending => Poll::Ready(None),
    })
    .await
}
