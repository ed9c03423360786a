//! The fleet's one probe: trying for the lease when a break ends, leading the probe while it is
//! held, following whoever holds it, and telling the fleet how the probe ended.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use breaker_runtime::{Order, State, Transition};
use tokio::time::Instant;

use super::Agent;
use crate::news::Decision;
use crate::stats::Counters;
use crate::transport::Transport;
use crate::view::View;

impl<T: Transport> Agent<T> {
    pub(super) async fn act_on_due(&mut self) {
        let now = Instant::now();
        let due: Vec<(String, View)> = self
            .members
            .iter()
            .filter(|(_, m)| m.view.due().is_some_and(|at| at <= now))
            .map(|(name, m)| (name.clone(), m.view))
            .collect();
        for (name, view) in due {
            match view {
                View::Probing { mine: true, .. } => self.renew(&name).await,
                View::Open { .. } | View::Probing { mine: false, .. } => {
                    self.try_to_lead(&name).await
                }
                View::Local => {}
            }
        }
    }

    /// The break is over: one member of the fleet takes the lease and probes.
    pub(super) async fn try_to_lead(&mut self, name: &str) {
        let transport = Arc::clone(&self.transport);
        let lease = self.options.lease;
        let Some(taken) = self.call(transport.lease(name, self.origin, lease)).await else {
            return;
        };
        match taken {
            Some(token) => {
                Counters::bump(&self.counters.leases);
                if self
                    .announce_and_apply(name, token, Decision::Probing, None)
                    .await
                {
                    if let Some(member) = self.members.get_mut(name) {
                        member.view = View::Probing {
                            mine: true,
                            renew_at: Instant::now() + lease.mul_f64(0.8),
                        };
                        let half_open = member.generations.extend();
                        // A failed probe opens the breaker for at most its longest break; held
                        // that long and a lease more, until this member says what comes next.
                        let longest = member.breaker.config().longest_break();
                        let hold = u64::try_from((longest + lease).as_nanos()).unwrap_or(u64::MAX);
                        member.failed_probe.hold.store(hold, Ordering::Relaxed);
                        member
                            .failed_probe
                            .order
                            .store(member.generations.extend(), Ordering::Relaxed);
                        member.breaker.apply_order(half_open, Order::HalfOpen);
                    }
                }
            }
            None => self.follow(name, lease),
        }
    }

    /// Someone else holds the lease: keep rejecting until its result, or its expiry.
    pub(super) fn follow(&mut self, name: &str, lease: Duration) {
        if let Some(member) = self.members.get_mut(name) {
            member.failed_probe.order.store(0, Ordering::Relaxed);
            member.view = View::Probing {
                mine: false,
                renew_at: Instant::now() + lease,
            };
            let order = member.generations.extend();
            member.breaker.apply_order(
                order,
                Order::Open {
                    remaining: lease * 2,
                },
            );
        }
    }

    /// Still probing when most of the lease has run: keep it, unless someone took it.
    pub(super) async fn renew(&mut self, name: &str) {
        let transport = Arc::clone(&self.transport);
        let lease = self.options.lease;
        let Some(kept) = self.call(transport.lease(name, self.origin, lease)).await else {
            return;
        };
        if kept.is_some() {
            if let Some(member) = self.members.get_mut(name) {
                member.view = View::Probing {
                    mine: true,
                    renew_at: Instant::now() + lease.mul_f64(0.8),
                };
            }
        } else {
            self.follow(name, lease);
        }
    }

    /// A transition this process made on its own: the end of a probe it leads, or an opening
    /// on its local evidence.
    pub(super) async fn local_change(&mut self, change: Transition) {
        let name = change.breaker.as_str().to_owned();
        let Some(member) = self.members.get(&name) else {
            return;
        };
        let leading = matches!(member.view, View::Probing { mine: true, .. });
        match (leading, change.from, change.to) {
            (true, State::HalfOpen, State::Closed) => {
                let transport = Arc::clone(&self.transport);
                // The window emptied before the closing goes out: a member that heard the
                // closing and flushed before an emptying that came after would judge the
                // evidence of the outage again, and open the fleet once more. Until the
                // closing, every other member follows the probe and judges nothing.
                let _ = self.call(transport.clear(&name)).await;
                self.decide(&name, Decision::Close).await;
                let _ = self.call(transport.release(&name, self.origin)).await;
            }
            (true, State::HalfOpen, State::Open) => {
                // The break the failed probe began, less the moments since.
                let broke_for = member.failed_probe.broke_for.swap(0, Ordering::Relaxed);
                let remaining = if broke_for == 0 {
                    member.breaker.config().break_duration()
                } else {
                    Duration::from_nanos(broke_for).saturating_sub(change.at.elapsed())
                };
                let transport = Arc::clone(&self.transport);
                self.decide(&name, Decision::Open { remaining }).await;
                let _ = self.call(transport.release(&name, self.origin)).await;
            }
            (false, _, State::Open) if member.view == View::Local => {
                self.counters.local_open(&name);
                tracing::info!(breaker = %name, "opened on this process's evidence alone; the fleet is not told");
            }
            _ => {}
        }
    }
}
