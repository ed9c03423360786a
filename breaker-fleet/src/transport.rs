//! What a fleet needs of the place its members meet: a shared window, a generation counter,
//! stored and published news, and a lease. Redis is one; [`MemoryFleet`](crate::MemoryFleet)
//! is another, for tests and the demo.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use crate::news::News;
use crate::tally::Tally;

/// What a member hears from the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// A member announced a decision (this member's own announcements come back too).
    News(News),
    /// The news feed was lost, or is back: news may have been missed meanwhile.
    Connected(bool),
}

/// The place a fleet's members meet. Every call may fail (the place is down or slow); the
/// member then falls back to its breakers' local behaviour and tries again later.
pub trait Transport: Send + Sync + 'static {
    /// What goes wrong.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Adds `delta` to the current bucket (`bucket` wide) of the fleet window of `breaker`,
    /// and returns the fleet's outcomes in the buckets of the last `span` before the current
    /// one, in one atomic step.
    ///
    /// The current bucket is left out because it is still filling: every member flushes once
    /// per bucket, at its own moment, so only a finished bucket holds everyone's share. Judged
    /// on a half-filled one, a sick member that happened to flush first would look like the
    /// fleet.
    fn flush(
        &self,
        breaker: &str,
        span: Duration,
        bucket: Duration,
        delta: Tally,
    ) -> impl Future<Output = Result<Tally, Self::Error>> + Send;

    /// Empties the fleet window of `breaker` (the fleet closed it).
    fn clear(&self, breaker: &str) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// A generation for a decision on `breaker`, greater than every one handed out before.
    fn generation(&self, breaker: &str) -> impl Future<Output = Result<u64, Self::Error>> + Send;

    /// Stores `news` as the latest on its breaker and publishes it to every member.
    fn announce(&self, news: &News) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// A member's own decision: [`announce`](Self::announce)s `news` unless the decision stored
    /// on its breaker is of a generation after `known` (the newest this member applied),
    /// compared and announced in one atomic step; answers whether it was announced.
    ///
    /// Two members that read the same window at the same moment each take a generation and
    /// decide; whichever is announced first stands, and the other, finding a decision it has
    /// not heard of, is dropped instead of announced. A stored decision that has run out (an
    /// opening whose break is over) no longer counts.
    ///
    /// By default it announces unconditionally, for a transport that cannot compare and store
    /// in one step: two members may then both announce the same decision (see the crate's
    /// docs, "A double decision"). The Redis transport (`RedisFleet`) and
    /// [`MemoryFleet`](crate::MemoryFleet) compare.
    fn announce_unless_decided(
        &self,
        news: &News,
        known: u64,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        let _ = known;
        async move { self.announce(news).await.map(|()| true) }
    }

    /// The latest news stored on `breaker`, for a member that joins or reconnects.
    fn latest(
        &self,
        breaker: &str,
    ) -> impl Future<Output = Result<Option<News>, Self::Error>> + Send;

    /// Takes the probe lease on `breaker` for `ttl` if no one holds it, with a fencing token
    /// (a generation); `None` if someone does.
    fn lease(
        &self,
        breaker: &str,
        holder: u64,
        ttl: Duration,
    ) -> impl Future<Output = Result<Option<u64>, Self::Error>> + Send;

    /// Gives the lease on `breaker` back, if `holder` still holds it.
    fn release(
        &self,
        breaker: &str,
        holder: u64,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// Delivers everything announced from now on to `inbox`, and says when the feed is lost
    /// and back, until the task it returns is aborted or `inbox` is closed.
    fn listen(&self, inbox: UnboundedSender<Heard>) -> JoinHandle<()>;
}
