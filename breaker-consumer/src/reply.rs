//! What a handler answers, and what the breaker and the broker make of it.

use std::error::Error;

use breaker_runtime::{IsFailure, Verdict};

use crate::source::Settlement;

/// A handler that finished its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Handled {
    /// The downstream did its part: a success for the breaker; the message is acked.
    Done,
    /// Answered without reaching the downstream (no handler for its type, a duplicate, a
    /// message to skip): acked, and recorded neither as a success nor as a failure.
    Skipped,
}

/// A handler that did not finish its message.
///
/// `?` on the handler's own error makes it [`Failure::Retry`]; mark a message that can never
/// succeed (poison: it does not parse, it breaks a rule) with [`Failure::Permanent`].
#[derive(Debug)]
pub enum Failure<E> {
    /// Worth another try: the message goes back for redelivery. The error counts against the
    /// breaker as its [`IsFailure`] says, unless the consumer excludes its type.
    Retry(E),
    /// Never worth another try: the message is dead-lettered at once. It says nothing about
    /// the downstream, so the breaker records nothing, unless the consumer is built with
    /// [`count_permanent`](crate::ConsumerBuilder::count_permanent).
    Permanent(E),
}

impl<E> From<E> for Failure<E> {
    fn from(error: E) -> Self {
        Failure::Retry(error)
    }
}

/// How one handled delivery ends: what the breaker records and what the broker is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ending {
    pub(crate) verdict: Verdict,
    pub(crate) settlement: Settlement,
}

/// The rules of the consumer's "what counts" in one place.
pub(crate) struct Rules {
    pub(crate) count_permanent: bool,
    pub(crate) count_panics: bool,
    pub(crate) excluded: Vec<fn(&(dyn Error + 'static)) -> bool>,
}

impl Rules {
    /// How a handler's answer ends. `cancelled` says whether the delivery's token fired before
    /// the handler returned: an error then is the handler honouring it, not a failure.
    pub(crate) fn ending<E>(&self, answer: &Result<Handled, Failure<E>>, cancelled: bool) -> Ending
    where
        E: IsFailure + Error + 'static,
    {
        let (verdict, settlement) = match answer {
            Ok(Handled::Done) => (Verdict::Success, Settlement::Ack),
            Ok(Handled::Skipped) => (Verdict::Ignore, Settlement::Ack),
            Err(_) if cancelled => (Verdict::Ignore, Settlement::Retry),
            Err(Failure::Retry(error)) => (self.verdict(error), Settlement::Retry),
            Err(Failure::Permanent(error)) if self.count_permanent => {
                (self.verdict(error), Settlement::DeadLetter)
            }
            Err(Failure::Permanent(_)) => (Verdict::Ignore, Settlement::DeadLetter),
        };
        Ending {
            verdict,
            settlement,
        }
    }

    /// A handler that panicked. A bug, not an outage: by default its message is poison for
    /// this handler, dead-lettered and recorded nowhere, since a retry of a panicking message
    /// panics again and each one would count against a healthy downstream. With
    /// `count_panics` it is the downstream's failure and the message goes back.
    pub(crate) fn panicked(&self) -> Ending {
        if self.count_panics {
            Ending {
                verdict: Verdict::Failure,
                settlement: Settlement::Retry,
            }
        } else {
            Ending {
                verdict: Verdict::Ignore,
                settlement: Settlement::DeadLetter,
            }
        }
    }

    fn verdict<E: IsFailure + Error + 'static>(&self, error: &E) -> Verdict {
        if self.is_excluded(error) {
            Verdict::Ignore
        } else {
            Verdict::of(error)
        }
    }

    /// Whether the error, or any error in its `source()` chain, is of an excluded type.
    fn is_excluded(&self, error: &(dyn Error + 'static)) -> bool {
        if self.excluded.is_empty() {
            return false;
        }
        let mut next = Some(error);
        while let Some(error) = next {
            if self.excluded.iter().any(|is| is(error)) {
                return true;
            }
            next = error.source();
        }
        false
    }
}

#[cfg(test)]
mod tests;
