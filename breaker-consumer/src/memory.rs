//! A queue in memory that keeps delivery counts and dead-letters past a maximum, as a broker
//! does: for tests and the demo, and as the model the broker sources follow.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::source::{Delivery, Settlement, Source, Want};

/// How long a fetch waits for a message to arrive before it returns empty-handed.
const FETCH_WAIT: Duration = Duration::from_millis(100);

/// A queue in memory, shared by its clones: one is given to the consumer, another kept to
/// publish and to look at what happened.
///
/// Messages are handed out in order. Each fetch of a message counts a delivery; a message
/// fetched again after `max_deliveries` is dead-lettered instead. A retried message goes back
/// to the tail (after [`redeliver_after`](Self::redeliver_after), if set), behind the messages
/// waiting, as a redelivery queue or a visibility timeout
/// would have it: so the probes of an outage each take a fresh message, and no one message
/// carries all of the outage's failed attempts to the dead letters. While
/// [disconnected](MemoryQueue::disconnect) every call fails, and messages handed out and not
/// yet settled go back to the queue, as a broker does when a consumer's connection drops.
///
/// ```
/// use breaker_consumer::{MemoryQueue, Settlement, Source, Want};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let queue = MemoryQueue::new(2);
/// queue.publish("hello");
/// let first = queue.fetch(Want::up_to(10)).await.unwrap().remove(0);
/// queue.settle(first.id, Settlement::Retry).await.unwrap();
/// let second = queue.fetch(Want::up_to(10)).await.unwrap().remove(0);
/// assert_eq!((second.payload, second.attempt), ("hello", 2));
/// queue.settle(second.id, Settlement::Retry).await.unwrap();
/// assert!(queue.fetch(Want::up_to(10)).await.unwrap().is_empty(), "past its two deliveries");
/// assert_eq!(queue.dead_letters(), ["hello"]);
/// # }
/// ```
pub struct MemoryQueue<P> {
    shared: Arc<Shared<P>>,
}

struct Shared<P> {
    state: Mutex<State<P>>,
    arrived: Notify,
}

struct State<P> {
    max_deliveries: u32,
    connected: bool,
    ready: VecDeque<Message<P>>,
    /// Retried messages, each with the moment it goes back to the tail of `ready`.
    retried: VecDeque<(Instant, Message<P>)>,
    redeliver_after: Duration,
    unsettled: BTreeMap<u64, Message<P>>,
    dead: Vec<P>,
    /// Of `dead`, those fetched past the maximum deliveries.
    limit_reached: u64,
    published: u64,
    /// Numbers each delivery, as an AMQP channel's delivery tags do: a late settlement of an
    /// earlier delivery never settles a later one of the same message.
    tags: u64,
    fetches: u64,
    deliveries: u64,
    acked: u64,
}

struct Message<P> {
    deliveries: u32,
    payload: P,
}

/// What a [`MemoryQueue`] holds and has done, read at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueStats {
    /// Messages published.
    pub published: u64,
    /// Messages waiting to be fetched.
    pub ready: usize,
    /// Messages handed out and not settled.
    pub unsettled: usize,
    /// Messages dead-lettered.
    pub dead: usize,
    /// Messages acked.
    pub acked: u64,
    /// Calls to `fetch`.
    pub fetches: u64,
    /// Deliveries counted on messages, over all of them.
    pub deliveries: u64,
}

/// The queue's connection is down (see [`MemoryQueue::disconnect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Disconnected;

impl fmt::Display for Disconnected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the in-memory queue is disconnected")
    }
}

impl std::error::Error for Disconnected {}

impl<P> Clone for MemoryQueue<P> {
    fn clone(&self) -> Self {
        MemoryQueue {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<P> MemoryQueue<P> {
    /// An empty queue that dead-letters a message fetched more than `max_deliveries` times
    /// (0 is taken as 1).
    pub fn new(max_deliveries: u32) -> Self {
        MemoryQueue {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    max_deliveries: max_deliveries.max(1),
                    connected: true,
                    ready: VecDeque::new(),
                    retried: VecDeque::new(),
                    redeliver_after: Duration::ZERO,
                    unsettled: BTreeMap::new(),
                    dead: Vec::new(),
                    limit_reached: 0,
                    published: 0,
                    tags: 0,
                    fetches: 0,
                    deliveries: 0,
                    acked: 0,
                }),
                arrived: Notify::new(),
            }),
        }
    }

    /// Holds a retried message back for `delay` before it goes to the tail (none by default,
    /// as a requeue), the way a visibility timeout or Redis's idle time before a claim does:
    /// so a failing message is not fetched again at once while the queue is short.
    pub fn redeliver_after(self, delay: Duration) -> Self {
        self.state().redeliver_after = delay;
        self
    }

    /// Adds a message at the tail.
    pub fn publish(&self, payload: P) {
        let mut state = self.state();
        state.published += 1;
        state.ready.push_back(Message {
            deliveries: 0,
            payload,
        });
        drop(state);
        self.shared.arrived.notify_waiters();
    }

    /// What it holds and has done.
    pub fn stats(&self) -> QueueStats {
        let state = self.state();
        QueueStats {
            published: state.published,
            ready: state.ready.len() + state.retried.len(),
            unsettled: state.unsettled.len(),
            dead: state.dead.len(),
            acked: state.acked,
            fetches: state.fetches,
            deliveries: state.deliveries,
        }
    }

    /// Drops the connection: every call fails until [`reconnect`](Self::reconnect), and the
    /// messages handed out and not settled go back to the head of the queue, in order.
    pub fn disconnect(&self) {
        let mut state = self.state();
        state.connected = false;
        let unsettled = std::mem::take(&mut state.unsettled);
        for (_, message) in unsettled.into_iter().rev() {
            state.ready.push_front(message);
        }
    }

    /// Restores the connection.
    pub fn reconnect(&self) {
        self.state().connected = true;
        self.shared.arrived.notify_waiters();
    }

    fn state(&self) -> MutexGuard<'_, State<P>> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<P: Clone> MemoryQueue<P> {
    /// The dead-lettered messages, oldest first.
    pub fn dead_letters(&self) -> Vec<P> {
        self.state().dead.clone()
    }

    /// Takes up to `max` messages now, counting a delivery on each.
    fn take(&self, max: usize) -> Result<Vec<Delivery<P, u64>>, Disconnected> {
        let mut state = self.state();
        if !state.connected {
            return Err(Disconnected);
        }
        let now = Instant::now();
        while state.retried.front().is_some_and(|(due, _)| *due <= now) {
            if let Some((_, message)) = state.retried.pop_front() {
                state.ready.push_back(message);
            }
        }
        let mut taken = Vec::new();
        while taken.len() < max {
            let Some(mut message) = state.ready.pop_front() else {
                break;
            };
            if message.deliveries >= state.max_deliveries {
                state.dead.push(message.payload);
                state.limit_reached += 1;
                continue;
            }
            message.deliveries += 1;
            state.deliveries += 1;
            state.tags += 1;
            let tag = state.tags;
            taken.push(Delivery {
                id: tag,
                attempt: message.deliveries,
                payload: message.payload.clone(),
            });
            state.unsettled.insert(tag, message);
        }
        Ok(taken)
    }
}

impl<P: Clone + Send + 'static> Source for MemoryQueue<P> {
    type Payload = P;
    type Id = u64;
    type Error = Disconnected;

    /// Retried messages wait at the tail already, so a probe takes the oldest fresh message
    /// whenever there is one, and `want.probes` changes nothing.
    async fn fetch(&self, want: Want) -> Result<Vec<Delivery<P, u64>>, Disconnected> {
        let max = want.max;
        self.state().fetches += 1;
        let mut arrived = std::pin::pin!(self.shared.arrived.notified());
        // Registered before the queue is read, so a message published since wakes it.
        arrived.as_mut().enable();
        let taken = self.take(max)?;
        if !taken.is_empty() {
            return Ok(taken);
        }
        let _ = tokio::time::timeout(FETCH_WAIT, arrived).await;
        self.take(max)
    }

    fn limit_reached(&self) -> u64 {
        self.state().limit_reached
    }

    async fn settle(&self, id: u64, settlement: Settlement) -> Result<(), Disconnected> {
        let mut state = self.state();
        if !state.connected {
            return Err(Disconnected);
        }
        // Settled twice, or after a disconnect gave it back: that delivery is over.
        let Some(message) = state.unsettled.remove(&id) else {
            return Ok(());
        };
        match settlement {
            Settlement::Ack => state.acked += 1,
            Settlement::Retry => {
                let due = Instant::now() + state.redeliver_after;
                state.retried.push_back((due, message));
            }
            Settlement::DeadLetter => state.dead.push(message.payload),
        }
        drop(state);
        if settlement == Settlement::Retry {
            self.shared.arrived.notify_waiters();
        }
        Ok(())
    }
}
