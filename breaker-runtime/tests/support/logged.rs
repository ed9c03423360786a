//! The lines the crate logs, kept for the test that asks, on its own thread.
//!
//! A subscriber set per thread (`tracing::subscriber::set_default`) misses lines when it is the
//! only one registered: tracing then works out each new callsite's interest from the default
//! subscriber of whichever thread logs there first, and a callsite first reached by another test
//! (with no subscriber) is marked as never wanted, for every thread. So one global subscriber is
//! installed, that hands each line to the test whose thread logged it.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once};

/// A line logged: its level, its message and its fields, as `name=value` in order.
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub struct Line {
    pub level: tracing::Level,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

#[allow(dead_code)]
impl Line {
    /// A field's value, as its `Debug` (or a string as it is) prints it.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

type Sink = Arc<Mutex<Vec<Line>>>;

thread_local! {
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// The lines logged at INFO and above on the thread that called [`Logged::capture`].
#[derive(Clone)]
pub struct Logged(Sink);

#[allow(dead_code)]
impl Logged {
    /// Keeps the lines this thread logs from now on.
    pub fn capture() -> Logged {
        static INSTALLED: Once = Once::new();
        INSTALLED.call_once(|| {
            tracing::subscriber::set_global_default(Routing)
                .expect("no other global subscriber in the crate's tests");
        });
        // A callsite registered by another thread while the subscriber was being installed
        // may have been marked as never wanted: worked out again, with it in place.
        tracing::callsite::rebuild_interest_cache();
        let sink = Sink::default();
        SINK.with(|s| *s.borrow_mut() = Some(Arc::clone(&sink)));
        Logged(sink)
    }

    /// The messages logged at `level`.
    pub fn lines(&self, level: tracing::Level) -> Vec<String> {
        let lines = self.0.lock().unwrap();
        lines
            .iter()
            .filter(|l| l.level == level)
            .map(|l| l.message.clone())
            .collect()
    }

    /// Every line logged, with its fields.
    pub fn all(&self) -> Vec<Line> {
        self.0.lock().unwrap().clone()
    }
}

/// Hands each line to the sink of the thread that logged it, if it has one.
struct Routing;

impl tracing::Subscriber for Routing {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::INFO
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        #[derive(Default)]
        struct Visitor {
            message: String,
            fields: Vec<(String, String)>,
        }
        impl tracing::field::Visit for Visitor {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                let value = format!("{value:?}");
                self.keep(field, value);
            }
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.keep(field, value.to_string());
            }
        }
        impl Visitor {
            fn keep(&mut self, field: &tracing::field::Field, value: String) {
                if field.name() == "message" {
                    self.message = value;
                } else {
                    self.fields.push((field.name().to_string(), value));
                }
            }
        }
        let Some(sink) = SINK.with(|s| s.borrow().clone()) else {
            return;
        };
        let mut visitor = Visitor::default();
        event.record(&mut visitor);
        sink.lock().unwrap().push(Line {
            level: *event.metadata().level(),
            message: visitor.message,
            fields: visitor.fields,
        });
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}
