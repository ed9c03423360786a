//! Whether the source answers: a consumer whose broker fails every fetch handles nothing,
//! whatever its circuit says, and must not look healthy.

use std::fmt::Display;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// The source's failing stretch: since its first failed fetch, and what the last one said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trouble {
    pub(crate) since: Instant,
    pub(crate) reason: Arc<str>,
}

/// The source's health as the consumer's fetches find it.
#[derive(Debug, Default)]
pub(crate) struct SourceHealth {
    /// Read on every fetch that succeeds, so that a healthy source takes no lock.
    failing: AtomicBool,
    trouble: Mutex<Option<Trouble>>,
}

impl SourceHealth {
    /// A fetch failed with `error`. True if this starts a failing stretch.
    pub(crate) fn failed(&self, error: &dyn Display) -> bool {
        let mut trouble = self.lock();
        let reason: Arc<str> = error.to_string().into();
        let started = trouble.is_none();
        let since = trouble.as_ref().map_or_else(Instant::now, |t| t.since);
        *trouble = Some(Trouble { since, reason });
        self.failing.store(true, Ordering::Release);
        started
    }

    /// A fetch succeeded. How long the source had failed, if it had.
    pub(crate) fn answered(&self) -> Option<Duration> {
        if !self.failing.load(Ordering::Acquire) {
            return None;
        }
        let ended = self.lock().take();
        self.failing.store(false, Ordering::Release);
        ended.map(|t| t.since.elapsed())
    }

    /// The failing stretch under way, if any.
    pub(crate) fn trouble(&self) -> Option<Trouble> {
        if !self.failing.load(Ordering::Acquire) {
            return None;
        }
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Trouble>> {
        self.trouble.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
