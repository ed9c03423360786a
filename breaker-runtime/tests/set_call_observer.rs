//! The deprecated `set_call_observer` keeps its first contract: one observer per process, so
//! the second call is refused and installs nothing. A binary of its own, since the observers
//! are the process's and stay for its life.

#![allow(deprecated)]

use std::sync::atomic::{AtomicU32, Ordering};

use breaker_runtime::{
    Breaker, CallEvent, CallObserver, Config, ObserverAlreadySet, add_call_observer,
    set_call_observer,
};

const NAME: &str = "set-once";

static SEEN: AtomicU32 = AtomicU32::new(0);
static SEEN_BY_ADDED: AtomicU32 = AtomicU32::new(0);

/// Counts the admissions through the test's breaker into `.0`.
struct Admissions(&'static AtomicU32);

impl CallObserver for Admissions {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if event == CallEvent::Admitted && breaker.name() == NAME {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[test]
fn a_second_set_call_observer_is_refused_and_each_call_is_seen_once() {
    // An observer added the new way does not use up the one `set_call_observer` installs.
    add_call_observer(Admissions(&SEEN_BY_ADDED));
    assert_eq!(set_call_observer(Admissions(&SEEN)), Ok(()));
    // As every test that installs "its" observer with `let _ = set_call_observer(..)` does.
    assert_eq!(
        set_call_observer(Admissions(&SEEN)),
        Err(ObserverAlreadySet)
    );

    let breaker = Breaker::new(Config::builder().name(NAME).build().unwrap());
    breaker.try_acquire().unwrap().success();

    assert_eq!(
        SEEN.load(Ordering::Relaxed),
        1,
        "seen once: the refused observer was not installed"
    );
    assert_eq!(SEEN_BY_ADDED.load(Ordering::Relaxed), 1);
}
