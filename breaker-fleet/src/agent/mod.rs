//! The member's one task: it flushes each breaker's outcomes to the fleet window, turns the
//! fleet's evidence into decisions, applies the decisions it hears, and leads the probe while
//! it holds the lease. Callers never wait on it, and nothing it does touches the call path.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::{
    Breaker, Counts, Order, Origin, State, Subscription, Transition, Window, registry,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod failed_probe;
mod lead;
mod link;

use failed_probe::FailedProbe;

use crate::connection::Connection;
use crate::jitter::Jitter;
use crate::news::{Decision, News};
use crate::options::{Choice, Options};
use crate::stats::Counters;
use crate::tally::Tally;
use crate::transport::{Heard, Transport};
use crate::view::{Generations, View};

/// The longest one call to the transport may take before the member counts the fleet lost.
const CALL_LIMIT: Duration = Duration::from_secs(1);

/// One breaker taking part.
struct Member {
    breaker: Arc<Breaker>,
    counted: Counts,
    view: View,
    generations: Generations,
    failed_probe: Arc<FailedProbe>,
    /// Closed calls per second, smoothed over the flushes that saw any.
    rate: Option<f64>,
    _changes: Subscription,
}

pub(crate) struct Agent<T: Transport> {
    transport: Arc<T>,
    options: Options,
    origin: u64,
    counters: Arc<Counters>,
    members: HashMap<String, Member>,
    changes_in: UnboundedSender<Transition>,
    changes: UnboundedReceiver<Transition>,
    /// What the transport hears, and the sender it is given when the member starts.
    inbox: UnboundedReceiver<Heard>,
    inbox_in: Option<UnboundedSender<Heard>>,
    /// Whether news heard while a transport call is awaited is applied at once: only while
    /// flushing, whose steps look at the view again after each call.
    hearing: bool,
    /// A loss or a reconnection heard while flushing, handled once the flush is done (with
    /// everything heard after it, in order).
    deferred: Option<Heard>,
    jitter: Jitter,
    /// Where this member stands with the meeting place (its counters tell the same).
    connection: Connection,
    /// Whether the member said, while still connecting, that the place does not answer yet.
    said_unreachable: bool,
    /// When each of this member's announcements left, to time its echo.
    sent_at: HashMap<(String, u64), Instant>,
}

impl<T: Transport> Agent<T> {
    pub(crate) fn new(
        transport: Arc<T>,
        options: Options,
        origin: u64,
        counters: Arc<Counters>,
    ) -> Self {
        let (changes_in, changes) = unbounded_channel();
        let (inbox_in, inbox) = unbounded_channel();
        let mut agent = Agent {
            transport,
            options,
            origin,
            counters,
            members: HashMap::new(),
            changes_in,
            changes,
            inbox,
            inbox_in: Some(inbox_in),
            hearing: false,
            deferred: None,
            jitter: Jitter::seeded(),
            connection: Connection::Connecting,
            said_unreachable: false,
            sent_at: HashMap::new(),
        };
        // Counting begins now, not at the first flush: outcomes from the moment of joining
        // reach the fleet.
        agent.refresh_members();
        agent
    }

    pub(crate) async fn run(mut self, stop: CancellationToken) {
        let inbox_in = self.inbox_in.take().expect("an agent runs once");
        let listening = self.transport.listen(inbox_in);
        let mut tick = tokio::time::interval(self.options.flush);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if let Some(heard) = self.deferred.take() {
                self.hear(heard).await;
                continue;
            }
            let due = self.members.values().filter_map(|m| m.view.due()).min();
            tokio::select! {
                biased;
                () = stop.cancelled() => break,
                Some(heard) = self.inbox.recv() => self.hear(heard).await,
                Some(change) = self.changes.recv() => self.local_change(change).await,
                () = sleep_until(due) => self.act_on_due().await,
                _ = tick.tick() => self.flush_all().await,
            }
        }
        listening.abort();
        self.leave().await;
    }

    fn refresh_members(&mut self) {
        let chosen: Vec<Arc<Breaker>> = if self.options.breakers.is_empty() {
            registry().breakers()
        } else {
            self.options
                .breakers
                .iter()
                .filter_map(|choice| match choice {
                    Choice::Named(name) => registry().get(name),
                    Choice::Given(breaker) => Some(Arc::clone(breaker)),
                })
                .collect()
        };
        for breaker in chosen {
            let name = breaker.name().as_str().to_owned();
            if self.members.contains_key(&name) {
                continue;
            }
            let changes_in = self.changes_in.clone();
            let failed_probe = Arc::new(FailedProbe::default());
            let (guard, weak) = (Arc::clone(&failed_probe), Arc::downgrade(&breaker));
            // Only this process's own transitions: the fleet's orders are what it applied.
            let changes = breaker.on_transition(move |t| {
                if t.origin != Origin::Local {
                    return;
                }
                if (t.from, t.to) == (State::HalfOpen, State::Open) {
                    if let Some(breaker) = weak.upgrade() {
                        guard.hold_open(&breaker);
                    }
                }
                let _ = changes_in.send(t.clone());
            });
            self.members.insert(
                name,
                Member {
                    counted: breaker.counts(),
                    breaker,
                    view: View::Local,
                    generations: Generations::default(),
                    failed_probe,
                    rate: None,
                    _changes: changes,
                },
            );
        }
    }

    /// Flushes every breaker, hearing the fleet meanwhile: a decision another member announced
    /// while this one waits on its own flush (one or more round trips to the meeting place) is
    /// applied as it arrives, not after them, and this member does not decide it again.
    async fn flush_all(&mut self) {
        self.hearing = true;
        self.flush_each().await;
        self.hearing = false;
    }

    async fn flush_each(&mut self) {
        self.refresh_members();
        let names: Vec<String> = self.members.keys().cloned().collect();
        for name in names {
            let Some(member) = self.members.get(&name) else {
                continue;
            };
            let counts = member.breaker.counts();
            let delta = Tally::between(member.counted, counts);
            let config = member.breaker.config().clone();
            let heard_before = member.generations;
            let span = match config.window() {
                Window::Time(span) => span,
                // The fleet's counterpart of "the last N calls": the time this member's last N
                // calls took at its recent rate, so the fleet window holds about N calls per
                // member, as its members' windows do together.
                Window::Count(calls) => {
                    member.rate.map_or(self.options.count_window_span, |rate| {
                        Duration::from_secs_f64(f64::from(calls) / rate)
                            .clamp(self.options.flush * 2, self.options.count_window_span)
                    })
                }
            };
            let transport = Arc::clone(&self.transport);
            let bucket = self.options.flush;
            let Some(fleet) = self.call(transport.flush(&name, span, bucket, delta)).await else {
                // The delta stays uncounted and goes with the next flush that lands.
                return;
            };
            let Some(member) = self.members.get_mut(&name) else {
                continue;
            };
            member.counted = counts;
            // The rate while calls flow: an open breaker's silence does not widen the window.
            if delta.calls > 0 {
                let now = delta.calls as f64 / self.options.flush.as_secs_f64();
                member.rate = Some(member.rate.map_or(now, |rate| 0.8 * rate + 0.2 * now));
            }
            let min_calls = u64::from(self.options.min_calls.unwrap_or(config.min_calls()));
            // Judged whatever the local state: members that opened on their own evidence at the
            // same moment still need the fleet's decision, or each would probe on its own.
            // News heard while the window was being read is newer than the reading, and judges
            // in its place: a closing heard meanwhile emptied a window the reading still counts.
            if member.view != View::Local || member.generations != heard_before {
                continue;
            }
            if let Some(rule) = fleet.trips(&config, min_calls.max(1)) {
                tracing::warn!(breaker = %name, ?rule, ?fleet, "the fleet is over its threshold: opening it everywhere");
                let remaining = config.break_duration();
                if self.decide(&name, Decision::Open { remaining }).await {
                    Counters::bump(&self.counters.fleet_opens);
                }
            }
        }
    }

    /// Announces a decision of this member under a fresh generation, and applies it here;
    /// answers whether it did. Not when the fleet decided meanwhile: news heard while the
    /// generation was taken, or a decision stored that this member has not heard yet (another
    /// member that read the same window at the same moment and announced first).
    async fn decide(&mut self, name: &str, decision: Decision) -> bool {
        let transport = Arc::clone(&self.transport);
        let heard_before = self.members.get(name).map(|m| m.generations);
        let Some(generation) = self.call(transport.generation(name)).await else {
            return false;
        };
        // News heard while the generation was taken is the fleet's decision, already applied
        // here: this one, on an older reading, would only repeat it, or, under a generation
        // taken after a closing, undo that closing everywhere.
        let heard_since = self.members.get(name).map(|m| m.generations);
        let Some(known) = heard_before.filter(|_| heard_since == heard_before) else {
            return false;
        };
        // The same, for news not heard yet: a decision stored after the newest this member
        // applied is dropped with it, in the same atomic step as the announcement.
        self.announce_and_apply(name, generation, decision, Some(known.fleet))
            .await
    }

    /// Announces `decision` under `generation` and applies it here, unless newer news
    /// overtook it meanwhile; with `known`, only if no decision after that generation is
    /// stored (see [`Transport::announce_unless_decided`]).
    async fn announce_and_apply(
        &mut self,
        name: &str,
        generation: u64,
        decision: Decision,
        known: Option<u64>,
    ) -> bool {
        let news = News {
            breaker: name.to_owned(),
            origin: self.origin,
            generation,
            decision,
        };
        let transport = Arc::clone(&self.transport);
        if self.sent_at.len() > 1024 {
            self.sent_at.clear();
        }
        // Stamped as it leaves: its echo can be heard before the call returns.
        let key = (name.to_owned(), generation);
        self.sent_at.insert(key.clone(), Instant::now());
        let announced = match known {
            Some(known) => {
                self.call(transport.announce_unless_decided(&news, known))
                    .await
            }
            None => self.call(transport.announce(&news)).await.map(|()| true),
        };
        match announced {
            Some(true) => {}
            Some(false) => {
                self.sent_at.remove(&key);
                tracing::debug!(breaker = %name, %decision, generation, "another member decided first");
                return false;
            }
            None => {
                self.sent_at.remove(&key);
                return false;
            }
        }
        self.counters.sent();
        // Newer news heard while this decision was on its way overtakes it, here as in every
        // other member, which hears the two in the same order. Only while flushing: otherwise
        // nothing is heard between taking a generation and applying it, and a renewed lease
        // hands back a token this member may have applied already.
        let overtaken = self
            .members
            .get(name)
            .is_some_and(|m| !m.generations.is_news(generation));
        if self.hearing && overtaken {
            return false;
        }
        self.apply(name, generation, decision);
        true
    }

    /// Makes `decision` of fleet generation `generation` this member's view and its breaker's
    /// state.
    fn apply(&mut self, name: &str, generation: u64, decision: Decision) {
        self.enact(name, decision, |generations| generations.adopt(generation));
    }

    /// Makes `decision` this member's view and its breaker's state, under the order generation
    /// `order` picks.
    pub(super) fn enact(
        &mut self,
        name: &str,
        decision: Decision,
        order: impl FnOnce(&mut Generations) -> u64,
    ) {
        let lease = self.options.lease;
        let jitter = self.options.jitter * self.jitter.fraction();
        let spread = self.options.jitter;
        let Some(member) = self.members.get_mut(name) else {
            return;
        };
        let order = order(&mut member.generations);
        let now = Instant::now();
        match decision {
            Decision::Open { remaining } => {
                // The breaker stays open past the break, by the most any member waits for its
                // jitter and a lease more, so that the lease, not its own clock, decides who
                // probes.
                let hold = remaining + remaining.mul_f64(spread) + lease;
                member
                    .breaker
                    .apply_order(order, Order::Open { remaining: hold });
                member.view = View::Open {
                    ends: now + remaining,
                    attempt_at: now + remaining + remaining.mul_f64(jitter),
                };
            }
            Decision::Probing => {
                member.view = View::Probing {
                    mine: false,
                    renew_at: now + lease,
                };
                member.breaker.apply_order(
                    order,
                    Order::Open {
                        remaining: lease * 2,
                    },
                );
            }
            Decision::Close => {
                member.view = View::Local;
                member.breaker.apply_order(order, Order::Close);
            }
        }
    }

    async fn hear(&mut self, heard: Heard) {
        match heard {
            Heard::News(news) => self.hear_news(news),
            Heard::Connected(false) => self.lost("the news feed was lost"),
            // The feed answers: so does the place, first or again.
            Heard::Connected(true) if self.connection != Connection::Connected => {
                self.found().await;
            }
            Heard::Connected(true) => self.resync().await,
        }
    }

    /// What a transport call awaited while flushing lets in: news is applied at once; the
    /// first loss or reconnection waits for the main loop, and everything heard after it too.
    pub(super) fn hear_meanwhile(&mut self, heard: Heard) {
        match heard {
            Heard::News(news) => self.hear_news(news),
            other => self.deferred = Some(other),
        }
    }

    fn hear_news(&mut self, news: News) {
        self.counters.received();
        if news.origin == self.origin {
            if let Some(sent) = self
                .sent_at
                .remove(&(news.breaker.clone(), news.generation))
            {
                self.counters.echo(sent.elapsed());
            }
            return;
        }
        self.adopt(news);
    }

    /// Applies news from another member, unless it is older than what this one knows.
    fn adopt(&mut self, news: News) {
        let Some(member) = self.members.get(&news.breaker) else {
            return;
        };
        if !member.generations.is_news(news.generation) {
            Counters::bump(&self.counters.stale);
            return;
        }
        tracing::debug!(breaker = %news.breaker, decision = %news.decision, generation = news.generation, "fleet news");
        self.apply(&news.breaker, news.generation, news.decision);
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
