//! Breakers of a test's own (feature `test-util`): inside [`testing::isolated`], a guarded
//! function's handle finds the scope's breaker instead of the process-wide one. Kept here,
//! where the handle looks it up; `testing` is its public face.
//!
//! [`testing::isolated`]: crate::testing::isolated

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, PoisonError};

use crate::core::breaker::Breaker;
use crate::registry::declaration::{DECLARATIONS, Declaration};
use crate::registry::registry;

tokio::task_local! {
    static SCOPE: Scope;
}

/// The breakers of one scope, by declaration.
#[derive(Default)]
struct Scope {
    breakers: Mutex<HashMap<usize, &'static Breaker>>,
}

/// Runs `future` in a scope of its own.
pub(crate) async fn enter<F: Future>(future: F) -> F::Output {
    SCOPE.scope(Scope::default(), future).await
}

/// The current scope's breaker named `name`, once a call in the scope made it.
pub(crate) fn find(name: &str) -> Option<&'static Breaker> {
    SCOPE
        .try_with(|scope| {
            let breakers = scope
                .breakers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            breakers.values().copied().find(|b| b.name() == name)
        })
        .ok()
        .flatten()
}

/// The scope's breaker for `declaration`, if the caller runs inside [`isolated`].
pub(crate) fn scoped(declaration: &'static Declaration) -> Option<&'static Breaker> {
    SCOPE
        .try_with(|scope| {
            let key = std::ptr::from_ref(declaration) as usize;
            let mut breakers = scope
                .breakers
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(breaker) = breakers.get(&key) {
                return *breaker;
            }
            // The process-wide breaker's name and the options it was built with (a fresh
            // breaker, whatever the process-wide one was reconfigured to); declarations that
            // share a name share one breaker in a scope too, as they do outside it.
            let shared = registry().declared(declaration);
            let breaker = breakers
                .values()
                .copied()
                .find(|b| b.name() == shared.name())
                .unwrap_or_else(|| Box::leak(Box::new(Breaker::new(shared.built_config()))));
            breakers.insert(key, breaker);
            breaker
        })
        .ok()
}

/// Whether the caller runs inside [`isolated`](crate::testing::isolated).
pub(crate) fn active() -> bool {
    SCOPE.try_with(|_| ()).is_ok()
}

/// The names of the breakers of every guarded fn, in declaration order, each once.
pub(crate) fn guarded_names() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for declaration in DECLARATIONS.iter() {
        let name = registry().declared(declaration).name().as_str().to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The current scope's breaker named `name`, made now if no call in the scope made it yet;
/// `None` outside a scope, or for a name no guarded fn's breaker has.
pub(crate) fn find_or_make(name: &str) -> Option<&'static Breaker> {
    if let Some(breaker) = find(name) {
        return Some(breaker);
    }
    let declaration = DECLARATIONS
        .iter()
        .find(|d| registry().declared(d).name() == name)?;
    scoped(declaration)
}
