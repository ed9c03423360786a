//! SPEC section 5, tracing: every transition is a tracing event, a warning when the circuit
//! opens and an info when it closes. In a binary of its own: tracing caches each callsite's
//! interest process-wide, and a test on another thread that meets a callsite first, with no
//! subscriber, can have it cached as "never" while this test's subscriber is being set.

use std::sync::Mutex;

use breaker_tests::{breaker, count};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// One event: its level and its fields, rendered.
type Captured = (Level, Vec<(String, String)>);

#[derive(Default)]
struct Capture(Mutex<Vec<Captured>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((
            field.name().to_string(),
            format!("{value:?}").trim_matches('"').to_string(),
        ));
    }
}

impl Subscriber for &'static Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> &'a str {
    &fields
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .1
}

#[test]
fn every_transition_is_a_tracing_event_warn_on_open_info_on_close() {
    let capture: &'static Capture = Box::leak(Box::default());
    tracing::subscriber::with_default(capture, || {
        let b = breaker(count(2).name("spec5-traced"));
        for _ in 0..2 {
            b.try_acquire().unwrap().failure();
        }
        b.reset();
    });
    let events = capture.0.lock().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    let (level, fields) = &events[0];
    assert_eq!(*level, Level::WARN);
    assert_eq!(field(fields, "breaker"), "spec5-traced");
    assert_eq!(field(fields, "from"), "closed");
    assert_eq!(field(fields, "to"), "open");
    assert_eq!(field(fields, "failure_rate"), "100.0");
    assert_eq!(field(fields, "calls"), "2");
    let (level, fields) = &events[1];
    assert_eq!(*level, Level::INFO);
    assert_eq!(field(fields, "to"), "closed");
}
