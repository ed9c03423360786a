//! Building a consumer: its concurrency, what it counts, its name, and a check of the
//! broker's redelivery against the handler's longest run.

use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::Breaker;
use tokio::sync::Semaphore;

use crate::consumer::Consumer;
use crate::metrics;
use crate::reply::Rules;
use crate::source::Source;
use crate::trouble::SourceHealth;

/// Builds a [`Consumer`]: see [`Consumer::builder`].
pub struct ConsumerBuilder<S: Source> {
    source: S,
    breaker: Arc<Breaker>,
    concurrency: usize,
    rules: Rules,
    name: Option<String>,
}

impl<S: Source> Consumer<S> {
    /// A consumer of `source` guarded by `breaker`. Consumers given the same breaker (the same
    /// `Arc`, or the one [`registry().get(name)`](breaker_runtime::Registry::get) returns)
    /// pause and resume together.
    pub fn builder(source: S, breaker: Arc<Breaker>) -> ConsumerBuilder<S> {
        ConsumerBuilder {
            source,
            breaker,
            concurrency: 1,
            name: None,
            rules: Rules {
                count_permanent: false,
                count_panics: false,
                excluded: Vec::new(),
            },
        }
    }
}

impl<S: Source> ConsumerBuilder<S> {
    /// How many handlers may run at once while the circuit is closed (1 by default; 0 is
    /// taken as 1).
    pub fn concurrency(mut self, handlers: usize) -> Self {
        self.concurrency = handlers.max(1);
        self
    }

    /// Counts [`Failure::Permanent`](crate::Failure::Permanent) against the breaker as its `IsFailure` says. Off by
    /// default: a poison message says nothing about the downstream.
    pub fn count_permanent(mut self, count: bool) -> Self {
        self.rules.count_permanent = count;
        self
    }

    /// Counts a handler's panic as a failure of the downstream and sends its message back for
    /// redelivery, as the runtime does for a guarded call's panic. Off by default: a panic is
    /// a bug in the handler or a message it cannot take, not a sign that the downstream is
    /// failing, so its message is dead-lettered, the breaker records nothing, and a `warn`
    /// names the message and the panic. Counted, a message that always panics comes back until
    /// the broker's delivery limit, and each of its panics moves the circuit towards opening
    /// on a healthy downstream.
    pub fn count_panics(mut self, count: bool) -> Self {
        self.rules.count_panics = count;
        self
    }

    /// Records nothing for an error of type `T` found anywhere in the handler error's
    /// `source()` chain (the message still goes back for redelivery).
    pub fn exclude<T: Error + 'static>(mut self) -> Self {
        self.rules.excluded.push(|error| error.is::<T>());
        self
    }

    /// Its name in logs and metrics (the `consumer` label); its breaker's name by default.
    /// Consumers sharing a breaker need names of their own to be told apart.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    /// The consumer. Logs a `warn` with the figures when the broker may hand a delivery to
    /// another consumer before a handler can have finished with it
    /// ([`Source::claimed_after`] not longer than the breaker's timeout, or no timeout): the
    /// same message would then be handled twice at once.
    pub fn build(self) -> Consumer<S> {
        if let Some(risk) =
            Overlap::of(self.source.claimed_after(), self.breaker.config().timeout())
        {
            tracing::warn!(breaker = %self.breaker.name(), "{risk}");
        }
        let name: Arc<str> = match self.name {
            Some(name) => name.into(),
            None => self.breaker.name().to_string().into(),
        };
        metrics::degraded(&name, false);
        Consumer {
            source: Arc::new(self.source),
            breaker: self.breaker,
            concurrency: self.concurrency,
            slots: Arc::new(Semaphore::new(self.concurrency)),
            rules: Arc::new(self.rules),
            counters: Arc::default(),
            health: SourceHealth::default(),
            name,
        }
    }
}

/// A broker that takes a delivery back before its handler must have finished with it.
struct Overlap {
    claimed_after: Duration,
    timeout: Option<Duration>,
}

impl Overlap {
    /// The overlap, if the broker's claim can come before the breaker's timeout ends the
    /// handler. The timeout bounds the whole handler, whatever it retries inside.
    fn of(claimed_after: Option<Duration>, timeout: Option<Duration>) -> Option<Overlap> {
        let claimed_after = claimed_after?;
        match timeout {
            Some(timeout) if timeout < claimed_after => None,
            timeout => Some(Overlap {
                claimed_after,
                timeout,
            }),
        }
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let claimed = self.claimed_after;
        match self.timeout {
            Some(timeout) => write!(
                f,
                "the broker hands a delivery to another consumer after {claimed:?} unsettled, \
                 but a handler may run for {timeout:?} (the breaker's timeout): a message still \
                 being handled would be handled again at once; make the source's \
                 redeliver_after longer than {timeout:?}"
            ),
            None => write!(
                f,
                "the broker hands a delivery to another consumer after {claimed:?} unsettled, \
                 but the breaker has no timeout, so a handler may run longer: a message still \
                 being handled would be handled again at once; give the breaker a timeout \
                 shorter than {claimed:?}"
            ),
        }
    }
}
