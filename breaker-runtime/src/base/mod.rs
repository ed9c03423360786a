//! What everything else stands on: the clock every reading comes from, the atomics (std's or
//! loom's), and breaker names.

pub(crate) mod clock;
pub(crate) mod name;
pub(crate) mod sync;
