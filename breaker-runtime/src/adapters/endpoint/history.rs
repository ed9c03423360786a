//! The last transitions of every registered breaker, for the page, and a signal that one
//! happened, for the events.

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex, OnceLock, PoisonError};
use std::time::SystemTime;

use serde::ser::{Serialize, SerializeStruct, Serializer};
use tokio::sync::watch;

use crate::core::events::Transition;
use crate::registry::registry;

/// How many transitions the page can show.
const KEPT: usize = 200;

#[derive(Clone)]
pub(super) struct Recorded {
    breaker: String,
    from: &'static str,
    to: &'static str,
    /// Milliseconds since the Unix epoch: the page shows it in the reader's time zone.
    at_ms: u64,
}

impl Serialize for Recorded {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Transition", 4)?;
        s.serialize_field("breaker", &self.breaker)?;
        s.serialize_field("from", self.from)?;
        s.serialize_field("to", self.to)?;
        s.serialize_field("at_ms", &self.at_ms)?;
        s.end()
    }
}

static RECENT: Mutex<VecDeque<Recorded>> = Mutex::new(VecDeque::new());
static CHANGED: LazyLock<watch::Sender<u64>> = LazyLock::new(|| watch::Sender::new(0));

/// Subscribes to every registered breaker's transitions, once per process.
pub(super) fn start() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| registry().on_transition(record).forever());
}

fn record(t: &Transition) {
    let at_ms = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut recent = RECENT.lock().unwrap_or_else(PoisonError::into_inner);
    if recent.len() == KEPT {
        recent.pop_front();
    }
    recent.push_back(Recorded {
        breaker: t.breaker.to_string(),
        from: t.from.as_str(),
        to: t.to.as_str(),
        at_ms,
    });
    drop(recent);
    CHANGED.send_modify(|n| *n = n.wrapping_add(1));
}

/// The kept transitions, oldest first.
pub(super) fn recent() -> Vec<Recorded> {
    RECENT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .cloned()
        .collect()
}

/// A receiver that wakes at the next transition.
pub(super) fn changes() -> watch::Receiver<u64> {
    CHANGED.subscribe()
}
