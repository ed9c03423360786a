//! One delivery's run: the handler under its permit, the record of how it ended, and the
//! settlement on the broker.

use std::any::Any;
use std::error::Error;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use breaker_runtime::{IsFailure, OwnedPermit};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;

use crate::reply::{Failure, Handled, Rules};
use crate::source::{Delivery, Settlement, Source};
use crate::stats::{Counters, bump};
use crate::unwind::CatchUnwind;

/// What one handler task is given.
pub(crate) struct Handout<P, I> {
    pub(crate) delivery: Delivery<P, I>,
    pub(crate) permit: OwnedPermit,
    pub(crate) token: CancellationToken,
    pub(crate) slot: OwnedSemaphorePermit,
}

/// Runs the handler on one delivery under its permit, records how it ended and settles it.
pub(crate) async fn handle<S, H, Fut, E>(
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
        // The breaker's own answers to an admitted call: a failure injected on purpose, which
        // stands for an outage, and its timeout. Either is sent back, as a failure is.
        Err(error) if error.is_injected() => {
            bump(&counters.injected, 1);
            Settlement::Retry
        }
        Err(_) => {
            bump(&counters.timeouts, 1);
            Settlement::Retry
        }
    };
    settle(&*source, &counters, id, settlement).await;
    drop(slot);
}

pub(crate) async fn settle<S: Source>(
    source: &S,
    counters: &Counters,
    id: S::Id,
    settlement: Settlement,
) {
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
