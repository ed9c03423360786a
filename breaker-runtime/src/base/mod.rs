//! What everything else stands on: the clock every reading comes from, the atomics (std's or
//! loom's), breaker names, the per-thread number that shards a counter, the backoff's random
//! jitter, the slot a value is swapped through while readers hold no lock, and the mark a
//! business answer leaves for a trace.

pub(crate) mod business_answer;
pub(crate) mod clock;
pub(crate) mod name;
pub(crate) mod random;
pub(crate) mod swap;
pub(crate) mod sync;
pub(crate) mod thread_slot;
