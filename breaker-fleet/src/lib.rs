//! One circuit for a fleet of processes.
//!
//! Two processes, each with too few failures of its own to open its breaker, open together on
//! the fleet's window:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use breaker_fleet::{Fleet, MemoryFleet, Options};
//! use breaker_runtime::{Breaker, Config, State, Verdict};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let place = MemoryFleet::new();
//! let config = Config::builder().name("payments").count_window(20).min_calls(10).build().unwrap();
//! let (here, there) = (Arc::new(Breaker::new(config.clone())), Arc::new(Breaker::new(config)));
//! let a = Fleet::start(place.clone(), Options::default().with(Arc::clone(&here)));
//! let b = Fleet::start(place.clone(), Options::default().with(Arc::clone(&there)));
//!
//! // Six failures here and six there: neither window opens alone (min_calls is 10)...
//! for breaker in [&here, &there] {
//!     for _ in 0..6 {
//!         breaker.try_acquire().unwrap().record(Verdict::Failure);
//!     }
//! }
//! assert_eq!(here.state(), State::Closed);
//! // ...but the fleet's twelve do, in both processes.
//! tokio::time::sleep(Duration::from_millis(300)).await;
//! assert_eq!((here.state(), there.state()), (State::Open, State::Open));
//! # a.leave().await;
//! # b.leave().await;
//! # }
//! ```
//!
//! Each process runs its own [`Breaker`](breaker_runtime::Breaker)s, and they stay
//! authoritative: a call never waits on the fleet, and nothing here touches the call path. A
//! member task in each process shares three things through a meeting place (Redis, or
//! [`MemoryFleet`] in one process):
//!
//! - **A fleet window.** Every `flush` (100 ms) each breaker's new outcomes go into time
//!   buckets; the fleet's failure or slow rate over the breaker's window, judged with its own
//!   thresholds and a fleet `min_calls`, opens the circuit in every process. A process still
//!   opens on its own evidence, and says so only in its metrics: one sick process among
//!   healthy ones opens itself, not the fleet.
//! - **Decisions.** Open, probing and close are announced to every member and stored for
//!   members that join or reconnect later. Each carries a generation, so late or reordered news
//!   is dropped, and the time left as a duration, so no two clocks need agree.
//! - **One probe for the fleet.** When a fleet break ends, the members try for a lease, each
//!   after its own jitter; the one that gets it half-opens and probes, the others keep
//!   rejecting. Its result closes every member (with empty windows) or reopens them all with
//!   the grown break. A holder that dies loses the lease when it expires.
//!
//! When the meeting place is down or slow, every breaker falls back to exactly its local
//! behaviour (what is left of a fleet break included), and the member keeps trying in the
//! background; it catches up on the stored decisions when the place answers again.
//!
//! **Connecting.** Joining never waits: the member is
//! [`Connecting`](Connection::Connecting) until the place first answers (a round trip; as
//! long as Redis is down), then [`Connected`](Connection::Connected),
//! [`Disconnected`](Connection::Disconnected) after a loss, and [`Left`](Connection::Left)
//! once it left. [`Fleet::connection`] tells each change, [`Fleet::connected`] waits for the
//! first answer, and [`Fleet::stats`] says where it stands now. The log says so too: "joined
//! the fleet" (info) at the first answer, "the fleet is unreachable" (warn) at a loss, "the
//! fleet is reachable again" (info) at a return, "the fleet does not answer yet" (warn, once)
//! when it is down at joining, and "left the fleet, as asked" (info) at a leave.
//!
//! **A double decision.** Every member judges the fleet window at its own flushes, so two
//! members that read the same finished bucket at the same moment both find it over the
//! threshold and both take a generation to open the fleet. Only one is announced: the
//! announcement and a look at the decision stored are one atomic step (a script in Redis), and
//! a member that finds a decision it has not heard of yet drops its own. Two more ways to
//! decide an outage twice are closed too: a member back from a loss takes up the opening it
//! lost instead of judging the same evidence again, and the probe's leader empties the fleet
//! window before it announces the closing, not after. A transport of your own that keeps the
//! default [`Transport::announce_unless_decided`] can still announce a decision twice: two
//! openings under two generations. Each member applies both or only the later (an earlier one
//! heard after it is dropped, and counted in [`Stats::stale`]), so the later generation wins
//! everywhere; every member is open throughout, the break runs from the later decision (longer
//! by the moments between the two), and one probe still ends it. A double decision lets no
//! call through and undoes no closing (a decision taken on a reading older than a closing is
//! dropped); what it costs is a break a little longer and two `fleet_opens` for one outage.

#![deny(missing_docs)]
// On docs.rs every feature is documented, each gated item marked with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
mod buckets;
mod connection;
mod jitter;
mod memory;
mod news;
mod options;
#[cfg(feature = "redis")]
mod redis;
mod stats;
mod tally;
mod transport;
mod view;

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use connection::Connection;
pub use memory::{MemoryFleet, Unreachable};
pub use news::{Decision, Garbled, News};
pub use options::Options;
#[cfg(feature = "redis")]
pub use redis::RedisFleet;
pub use stats::Stats;
pub use tally::{Rule, Tally};
pub use transport::{Heard, Transport};

use agent::Agent;
use stats::Counters;

/// This process's membership of a fleet: a background task, until [`leave`](Fleet::leave) or
/// drop.
pub struct Fleet {
    origin: u64,
    counters: Arc<Counters>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Fleet {
    /// Joins the fleet that meets at `transport`, with the breakers `options` chooses. Returns
    /// at once: the member connects, and reconnects, in the background. Until its first call
    /// answers it is [`Connecting`](Connection::Connecting) (a round trip to Redis, or as
    /// long as Redis is down), and every breaker acts on its own meanwhile;
    /// [`connected`](Self::connected) waits for that answer, for a process that wants the
    /// fleet before it serves.
    pub fn start<T: Transport>(transport: T, options: Options) -> Fleet {
        let origin = jitter::random_u64();
        let counters = Arc::new(Counters::default());
        let stop = CancellationToken::new();
        let agent = Agent::new(Arc::new(transport), options, origin, Arc::clone(&counters));
        let task = tokio::spawn(agent.run(stop.clone()));
        Fleet {
            origin,
            counters,
            stop,
            task: Some(task),
        }
    }

    /// This member's id in the fleet's news.
    pub fn origin(&self) -> u64 {
        self.origin
    }

    /// What this member did so far.
    pub fn stats(&self) -> Stats {
        self.counters.read()
    }

    /// Where this member stands with the meeting place, and every change from now on: the
    /// receiver wakes when the member first connects, when it loses the place, when it
    /// reaches it again, and when it leaves. A receiver that looks later than a change sees
    /// the latest state only (a loss and a return between two looks wake it once, on
    /// [`Connected`](Connection::Connected)); [`Stats::disconnects`] counts every loss.
    ///
    /// ```
    /// # use breaker_fleet::{Connection, Fleet, MemoryFleet, Options};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// # let place = MemoryFleet::new();
    /// let fleet = Fleet::start(place.clone(), Options::default());
    /// let mut connection = fleet.connection();
    /// while !connection.borrow_and_update().is_connected() {
    ///     connection.changed().await.expect("woken when it connects");
    /// }
    /// fleet.leave().await;
    /// connection.changed().await.expect("woken when it leaves");
    /// assert_eq!(*connection.borrow_and_update(), Connection::Left);
    /// # }
    /// ```
    pub fn connection(&self) -> watch::Receiver<Connection> {
        self.counters.connection.subscribe()
    }

    /// Waits until this member reaches the fleet: at once if it does now. Joining never waits
    /// (a process starts whether the meeting place is up or not); a process that wants the
    /// fleet before it serves awaits this, within a time of its choosing.
    ///
    /// ```no_run
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use std::time::Duration;
    /// let fleet = breaker_fleet::join("redis://127.0.0.1:6379/", breaker_fleet::Options::default())?;
    /// if tokio::time::timeout(Duration::from_secs(2), fleet.connected()).await.is_err() {
    ///     eprintln!("no fleet yet: each breaker acts on its own until it answers");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connected(&self) {
        let mut connection = self.connection();
        // The sender lives as long as `self`: only a change can end this wait.
        let _ = connection.wait_for(|now| now.is_connected()).await;
    }

    /// Leaves the fleet: gives back a probe lease it holds, and leaves every breaker to act
    /// on its own, with what is left of a fleet break.
    pub async fn leave(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// Joins the fleet that meets in the Redis at `url`, with the breakers `options` chooses
/// (every registered breaker by default). Returns at once, whether Redis is up or not: the
/// member connects, and reconnects, in the background; until then every breaker acts on its
/// own, and [`Fleet::stats`] says [`Connecting`](Connection::Connecting) (not
/// disconnected: nothing was lost). [`Fleet::connected`] waits for the first answer, and
/// [`Fleet::connection`] tells every change. Fails only for a URL that is not one.
///
/// ```no_run
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let fleet = breaker_fleet::join("redis://127.0.0.1:6379/", breaker_fleet::Options::default())?;
/// // ... serve ...
/// fleet.leave().await;
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "redis")]
pub fn join(url: &str, options: Options) -> Result<Fleet, ::redis::RedisError> {
    Ok(Fleet::start(RedisFleet::new(url)?, options))
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
