//! What everything else stands on: the clock every reading comes from, the atomics (std's or
//! loom's), breaker names, the per-thread number that shards a counter, and the backoff's
//! random jitter, and the
//! slot a value is swapped through while readers hold no lock.

pub(crate) mod clock;
pub(crate) mod name;
pub(crate) mod random;
pub(crate) mod swap;
pub(crate) mod sync;
pub(crate) mod thread_slot;
