//! Whether a call's result counts against the dependency.

use std::sync::Arc;

use crate::outcome::message::Message;

/// Tells the breaker whether a value returned by a guarded call means the dependency is unwell.
///
/// Only failures count against the dependency. A business answer ("not found", "card declined")
/// is the dependency working: classify it as not a failure and it is recorded as a success.
/// Derive it on error enums with `#[derive(IsFailure)]`.
///
/// ```
/// use breaker_runtime::IsFailure;
///
/// enum StockError { Unavailable, UnknownSku }
///
/// impl IsFailure for StockError {
///     fn is_failure(&self) -> bool {
///         matches!(self, StockError::Unavailable)
///     }
/// }
///
/// let declined: Result<u32, StockError> = Err(StockError::UnknownSku);
/// assert!(!declined.is_failure());
/// assert!(Err::<u32, _>(StockError::Unavailable).is_failure());
/// ```
#[diagnostic::on_unimplemented(
    message = "the circuit breaker cannot tell whether `{Self}` means the call failed",
    label = "`{Self}` does not implement `IsFailure`",
    note = "derive it with `#[derive(IsFailure)]` or implement `breaker_runtime::IsFailure` for it; in `#[circuit_breaker]`, `is_failure = path::to::fn` classifies a type you cannot change"
)]
pub trait IsFailure {
    /// The dependency is unwell: count this against it.
    fn is_failure(&self) -> bool;

    /// Neither success nor failure: record nothing.
    fn is_ignored(&self) -> bool {
        false
    }

    /// What the failure says, for the record of why a circuit opened
    /// ([`Opening::last_failure`](crate::Opening::last_failure)); `None` by default. The
    /// crate's own impls (`io::Error`, `BreakerError`, boxed errors, and those of its features)
    /// give their `Display`, and `Result<T, E>` gives its error's. Only read when the circuit
    /// has just opened, so it costs nothing otherwise.
    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        None
    }

    /// Whether the value is a business answer: an error the dependency gave on purpose ("not
    /// found", "card declined"), neither a failure nor ignored. It is a success to the breaker
    /// either way; a [trace](crate::trace) writes it as `healthy` rather than `success`.
    /// `false` by default; `Result<T, E>` says `true` of an `Err` its `E` calls neither a
    /// failure nor ignored.
    ///
    /// ```
    /// use breaker_runtime::IsFailure;
    /// use std::io::{Error, ErrorKind};
    ///
    /// let missing: Result<(), Error> = Err(ErrorKind::NotFound.into());
    /// assert!(missing.is_business_answer());
    /// assert!(!Ok::<(), Error>(()).is_business_answer());
    /// assert!(!Err::<(), Error>(ErrorKind::ConnectionReset.into()).is_business_answer());
    /// ```
    fn is_business_answer(&self) -> bool {
        false
    }
}

/// How a call's outcome is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The dependency answered; counts as a success (or a slow success).
    Success,
    /// The dependency is unwell; counts as a failure.
    Failure,
    /// Record nothing.
    Ignore,
}

impl Verdict {
    /// The verdict for a value, through its [`IsFailure`] impl: ignored is checked first.
    ///
    /// ```
    /// use breaker_runtime::{BreakerError, Verdict};
    /// use std::io::{Error, ErrorKind};
    ///
    /// let missing: Result<(), Error> = Err(ErrorKind::NotFound.into());
    /// assert_eq!(Verdict::of(&missing), Verdict::Success);
    /// let reset: Result<(), Error> = Err(ErrorKind::ConnectionReset.into());
    /// assert_eq!(Verdict::of(&reset), Verdict::Failure);
    /// ```
    pub fn of<T: IsFailure + ?Sized>(value: &T) -> Verdict {
        if value.is_ignored() {
            Verdict::Ignore
        } else if value.is_failure() {
            Verdict::Failure
        } else {
            Verdict::Success
        }
    }
}

impl Verdict {
    /// The verdict for a `Result` whose both sides can fail: the `Ok` value through its own
    /// [`IsFailure`] (an HTTP response with status 503, say) and the `Err` through its. The
    /// plain impl for `Result` counts only the `Err` side.
    ///
    /// ```
    /// use breaker_runtime::{IsFailure, Verdict};
    ///
    /// struct Status(u16);
    /// impl IsFailure for Status {
    ///     fn is_failure(&self) -> bool { self.0 >= 500 }
    /// }
    ///
    /// let answered: Result<Status, std::io::Error> = Ok(Status(503));
    /// assert_eq!(Verdict::of_result(&answered), Verdict::Failure);
    /// assert_eq!(Verdict::of(&answered), Verdict::Success);
    /// ```
    pub fn of_result<T: IsFailure, E: IsFailure>(result: &Result<T, E>) -> Verdict {
        match result {
            Ok(value) => Verdict::of(value),
            Err(error) => Verdict::of(error),
        }
    }
}

impl<T, E: IsFailure> IsFailure for Result<T, E> {
    fn is_failure(&self) -> bool {
        self.as_ref().err().is_some_and(E::is_failure)
    }
    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        self.as_ref().err().and_then(E::failure_message)
    }

    fn is_ignored(&self) -> bool {
        self.as_ref().err().is_some_and(E::is_ignored)
    }

    fn is_business_answer(&self) -> bool {
        self.as_ref()
            .err()
            .is_some_and(|e| !e.is_failure() && !e.is_ignored())
    }
}

impl<E: IsFailure + ?Sized> IsFailure for Box<E> {
    fn is_failure(&self) -> bool {
        (**self).is_failure()
    }
    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        (**self).failure_message()
    }
    fn is_ignored(&self) -> bool {
        (**self).is_ignored()
    }
    fn is_business_answer(&self) -> bool {
        (**self).is_business_answer()
    }
}

impl<E: IsFailure + ?Sized> IsFailure for Arc<E> {
    fn is_failure(&self) -> bool {
        (**self).is_failure()
    }
    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        (**self).failure_message()
    }
    fn is_ignored(&self) -> bool {
        (**self).is_ignored()
    }
}

impl<E: IsFailure + ?Sized> IsFailure for &E {
    fn is_failure(&self) -> bool {
        (**self).is_failure()
    }
    fn failure_message(&self) -> Option<&dyn std::fmt::Display> {
        (**self).failure_message()
    }
    fn is_ignored(&self) -> bool {
        (**self).is_ignored()
    }
}

/// How a [`Call`](crate::Call) classifies the body's value: any `FnOnce(&T) -> Verdict`, or
/// [`ByIsFailure`], the value's own [`IsFailure`] impl.
pub trait Classify<T> {
    /// The verdict for the value.
    fn classify(self, value: &T) -> Verdict;

    /// What a failed value says, if the classifier knows: see [`IsFailure::failure_message`].
    fn message(value: &T) -> Option<&dyn std::fmt::Display> {
        let _ = value;
        None
    }

    /// Whether a value classified as a success is a business answer, if the classifier knows:
    /// see [`IsFailure::is_business_answer`]. Only a traced call asks.
    fn is_business_answer(value: &T) -> bool {
        let _ = value;
        false
    }

    /// What a failed value says, in the words the attribute's expansion finds for its type:
    /// [`message`](Self::message) unless the classifier knows better. Not public API.
    #[doc(hidden)]
    fn __failure(value: &T) -> Option<Message<'_>> {
        Self::message(value).map(Message::Display)
    }
}

impl<T, C: FnOnce(&T) -> Verdict> Classify<T> for C {
    #[inline]
    fn classify(self, value: &T) -> Verdict {
        self(value)
    }
}

/// Classifies a value through its [`IsFailure`] impl: what [`Breaker::call`](crate::Breaker::call) uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByIsFailure;

impl<T: IsFailure> Classify<T> for ByIsFailure {
    #[inline]
    fn classify(self, value: &T) -> Verdict {
        Verdict::of(value)
    }
    fn message(value: &T) -> Option<&dyn std::fmt::Display> {
        value.failure_message()
    }
    fn is_business_answer(value: &T) -> bool {
        value.is_business_answer()
    }
}

/// The verdict for a value that a call ends with at once, in the same poll: a business answer
/// leaves its mark for the call's trace ([`IsFailure::is_business_answer`]).
#[inline]
pub(crate) fn classify_marking<T: IsFailure + ?Sized>(value: &T) -> Verdict {
    let verdict = Verdict::of(value);
    if verdict == Verdict::Success && value.is_business_answer() {
        crate::base::business_answer::mark();
    }
    verdict
}
