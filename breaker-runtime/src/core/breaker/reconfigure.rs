//! New options for a live breaker, in place: its name, state, window and subscribers stay.
//!
//! The options themselves live in a [`LiveConfig`](crate::core::live_config::LiveConfig),
//! replaced under the lock. Two parts of a breaker are shaped by its options and are replaced
//! whole: the window (its size or kind) and the probe slots. Their replacements live in
//! [`Replacements`], found by a call once a mark in the state word says there are any, and
//! what is replaced is kept until the breaker drops.
//!
//! A window replaced in the middle of a closed period is sealed first: what it held passes to
//! its successor (the newest outcomes that fit, or those the new span covers), and an outcome
//! that arrives at the sealed window records again in the new one, so it counts once. The
//! probe slots of a half-open period stay until the period ends: its probes in flight keep
//! their slots, and a new number of probes applies from the next period after the circuit
//! closes.

use std::sync::PoisonError;
use std::time::SystemTime;

use tokio::time::Instant;

use crate::base::clock;
use crate::base::swap::{Full, Replacements};
use crate::base::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::core::breaker::observer::{self, CallEvent};
use crate::core::breaker::reconfigured::{ConfigSource, Options, Reconfigured, Requester};
use crate::core::breaker::{Breaker, Cold};
use crate::core::config::{Config, ConfigBuilder, ConfigError, Mode, Rate, Settings};
use crate::core::probes::Probes;
use crate::core::state::{State, Word};
use crate::core::window::Window;

/// What reconfigurations make, allocated by the first: most breakers are never reconfigured.
pub(crate) struct Replaced {
    /// The sequence number of the configuration's writers ([`LiveConfig`]).
    ///
    /// [`LiveConfig`]: crate::core::live_config::LiveConfig
    pub(crate) sequence: AtomicU64,
    /// The windows that replaced the breaker's own, the one in force last.
    pub(crate) windows: Replacements<Window>,
    /// Likewise, the probe slots.
    pub(crate) probes: Replacements<Probes>,
    /// Read and written under the breaker's lock, and this one inside it.
    changes: Mutex<Changes>,
}

struct Changes {
    /// The configuration the breaker was built with, for [`Breaker::reset_config`].
    built: Config,
    last: Option<Reconfigured>,
    /// A number of probes, and their rule, to apply once the break and the half-open period
    /// after it are over.
    pending_probes: Option<(u32, Option<Rate>)>,
}

impl Replaced {
    fn changes(&self) -> MutexGuard<'_, Changes> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When the configuration last changed. The caller holds the breaker's lock.
    pub(crate) fn changed_at(&self) -> Option<Instant> {
        Some(self.changes().last.as_ref()?.at)
    }

    /// Bytes on the heap behind what reconfigurations made: every window and set of probe
    /// slots that replaced the breaker's own, kept or in force.
    pub(crate) fn bytes(&self) -> usize {
        let windows: usize = self.windows.all().map(Window::heap_bytes).sum();
        let slots: usize = self.probes.all().map(Probes::heap_bytes).sum();
        size_of::<Replaced>()
            + self.windows.heap_bytes()
            + windows
            + self.probes.heap_bytes()
            + slots
    }
}

impl Breaker {
    /// Gives the live breaker new options, in place, keeping what it knows. Every option
    /// changes but the name: the name in `config` is ignored, and the breaker keeps its own,
    /// its registry entry, its subscribers, its fleet and every handle to it.
    ///
    /// - **Its state stays.** Reconfiguring never moves the circuit: an open circuit stays open
    ///   until the end of the break it opened with (a new `break_duration` applies from the
    ///   next opening); a half-open period keeps its probes in flight and their slots (a new
    ///   `probes` applies from the next half-open period after the circuit closes, or at once
    ///   in any other state); forced open, disabled and the mode an operator set stay. (A
    ///   `mode` that differs from the configuration's before is applied, as
    ///   [`set_mode`](Self::set_mode) would.)
    /// - **Its window stays where it can.** A count window resized keeps its newest outcomes,
    ///   as many as both sizes hold; a time window given a new span keeps the outcomes the new
    ///   span covers (to within a tenth of the old span, the width of its buckets); a window of
    ///   the other kind starts empty, since a count window's outcomes have no times.
    /// - **The new rules judge from the next outcome on**, never at the reconfiguration
    ///   itself: a window already past the new threshold opens on its next recorded outcome.
    /// - **A call admitted before and finished after** is recorded once, in the window in force
    ///   when it finishes, and judged by the rules in force then.
    ///
    /// Emits a `tracing` event with the options before and after, and tells call observers
    /// ([`CallEvent::Reconfigured`]); the [snapshot](Self::snapshot) shows the configuration in
    /// force and when it last changed. Accepts a [`Config`] (its checks already passed) or
    /// [`Settings`] (checked here: the first rule broken is the error, and nothing changes).
    ///
    /// A window or probe slots replaced are kept until the breaker drops, since a call may
    /// still be finishing in them (tens of bytes each; see
    /// [`memory_footprint`](Self::memory_footprint)).
    ///
    /// ```
    /// use breaker_runtime::{Breaker, Config, State, Verdict};
    ///
    /// let breaker = Breaker::new(Config::builder().count_window(10).threshold(50.0).build()?);
    /// for _ in 0..3 {
    ///     breaker.try_acquire().unwrap().record(Verdict::Failure);
    /// }
    /// breaker.reconfigure(Config::builder().count_window(5).threshold(60.0).min_calls(4).build()?)?;
    /// assert_eq!(breaker.snapshot().failures, 3, "the window kept its outcomes");
    /// assert_eq!(breaker.state(), State::Closed, "and nothing was judged at the change");
    /// breaker.try_acquire().unwrap().record(Verdict::Failure);
    /// assert_eq!(breaker.state(), State::Open, "4 of 4 failed: the new rules judged");
    /// # Ok::<(), breaker_runtime::ConfigError>(())
    /// ```
    ///
    /// A `Config` replaces every option, its defaults included: to change some options and keep
    /// the others, use [`update`](Self::update).
    pub fn reconfigure(&self, config: impl Into<Settings>) -> Result<Reconfigured, ConfigError> {
        let settings = config.into();
        self.reconfigure_with(Requester::Code, |_| Ok(settings))
    }

    /// Changes the options `options` sets and keeps every other at its value in force, as the
    /// endpoint's `PUT {name}/config` and a watched file do, by the rules of
    /// [`reconfigure`](Self::reconfigure). Only the options a setter of the builder was called
    /// for change (its name is ignored); they are laid over the options in force under the
    /// breaker's lock, so a change of another option at the same time (an operator's, a file's)
    /// stays. Naming `window` without `min_calls` gives `min_calls` the new window's default,
    /// as in the attribute.
    ///
    /// ```
    /// use std::time::Duration;
    /// use breaker_runtime::{Breaker, Config};
    ///
    /// let breaker = Breaker::new(Config::builder().timeout(Duration::from_secs(2)).build()?);
    /// breaker.update(Config::builder().threshold(30.0))?;
    /// assert_eq!(breaker.config().threshold().percent(), 30.0);
    /// assert_eq!(breaker.config().timeout(), Some(Duration::from_secs(2)), "not named: kept");
    /// # Ok::<(), breaker_runtime::ConfigError>(())
    /// ```
    pub fn update(&self, options: ConfigBuilder) -> Result<Reconfigured, ConfigError> {
        let (values, named) = options.change()?;
        self.reconfigure_with(Requester::Code, |now| now.patched(&values, &named))
    }

    /// Reconfigures with the settings `next` makes of those in force, both under the lock, so
    /// that two changes of different options at once (two operators, a file and an operator)
    /// each keep the other's. `next` is the crate's own code (a patch's `apply`), never a
    /// caller's: nothing else runs under the lock.
    pub(crate) fn reconfigure_with(
        &self,
        by: Requester<'_>,
        next: impl FnOnce(Settings) -> Result<Settings, ConfigError>,
    ) -> Result<Reconfigured, ConfigError> {
        self.reconfigure_from(by, by.source(), next)
    }

    /// As [`reconfigure_with`](Self::reconfigure_with), the options in force then coming from
    /// `source`.
    fn reconfigure_from(
        &self,
        by: Requester<'_>,
        source: ConfigSource,
        next: impl FnOnce(Settings) -> Result<Settings, ConfigError>,
    ) -> Result<Reconfigured, ConfigError> {
        let change = {
            let cold = self.cold();
            let settings = next(self.settled_config().settings())?;
            settings.check()?;
            let next = Config::__checked(self.name().clone(), settings);
            self.swap_config(&cold, next, source)?
        };
        self.announce(&change, by);
        Ok(change)
    }

    /// Puts back the configuration the breaker was built with (the attribute's options, for a
    /// guarded fn), by the rules of [`reconfigure`](Self::reconfigure).
    pub fn reset_config(&self) -> Reconfigured {
        self.reset_config_by(Requester::Code)
    }

    pub(crate) fn reset_config_by(&self, by: Requester<'_>) -> Reconfigured {
        self.reconfigure_from(by, ConfigSource::Built, |_| {
            Ok(self.built_config_locked().settings())
        })
        .unwrap_or_else(|_| self.unchanged())
    }

    /// What a change that changed nothing says: the configuration in force, before and after.
    fn unchanged(&self) -> Reconfigured {
        let config = self.config();
        Reconfigured {
            before: config.clone(),
            after: config,
            at: clock::to_instant(clock::now()),
            at_system: SystemTime::now(),
            source: self.config_source(),
        }
    }

    /// Where the options in force came from.
    pub(crate) fn config_source(&self) -> ConfigSource {
        let _cold = self.cold();
        self.config_source_locked()
    }

    /// Where the options in force came from; the caller holds the lock.
    pub(crate) fn config_source_locked(&self) -> ConfigSource {
        self.replaced()
            .and_then(|r| Some(r.changes().last.as_ref()?.source.clone()))
            .unwrap_or(ConfigSource::Built)
    }

    /// The configuration the breaker was built with, whatever it runs by now.
    pub fn built_config(&self) -> Config {
        let _cold = self.cold();
        self.built_config_locked()
    }

    /// The configuration the breaker was built with; the caller holds the lock.
    fn built_config_locked(&self) -> Config {
        match self.replaced() {
            Some(replaced) => replaced.changes().built.clone(),
            None => self.settled_config(),
        }
    }

    /// The last change of configuration, if there was one.
    pub fn last_reconfigured(&self) -> Option<Reconfigured> {
        let _cold = self.cold();
        self.replaced()?.changes().last.clone()
    }

    /// Replaces the configuration, and the window and probe slots it shapes, under the lock.
    fn swap_config(
        &self,
        _cold: &Cold,
        next: Config,
        source: ConfigSource,
    ) -> Result<Reconfigured, ConfigError> {
        // A configuration that names no `record` means the process's default, as when built.
        let next = next.with_record_resolved(crate::core::config::default_record::default_record());
        let before = self.settled_config();
        let word = self.word();
        let now = clock::now();
        let replaced = self.outside().replaced.get_or_init(|| {
            Box::new(Replaced {
                sequence: AtomicU64::new(0),
                windows: Replacements::new(),
                probes: Replacements::new(),
                changes: Mutex::new(Changes {
                    built: before.clone(),
                    last: None,
                    pending_probes: None,
                }),
            })
        });
        let new_window =
            next.window() != before.window() || next.window_kind() != before.window_kind();
        let new_probes = next.probes() != self.probes().capacity()
            || next.probe_threshold() != self.probes().threshold();
        if (new_window && !replaced.windows.has_room())
            || (new_probes && !replaced.probes.has_room())
        {
            return Err(ConfigError::TooManyReconfigurations);
        }
        let mut changes = replaced.changes();
        if new_window {
            let generation = word.generation();
            // Sealed whatever the state, so that no call takes it for the window in force (the
            // hot path reads the breaker's own window without asking whether it was replaced).
            let carried = self.window().seal(generation);
            let window = if word.state() == State::Closed {
                Window::holding(next.window(), next.window_kind(), generation, &carried)
            } else {
                // Nothing records outside a closed period, and the next one starts empty.
                Window::new(next.window(), next.window_kind(), generation)
            };
            self.install(replaced.windows.replace(window));
        }
        if new_probes {
            if matches!(word.state(), State::Open | State::HalfOpen) {
                // The first call after the break begins the half-open period without the lock,
                // with the slots it finds: they stay until the circuit closes. The mark tells
                // that transition to look for the number waiting.
                changes.pending_probes = Some((next.probes(), next.probe_threshold()));
                self.install(Ok(()));
            } else {
                changes.pending_probes = None;
                let probes = Probes::new(next.probes(), next.probe_threshold());
                self.install(replaced.probes.replace(probes));
            }
        }
        if next.mode() != before.mode() && next.mode() != word.mode() {
            // Release, under the lock, as `set_mode` does.
            match next.mode() {
                Mode::Shadow => self.state.fetch_or(Word::SHADOW_BIT, Ordering::Release),
                Mode::Enforce => self.state.fetch_and(!Word::SHADOW_BIT, Ordering::Release),
            };
        }
        if let Some(record) = next.record().filter(|r| Some(*r) != before.record()) {
            self.apply_record(record);
        }
        if next.warm_up() != before.warm_up() {
            self.set_warm_up(next.warm_up());
        }
        if next.probe_threshold() != before.probe_threshold() {
            self.set_probe_threshold(next.probe_threshold());
        }
        if !word.reconfigured() {
            // Release, before the first word is written: a reader that sees a new word and then
            // reads the state again sees the mark, and checks the sequence.
            self.state
                .fetch_or(Word::RECONFIGURED_BIT, Ordering::Release);
        }
        self.config.store(&next, &replaced.sequence);
        // The window in force (a replacement's, installed above) is judged by the new rules from
        // its next outcome, though that outcome may change no count.
        self.window().rules_changed();
        let change = Reconfigured {
            before,
            after: next,
            at: clock::to_instant(now),
            at_system: SystemTime::now(),
            source,
        };
        changes.last = Some(change.clone());
        Ok(change)
    }

    /// Marks the word once a replacement is in place (or a number of probes waits), so calls
    /// look for it. (Room was checked before anything changed, so a replacement cannot fail.)
    fn install(&self, replaced: Result<(), Full>) {
        if replaced.is_ok() {
            // Release: a call that sees the mark sees the replacement.
            self.state.fetch_or(Word::REPLACED_BIT, Ordering::Release);
        }
    }

    /// Applies a number of probes that waited for the circuit to leave its break and
    /// half-open period, at a transition (under the lock) to a state that uses no probe.
    pub(super) fn apply_pending(&self, _cold: &Cold, to: State) {
        // The state word first, which the transition has just written: a breaker never
        // reconfigured reads nothing else (the transition of a fleet of breakers each a cache
        // miss away paid 40 ns for one more line).
        if matches!(to, State::Open | State::HalfOpen) || !self.word().replaced() {
            return;
        }
        let Some(replaced) = self.replaced() else {
            return;
        };
        let pending = replaced.changes().pending_probes.take();
        if let Some((probes, threshold)) = pending {
            self.install(replaced.probes.replace(Probes::new(probes, threshold)));
        }
    }

    fn announce(&self, change: &Reconfigured, by: Requester<'_>) {
        let name = self.name();
        let changed = change.changed();
        let changed = if changed.is_empty() {
            "nothing changed".to_string()
        } else {
            changed.join(", ")
        };
        tracing::info!(
            breaker = %name,
            from = %by,
            changed = %changed,
            before = %Options(&change.before),
            after = %Options(&change.after),
            "breaker `{name}` reconfigured from {by}: {changed}"
        );
        if observer::installed() {
            observer::notify(self, CallEvent::Reconfigured);
        }
        // A wider break or more probes may let waiting tasks in.
        self.wake_waiters();
    }
}
