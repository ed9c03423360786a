//! One layer's breakers (and their policies) by key, bounded, and listed in the registry while
//! the layer lives.

use super::{KeyFn, OVERFLOW_KEY};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use breaker_options::PolicySettings;

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::config::Config;
use crate::policy::Policy;
use crate::registry::declaration::Location;
use crate::registry::registry;

/// What the builder sets.
pub(super) struct Settings<Req> {
    pub(super) config: Config,
    /// Each key's policy's settings (everything off unless the layer has a policy).
    pub(super) policy: PolicySettings,
    pub(super) prefix: String,
    pub(super) max_keys: usize,
    pub(super) key: Option<KeyFn<Req>>,
    /// Where the layer was built, for reports of a name clash.
    pub(super) built_at: Location,
}

impl<Req> Clone for Settings<Req> {
    fn clone(&self) -> Self {
        Settings {
            config: self.config.clone(),
            policy: self.policy,
            prefix: self.prefix.clone(),
            max_keys: self.max_keys,
            key: self.key.clone(),
            built_at: self.built_at,
        }
    }
}

/// One key's breaker and its policy: its own bulkhead and retry budget, as each breaker has
/// its own window.
#[derive(Clone)]
pub(super) struct Guard {
    pub(super) breaker: Arc<Breaker>,
    pub(super) policy: Arc<Policy>,
}

/// One layer's breakers, shared by the layer, its clones, and every service made from them.
pub(super) struct Shared<Req> {
    pub(super) settings: Settings<Req>,
    /// The one guard of a layer without a key function.
    single: OnceLock<Guard>,
    /// Every key's guard.
    guards: RwLock<HashMap<Box<str>, Guard>>,
}

impl<Req> Shared<Req> {
    pub(super) fn new(settings: Settings<Req>) -> Self {
        Shared {
            settings,
            single: OnceLock::new(),
            guards: RwLock::new(HashMap::new()),
        }
    }

    /// What an empty key stands for.
    fn normalized<'k>(&'k self, key: &'k str) -> &'k str {
        if key.is_empty() {
            self.settings.config.name()
        } else {
            key
        }
    }

    /// The request's breaker.
    #[inline]
    pub(super) fn breaker_for(&self, request: &Req) -> Arc<Breaker> {
        self.guard_for(request, |guard| Arc::clone(&guard.breaker))
    }

    /// The request's breaker and policy.
    pub(super) fn guarded_for(&self, request: &Req) -> (Arc<Breaker>, Arc<Policy>) {
        self.guard_for(request, |guard| {
            (Arc::clone(&guard.breaker), Arc::clone(&guard.policy))
        })
    }

    /// What `pick` takes from the request's guard. A layer without a key function looks
    /// nothing up; a known key is found by the borrowed key under the shared read lock.
    #[inline]
    fn guard_for<T>(&self, request: &Req, pick: impl Fn(&Guard) -> T) -> T {
        match &self.settings.key {
            None => pick(self.single()),
            Some(key) => {
                let key = key(request);
                self.existing(&key, &pick)
                    .unwrap_or_else(|| self.insert(&key, &pick))
            }
        }
    }

    pub(super) fn single(&self) -> &Guard {
        self.single.get_or_init(|| self.insert("", Guard::clone))
    }

    /// The breaker of `key`, once a request has used it.
    pub(super) fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.existing(key, |guard| Arc::clone(&guard.breaker))
    }

    /// The policy of `key`, once a request has used it.
    pub(super) fn policy(&self, key: &str) -> Option<Arc<Policy>> {
        self.existing(key, |guard| Arc::clone(&guard.policy))
    }

    fn existing<T>(&self, key: &str, pick: impl Fn(&Guard) -> T) -> Option<T> {
        self.guards
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(self.normalized(key))
            .map(pick)
    }

    /// The guard of a key no request had used: its own, or the overflow key's past the bound;
    /// made and registered unless a racing request did it first.
    #[cold]
    fn insert<T>(&self, key: &str, pick: impl Fn(&Guard) -> T) -> T {
        let key = self.normalized(key);
        let mut guards = self.guards.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(guard) = guards.get(key) {
            return pick(guard);
        }
        let key = if guards.len() + 1 >= self.settings.max_keys && key != OVERFLOW_KEY {
            OVERFLOW_KEY
        } else {
            key
        };
        let guard = guards.entry(key.into()).or_insert_with_key(|key| {
            let name = Name::from(format!("{}{}", self.settings.prefix, key));
            let config = self.settings.config.clone().with_name(name);
            Guard {
                breaker: registry().register_renaming(config, self.settings.built_at),
                // Checked when the layer was given it.
                policy: Arc::new(Policy::__checked(self.settings.policy)),
            }
        });
        pick(guard)
    }
}

impl<Req> Drop for Shared<Req> {
    fn drop(&mut self) {
        // The breakers belong to the layer: once nothing can call through them, nothing lists
        // them. (An in-flight response future still holds its breaker, unlisted.)
        let guards = self
            .guards
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for guard in guards.values() {
            registry().remove(&guard.breaker);
        }
    }
}
