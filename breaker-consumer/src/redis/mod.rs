//! Redis Streams through a consumer group: the broker's own delivery counts, redelivery by
//! claiming what stayed pending, and dead letters on a stream of their own.

mod dead_letter;
mod error;
mod group;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::streams::{StreamClaimReply, StreamId, StreamPendingCountReply, StreamReadReply};
use redis::{Client, RedisResult};

use self::dead_letter::DeadLettered;
pub use self::error::StreamError;
pub use self::group::StartFrom;
use crate::source::{Delivery, Settlement, Source, Want};

/// The longest read a fetch blocks for.
const MAX_BLOCK: Duration = Duration::from_secs(25);

/// The fields of one stream entry.
pub type Fields = HashMap<String, Vec<u8>>;

/// A Redis stream read through a consumer group.
///
/// - **Fetch** reads new entries (`XREADGROUP ... >`, blocking up to [`block`](Self::block))
///   and claims entries of the group left pending longer than
///   [`redeliver_after`](Self::redeliver_after) (`XPENDING`, then `XCLAIM`), older pending
///   entries first for closed-circuit handlers and new entries first for probes. Redis counts
///   each read and each claim as a delivery of the entry.
/// - **Ack** is `XACK`. **Retry** leaves the entry pending: it is claimed again once it has
///   been idle for `redeliver_after`, by this consumer or another of the group. **Dead-letter**
///   adds the entry's fields, with its original id under `breaker-original-id`, to the dead
///   letter stream (`<stream>:dead` by default) and acks it, in one script, only if it is still
///   pending in the group (so that two consumers never both move it). An entry found
///   pending with [`max_deliveries`](Self::max_deliveries) deliveries is dead-lettered instead of
///   claimed, and counted in [`limit_reached`](Source::limit_reached), so that the consumer's
///   [`Stats::dead_letters`](crate::Stats::dead_letters) is what the dead-letter stream
///   received from it.
///   A dead letter that finds the entry no longer pending (another consumer claimed and
///   settled it) or deleted from the stream while pending (trimmed) writes nothing, and the
///   settlement fails with [`StreamError::NotPending`] or [`StreamError::EntryDeleted`].
/// - While the circuit is open nothing is read and nothing claimed, so no entry's delivery
///   count moves. A process that dies with entries pending leaves them to be claimed.
///
/// Fetching runs on a connection of its own, so that a blocking read never holds up an ack.
/// Both reconnect by themselves; while Redis is down, calls fail with a [`StreamError`] that
/// says so, and the consumer waits and tries again, recording nothing in its breaker.
///
/// # When Redis loses its data
///
/// A Redis restarted without persistence, a failover to an empty replica, a `FLUSHALL`: the
/// stream, its group and the dead-letter stream are gone. The first call that finds the group
/// missing (`NOGROUP`) creates it again, as [`connect_from`](Self::connect_from) did and from
/// the same [`StartFrom`], logs one `warn` naming the stream, the group and the position, and
/// goes on in the same fetch. (If another consumer of the group created it first, that is
/// fine: this one just reads.) So the group then sees, from [`StartFrom::Beginning`], every
/// entry added since the loss, those added before it was created again included; from
/// [`StartFrom::New`], only the entries added after it was created again.
///
/// The entries pending before the loss are gone with the data: nothing hands them out again.
/// A handler still running one settles it this way:
/// - **Ack** succeeds: the entry will never be handed out again, which is what an ack asks.
/// - **Dead-letter** fails with [`StreamError::GroupGone`] and writes nothing: there is no
///   entry left to copy, and the consumer's dead-letter count stays what the dead-letter stream
///   holds.
///
/// A fetch that fails all the same (Redis still down, the group not created) returns its error,
/// and the consumer backs off and tries again.
pub struct RedisStream {
    reads: ConnectionManager,
    writes: ConnectionManager,
    stream: String,
    group: String,
    consumer: String,
    dead: String,
    block: Duration,
    redeliver_after: Duration,
    max_deliveries: u32,
    start: StartFrom,
    /// Entries moved to the dead letters at `max_deliveries`.
    limit_reached: AtomicU64,
}

impl RedisStream {
    /// Connects to `url` and reads `stream` as `consumer` of `group`, creating the stream and
    /// the group (from the stream's start, [`StartFrom::Beginning`]) if they do not exist.
    pub async fn connect(
        url: &str,
        stream: &str,
        group: &str,
        consumer: &str,
    ) -> RedisResult<RedisStream> {
        Self::connect_from(url, stream, group, consumer, StartFrom::default()).await
    }

    /// [`connect`](Self::connect), with the group, if it does not exist, created to start at
    /// `start`: now, and again whenever Redis lost it (see
    /// [When Redis loses its data](RedisStream#when-redis-loses-its-data)). A group that exists
    /// keeps its position.
    pub async fn connect_from(
        url: &str,
        stream: &str,
        group: &str,
        consumer: &str,
        start: StartFrom,
    ) -> RedisResult<RedisStream> {
        let client = Client::open(url)?;
        let block = Duration::from_secs(1);
        let reads =
            ConnectionManager::new_with_config(client.clone(), Self::config(MAX_BLOCK)).await?;
        let writes =
            ConnectionManager::new_with_config(client, Self::config(Duration::ZERO)).await?;
        let source = RedisStream {
            reads,
            writes,
            stream: stream.to_owned(),
            group: group.to_owned(),
            consumer: consumer.to_owned(),
            dead: format!("{stream}:dead"),
            block,
            redeliver_after: Duration::from_secs(5),
            max_deliveries: 5,
            start,
            limit_reached: AtomicU64::new(0),
        };
        source.create_group().await?;
        Ok(source)
    }

    /// The longest a fetch waits for new entries (1 s by default; at most 25 s, within the
    /// reading connection's response timeout).
    pub fn block(mut self, wait: Duration) -> Self {
        self.block = wait.min(MAX_BLOCK);
        self
    }

    /// How long an entry stays pending, unacked, before it is claimed again (5 s by default).
    ///
    /// An entry idle that long is claimed by any consumer of the group, this one included,
    /// even if a handler is still working on it: so it must be longer than the longest a
    /// handler can run, or a message still being handled is handled a second time at once.
    /// The longest a handler runs is the breaker's timeout, which bounds the whole handler,
    /// its own retries included: set this longer than that timeout, with room for the ack
    /// (the consumer warns when it is not). A breaker without a timeout puts no bound on a
    /// handler: then this must be longer than any handler can take.
    pub fn redeliver_after(mut self, idle: Duration) -> Self {
        self.redeliver_after = idle;
        self
    }

    /// Deliveries after which a pending entry is dead-lettered (5 by default; 0 is taken as 1).
    pub fn max_deliveries(mut self, deliveries: u32) -> Self {
        self.max_deliveries = deliveries.max(1);
        self
    }

    /// The stream dead letters go to (`<stream>:dead` by default).
    pub fn dead_letter_stream(mut self, stream: &str) -> Self {
        stream.clone_into(&mut self.dead);
        self
    }

    /// The connection's settings: the default reconnection, and room in the response
    /// timeout for a blocking read.
    fn config(block: Duration) -> ConnectionManagerConfig {
        ConnectionManagerConfig::new()
            .set_response_timeout(Some(block + Duration::from_secs(2)))
            .set_number_of_retries(2)
    }

    /// New entries for this consumer, waiting up to `block` if `wait` and none are there.
    async fn read_new(&self, max: usize, wait: bool) -> RedisResult<Vec<Delivery<Fields, String>>> {
        let mut read = redis::cmd("XREADGROUP");
        read.arg("GROUP")
            .arg(&self.group)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(max);
        if wait {
            read.arg("BLOCK").arg(millis(self.block));
        }
        read.arg("STREAMS").arg(&self.stream).arg(">");
        let reply: Option<StreamReadReply> = read.query_async(&mut self.reads.clone()).await?;
        Ok(reply
            .into_iter()
            .flat_map(|r| r.keys)
            .flat_map(|k| k.ids)
            .map(|entry| delivery(entry, 1))
            .collect())
    }

    /// Entries of the group idle for `redeliver_after`, claimed for this consumer; those past
    /// their deliveries are dead-lettered instead.
    async fn claim_idle(&self, max: usize) -> RedisResult<Vec<Delivery<Fields, String>>> {
        let mut conn = self.reads.clone();
        let pending: StreamPendingCountReply = redis::cmd("XPENDING")
            .arg(&self.stream)
            .arg(&self.group)
            .arg("IDLE")
            .arg(millis(self.redeliver_after))
            .arg("-")
            .arg("+")
            .arg(max)
            .query_async(&mut conn)
            .await?;
        let mut claimed = Vec::new();
        for entry in pending.ids {
            let deliveries = u32::try_from(entry.times_delivered).unwrap_or(u32::MAX);
            if deliveries >= self.max_deliveries {
                // Counted only once on the dead-letter stream, by whichever consumer moved it.
                if self.dead_letter(&entry.id).await? == DeadLettered::Written {
                    self.limit_reached.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            // Claimed only if still idle: another consumer of the group may have taken it.
            let reply: StreamClaimReply = redis::cmd("XCLAIM")
                .arg(&self.stream)
                .arg(&self.group)
                .arg(&self.consumer)
                .arg(millis(self.redeliver_after))
                .arg(&entry.id)
                .query_async(&mut conn)
                .await?;
            claimed.extend(
                reply
                    .ids
                    .into_iter()
                    .map(|e| delivery(e, deliveries.saturating_add(1))),
            );
        }
        Ok(claimed)
    }
}

impl Source for RedisStream {
    type Payload = Fields;
    type Id = String;
    type Error = StreamError;

    fn claimed_after(&self) -> Option<Duration> {
        Some(self.redeliver_after)
    }

    fn limit_reached(&self) -> u64 {
        self.limit_reached.load(Ordering::Relaxed)
    }

    async fn fetch(&self, want: Want) -> Result<Vec<Delivery<Fields, String>>, StreamError> {
        let read =
            |max: usize, wait: bool| self.regrouped("reading", move || self.read_new(max, wait));
        let claim =
            |max: usize| self.regrouped("claiming idle entries of", move || self.claim_idle(max));
        let mut fetched = if want.probes {
            read(want.max, false).await?
        } else {
            claim(want.max).await?
        };
        if fetched.len() < want.max {
            let more = want.max - fetched.len();
            let others = if want.probes {
                claim(more).await?
            } else {
                read(more, fetched.is_empty()).await?
            };
            fetched.extend(others);
        }
        if fetched.is_empty() && want.probes {
            // Nothing to probe with yet: wait for new entries like any fetch.
            fetched = read(want.max, true).await?;
        }
        Ok(fetched)
    }

    async fn settle(&self, id: String, settlement: Settlement) -> Result<(), StreamError> {
        match settlement {
            // An entry no longer pending (the group lost, or another consumer settled it) acks
            // as well: it will not be handed out again.
            Settlement::Ack => redis::cmd("XACK")
                .arg(&self.stream)
                .arg(&self.group)
                .arg(&id)
                .query_async::<()>(&mut self.writes.clone())
                .await
                .map_err(|error| StreamError::talking("acking an entry of", &self.stream, error)),
            Settlement::Retry => Ok(()),
            Settlement::DeadLetter => {
                let moved = self.dead_letter(&id).await.map_err(|error| {
                    StreamError::talking("dead-lettering an entry of", &self.stream, error)
                })?;
                let (stream, group) = (self.stream.clone(), self.group.clone());
                match moved {
                    DeadLettered::Written => Ok(()),
                    DeadLettered::GroupGone => Err(StreamError::GroupGone { stream, group, id }),
                    DeadLettered::NotPending => Err(StreamError::NotPending { stream, group, id }),
                    DeadLettered::Deleted => Err(StreamError::EntryDeleted { stream, id }),
                }
            }
        }
    }
}

fn delivery(entry: StreamId, attempt: u32) -> Delivery<Fields, String> {
    let payload = fields(&entry);
    Delivery {
        id: entry.id,
        attempt,
        payload,
    }
}

fn fields(entry: &StreamId) -> Fields {
    entry
        .map
        .keys()
        .filter_map(|name| Some((name.clone(), entry.get::<Vec<u8>>(name)?)))
        .collect()
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
