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
use lapin::{Channel, Connection, ConnectionProperties};

use super::AmqpError;
use super::held::requeue;

/// The connection, and the consumer while flowing. Only the consumer loop takes it (fetch,
/// pause, resume are never concurrent); settling goes through each delivery's own handle.
#[derive(Default)]
pub(super) struct Link {
    pub(super) open: Option<(Connection, Channel)>,
    pub(super) consumer: Option<Consuming>,
    pub(super) prefetch: u16,
}

pub(super) struct Consuming {
    pub(super) stream: lapin::Consumer,
    prefetch: u16,
}

impl Link {
    /// A fresh connection and channel, after checking that the queue exists.
    pub(super) async fn connect(&mut self, uri: &str, queue: &str) -> Result<Channel, AmqpError> {
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
    pub(super) async fn consumer(
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
    pub(super) async fn stop(
        &mut self,
        channel: &Channel,
        given_back: &AtomicU64,
    ) -> Result<(), AmqpError> {
        match self.consumer.take() {
            Some(consuming) => consuming.cancel(channel, given_back).await,
            None => Ok(()),
        }
    }

    /// Forgets a connection that failed; the next fetch connects anew. One still open (a
    /// channel error) is closed in the background, which gives its deliveries back.
    pub(super) fn lose(&mut self) {
        self.consumer = None;
        if let Some((connection, _)) = self.open.take() {
            if connection.status().connected() {
                tokio::spawn(async move {
                    let _ = connection.close(200, "starting over").await;
                });
            }
        }
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
            delivery.acker.nack(requeue()).await?;
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
