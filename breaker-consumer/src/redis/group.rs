//! The consumer group: where it starts, and creating it again when Redis lost it.

use std::future::Future;

use redis::{RedisError, RedisResult};

use super::{RedisStream, StreamError};

/// Where a consumer group starts reading when it is created: at
/// [`connect_from`](RedisStream::connect_from), and again when Redis lost the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StartFrom {
    /// Every entry the stream holds when the group is created (`XGROUP CREATE ... 0`): the
    /// default.
    #[default]
    Beginning,
    /// Only entries added after the group is created (`XGROUP CREATE ... $`).
    New,
}

impl StartFrom {
    /// The id `XGROUP CREATE` takes.
    pub(super) fn id(self) -> &'static str {
        match self {
            StartFrom::Beginning => "0",
            StartFrom::New => "$",
        }
    }
}

impl RedisStream {
    /// Creates the group (and the stream) at `start`: `true` if this call created it, `false`
    /// if it was there.
    pub(super) async fn create_group(&self) -> RedisResult<bool> {
        let created: RedisResult<()> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&self.stream)
            .arg(&self.group)
            .arg(self.start.id())
            .arg("MKSTREAM")
            .query_async(&mut self.writes.clone())
            .await;
        match created {
            Ok(()) => Ok(true),
            Err(error) if error.code() == Some("BUSYGROUP") => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Creates the group again after Redis lost it.
    pub(super) async fn recreate_group(&self) -> Result<(), StreamError> {
        match self.create_group().await {
            Ok(true) => {
                tracing::warn!(
                    stream = %self.stream,
                    group = %self.group,
                    start = self.start.id(),
                    "the consumer group was gone (did Redis lose its data?): created it again; \
                     the entries pending before are gone with it"
                );
                Ok(())
            }
            Ok(false) => {
                tracing::debug!(
                    stream = %self.stream,
                    group = %self.group,
                    "the consumer group was gone and another consumer created it again"
                );
                Ok(())
            }
            Err(source) => Err(StreamError::GroupNotRecreated {
                stream: self.stream.clone(),
                group: self.group.clone(),
                source,
            }),
        }
    }

    /// `call`, and once more after creating the group again if it failed for want of the
    /// group.
    pub(super) async fn regrouped<T, Fut>(
        &self,
        doing: &'static str,
        call: impl Fn() -> Fut,
    ) -> Result<T, StreamError>
    where
        Fut: Future<Output = RedisResult<T>>,
    {
        match call().await {
            Err(error) if group_lost(&error) => {
                self.recreate_group().await?;
                call().await
            }
            done => done,
        }
        .map_err(|error| StreamError::talking(doing, &self.stream, error))
    }
}

/// Whether `error` says the group (or its stream) is gone: `NOGROUP`, or a blocked read
/// ended because its stream was deleted.
pub(super) fn group_lost(error: &RedisError) -> bool {
    match error.code() {
        Some("NOGROUP") => true,
        Some("UNBLOCKED") => error
            .detail()
            .is_some_and(|detail| detail.contains("no longer exists")),
        _ => false,
    }
}
