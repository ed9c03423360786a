//! A reconfiguration reaches the call observers, which read the options before and after from
//! the breaker. A binary of its own, since the observers are the process's.

use std::sync::Mutex;

use breaker_runtime::{Breaker, CallEvent, CallObserver, Config, add_call_observer};

const NAME: &str = "observed-reconfigure";

/// The thresholds (before, after) of each reconfiguration of the test's breaker.
static SEEN: Mutex<Vec<(f64, f64)>> = Mutex::new(Vec::new());

struct Changes;

impl CallObserver for Changes {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        if event == CallEvent::Reconfigured && breaker.name() == NAME {
            let change = breaker.last_reconfigured().expect("the change it tells of");
            SEEN.lock().unwrap().push((
                change.before.threshold().percent(),
                change.after.threshold().percent(),
            ));
        }
    }
}

#[test]
fn every_reconfiguration_reaches_the_observers_with_the_values_before_and_after() {
    add_call_observer(Changes);
    let breaker = Breaker::new(
        Config::builder()
            .name(NAME)
            .threshold(50.0)
            .build()
            .unwrap(),
    );
    breaker
        .reconfigure(Config::builder().threshold(20.0).build().unwrap())
        .unwrap();
    breaker.reset_config();
    assert_eq!(*SEEN.lock().unwrap(), [(50.0, 20.0), (20.0, 50.0)]);
}
