//! What the attribute's expansion reaches the runtime through. Not public API: it may change in
//! any release.

pub use std::sync::LazyLock;
pub use std::time::Duration;

pub use linkme;

pub use crate::base::name::Name;
pub use crate::core::config::{
    BreakGrowth, Config, Mode, Rate, Record, Settings, Window, WindowKind,
};
pub use crate::fallback::stale::StaleCache;
pub use crate::outcome::classify::{IsFailure, Verdict};
pub use crate::outcome::error::BreakerError;
pub use crate::outcome::message::Message;
pub use crate::policy::Policy;
pub use crate::policy::attempts::{Attempted, Attempts, Verdicted, backoff, within_deadline};
pub use crate::registry::declaration::Location;
pub use crate::registry::declaration::{DECLARATIONS, Declaration, Fallbacks};
pub use crate::registry::handle::Handle;
pub use breaker_options::{Backoff, PolicySettings, RetryBudget};

/// The breaker's reading of an instant, in nanoseconds: lets a reference model in the tests
/// place outcomes in the same time-window buckets as the breaker.
pub fn clock_nanos(instant: tokio::time::Instant) -> u64 {
    crate::base::clock::to_nanos(instant)
}

/// The verdict for a guarded fn's return value, through its `IsFailure` impl. The guarded call
/// ends in the same poll, so a business answer leaves its mark for the trace.
#[inline]
pub fn classify<T: IsFailure>(value: &T) -> Verdict {
    crate::outcome::classify::classify_marking(value)
}

/// The verdict from an `is_failure = path` classifier.
#[inline]
pub fn verdict_of_failure(failed: bool) -> Verdict {
    if failed {
        Verdict::Failure
    } else {
        Verdict::Success
    }
}

/// A return type that can carry the breaker's own answer (a rejection or a timeout) when the
/// attribute has no fallback.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot carry the circuit breaker's rejection",
    label = "without a `fallback`, a guarded fn must return `Result<T, E>` where `E: From<BreakerError>`",
    note = "add a `#[from] BreakerError` variant to the error type (or implement `From<BreakerError>` for it), or give the attribute a `fallback = ...`"
)]
pub trait FromRejection {
    /// The value a rejected or timed-out call returns.
    fn from_rejection(error: BreakerError) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T, E: From<BreakerError>> FromRejection for Result<T, E> {
    #[inline]
    fn from_rejection(error: BreakerError) -> Self {
        Err(E::from(error))
    }
}

/// An argument the fallback needs a copy of, because the body takes the original.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is taken by value, so the fallback needs a clone of it",
    label = "this argument must be `Clone` to be passed to the fallback too",
    note = "derive or implement `Clone` for it, or take the argument by reference (`&{Self}`)"
)]
pub trait FallbackArg: Sized {
    /// The copy handed to the fallback.
    fn duplicate(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Clone> FallbackArg for T {
    #[inline]
    fn duplicate(&self) -> Self {
        self.clone()
    }
}

/// An argument each retry needs its own copy of, because the body takes it by value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is taken by value, so each retry needs a clone of it",
    label = "this argument must be `Clone` for `retries` to run the body again",
    note = "derive or implement `Clone` for it, or take the argument by reference (`&{Self}`)"
)]
pub trait RetryArg: Sized {
    /// The copy one attempt takes.
    fn duplicate(&self) -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Clone> RetryArg for T {
    #[inline]
    fn duplicate(&self) -> Self {
        self.clone()
    }
}

/// What `#[derive(IsFailure)]` asks a `#[breaker(transparent)]` field, so that a field type
/// without `IsFailure` gets a message about the derive, not about the attribute's options.
#[diagnostic::on_unimplemented(
    message = "`#[breaker(transparent)]` asks `{Self}` whether the call failed, but `{Self}` does not implement `IsFailure`",
    label = "this field's type does not implement `IsFailure`",
    note = "derive it with `#[derive(IsFailure)]` or implement `breaker_runtime::IsFailure` for `{Self}`; or mark the variant `#[breaker(failure)]`, `#[breaker(healthy)]` or `#[breaker(ignore)]` instead of `transparent`"
)]
pub trait TransparentField {
    /// The field's `IsFailure::is_failure`.
    fn is_failure(&self) -> bool;
    /// The field's `IsFailure::is_ignored`.
    fn is_ignored(&self) -> bool;
}

#[diagnostic::do_not_recommend]
impl<T: IsFailure + ?Sized> TransparentField for T {
    #[inline]
    fn is_failure(&self) -> bool {
        IsFailure::is_failure(self)
    }
    #[inline]
    fn is_ignored(&self) -> bool {
        IsFailure::is_ignored(self)
    }
}

/// The policy's parts on their own, for the benchmarks that hold them to their budgets.
pub mod bench {
    use crate::policy::Policy;

    /// One retry budget check (and the retry counted when it passes), as after a failure.
    pub fn retry_check(policy: &Policy) -> bool {
        policy
            .budget
            .as_ref()
            .is_some_and(|budget| budget.withdraw())
    }

    /// One call into the retry budget, as every call with retries makes.
    pub fn retry_deposit(policy: &Policy) {
        if let Some(budget) = &policy.budget {
            budget.deposit();
        }
    }

    /// One bulkhead admission, and the slot given back.
    pub fn bulkhead_admission(policy: &Policy) -> bool {
        policy
            .bulkhead
            .as_ref()
            .is_some_and(|bulkhead| bulkhead.try_enter().is_some())
    }
}

/// An argument's owned type that can be part of `stale_for`'s key.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot key the answers `stale_for` keeps",
    label = "`stale_for` keys its answers by the arguments, so this type must be `Hash + Eq + Clone`",
    note = "derive `Clone, PartialEq, Eq, Hash` for it, or remove `stale_for`"
)]
pub trait StaleKeyPart {}

impl<T: std::hash::Hash + Eq + Clone> StaleKeyPart for T {}

/// Checks, on the argument's own type, that it can be part of `stale_for`'s key: so the error
/// points at that argument rather than at the attribute.
pub fn stale_key_part<T: StaleKeyPart + ?Sized>() {}

/// The arguments of a fn with `stale_for`, as the key of its answers. Each argument is checked
/// on its own first ([`stale_key_part`]), so this says only what the whole key needs.
#[diagnostic::on_unimplemented(
    message = "`stale_for` cannot key its answers by the arguments `{Self}`",
    label = "`stale_for` keys its answers by the arguments, so each must be `Hash + Eq + Clone`",
    note = "derive `Clone, PartialEq, Eq, Hash` for the argument's type named above, or remove `stale_for`"
)]
pub trait StaleKey: std::hash::Hash + Eq + Clone {}

#[diagnostic::do_not_recommend]
impl<K: std::hash::Hash + Eq + Clone> StaleKey for K {}

/// The return type of a fn with `stale_for`: its answers are kept and served again, so they
/// must be `Clone`. The expansion reaches its cache only through [`StaleAnswer::cache`], on the
/// return type's span, so a return type that is not `Clone` is told so there, once, instead of
/// in the cache's bounds.
#[diagnostic::on_unimplemented(
    message = "`stale_for` keeps answers to serve them again: the return type `{Self}` must be `Clone`",
    label = "`stale_for` keeps copies of this type, so it must be `Clone`",
    note = "derive or implement `Clone` for it (for a `Result`, for its error type too), or remove `stale_for`"
)]
pub trait StaleAnswer: Sized {
    /// The cache, with its bounds checked.
    fn cache<K: StaleKey>(cache: &StaleCache<K, Self>) -> &dyn StaleOps<K, Self>;
}

#[diagnostic::do_not_recommend]
impl<V: Clone> StaleAnswer for V {
    #[inline]
    fn cache<K: StaleKey>(cache: &StaleCache<K, V>) -> &dyn StaleOps<K, V> {
        cache
    }
}

/// A [`StaleCache`] whose bounds were checked: what the expansion calls, with no bound left to
/// fail at each use.
pub trait StaleOps<K, V> {
    /// [`StaleCache::keep`].
    fn keep(&self, key: K, value: &V);
    /// [`StaleCache::stale`].
    fn stale(&self, key: &K) -> Option<V>;
}

impl<K: StaleKey, V: Clone> StaleOps<K, V> for StaleCache<K, V> {
    #[inline]
    fn keep(&self, key: K, value: &V) {
        StaleCache::keep(self, key, value);
    }
    #[inline]
    fn stale(&self, key: &K) -> Option<V> {
        StaleCache::stale(self, key)
    }
}

/// A guarded fn's value, asked whether `stale_for` may keep it: a `Result` only when it is
/// `Ok` (as [`StaleCache::keep_ok`]), any other value when it got here (its classifier called
/// it a success). Settled on the concrete type (autoref specialization): call it as
/// `(&&Keepable(&value)).keepable()` with [`IsKeepable`] in scope.
pub struct Keepable<'a, T>(pub &'a T);

/// See [`Keepable`].
pub trait IsKeepable {
    /// Whether the value may be kept and served again.
    fn keepable(&self) -> bool;
}

impl<T, E> IsKeepable for &Keepable<'_, Result<T, E>> {
    #[inline]
    fn keepable(&self) -> bool {
        self.0.is_ok()
    }
}

impl<T> IsKeepable for Keepable<'_, T> {
    #[inline]
    fn keepable(&self) -> bool {
        true
    }
}

/// One attempt of a guarded fn: its body, which ends in its value, the value's verdict and how
/// to describe its failure, run through the breaker. A counted failure's words reach the
/// breaker as it records it, out of line, so that the way back of an answered call carries
/// nothing for them.
#[inline(always)]
pub fn attempt<F, T, D>(breaker: &crate::Breaker, body: F) -> crate::Call<'_, F, Guarded>
where
    F: std::future::Future<Output = (T, Verdict, D)>,
    D: Describer<T>,
{
    breaker.call_classified(body, Guarded)
}

/// The classifier of [`attempt`]: the verdict the body found, and the words of its failure.
pub struct Guarded;

impl<T, D: Describer<T>> crate::Classify<(T, Verdict, D)> for Guarded {
    #[inline(always)]
    fn classify(self, value: &(T, Verdict, D)) -> Verdict {
        value.1
    }

    fn __failure(value: &(T, Verdict, D)) -> Option<Message<'_>> {
        value.2.describe(&value.0)
    }
}

/// What a guarded fn's failure says, chosen for its return type: a closure the expansion
/// writes where the type is known ([`describer`]), or [`Silent`] where it is opaque.
pub trait Describer<T> {
    /// The failure's words, if the type can say.
    fn describe<'a>(&self, value: &'a T) -> Option<Message<'a>>;
}

impl<T, D: for<'a> Fn(&'a T) -> Option<Message<'a>>> Describer<T> for D {
    #[inline]
    fn describe<'a>(&self, value: &'a T) -> Option<Message<'a>> {
        self(value)
    }
}

/// The describer of a value of type `T`: pins the closure's signature, so that the
/// autoref choice in it ([`Describe`]) is made on `T`.
#[inline(always)]
pub fn describer<T, D: for<'a> Fn(&'a T) -> Option<Message<'a>>>(describe: D) -> D {
    describe
}

/// The describer of an opaque return type (`impl Trait`), which says nothing.
pub struct Silent<T>(std::marker::PhantomData<fn(&T)>);

/// The [`Silent`] describer of `value`'s type.
#[inline(always)]
pub fn silent<T>(_value: &T) -> Silent<T> {
    Silent(std::marker::PhantomData)
}

impl<T> Describer<T> for Silent<T> {
    fn describe<'a>(&self, _value: &'a T) -> Option<Message<'a>> {
        None
    }
}

/// A guarded fn's value, asked what its failure says: by the error's `Display`, else its
/// `Debug`, else the value's [`IsFailure::failure_message`], else nothing. Which one applies is
/// settled at compile time on the concrete type (autoref specialization): call it as
/// `(&&&&Describe(&value)).failure()` with [`DescribeFailure`] in scope.
pub struct Describe<'a, T>(pub &'a T);

/// See [`Describe`].
pub trait DescribeFailure<'a> {
    /// What the failure says, if the type can say.
    fn failure(&self) -> Option<Message<'a>>;
}

impl<'a, T, E: std::fmt::Display> DescribeFailure<'a> for &&&Describe<'a, Result<T, E>> {
    fn failure(&self) -> Option<Message<'a>> {
        self.0.as_ref().err().map(|e| Message::Display(e))
    }
}

impl<'a, T, E: std::fmt::Debug> DescribeFailure<'a> for &&Describe<'a, Result<T, E>> {
    fn failure(&self) -> Option<Message<'a>> {
        self.0.as_ref().err().map(|e| Message::Debug(e))
    }
}

impl<'a, T: IsFailure> DescribeFailure<'a> for &Describe<'a, T> {
    fn failure(&self) -> Option<Message<'a>> {
        self.0.failure_message().map(Message::Display)
    }
}

impl<'a, T> DescribeFailure<'a> for Describe<'a, T> {
    fn failure(&self) -> Option<Message<'a>> {
        None
    }
}
