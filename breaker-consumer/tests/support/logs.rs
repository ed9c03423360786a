//! The consumer's `tracing` events, captured per test.
//!
//! One subscriber for the whole binary, set once, hands each event to the capture of the
//! thread it happens on (a paused-clock test runs on one thread, its spawned tasks included;
//! on a multi-thread runtime, the test's own body is on its thread, its spawned tasks are not).
//! Not a subscriber per test: tracing caches each callsite's interest process-wide, and a test
//! on another thread that meets a callsite first, while no subscriber is set, can have it
//! cached as "never" as this test's subscriber is being set.

use std::cell::RefCell;
use std::fmt::{Debug, Write};
use std::sync::{Arc, Mutex, Once};

use tracing::field::Field;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The events logged on this thread since [`Logs::capture`], each as
/// `LEVEL field=value ...` (the message is the field `message`).
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<String>>>);

/// Ends a capture when dropped.
pub struct Capturing(());

thread_local! {
    static CAPTURE: RefCell<Option<Logs>> = const { RefCell::new(None) };
}

impl Logs {
    /// Captures the events of this thread until the guard is dropped.
    pub fn capture() -> (Logs, Capturing) {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            tracing::subscriber::set_global_default(ByThread)
                .expect("no other subscriber in the consumer's tests");
        });
        // A callsite met on another thread while the subscriber was being set can keep the
        // interest it had without one, "never": asked again now, every callsite sees it.
        tracing::callsite::rebuild_interest_cache();
        let logs = Logs::default();
        CAPTURE.with(|capture| *capture.borrow_mut() = Some(logs.clone()));
        (logs, Capturing(()))
    }

    /// The lines at `level` so far, taken: the next call sees only those logged after.
    pub fn take(&self, level: &str) -> Vec<String> {
        let mut lines = self.0.lock().unwrap();
        let (taken, kept) = lines.drain(..).partition(|line| line.starts_with(level));
        *lines = kept;
        taken
    }

    /// The lines at `level` (`"WARN"`, `"INFO"`, ...).
    pub fn at(&self, level: &str) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter(|line| line.starts_with(level))
            .cloned()
            .collect()
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        CAPTURE.with(|capture| *capture.borrow_mut() = None);
    }
}

struct ByThread;

impl Subscriber for ByThread {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let Some(logs) = CAPTURE.with(|capture| capture.borrow().clone()) else {
            return;
        };
        let mut line = event.metadata().level().to_string();
        event.record(&mut |field: &Field, value: &dyn Debug| {
            let _ = write!(line, " {}={value:?}", field.name());
        });
        logs.0.lock().unwrap().push(line);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
