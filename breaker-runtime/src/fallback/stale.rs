//! The stale-value fallback: the last good answer for the same arguments, no older than a bound,
//! served when the call fails or is turned away.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// The last good answers of a fn, by its arguments, each served for `stale_for` after it was
/// given. The attribute's `stale_for` option keeps one per fn; by hand, keep one beside a
/// breaker:
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::StaleCache;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let prices: StaleCache<String, u32> = StaleCache::new(Duration::from_secs(600), 1_000);
/// prices.keep("sku-1".to_string(), &1299);
/// tokio::time::advance(Duration::from_secs(599)).await;
/// assert_eq!(prices.stale(&"sku-1".to_string()), Some(1299));
/// tokio::time::advance(Duration::from_secs(2)).await;
/// assert_eq!(prices.stale(&"sku-1".to_string()), None, "too old to serve");
/// # }
/// ```
///
/// Only a success is a good answer: an `Ok`, never an `Err`, even one the breaker records as a
/// success (a healthy "not found" is the dependency's answer now, not one to give again once
/// it is down), and for a return type that is not a `Result`, a value its classifier calls a
/// success. [`keep_ok`](StaleCache::keep_ok) holds to that rule for a `Result`; the attribute
/// holds to it for every return type.
///
/// Bounded: once it holds `entries` answers, a new key takes the place of another (an expired
/// one is dropped when it is next looked up). Time is tokio's, so a paused clock ages it. The
/// lock is held for a lookup or an insert, never across an `.await`.
pub struct StaleCache<K, V> {
    stale_for: Duration,
    entries: usize,
    kept: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K, V> std::fmt::Debug for StaleCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaleCache")
            .field("stale_for", &self.stale_for)
            .field("entries", &self.entries)
            .field("len", &self.len())
            .finish()
    }
}

impl<K: Hash + Eq + Clone, V: Clone> StaleCache<K, V> {
    /// Keeps a copy of `value` for `key`, from now: the caller has judged it a good answer
    /// (for a `Result`, [`keep_ok`](StaleCache::keep_ok) judges).
    pub fn keep(&self, key: K, value: &V) {
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= self.entries && !kept.contains_key(&key) {
            // Bounded without a scan: whichever entry the table yields first makes room.
            if let Some(evicted) = kept.keys().next().cloned() {
                kept.remove(&evicted);
            }
        }
        kept.insert(key, (value.clone(), now));
    }

    /// The answer kept for `key`, if it is no older than `stale_for`.
    pub fn stale(&self, key: &K) -> Option<V> {
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        match kept.get(key) {
            Some((value, at)) if now.saturating_duration_since(*at) <= self.stale_for => {
                Some(value.clone())
            }
            Some(_) => {
                kept.remove(key);
                None
            }
            None => None,
        }
    }
}

impl<K: Hash + Eq + Clone, T: Clone, E: Clone> StaleCache<K, Result<T, E>> {
    /// Keeps a copy of `result` for `key` if it is an `Ok`, and says whether it did. An `Err`
    /// is never kept, however the breaker counted it, and leaves the answer kept before in
    /// place.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::StaleCache;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let prices: StaleCache<u32, Result<u32, String>> = StaleCache::new(Duration::from_secs(60), 100);
    /// assert!(prices.keep_ok(7, &Ok(1299)));
    /// assert!(!prices.keep_ok(7, &Err("not found".to_string())));
    /// assert_eq!(prices.stale(&7), Some(Ok(1299)));
    /// # }
    /// ```
    pub fn keep_ok(&self, key: K, result: &Result<T, E>) -> bool {
        let ok = result.is_ok();
        if ok {
            self.keep(key, result);
        }
        ok
    }
}

impl<K, V> StaleCache<K, V> {
    /// An empty cache that serves an answer for `stale_for` and keeps at most `entries` (at
    /// least one).
    // No bound on the types: the attribute names its cache's types in a static, and a return
    // type that is not `Clone` is then refused once, by its own message, rather than here too.
    pub fn new(stale_for: Duration, entries: usize) -> StaleCache<K, V> {
        StaleCache {
            stale_for,
            entries: entries.max(1),
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// How many answers it holds (some may be too old to serve).
    pub fn len(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether it holds no answer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How long an answer is served after it was given.
    pub fn stale_for(&self) -> Duration {
        self.stale_for
    }
}
