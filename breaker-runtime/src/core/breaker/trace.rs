//! A breaker's trace: switched on and off, read, and fed from the calls' events.

use std::sync::OnceLock;

use crate::base::{business_answer, clock};
use crate::core::breaker::Breaker;
use crate::core::breaker::observer::{self, CallEvent, CallObserver, Ending};
use crate::core::trace::recording::Recording;
use crate::core::trace::{self, Entry, Limits, Outcome};

impl Breaker {
    /// Starts recording this breaker's calls ([`trace`](crate::trace)): when each was admitted
    /// or turned away, how long it ran and how it ended, at most `limits` of them (the oldest
    /// dropped first). A trace already running starts again, empty. With a time window, the
    /// trace counts from the start of the window's bucket the moment falls in
    /// ([`trace::bucket_start`](crate::trace::bucket_start)), so that a replay buckets the
    /// calls as the breaker did: its first call may be dated a little after 0.
    ///
    /// Free until then. Once any breaker of the process has traced, every breaker times its
    /// calls (a clock reading at each end, as with a call observer installed), and a traced
    /// breaker takes a short lock at each call's end to add it.
    ///
    /// Record in [shadow mode](crate::Mode::Shadow) to tune from the trace: every call runs,
    /// so every outcome is known.
    ///
    /// ```
    /// use breaker_runtime::trace::{Limits, Outcome};
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let breaker = Breaker::new(Config::builder().name("stock").count_window(2).build().unwrap());
    /// breaker.start_trace(Limits::DEFAULT);
    /// for _ in 0..3 {
    ///     let _ = breaker.call(async { Err::<(), _>(std::io::Error::other("down")) }).await;
    /// }
    /// let outcomes: Vec<Outcome> = breaker.trace().iter().map(|e| e.outcome).collect();
    /// assert_eq!(outcomes, [Outcome::Failure, Outcome::Failure, Outcome::Rejected]);
    /// # }
    /// ```
    pub fn start_trace(&self, limits: Limits) {
        install_tracer();
        let config = self.config();
        let origin = trace::began(config.window(), config.window_kind(), clock::now());
        self.outside()
            .trace
            .get_or_init(|| Box::new(Recording::new()))
            .start(origin, limits);
    }

    /// Stops recording; the trace is kept until the next [`start_trace`](Self::start_trace).
    pub fn stop_trace(&self) {
        if let Some(recording) = self.recording() {
            recording.stop();
        }
    }

    /// Whether the breaker is recording its calls.
    pub fn is_tracing(&self) -> bool {
        self.recording().is_some_and(Recording::is_on)
    }

    /// The calls recorded, in the order they were admitted: empty if the breaker never traced.
    /// [`trace::to_json_lines`](crate::trace::to_json_lines) writes them out.
    pub fn trace(&self) -> Vec<Entry> {
        self.recording().map(Recording::entries).unwrap_or_default()
    }

    pub(crate) fn recording(&self) -> Option<&Recording> {
        self.outside.get()?.trace.get().map(|r| &**r)
    }
}

/// Adds the observer that feeds traces, once per process.
fn install_tracer() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| observer::add_call_observer(Tracer));
    // After the tracer, which takes every mark: a mark left with no tracer to take it would
    // stay on its thread and be read as the next call's.
    business_answer::arm();
}

struct Tracer;

impl CallObserver for Tracer {
    fn on_call(&self, breaker: &Breaker, event: CallEvent) {
        // Taken at every call's end, traced or not, so that no mark outlives its call.
        let business_answer =
            matches!(event, CallEvent::Finished { .. }) && business_answer::take();
        let Some(recording) = breaker.recording().filter(|r| r.is_on()) else {
            return;
        };
        let now = clock::now();
        match event {
            CallEvent::Rejected => recording.add(now, 0, Outcome::Rejected),
            CallEvent::Finished { ending, elapsed } => {
                let outcome = match outcome(ending) {
                    Some(Outcome::Success) if business_answer => Outcome::Healthy,
                    Some(outcome) => outcome,
                    None => return,
                };
                // The observer made the breaker time the call: it always has a duration here.
                let took = elapsed.map_or(0, |e| u64::try_from(e.as_nanos()).unwrap_or(u64::MAX));
                recording.add(now.saturating_sub(took), took, outcome);
            }
            _ => {}
        }
    }
}

/// The trace's word for how a call ended; `None` for a call its caller dropped, which says
/// nothing about the dependency.
fn outcome(ending: Ending) -> Option<Outcome> {
    Some(match ending {
        Ending::Success => Outcome::Success,
        Ending::Slow => Outcome::Slow,
        Ending::Failure | Ending::Panic => Outcome::Failure,
        Ending::Timeout => Outcome::Timeout,
        Ending::Ignored => Outcome::Ignored,
        Ending::Cancelled => return None,
    })
}
