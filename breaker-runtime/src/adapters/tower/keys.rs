//! One layer's breakers by key, bounded, and listed in the registry while the layer lives.

use super::{KeyFn, OVERFLOW_KEY};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::base::name::Name;
use crate::core::breaker::Breaker;
use crate::core::config::Config;
use crate::registry::declaration::Location;
use crate::registry::registry;

/// What the builder sets.
pub(super) struct Settings<Req> {
    pub(super) config: Config,
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
            prefix: self.prefix.clone(),
            max_keys: self.max_keys,
            key: self.key.clone(),
            built_at: self.built_at,
        }
    }
}

/// One layer's breakers, shared by the layer, its clones, and every service made from them.
pub(super) struct Shared<Req> {
    pub(super) settings: Settings<Req>,
    /// The one breaker of a layer without a key function.
    single: OnceLock<Arc<Breaker>>,
    /// Every breaker by key.
    breakers: RwLock<HashMap<Box<str>, Arc<Breaker>>>,
}

impl<Req> Shared<Req> {
    pub(super) fn new(settings: Settings<Req>) -> Self {
        Shared {
            settings,
            single: OnceLock::new(),
            breakers: RwLock::new(HashMap::new()),
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

    /// The request's breaker. A layer without a key function looks nothing up; a known key is
    /// found by the borrowed key under the shared read lock.
    #[inline]
    pub(super) fn breaker_for(&self, request: &Req) -> Arc<Breaker> {
        match &self.settings.key {
            None => Arc::clone(self.single()),
            Some(key) => {
                let key = key(request);
                self.existing(&key).unwrap_or_else(|| self.insert(&key))
            }
        }
    }

    pub(super) fn single(&self) -> &Arc<Breaker> {
        self.single.get_or_init(|| self.insert(""))
    }

    pub(super) fn existing(&self, key: &str) -> Option<Arc<Breaker>> {
        self.breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(self.normalized(key))
            .cloned()
    }

    /// The breaker of a key no request had used: its own, or the overflow breaker past the
    /// bound; made and registered unless a racing request did it first.
    #[cold]
    fn insert(&self, key: &str) -> Arc<Breaker> {
        let key = self.normalized(key);
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(breaker) = breakers.get(key) {
            return Arc::clone(breaker);
        }
        let key = if breakers.len() + 1 >= self.settings.max_keys && key != OVERFLOW_KEY {
            OVERFLOW_KEY
        } else {
            key
        };
        let breaker = breakers.entry(key.into()).or_insert_with_key(|key| {
            let name = Name::from(format!("{}{}", self.settings.prefix, key));
            let config = self.settings.config.clone().with_name(name);
            registry().register_renaming(config, self.settings.built_at)
        });
        Arc::clone(breaker)
    }
}

impl<Req> Drop for Shared<Req> {
    fn drop(&mut self) {
        // The breakers belong to the layer: once nothing can call through them, nothing lists
        // them. (An in-flight response future still holds its breaker, unlisted.)
        let breakers = self
            .breakers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        for breaker in breakers.values() {
            registry().remove(breaker);
        }
    }
}
