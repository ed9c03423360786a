//! The member's link to the fleet: every transport call bounded in time, the fall back to local
//! behaviour when the fleet is lost, the catch-up when it answers again, and leaving.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::Order;
use tokio::time::Instant;

use super::{Agent, CALL_LIMIT};
use crate::connection::Connection;
use crate::news::Decision;
use crate::stats::Counters;
use crate::transport::Transport;
use crate::view::{Generations, View};

impl<T: Transport> Agent<T> {
    /// Runs one transport call within [`CALL_LIMIT`]; a failure or a timeout loses the fleet.
    /// While flushing, what the member hears meanwhile is let in (see `hear_meanwhile`).
    pub(super) async fn call<R, E: std::fmt::Display>(
        &mut self,
        work: impl Future<Output = Result<R, E>>,
    ) -> Option<R> {
        let mut work = pin!(tokio::time::timeout(CALL_LIMIT, work));
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut work => break outcome,
                Some(heard) = self.inbox.recv(), if self.hearing && self.deferred.is_none() => {
                    self.hear_meanwhile(heard);
                }
            }
        };
        match outcome {
            Ok(Ok(value)) => {
                if self.connection != Connection::Connected {
                    self.found().await;
                }
                Some(value)
            }
            Ok(Err(error)) => {
                self.lost(&error.to_string());
                None
            }
            Err(_) => {
                self.lost("no answer within a second");
                None
            }
        }
    }

    /// The fleet is unreachable: every breaker falls back to exactly its local behaviour, with
    /// what is left of a fleet break. Said once per loss, and once while still connecting.
    pub(super) fn lost(&mut self, why: &str) {
        match self.connection {
            Connection::Connected => {
                self.connection = Connection::Disconnected;
                Counters::bump(&self.counters.disconnects);
                self.counters.set_connection(Connection::Disconnected);
                tracing::warn!(
                    why,
                    "the fleet is unreachable; every breaker acts on its own"
                );
                self.fall_back();
            }
            // Not a loss: nothing was had yet. Said once, for a place down when joining.
            Connection::Connecting if !self.said_unreachable => {
                self.said_unreachable = true;
                tracing::warn!(
                    why,
                    "the fleet does not answer yet; every breaker acts on its own until it does"
                );
            }
            _ => {}
        }
    }

    /// Every breaker back to its local behaviour, with what is left of a fleet break.
    fn fall_back(&mut self) {
        let now = Instant::now();
        for member in self.members.values_mut() {
            let remaining = match member.view {
                View::Local => continue,
                View::Open { ends, .. } => ends.saturating_duration_since(now),
                // Another member's probe: its outcome will not arrive; probe here when asked.
                View::Probing { mine: false, .. } => Duration::ZERO,
                // This member's own probe goes on, decided locally.
                View::Probing { mine: true, .. } => {
                    member.view = View::Local;
                    continue;
                }
            };
            let order = member.generations.extend();
            member.breaker.apply_order(order, Order::Open { remaining });
            member.view = View::Local;
        }
    }

    /// The fleet answers, for the first time or again: catch up on what was decided.
    pub(super) async fn found(&mut self) {
        let first = self.connection == Connection::Connecting;
        self.connection = Connection::Connected;
        self.counters.set_connection(Connection::Connected);
        if first {
            tracing::info!("joined the fleet");
        } else {
            tracing::info!("the fleet is reachable again; catching up on its decisions");
        }
        self.resync().await;
    }

    /// Catches up on the decision stored on each breaker: news newer than this member's is
    /// applied; an opening it applied already and lost with the fleet is taken up again, so
    /// that it takes part in the probe at the break's end and does not judge the same evidence
    /// a second time. What it has already is not a message dropped, and not counted stale.
    pub(super) async fn resync(&mut self) {
        self.refresh_members();
        let names: Vec<String> = self.members.keys().cloned().collect();
        for name in names {
            let transport = Arc::clone(&self.transport);
            let Ok(Ok(Some(news))) =
                tokio::time::timeout(CALL_LIMIT, transport.latest(&name)).await
            else {
                continue;
            };
            let Some(member) = self.members.get(&name) else {
                continue;
            };
            let lost_opening = matches!(news.decision, Decision::Open { remaining } if !remaining.is_zero())
                && news.generation == member.generations.fleet
                && member.view == View::Local;
            if member.generations.is_news(news.generation) {
                self.adopt(news);
            } else if lost_opening {
                // Its breaker is held open for what was left: ordered again, after that.
                self.enact(&name, news.decision, Generations::extend);
            }
        }
    }

    /// Leaving: give the lease back and let every breaker act on its own.
    pub(super) async fn leave(&mut self) {
        let leading: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| matches!(m.view, View::Probing { mine: true, .. }))
            .map(|(name, _)| name.clone())
            .collect();
        for name in leading {
            let _ =
                tokio::time::timeout(CALL_LIMIT, self.transport.release(&name, self.origin)).await;
        }
        self.fall_back();
        self.connection = Connection::Left;
        self.counters.set_connection(Connection::Left);
        tracing::info!("left the fleet, as asked; every breaker acts on its own");
    }
}
