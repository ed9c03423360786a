//! What the registry reports instead of merging silently: declarations of one name that
//! disagree, a name that was taken, and a breaker listed under a name made unique.

use std::fmt;

use crate::base::name::Name;
use crate::core::config::Config;
use crate::registry::declaration::Location;

/// Two or more declarations of one breaker `name` with different options. The breaker runs with
/// the options of the first declaration (by file, line and column); the others are reported
/// here and in a `tracing` warning rather than silently merged.
///
/// ```
/// use breaker_runtime::{circuit_breaker, registry, BreakerError};
///
/// #[circuit_breaker(name = "shared-db", threshold = "50%")]
/// async fn read() -> Result<(), BreakerError> { Ok(()) }
///
/// #[circuit_breaker(name = "shared-db", threshold = "10%")]
/// async fn write() -> Result<(), BreakerError> { Ok(()) }
///
/// let conflict = registry().conflicts().iter().find(|c| c.name == "shared-db").unwrap();
/// assert_eq!(conflict.kept.1.threshold().percent(), 50.0);
/// assert_eq!(conflict.differing[0].1.threshold().percent(), 10.0);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Conflict {
    /// The shared name.
    pub name: Name,
    /// The declaration whose options the breaker uses.
    pub kept: (Location, Config),
    /// The declarations whose options differ from it.
    pub differing: Vec<(Location, Config)>,
}

/// Why a breaker could not be registered.
///
/// ```
/// use std::sync::Arc;
/// use breaker_runtime::{registry, Breaker, Config, RegistryError};
///
/// let build = || Arc::new(Breaker::new(Config::builder().name("twice").build().unwrap()));
/// registry().register(build()).unwrap();
/// assert!(matches!(registry().register(build()), Err(RegistryError::NameTaken(_))));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Another breaker already has the name.
    #[error("a circuit breaker named `{0}` is already registered")]
    NameTaken(Name),
}

/// A breaker that asked for a name another breaker held, and was listed under a name made
/// unique instead, so that it still shows in the registry and the metrics (a tower layer whose
/// breaker names collide with another's, say).
///
/// ```
/// # #[cfg(feature = "tower")] {
/// use breaker_runtime::{registry, Config};
/// use breaker_runtime::tower::CircuitBreakerLayer;
/// use tower::Layer;
///
/// let config = Config::builder().name("clash-demo").build().unwrap();
/// let echo = || tower::service_fn(|n: u32| async move { Ok::<_, ()>(n) });
/// let _first = CircuitBreakerLayer::<u32>::new(config.clone()).layer(echo());
/// let _second = CircuitBreakerLayer::<u32>::new(config).layer(echo());
/// let clash = registry().clashes().into_iter().find(|c| c.wanted == "clash-demo").unwrap();
/// assert_eq!(clash.given, "clash-demo#2");
/// assert!(registry().get("clash-demo#2").is_some());
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NameClash {
    /// The name the breaker asked for.
    pub wanted: Name,
    /// The name it is listed under.
    pub given: Name,
    /// Where the breaker was declared, or where its owner (a tower layer) was built.
    pub at: Location,
}

impl fmt::Display for NameClash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "circuit breaker `{}` (from {}) is listed as `{}`: another breaker has the name",
            self.wanted, self.at, self.given
        )
    }
}

/// A clash, once told to the logs: a renamed breaker renames its metrics and dashboards too.
pub(crate) fn announced(clash: NameClash) -> NameClash {
    tracing::warn!(
        breaker = %clash.wanted,
        listed_as = %clash.given,
        at = %clash.at,
        "circuit breaker name taken by another breaker; listed under a unique name (give it a `name`, or for a method put #[circuit_breaker] on its impl block)"
    );
    clash
}
