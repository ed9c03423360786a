//! The consumer: fetch what the circuit admits, hand each delivery to the handler under its own
//! permit, settle it on the broker by how it ended.

use std::any::Any;
use std::error::Error;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use breaker_runtime::{Breaker, IsFailure, Mode, OwnedPermit, State};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::flow::Flow;
use crate::metrics;
use crate::openings::Openings;
use crate::reply::{Failure, Handled, Rules};
use crate::source::{Delivery, Settlement, Source, Want};
use crate::stats::{Counters, Stats, bump};
use crate::status::Status;
use crate::trouble::SourceHealth;
use crate::unwind::CatchUnwind;

/// A queue worker that stops pulling while its circuit breaker is open.
///
/// Closed, up to `concurrency` handlers run at once and fetching follows free capacity. Open,
/// it fetches nothing and sleeps until the break ends; the handlers in flight when it opened
/// see their [`CancellationToken`] fire. Half-open, it fetches at most the breaker's `probes`
/// messages at a time and hands them out as probes; their successes close the circuit and
/// restore full concurrency. See the [crate docs](crate) for what counts and how each
/// delivery is settled.
pub struct Consumer<S: Source> {
    source: Arc<S>,
    breaker: Arc<Breaker>,
    concurrency: usize,
    /// One per handler that may run: shared by every `run` of this consumer.
    slots: Arc<Semaphore>,
    rules: Arc<Rules>,
    counters: Arc<Counters>,
    health: SourceHealth,
    name: Arc<str>,
}

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

    /// The breaker this consumer pulls through.
    pub fn breaker(&self) -> &Arc<Breaker> {
        &self.breaker
    }

    /// The source it pulls from.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// Whether it is pulling, and if paused, when it resumes. While its source's fetches
    /// fail it is [`Degraded`](Status::Degraded), with the last fetch's error, whatever the
    /// circuit says: a consumer that cannot fetch handles nothing. A pause does not end that:
    /// paused, it does not fetch, and the last it knows of its source is the failure.
    pub fn status(&self) -> Status {
        match self.health.trouble() {
            Some(trouble) => Status::Degraded {
                since: trouble.since,
                reason: trouble.reason,
            },
            None => Status::of(&self.breaker),
        }
    }

    /// Its name in logs and metrics: the one given to
    /// [`ConsumerBuilder::name`], or its breaker's.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it did so far.
    pub fn stats(&self) -> Stats {
        Stats {
            limit_reached: self.source.limit_reached(),
            ..self.counters.read()
        }
    }

    /// Pulls and handles messages until `shutdown` fires, then waits for the handlers in flight
    /// to finish and settle, and returns what it did.
    ///
    /// The handler gets each delivery and a token that fires if the circuit opens while it
    /// runs; it answers with [`Handled`] or a [`Failure`]. It runs under the breaker's timeout:
    /// one that outlives it is dropped, counts as a failure, and its message goes back.
    ///
    /// Runs of one consumer from several tasks at once share its `concurrency`: together they
    /// never run more handlers than that.
    pub async fn run<H, Fut, E>(&self, handler: H, shutdown: CancellationToken) -> Stats
    where
        H: Fn(Delivery<S::Payload, S::Id>, CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Handled, Failure<E>>> + Send + 'static,
        E: IsFailure + Error + Send + 'static,
    {
        let handler = Arc::new(handler);
        let openings = Arc::new(Openings::default());
        let _opened = self.breaker.on_transition({
            let openings = Arc::clone(&openings);
            // Weak: the breaker holds this listener.
            let breaker = Arc::downgrade(&self.breaker);
            move |t| {
                // In shadow mode an opening only reports: the deliveries in flight go on.
                let shadow = breaker
                    .upgrade()
                    .is_some_and(|breaker| breaker.mode() == Mode::Shadow);
                if matches!(t.to, State::Open | State::ForcedOpen) && !shadow {
                    openings.fire();
                }
            }
        });
        let mut handlers = JoinSet::new();
        let mut flow = Flow::Unset;
        let mut backoff = Backoff::default();
        loop {
            while handlers.try_join_next().is_some() {}
            let Some(room) = until(&shutdown, self.room()).await else {
                break;
            };
            // Taken before admission: a delivery admitted just before an opening gets the
            // token that opening fires.
            let token = openings.token();
            let Some(mut permits) =
                until(&shutdown, self.admit(&openings, &mut flow, room.len())).await
            else {
                break;
            };
            // Half-open fetches one message per probe it holds; otherwise, what there is room for.
            let probing = permits.first().is_some_and(OwnedPermit::is_probe);
            let want = if probing {
                Want::probes(permits.len())
            } else {
                Want::up_to(room.len())
            };
            bump(&self.counters.fetches, 1);
            let fetched = match until(&shutdown, self.source.fetch(want)).await {
                None => break,
                Some(Ok(fetched)) => {
                    backoff.reset();
                    if let Some(failed_for) = self.health.answered() {
                        metrics::degraded(&self.name, false);
                        tracing::info!(consumer = %self.name, ?failed_for, "the source fetches again: consumer no longer degraded");
                    }
                    fetched
                }
                Some(Err(error)) => {
                    bump(&self.counters.source_errors, 1);
                    metrics::source_error(&self.name);
                    if self.health.failed(&error) {
                        metrics::degraded(&self.name, true);
                        tracing::warn!(consumer = %self.name, %error, "the source cannot fetch: consumer degraded until it can");
                    }
                    let wait = backoff.next();
                    tracing::warn!(consumer = %self.name, %error, ?wait, "fetch failed; trying again");
                    if until(&shutdown, tokio::time::sleep(wait)).await.is_none() {
                        break;
                    }
                    continue;
                }
            };
            bump(&self.counters.delivered, fetched.len() as u64);
            let mut fetched = fetched.into_iter();
            // Slots lead: a zip that runs out of slots has taken no delivery it then drops.
            for (slot, delivery) in room.into_iter().zip(fetched.by_ref()) {
                let permit = match permits.pop() {
                    // Taken before the fetch: the wait for a message is not the call's time.
                    Some(mut permit) => {
                        permit.restart_clock();
                        permit
                    }
                    None => match self.breaker.try_acquire_owned() {
                        Ok(permit) => permit,
                        Err(_) => {
                            // Opened between the fetch and now: back unhandled, nothing recorded.
                            bump(&self.counters.released, 1);
                            settle(
                                &*self.source,
                                &self.counters,
                                delivery.id,
                                Settlement::Retry,
                            )
                            .await;
                            continue;
                        }
                    },
                };
                handlers.spawn(handle(
                    Arc::clone(&self.source),
                    Arc::clone(&handler),
                    Arc::clone(&self.rules),
                    Arc::clone(&self.counters),
                    Handout {
                        delivery,
                        permit,
                        token: token.clone(),
                        slot,
                    },
                ));
            }
            // A source that handed out more than it was asked for: no room to run them.
            for surplus in fetched {
                bump(&self.counters.released, 1);
                settle(&*self.source, &self.counters, surplus.id, Settlement::Retry).await;
            }
        }
        while handlers.join_next().await.is_some() {}
        self.stats()
    }

    /// Waits for one free handler slot, then takes every other one free now.
    async fn room(&self) -> Vec<OwnedSemaphorePermit> {
        let Ok(first) = Arc::clone(&self.slots).acquire_owned().await else {
            // The semaphore is ours and never closed.
            return Vec::new();
        };
        let mut room = vec![first];
        while let Ok(more) = Arc::clone(&self.slots).try_acquire_owned() {
            room.push(more);
        }
        room
    }

    /// Waits until the circuit admits calls. Closed (or in shadow mode, where it never
    /// rejects), that is at once and takes no permit (each delivery takes its own after the
    /// fetch). Otherwise it pauses the source while open,
    /// sleeps until admitted, and returns the permits taken for the fetch: up to `room` probes
    /// while half-open.
    async fn admit(&self, openings: &Openings, flow: &mut Flow, room: usize) -> Vec<OwnedPermit> {
        let shadow = self.breaker.mode() == Mode::Shadow;
        if shadow || matches!(self.breaker.state(), State::Closed | State::Disabled) {
            self.tell(flow, Flow::Flowing(self.concurrency)).await;
            return Vec::new();
        }
        let first = loop {
            if matches!(self.breaker.state(), State::Open | State::ForcedOpen) {
                self.tell(flow, Flow::Paused).await;
            }
            // Waiting for a probe slot while half-open, it may see the probes fail and the
            // circuit open again: it looks again then, to pause the source for the new break.
            tokio::select! {
                permit = self.breaker.admitted_owned() => break permit,
                () = openings.next() => {}
            }
        };
        if !first.is_probe() {
            self.tell(flow, Flow::Flowing(self.concurrency)).await;
            return vec![first];
        }
        self.tell(flow, Flow::Flowing(self.breaker.config().probes() as usize))
            .await;
        let mut permits = vec![first];
        while permits.len() < room {
            match self.breaker.try_acquire_owned() {
                Ok(permit) => permits.push(permit),
                Err(_) => break,
            }
        }
        permits
    }

    /// Tells the source how much it may hand out, if that changed.
    async fn tell(&self, flow: &mut Flow, wanted: Flow) {
        if *flow == wanted {
            return;
        }
        let told = match wanted {
            Flow::Paused => {
                tracing::info!(consumer = %self.name, breaker = %self.breaker.name(), status = %self.status(), "consumer paused: the circuit is open");
                self.source.pause().await
            }
            Flow::Flowing(in_flight) => {
                if *flow == Flow::Paused {
                    tracing::info!(consumer = %self.name, breaker = %self.breaker.name(), in_flight, "consumer resumed");
                }
                self.source.resume(in_flight).await
            }
            Flow::Unset => Ok(()),
        };
        match told {
            Ok(()) => {
                // Counted once the source took it: a pause it refused is asked again, not twice.
                if wanted == Flow::Paused {
                    bump(&self.counters.pauses, 1);
                }
                *flow = wanted;
            }
            // Told again next time round.
            Err(error) => {
                bump(&self.counters.source_errors, 1);
                tracing::warn!(consumer = %self.name, %error, "the source did not take a pause or resume");
            }
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

    /// Counts [`Failure::Permanent`] against the breaker as its `IsFailure` says. Off by
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

/// What one handler task is given.
struct Handout<P, I> {
    delivery: Delivery<P, I>,
    permit: OwnedPermit,
    token: CancellationToken,
    slot: OwnedSemaphorePermit,
}

/// Runs the handler on one delivery under its permit, records how it ended and settles it.
async fn handle<S, H, Fut, E>(
    source: Arc<S>,
    handler: Arc<H>,
    rules: Arc<Rules>,
    counters: Arc<Counters>,
    handout: Handout<S::Payload, S::Id>,
) where
    S: Source,
    H: Fn(Delivery<S::Payload, S::Id>, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Handled, Failure<E>>> + Send + 'static,
    E: IsFailure + Error + Send + 'static,
{
    let Handout {
        delivery,
        permit,
        token,
        slot,
    } = handout;
    bump(&counters.handled, 1);
    let id = delivery.id.clone();
    // Whether the token had fired when the handler returned, read once for both the record
    // and the settlement.
    let fired = AtomicBool::new(false);
    let seen = token.clone();
    // Caught inside the permit, so that the rules, not the permit's own "a panic is a
    // failure", decide what a panic records; the handler is called inside too, so a panic
    // before its first await is caught alike.
    let body = CatchUnwind::new(async move { handler(delivery, token).await });
    let call = permit.run(body, |caught| match caught {
        Ok(answer) => {
            let cancelled = seen.is_cancelled();
            fired.store(cancelled, Ordering::Relaxed);
            rules.ending(answer, cancelled).verdict
        }
        Err(_) => rules.panicked().verdict,
    });
    let settlement = match call.await {
        Ok(Ok(answer)) => {
            rules
                .ending(&answer, fired.load(Ordering::Relaxed))
                .settlement
        }
        Ok(Err(panic)) => {
            bump(&counters.panics, 1);
            let ending = rules.panicked();
            tracing::warn!(
                ?id,
                panic = panic_message(panic.as_ref()),
                settlement = ?ending.settlement,
                "the handler panicked"
            );
            ending.settlement
        }
        // The only answer of the breaker's own to an admitted call: its timeout.
        Err(_) => {
            bump(&counters.timeouts, 1);
            Settlement::Retry
        }
    };
    settle(&*source, &counters, id, settlement).await;
    drop(slot);
}

async fn settle<S: Source>(source: &S, counters: &Counters, id: S::Id, settlement: Settlement) {
    match source.settle(id.clone(), settlement).await {
        Ok(()) => bump(
            match settlement {
                Settlement::Ack => &counters.acked,
                Settlement::Retry => &counters.retried,
                Settlement::DeadLetter => &counters.dead_lettered,
            },
            1,
        ),
        // The broker still holds the delivery and hands it out again its own way.
        Err(error) => {
            bump(&counters.source_errors, 1);
            tracing::warn!(?id, ?settlement, %error, "settling a delivery failed");
        }
    }
}

/// What a panic said, when it said it with a string (as `panic!` and `expect` do).
fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

/// `work`, unless `shutdown` fires first.
async fn until<T>(shutdown: &CancellationToken, work: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased;
        () = shutdown.cancelled() => None,
        done = work => Some(done),
    }
}
