//! A fleet inside one process, on tokio's clock: the same logic as Redis behind the same
//! trait, for tests on the paused clock and for the demo.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::broadcast;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::buckets::buckets;
use crate::news::{Decision, News};
use crate::tally::Tally;
use crate::transport::{Heard, Transport};

/// A fleet transport shared by the members of one process: clones meet in the same place.
///
/// [`disconnect`](Self::disconnect) makes every call fail and the feed go quiet, as Redis
/// going down would; [`reconnect`](Self::reconnect) brings it back.
#[derive(Clone)]
pub struct MemoryFleet {
    place: Arc<Mutex<Place>>,
    feed: broadcast::Sender<Heard>,
}

/// The place is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the fleet's meeting place is unreachable")]
pub struct Unreachable;

struct Place {
    up: bool,
    origin: Instant,
    windows: HashMap<String, BTreeMap<u64, Tally>>,
    generations: HashMap<String, u64>,
    /// The latest news on each breaker, and when it was stored.
    latest: HashMap<String, (News, Instant)>,
    /// Each breaker's lease: its holder and fencing token, and when it expires.
    leases: HashMap<String, ((u64, u64), Instant)>,
    announced: u64,
}

impl Place {
    /// Stores `news` unless newer news is stored, and publishes it.
    fn store_and_publish(&mut self, news: &News, feed: &broadcast::Sender<Heard>) {
        let newer = self
            .latest
            .get(&news.breaker)
            .is_none_or(|(stored, _)| stored.generation < news.generation);
        if newer {
            self.latest
                .insert(news.breaker.clone(), (news.clone(), Instant::now()));
        }
        self.announced += 1;
        let _ = feed.send(Heard::News(news.clone()));
    }

    /// The latest news stored on `breaker`, unless it has run out: an opening tells what is
    /// left of its break, and is gone once the break is over.
    fn in_force(&self, breaker: &str) -> Option<News> {
        let (news, stored) = self.latest.get(breaker)?;
        let mut news = news.clone();
        if let Decision::Open { remaining } = news.decision {
            match remaining.checked_sub(stored.elapsed()) {
                Some(left) if !left.is_zero() => news.decision = Decision::Open { remaining: left },
                _ => return None,
            }
        }
        Some(news)
    }
}

impl Default for MemoryFleet {
    fn default() -> Self {
        MemoryFleet::new()
    }
}

impl MemoryFleet {
    /// An empty meeting place.
    pub fn new() -> MemoryFleet {
        let (feed, _) = broadcast::channel(1024);
        MemoryFleet {
            place: Arc::new(Mutex::new(Place {
                up: true,
                origin: Instant::now(),
                windows: HashMap::new(),
                generations: HashMap::new(),
                latest: HashMap::new(),
                leases: HashMap::new(),
                announced: 0,
            })),
            feed,
        }
    }

    /// Every call fails and no news flows until [`reconnect`](Self::reconnect).
    pub fn disconnect(&self) {
        self.place().up = false;
        let _ = self.feed.send(Heard::Connected(false));
    }

    /// Back, with what was stored before.
    pub fn reconnect(&self) {
        self.place().up = true;
        let _ = self.feed.send(Heard::Connected(true));
    }

    /// How many decisions were announced so far.
    pub fn announced(&self) -> u64 {
        self.place().announced
    }

    fn place(&self) -> MutexGuard<'_, Place> {
        self.place.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn up(&self) -> Result<MutexGuard<'_, Place>, Unreachable> {
        let place = self.place();
        if place.up {
            Ok(place)
        } else {
            Err(Unreachable)
        }
    }
}

impl Transport for MemoryFleet {
    type Error = Unreachable;

    async fn flush(
        &self,
        breaker: &str,
        span: Duration,
        bucket: Duration,
        delta: Tally,
    ) -> Result<Tally, Unreachable> {
        let mut place = self.up()?;
        let (current, count) = buckets(place.origin.elapsed(), span, bucket);
        let window = place.windows.entry(breaker.to_owned()).or_default();
        let filling = window.entry(current).or_default();
        filling.calls += delta.calls;
        filling.failures += delta.failures;
        filling.slow += delta.slow;
        window.retain(|&at, _| at + count >= current);
        Ok(window
            .range(..current)
            .fold(Tally::default(), |sum, (_, b)| Tally {
                calls: sum.calls + b.calls,
                failures: sum.failures + b.failures,
                slow: sum.slow + b.slow,
            }))
    }

    async fn clear(&self, breaker: &str) -> Result<(), Unreachable> {
        self.up()?.windows.remove(breaker);
        Ok(())
    }

    async fn generation(&self, breaker: &str) -> Result<u64, Unreachable> {
        let mut place = self.up()?;
        let generation = place.generations.entry(breaker.to_owned()).or_default();
        *generation += 1;
        Ok(*generation)
    }

    async fn announce(&self, news: &News) -> Result<(), Unreachable> {
        let mut place = self.up()?;
        place.store_and_publish(news, &self.feed);
        Ok(())
    }

    async fn announce_unless_decided(&self, news: &News, known: u64) -> Result<bool, Unreachable> {
        let mut place = self.up()?;
        if place
            .in_force(&news.breaker)
            .is_some_and(|stored| stored.generation > known)
        {
            return Ok(false);
        }
        place.store_and_publish(news, &self.feed);
        Ok(true)
    }

    async fn latest(&self, breaker: &str) -> Result<Option<News>, Unreachable> {
        Ok(self.up()?.in_force(breaker))
    }

    async fn lease(
        &self,
        breaker: &str,
        holder: u64,
        ttl: Duration,
    ) -> Result<Option<u64>, Unreachable> {
        let mut place = self.up()?;
        let now = Instant::now();
        match place.leases.get_mut(breaker) {
            // Its holder renews it.
            Some((held, expires)) if *expires > now && held.0 == holder => {
                *expires = now + ttl;
                return Ok(Some(held.1));
            }
            Some((_, expires)) if *expires > now => return Ok(None),
            _ => {}
        }
        let generation = place.generations.entry(breaker.to_owned()).or_default();
        *generation += 1;
        let token = *generation;
        place
            .leases
            .insert(breaker.to_owned(), ((holder, token), now + ttl));
        Ok(Some(token))
    }

    async fn release(&self, breaker: &str, holder: u64) -> Result<(), Unreachable> {
        let mut place = self.up()?;
        if place
            .leases
            .get(breaker)
            .is_some_and(|&((h, _), _)| h == holder)
        {
            place.leases.remove(breaker);
        }
        Ok(())
    }

    fn listen(&self, inbox: UnboundedSender<Heard>) -> JoinHandle<()> {
        let mut feed = self.feed.subscribe();
        let place = Arc::clone(&self.place);
        // Listening from now, as Redis says once subscribed.
        if self.place().up {
            let _ = inbox.send(Heard::Connected(true));
        }
        tokio::spawn(async move {
            loop {
                let heard = match feed.recv().await {
                    Ok(heard) => heard,
                    // Fell behind: news was missed, as on a reconnect.
                    Err(broadcast::error::RecvError::Lagged(_)) => Heard::Connected(true),
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let up = place.lock().unwrap_or_else(PoisonError::into_inner).up;
                let deliver = match heard {
                    Heard::News(_) => up,
                    Heard::Connected(_) => true,
                };
                if deliver && inbox.send(heard).is_err() {
                    return;
                }
            }
        })
    }
}
