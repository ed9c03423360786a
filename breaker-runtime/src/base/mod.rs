//! What everything else stands on: the clock every reading comes from, the atomics (std's or
//! loom's), breaker names, and the per-thread number that shards a counter.

pub(crate) mod clock;
pub(crate) mod name;
pub(crate) mod sync;
pub(crate) mod thread_slot;
