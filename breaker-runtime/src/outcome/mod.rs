//! Classification and errors: how a call's result counts ([`IsFailure`](crate::IsFailure),
//! [`Verdict`](crate::Verdict)), and what a rejected or timed-out call answers with
//! ([`BreakerError`](crate::BreakerError)).

pub(crate) mod classify;
pub(crate) mod erased;
pub(crate) mod error;
pub(crate) mod message;
