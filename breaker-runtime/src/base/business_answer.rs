//! The mark a classifier leaves when the value it just classified as a success is a business
//! answer ("not found", "declined"), for a trace to write `healthy` where a breaker only sees a
//! success.
//!
//! The call that classified the value ends in the same poll, on the same thread, and its end is
//! where the trace takes the mark: a thread-local carries it that far. No mark is left until a
//! trace is started, so until then a classification pays nothing for it.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether any breaker of the process has traced.
static ARMED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static MARKED: Cell<bool> = const { Cell::new(false) };
}

/// From now on, business answers are marked. (Never disarmed: a trace may start again.)
pub(crate) fn arm() {
    ARMED.store(true, Ordering::Relaxed);
}

/// Marks the value just classified as a business answer, if a trace may want to know.
#[cold]
pub(crate) fn mark() {
    if ARMED.load(Ordering::Relaxed) {
        MARKED.set(true);
    }
}

/// Whether the call ending now on this thread was marked; the mark is gone after.
pub(crate) fn take() -> bool {
    MARKED.replace(false)
}
