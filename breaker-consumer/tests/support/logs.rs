//! The consumer's `tracing` events, captured on the test's own thread.

use std::fmt::{Debug, Write};
use std::sync::{Arc, Mutex};

use tracing::field::Field;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::DefaultGuard;
use tracing::{Event, Metadata, Subscriber};

/// The events logged since [`Logs::capture`], each as `LEVEL message field=value ...`.
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<String>>>);

impl Logs {
    /// Captures the events of this thread (the current-thread runtime of a paused-clock test,
    /// its spawned tasks included) until the guard is dropped.
    pub fn capture() -> (Logs, DefaultGuard) {
        let logs = Logs::default();
        let guard = tracing::subscriber::set_default(Capture(logs.clone()));
        (logs, guard)
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

struct Capture(Logs);

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = event.metadata().level().to_string();
        event.record(&mut |field: &Field, value: &dyn Debug| {
            let _ = write!(line, " {}={value:?}", field.name());
        });
        (self.0).0.lock().unwrap().push(line);
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
