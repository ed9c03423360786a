//! The fleet meeting in Redis: one hash of time buckets, one generation counter, one stored
//! decision and one lease per breaker (all under one hash tag, so Redis Cluster keeps them on
//! one node), and one pub/sub channel for the news.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_core::Stream;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError, RedisResult};
use tokio::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use crate::buckets::{buckets, width};
use crate::news::{Decision, News};
use crate::tally::Tally;
use crate::transport::{Heard, Transport};

/// Adds a delta to the current bucket (by Redis's own clock, so members' clocks need not
/// agree), drops buckets older than the window, and sums the finished ones.
const FLUSH: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local width, count = tonumber(ARGV[1]), tonumber(ARGV[2])
local current = math.floor(now / width)
for i, kind in ipairs({'c', 'f', 's'}) do
  local n = tonumber(ARGV[2 + i])
  if n > 0 then redis.call('HINCRBY', KEYS[1], current .. ':' .. kind, n) end
end
local all = redis.call('HGETALL', KEYS[1])
local sums = {c = 0, f = 0, s = 0}
local old = {}
for i = 1, #all, 2 do
  local at = string.find(all[i], ':')
  local bucket = tonumber(string.sub(all[i], 1, at - 1))
  if bucket + count < current then
    table.insert(old, all[i])
  elseif bucket < current then
    local kind = string.sub(all[i], at + 1)
    sums[kind] = sums[kind] + tonumber(all[i + 1])
  end
end
if #old > 0 then redis.call('HDEL', KEYS[1], unpack(old)) end
redis.call('PEXPIRE', KEYS[1], width * (count + 2))
return {sums.c, sums.f, sums.s}
";

/// Stores the news unless newer news is stored (for `ttl` ms when it has one), and
/// publishes it; with a fifth argument, only if the stored news is of that generation or an
/// older one (or gone): otherwise answers -1, storing and publishing nothing.
const ANNOUNCE: &str = r"
local stored = redis.call('GET', KEYS[1])
local generation = stored and tonumber(string.match(stored, '^1 (%d+) '))
if ARGV[5] and generation and generation > tonumber(ARGV[5]) then
  return -1
end
if not generation or generation < tonumber(ARGV[1]) then
  if tonumber(ARGV[3]) > 0 then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  else
    redis.call('SET', KEYS[1], ARGV[2])
  end
end
return redis.call('PUBLISH', ARGV[4], ARGV[2])
";

/// Takes the lease with a fresh fencing token if it is free, renews it if the holder holds
/// it, and answers nothing if another does.
const LEASE: &str = r"
local held = redis.call('GET', KEYS[1])
if not held then
  local token = redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. token, 'PX', ARGV[2])
  return token
end
local at = string.find(held, ':')
if string.sub(held, 1, at - 1) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return tonumber(string.sub(held, at + 1))
end
return false
";

/// Deletes the lease if the holder still holds it.
const RELEASE: &str = r"
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ':' then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// A fleet that meets in Redis.
///
/// Its keys are `{<prefix>:<breaker>}:window`, `:generation`, `:latest` and `:lease`, its
/// channel `<prefix>:news` (the prefix is `breaker-fleet` unless [`prefix`](Self::prefix)
/// says otherwise). Every call runs on one [`ConnectionManager`], made on first use and
/// reconnecting on its own; the news comes on a pub/sub connection of its own, subscribed
/// again after every loss.
#[derive(Clone)]
pub struct RedisFleet {
    client: Client,
    prefix: Arc<str>,
    connection: Arc<Mutex<Option<ConnectionManager>>>,
}

impl RedisFleet {
    /// A fleet meeting at the Redis of `url`. Nothing is connected yet: a Redis that is down
    /// is a fleet that is unreachable, not an error.
    pub fn new(url: &str) -> RedisResult<RedisFleet> {
        Ok(RedisFleet {
            client: Client::open(url)?,
            prefix: Arc::from("breaker-fleet"),
            connection: Arc::new(Mutex::new(None)),
        })
    }

    /// Names keys and channel from `prefix`, so that several fleets can share one Redis.
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = Arc::from(prefix);
        self
    }

    fn key(&self, breaker: &str, what: &str) -> String {
        format!("{{{}:{breaker}}}:{what}", self.prefix)
    }

    fn channel(&self) -> String {
        format!("{}:news", self.prefix)
    }

    async fn connection(&self) -> RedisResult<ConnectionManager> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(Duration::from_millis(500)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(250));
        let connection = ConnectionManager::new_with_config(self.client.clone(), config).await?;
        *slot = Some(connection.clone());
        Ok(connection)
    }

    async fn eval<T: redis::FromRedisValue>(
        &self,
        script: &str,
        keys: &[String],
        args: &[String],
    ) -> RedisResult<T> {
        let mut connection = self.connection().await?;
        redis::cmd("EVAL")
            .arg(script)
            .arg(keys.len())
            .arg(keys)
            .arg(args)
            .query_async(&mut connection)
            .await
    }
}

impl RedisFleet {
    /// Runs [`ANNOUNCE`], unless a decision after `known` is stored when `known` is given.
    async fn announce_if(&self, news: &News, known: Option<u64>) -> RedisResult<i64> {
        // An opening is stored for as long as it lasts; a probe for a while; a closing for good.
        let ttl = match news.decision {
            Decision::Open { remaining } => millis(remaining).max(1),
            Decision::Probing => 60_000,
            Decision::Close => 0,
        };
        let mut args = vec![
            news.generation.to_string(),
            news.encode(),
            ttl.to_string(),
            self.channel(),
        ];
        args.extend(known.map(|known| known.to_string()));
        self.eval(ANNOUNCE, &[self.key(&news.breaker, "latest")], &args)
            .await
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl Transport for RedisFleet {
    type Error = RedisError;

    async fn flush(
        &self,
        breaker: &str,
        span: Duration,
        bucket: Duration,
        delta: Tally,
    ) -> RedisResult<Tally> {
        // Redis's clock counts milliseconds: buckets are whole milliseconds wide.
        let bucket = bucket.max(Duration::from_millis(1));
        let (_, count) = buckets(Duration::ZERO, span, bucket);
        let width = u64::try_from(width(span, bucket).as_nanos().div_ceil(1_000_000))
            .unwrap_or(u64::MAX)
            .max(1);
        let (calls, failures, slow): (u64, u64, u64) = self
            .eval(
                FLUSH,
                &[self.key(breaker, "window")],
                &[
                    width.to_string(),
                    count.to_string(),
                    delta.calls.to_string(),
                    delta.failures.to_string(),
                    delta.slow.to_string(),
                ],
            )
            .await?;
        Ok(Tally {
            calls,
            failures,
            slow,
        })
    }

    async fn clear(&self, breaker: &str) -> RedisResult<()> {
        let mut connection = self.connection().await?;
        redis::cmd("DEL")
            .arg(self.key(breaker, "window"))
            .query_async(&mut connection)
            .await
    }

    async fn generation(&self, breaker: &str) -> RedisResult<u64> {
        let mut connection = self.connection().await?;
        redis::cmd("INCR")
            .arg(self.key(breaker, "generation"))
            .query_async(&mut connection)
            .await
    }

    async fn announce(&self, news: &News) -> RedisResult<()> {
        let _: i64 = self.announce_if(news, None).await?;
        Ok(())
    }

    async fn announce_unless_decided(&self, news: &News, known: u64) -> RedisResult<bool> {
        let published: i64 = self.announce_if(news, Some(known)).await?;
        Ok(published >= 0)
    }

    async fn latest(&self, breaker: &str) -> RedisResult<Option<News>> {
        let mut connection = self.connection().await?;
        let key = self.key(breaker, "latest");
        let (stored, left): (Option<String>, i64) = redis::pipe()
            .cmd("GET")
            .arg(&key)
            .cmd("PTTL")
            .arg(&key)
            .query_async(&mut connection)
            .await?;
        let Some(mut news) = stored.and_then(|text| News::decode(&text).ok()) else {
            return Ok(None);
        };
        if let Decision::Open { .. } = news.decision {
            let Ok(left) = u64::try_from(left) else {
                return Ok(None);
            };
            news.decision = Decision::Open {
                remaining: Duration::from_millis(left),
            };
        }
        Ok(Some(news))
    }

    async fn lease(&self, breaker: &str, holder: u64, ttl: Duration) -> RedisResult<Option<u64>> {
        self.eval(
            LEASE,
            &[self.key(breaker, "lease"), self.key(breaker, "generation")],
            &[format!("{holder:x}"), millis(ttl).max(1).to_string()],
        )
        .await
    }

    async fn release(&self, breaker: &str, holder: u64) -> RedisResult<()> {
        let _: i64 = self
            .eval(
                RELEASE,
                &[self.key(breaker, "lease")],
                &[format!("{holder:x}")],
            )
            .await?;
        Ok(())
    }

    fn listen(&self, inbox: UnboundedSender<Heard>) -> JoinHandle<()> {
        let (client, channel) = (self.client.clone(), self.channel());
        tokio::spawn(async move {
            loop {
                match subscribe(&client, &channel).await {
                    Ok(mut messages) => {
                        if inbox.send(Heard::Connected(true)).is_err() {
                            return;
                        }
                        while let Some(message) =
                            poll_fn(|cx| Pin::new(&mut messages).poll_next(cx)).await
                        {
                            let Ok(text) = message.get_payload::<String>() else {
                                continue;
                            };
                            match News::decode(&text) {
                                Ok(news) => {
                                    if inbox.send(Heard::News(news)).is_err() {
                                        return;
                                    }
                                }
                                Err(garbled) => {
                                    tracing::debug!(%garbled, "ignored on the fleet's channel")
                                }
                            }
                        }
                        if inbox.send(Heard::Connected(false)).is_err() {
                            return;
                        }
                    }
                    Err(error) => tracing::debug!(%error, "the fleet's news feed is down"),
                }
                if inbox.is_closed() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    }
}

async fn subscribe(client: &Client, channel: &str) -> RedisResult<redis::aio::PubSubStream> {
    let connect = client.get_async_pubsub();
    let mut pubsub = tokio::time::timeout(Duration::from_millis(500), connect)
        .await
        .map_err(|_| RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut)))??;
    pubsub.subscribe(channel).await?;
    Ok(pubsub.into_on_message())
}
