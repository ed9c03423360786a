//! One circuit for a fleet of processes.
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

#![deny(missing_docs)]

mod agent;
mod buckets;
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

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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
    /// at once: the member connects, and reconnects, in the background.
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
/// own. Fails only for a URL that is not one.
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
