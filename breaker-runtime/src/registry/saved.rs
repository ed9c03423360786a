//! Every registered breaker's state saved at once, and put back at once: a file of another
//! version, one that contradicts itself, or one naming a breaker this process has not
//! registered is refused whole, so that no breaker starts half restored.

use std::sync::Arc;
use std::time::SystemTime;

use crate::core::breaker::Breaker;
use crate::core::saved::{self, RestoreError, Restored, SAVED_STATE_VERSION, SavedStates};
use crate::registry::Registry;

impl Registry {
    /// Every registered breaker's state now, to save on shutdown and put back at the next start
    /// with [`restore`](Self::restore) (as JSON with the `serde` feature: `export_json`).
    pub fn saved_states(&self) -> SavedStates {
        SavedStates::new(self.breakers().iter().map(|b| b.saved_state()).collect())
    }

    /// Puts back the states another process saved, each as far as its breaker's own options
    /// allow ([`Breaker::restore`]). Refused whole, with nothing changed, when the format is
    /// another version, a state contradicts itself, a breaker is saved twice, or one is not
    /// registered here (the error names it, and the registered names nearest to it).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use breaker_runtime::{Breaker, Config, RestoreError, State, registry};
    ///
    /// let breaker = Arc::new(Breaker::new(Config::builder().name("geo").count_window(1).build()?));
    /// registry().register(Arc::clone(&breaker))?;
    /// breaker.try_acquire()?.failure();
    /// let saved = registry().saved_states();
    ///
    /// breaker.reset();
    /// let restored = registry().restore(&saved)?;
    /// assert!(restored.iter().any(|r| r.name == "geo" && r.state == State::Open));
    /// assert_eq!(breaker.state(), State::Open);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn restore(&self, saved: &SavedStates) -> Result<Vec<Restored>, RestoreError> {
        if saved.version != SAVED_STATE_VERSION {
            return Err(RestoreError::Version {
                found: saved.version,
                expected: SAVED_STATE_VERSION,
            });
        }
        let registered = self.breakers();
        let mut plan: Vec<(Arc<Breaker>, usize)> = Vec::with_capacity(saved.breakers.len());
        for (index, state) in saved.breakers.iter().enumerate() {
            if saved.breakers[..index].iter().any(|s| s.name == state.name) {
                return Err(RestoreError::Duplicate {
                    name: state.name.clone(),
                });
            }
            saved::check(state)?;
            let Some(breaker) = registered.iter().find(|b| b.name() == state.name.as_str()) else {
                let names = registered.iter().map(|b| b.name().as_str());
                return Err(RestoreError::UnknownBreaker {
                    name: state.name.clone(),
                    nearest: breaker_options::nearest(&state.name, names)
                        .into_iter()
                        .map(str::to_owned)
                        .collect(),
                });
            };
            plan.push((Arc::clone(breaker), index));
        }
        let wall = SystemTime::now();
        Ok(plan
            .into_iter()
            .map(|(breaker, index)| breaker.put_back(&saved.breakers[index], wall))
            .collect())
    }
}
