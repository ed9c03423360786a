//! What a member writes to the log as it joins, loses the fleet, finds it again and leaves:
//! a fault reads as one, and a deliberate act does not. In a binary of its own: tracing caches
//! each callsite's interest process-wide, and a test on another thread that meets a callsite
//! first, with no subscriber, can have it cached as "never" while this one's is being set.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use breaker_fleet::{Connection, Fleet, MemoryFleet, Options};
use breaker_runtime::{Breaker, Config};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The fleet's events: their level and message.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

impl Capture {
    /// What was written since the last look.
    fn take(&self) -> Vec<(Level, String)> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("breaker_fleet")
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), message));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The one event among `events` at `level` or above that says `words`, and none else at WARN.
fn says(events: &[(Level, String)], level: Level, words: &str) {
    let saying: Vec<_> = events.iter().filter(|(_, m)| m.contains(words)).collect();
    assert_eq!(saying.len(), 1, "one {words:?} in {events:?}");
    assert_eq!(saying[0].0, level, "{events:?}");
    let warnings: Vec<_> = events
        .iter()
        .filter(|(l, m)| *l == Level::WARN && !m.contains(words))
        .collect();
    assert!(warnings.is_empty(), "no other warning: {events:?}");
}

#[tokio::test(start_paused = true)]
async fn joining_says_joined_a_loss_warns_and_a_deliberate_leave_is_no_fault() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();
    let breaker = Arc::new(Breaker::new(
        Config::builder().name("payments").build().unwrap(),
    ));
    let place = MemoryFleet::new();
    let member = Fleet::start(place.clone(), Options::default().with(breaker));
    member.connected().await;
    let joined = capture.take();
    says(&joined, Level::INFO, "joined the fleet");
    assert!(
        joined.iter().all(|(_, m)| !m.contains("again")),
        "the first connection is no return: {joined:?}"
    );

    place.disconnect();
    let mut connection = member.connection();
    connection
        .wait_for(|now| *now == Connection::Disconnected)
        .await
        .unwrap();
    says(&capture.take(), Level::WARN, "the fleet is unreachable");
    place.reconnect();
    member.connected().await;
    says(&capture.take(), Level::INFO, "the fleet is reachable again");

    tokio::time::sleep(Duration::from_secs(1)).await;
    member.leave().await;
    let left = capture.take();
    says(&left, Level::INFO, "left the fleet, as asked");
    assert!(
        left.iter().all(|(_, m)| !m.contains("unreachable")),
        "a leave is not a loss: {left:?}"
    );
    assert_eq!(*connection.borrow(), Connection::Left);

    // A place down when joining is said once, as a warning, and is no loss.
    place.disconnect();
    let member = Fleet::start(
        place.clone(),
        Options::default().with(Arc::new(Breaker::new(
            Config::builder().name("payments").build().unwrap(),
        ))),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    says(
        &capture.take(),
        Level::WARN,
        "the fleet does not answer yet",
    );
    let stats = member.stats();
    assert_eq!(
        (stats.connection, stats.disconnects),
        (Connection::Connecting, 0)
    );
    place.reconnect();
    member.connected().await;
    says(&capture.take(), Level::INFO, "joined the fleet");
    member.leave().await;
}
