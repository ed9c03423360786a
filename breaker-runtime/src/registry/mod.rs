//! Every breaker in the program, listed from program start.
//!
//! Each `#[circuit_breaker]` function places a [`Declaration`] in a link-time list
//! ([`linkme`]), so the registry knows every declared breaker before any of them is called.
//! Breakers built by hand join with [`Registry::register`].

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError, RwLock};

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::breaker::snapshot::Snapshot;
use crate::core::events::{self, Subscription, Transition};
use crate::outcome::error::EXPLAIN_OPENING;
use crate::registry::conflict::{Conflict, NameClash, RegistryError, announced};
use crate::registry::declaration::{DECLARATIONS, Declaration, Location};

pub(crate) mod conflict;
pub(crate) mod declaration;
mod explain;
pub(crate) mod handle;
pub(crate) mod health;
mod saved;
#[cfg(feature = "test-util")]
pub(crate) mod scope;

struct Entry {
    breaker: Arc<Breaker>,
    declarations: Vec<&'static Declaration>,
}

/// Every breaker in the program: list them, look one up, watch their transitions.
///
/// ```
/// use std::sync::Arc;
/// use breaker_runtime::{registry, Breaker, Config, State};
///
/// let breaker = Arc::new(Breaker::new(Config::builder().name("geo-lookup").build().unwrap()));
/// registry().register(Arc::clone(&breaker)).unwrap();
///
/// registry().get("geo-lookup").unwrap().force_open();
/// assert_eq!(breaker.state(), State::ForcedOpen);
/// let listed = registry().snapshot();
/// assert!(listed.iter().any(|s| s.name() == "geo-lookup" && s.state == State::ForcedOpen));
/// ```
pub struct Registry {
    entries: RwLock<Vec<Entry>>,
    conflicts: Vec<Conflict>,
    clashes: Mutex<Vec<NameClash>>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    // Every registered breaker's open rejections now say why it opened.
    let _ = EXPLAIN_OPENING.set(explain::opening_behind);
    Registry::from_declarations(&DECLARATIONS)
});

/// The program's registry of breakers.
///
/// ```
/// use breaker_runtime::{circuit_breaker, registry, BreakerError, State};
///
/// #[circuit_breaker(name = "rates-api")]
/// async fn rates() -> Result<f64, BreakerError> {
///     Ok(1.08)
/// }
///
/// // Listed before its first call, and operable by name.
/// let breaker = registry().get("rates-api").unwrap();
/// assert_eq!(breaker.state(), State::Closed);
/// breaker.disable();
/// assert_eq!(registry().get("rates-api").unwrap().state(), State::Disabled);
/// ```
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    fn from_declarations(declarations: &'static [Declaration]) -> Registry {
        let mut ordered: Vec<&'static Declaration> = declarations.iter().collect();
        ordered.sort_by_key(|d| (d.location, d.default_name));

        let mut shared: BTreeMap<&'static str, Vec<&'static Declaration>> = BTreeMap::new();
        for declaration in ordered.iter().filter(|d| d.name.is_some()) {
            shared
                .entry(declaration.name.unwrap_or_default())
                .or_default()
                .push(declaration);
        }

        let mut entries = Vec::new();
        let mut conflicts = Vec::new();
        for (name, group) in shared {
            let kept = group[0];
            let differing: Vec<_> = group[1..]
                .iter()
                .filter(|d| !d.config.same_settings(&kept.config))
                .map(|d| (d.location, d.config.clone()))
                .collect();
            if !differing.is_empty() {
                let conflict = Conflict {
                    name: Name::from_static(name),
                    kept: (kept.location, kept.config.clone()),
                    differing,
                };
                tracing::warn!(
                    breaker = name,
                    kept = %conflict.kept.0,
                    differing = ?conflict.differing.iter().map(|(l, _)| l.to_string()).collect::<Vec<_>>(),
                    "circuit breaker declared with different options; using the first declaration's"
                );
                conflicts.push(conflict);
            }
            let breaker = Breaker::new(kept.config.clone().with_name(name));
            entries.push(Entry {
                breaker: Arc::new(breaker),
                declarations: group,
            });
        }

        let mut clashes = Vec::new();
        for declaration in ordered.into_iter().filter(|d| d.name.is_none()) {
            let wanted = Name::from_static(declaration.default_name);
            let name = unique_name(wanted.clone(), &entries);
            if name != wanted {
                clashes.push(announced(NameClash {
                    wanted,
                    given: name.clone(),
                    at: declaration.location,
                }));
            }
            let breaker = Breaker::new(declaration.config.clone().with_name(name));
            entries.push(Entry {
                breaker: Arc::new(breaker),
                declarations: vec![declaration],
            });
        }
        for entry in &entries {
            entry.breaker.set_registered(true);
        }
        Registry {
            entries: RwLock::new(entries),
            conflicts,
            clashes: Mutex::new(clashes),
        }
    }

    /// Every registered breaker, by name.
    pub fn breakers(&self) -> Vec<Arc<Breaker>> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        let mut breakers: Vec<_> = entries.iter().map(|e| Arc::clone(&e.breaker)).collect();
        breakers.sort_by(|a, b| a.name().cmp(b.name()));
        breakers
    }

    /// The breaker with this name.
    pub fn get(&self, name: &str) -> Option<Arc<Breaker>> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .find(|e| e.breaker.name() == name)
            .map(|e| Arc::clone(&e.breaker))
    }

    /// Which breakers are not closed, for a readiness probe: see [`Health`](health::Health).
    /// A breaker that is not closed makes the service degraded, never down; only one the
    /// service names as critical makes it down ([`Health::status`](health::Health::status)).
    pub fn health(&self) -> health::Health {
        health::of(&self.breakers())
    }

    /// A snapshot of every registered breaker, by name.
    pub fn snapshot(&self) -> Vec<Snapshot> {
        self.breakers().iter().map(|b| b.snapshot()).collect()
    }

    /// Where the breaker with this name was declared with the attribute (empty for breakers
    /// registered by hand).
    pub fn declared_at(&self, name: &str) -> Vec<Location> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .iter()
            .find(|e| e.breaker.name() == name)
            .map(|e| e.declarations.iter().map(|d| d.location).collect())
            .unwrap_or_default()
    }

    /// Declarations of one name with different options.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// Adds a breaker built by hand, so that it is listed and its transitions reach
    /// [`on_transition`](Self::on_transition) listeners.
    pub fn register(&self, breaker: Arc<Breaker>) -> Result<(), RegistryError> {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        if entries.iter().any(|e| e.breaker.name() == breaker.name()) {
            return Err(RegistryError::NameTaken(breaker.name().clone()));
        }
        breaker.set_registered(true);
        entries.push(Entry {
            breaker,
            declarations: Vec::new(),
        });
        Ok(())
    }

    /// Breakers listed under another name than they asked for, because another breaker held
    /// it: see [`NameClash`].
    pub fn clashes(&self) -> Vec<NameClash> {
        self.clashes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A new breaker for `config`, registered under its name, or under the name made unique
    /// (`name#2`, …) and reported as a [`NameClash`] if another breaker holds it.
    #[cfg(feature = "tower")]
    pub(crate) fn register_renaming(
        &self,
        config: crate::core::config::Config,
        at: Location,
    ) -> Arc<Breaker> {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let wanted = config.name().clone();
        let given = unique_name(wanted.clone(), &entries);
        let breaker = Arc::new(Breaker::new(config.with_name(given.clone())));
        breaker.set_registered(true);
        entries.push(Entry {
            breaker: Arc::clone(&breaker),
            declarations: Vec::new(),
        });
        drop(entries);
        if given != wanted {
            self.clashes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(announced(NameClash { wanted, given, at }));
        }
        breaker
    }

    /// Takes this very breaker off the list (not another of the same name), with the report of
    /// a clash that renamed it.
    #[cfg(feature = "tower")]
    pub(crate) fn remove(&self, breaker: &Arc<Breaker>) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let Some(index) = entries
            .iter()
            .position(|e| Arc::ptr_eq(&e.breaker, breaker))
        else {
            return;
        };
        entries.swap_remove(index);
        drop(entries);
        breaker.set_registered(false);
        self.clashes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|clash| clash.given != *breaker.name());
    }

    /// Removes a breaker registered by hand; declared breakers stay.
    pub fn unregister(&self, name: &str) -> Option<Arc<Breaker>> {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let index = entries
            .iter()
            .position(|e| e.breaker.name() == name && e.declarations.is_empty())?;
        let breaker = entries.swap_remove(index).breaker;
        breaker.set_registered(false);
        Some(breaker)
    }

    /// Calls `listener` after every transition of every registered breaker, outside every lock.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use breaker_runtime::{registry, Breaker, Config};
    ///
    /// let opened = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&opened);
    /// let _subscription = registry().on_transition(move |t| {
    ///     if t.to.rejects() {
    ///         sink.lock().unwrap().push(t.breaker.to_string());
    ///     }
    /// });
    /// let breaker = Arc::new(Breaker::new(Config::builder().name("mailer").build().unwrap()));
    /// registry().register(Arc::clone(&breaker)).unwrap();
    /// breaker.force_open();
    /// assert!(opened.lock().unwrap().contains(&"mailer".to_string()));
    /// ```
    pub fn on_transition(
        &self,
        listener: impl Fn(&Transition) + Send + Sync + 'static,
    ) -> Subscription {
        events::every_registered().subscribe(listener)
    }

    pub(crate) fn declared(&self, declaration: &'static Declaration) -> Arc<Breaker> {
        {
            let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
            let found = entries
                .iter()
                .find(|e| e.declarations.iter().any(|d| std::ptr::eq(*d, declaration)));
            if let Some(entry) = found {
                return Arc::clone(&entry.breaker);
            }
        }
        // Not gathered at link time (a platform linkme does not cover): join now.
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let name = declaration.name.map_or_else(
            || unique_name(Name::from_static(declaration.default_name), &entries),
            Name::from_static,
        );
        if let Some(entry) = entries.iter_mut().find(|e| *e.breaker.name() == name) {
            entry.declarations.push(declaration);
            return Arc::clone(&entry.breaker);
        }
        let breaker = Arc::new(Breaker::new(declaration.config.clone().with_name(name)));
        breaker.set_registered(true);
        entries.push(Entry {
            breaker: Arc::clone(&breaker),
            declarations: vec![declaration],
        });
        breaker
    }
}

/// `base`, or `base#2`, `base#3`… if taken.
fn unique_name(base: Name, entries: &[Entry]) -> Name {
    let taken = |candidate: &str| entries.iter().any(|e| e.breaker.name() == candidate);
    if !taken(&base) {
        return base;
    }
    (2u32..)
        .map(|n| format!("{base}#{n}"))
        .find(|candidate| !taken(candidate))
        .map_or(base, Name::from)
}

#[cfg(test)]
mod tests;
