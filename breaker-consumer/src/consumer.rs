//! The consumer: fetch what the circuit admits, hand each delivery to the handler under its own
//! permit, and pause the source while the circuit is open.

use std::error::Error;
use std::future::Future;
use std::sync::Arc;

use breaker_runtime::{Breaker, IsFailure, Mode, OwnedPermit, State};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::flow::Flow;
use crate::handling::{Handout, handle, settle};
use crate::metrics;
use crate::openings::Openings;
use crate::reply::{Failure, Handled, Rules};
use crate::source::{Delivery, Settlement, Source, Want};
use crate::stats::{Counters, Stats, bump};
use crate::status::Status;
use crate::trouble::SourceHealth;

/// A queue worker that stops pulling while its circuit breaker is open.
///
/// Closed, up to `concurrency` handlers run at once and fetching follows free capacity. Open,
/// it fetches nothing and sleeps until the break ends; the handlers in flight when it opened
/// see their [`CancellationToken`] fire. Half-open, it fetches at most the breaker's `probes`
/// messages at a time and hands them out as probes; their successes close the circuit and
/// restore full concurrency. See the [crate docs](crate) for what counts and how each
/// delivery is settled.
pub struct Consumer<S: Source> {
    pub(crate) source: Arc<S>,
    pub(crate) breaker: Arc<Breaker>,
    pub(crate) concurrency: usize,
    /// One per handler that may run: shared by every `run` of this consumer.
    pub(crate) slots: Arc<Semaphore>,
    pub(crate) rules: Arc<Rules>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) health: SourceHealth,
    pub(crate) name: Arc<str>,
}

impl<S: Source> Consumer<S> {
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
    /// [`ConsumerBuilder::name`](crate::ConsumerBuilder::name), or its breaker's.
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

/// `work`, unless `shutdown` fires first.
async fn until<T>(shutdown: &CancellationToken, work: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        biased;
        () = shutdown.cancelled() => None,
        done = work => Some(done),
    }
}
