//! Redis Streams through a consumer group: the broker's own delivery counts, redelivery by
//! claiming what stayed pending, and dead letters on a stream of their own.

use std::collections::HashMap;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::streams::{
    StreamClaimReply, StreamId, StreamPendingCountReply, StreamRangeReply, StreamReadReply,
};
use redis::{Client, RedisError, RedisResult};

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
///   letter stream (`<stream>:dead` by default) and acks it, in one transaction. An entry found
///   pending with [`max_deliveries`](Self::max_deliveries) deliveries is dead-lettered instead of
///   claimed.
/// - While the circuit is open nothing is read and nothing claimed, so no entry's delivery
///   count moves. A process that dies with entries pending leaves them to be claimed.
///
/// Fetching runs on a connection of its own, so that a blocking read never holds up an ack.
/// Both reconnect by themselves; while Redis is down, calls fail and the consumer waits and
/// tries again, recording nothing in its breaker.
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
}

impl RedisStream {
    /// Connects to `url` and reads `stream` as `consumer` of `group`, creating the stream and
    /// the group (from the stream's start) if they do not exist.
    pub async fn connect(
        url: &str,
        stream: &str,
        group: &str,
        consumer: &str,
    ) -> RedisResult<RedisStream> {
        let client = Client::open(url)?;
        let block = Duration::from_secs(1);
        let reads =
            ConnectionManager::new_with_config(client.clone(), Self::config(MAX_BLOCK)).await?;
        let writes =
            ConnectionManager::new_with_config(client, Self::config(Duration::ZERO)).await?;
        let mut source = RedisStream {
            reads,
            writes,
            stream: stream.to_owned(),
            group: group.to_owned(),
            consumer: consumer.to_owned(),
            dead: format!("{stream}:dead"),
            block,
            redeliver_after: Duration::from_secs(5),
            max_deliveries: 5,
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

    async fn create_group(&mut self) -> RedisResult<()> {
        let created: RedisResult<()> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&self.stream)
            .arg(&self.group)
            .arg("0")
            .arg("MKSTREAM")
            .query_async(&mut self.writes)
            .await;
        match created {
            Err(error) if error.code() == Some("BUSYGROUP") => Ok(()),
            other => other,
        }
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
                self.dead_letter_pending(&entry.id).await?;
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

    /// Moves a pending entry to the dead letters, read from the stream itself.
    async fn dead_letter_pending(&self, id: &str) -> RedisResult<()> {
        let mut conn = self.writes.clone();
        let range: StreamRangeReply = redis::cmd("XRANGE")
            .arg(&self.stream)
            .arg(id)
            .arg(id)
            .query_async(&mut conn)
            .await?;
        let fields = range.ids.first().map(fields).unwrap_or_default();
        self.move_to_dead(id, &fields).await
    }

    async fn move_to_dead(&self, id: &str, fields: &Fields) -> RedisResult<()> {
        let mut add = redis::cmd("XADD");
        add.arg(&self.dead)
            .arg("*")
            .arg("breaker-original-id")
            .arg(id);
        for (name, value) in fields {
            add.arg(name).arg(value.as_slice());
        }
        let mut ack = redis::cmd("XACK");
        ack.arg(&self.stream).arg(&self.group).arg(id);
        redis::pipe()
            .atomic()
            .add_command(add)
            .ignore()
            .add_command(ack)
            .ignore()
            .query_async::<()>(&mut self.writes.clone())
            .await
    }
}

impl Source for RedisStream {
    type Payload = Fields;
    type Id = String;
    type Error = RedisError;

    fn claimed_after(&self) -> Option<Duration> {
        Some(self.redeliver_after)
    }

    async fn fetch(&self, want: Want) -> RedisResult<Vec<Delivery<Fields, String>>> {
        let mut fetched = if want.probes {
            self.read_new(want.max, false).await?
        } else {
            self.claim_idle(want.max).await?
        };
        if fetched.len() < want.max {
            let more = want.max - fetched.len();
            let others = if want.probes {
                self.claim_idle(more).await?
            } else {
                self.read_new(more, fetched.is_empty()).await?
            };
            fetched.extend(others);
        }
        if fetched.is_empty() && want.probes {
            // Nothing to probe with yet: wait for new entries like any fetch.
            fetched = self.read_new(want.max, true).await?;
        }
        Ok(fetched)
    }

    async fn settle(&self, id: String, settlement: Settlement) -> RedisResult<()> {
        match settlement {
            Settlement::Ack => {
                redis::cmd("XACK")
                    .arg(&self.stream)
                    .arg(&self.group)
                    .arg(&id)
                    .query_async::<()>(&mut self.writes.clone())
                    .await
            }
            Settlement::Retry => Ok(()),
            Settlement::DeadLetter => self.dead_letter_pending(&id).await,
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
