//! How a guarded function reaches its breaker: through the registry once, then with one load.

use std::sync::{Arc, OnceLock};

use crate::core::breaker::Breaker;
use crate::registry::declaration::Declaration;
use crate::registry::registry;
#[cfg(feature = "test-util")]
use crate::registry::scope;

/// The breaker of one `#[circuit_breaker]` function, looked up in the registry on first use and
/// then read with one atomic load.
#[doc(hidden)]
pub struct Handle {
    declaration: &'static Declaration,
    breaker: OnceLock<Arc<Breaker>>,
}

impl Handle {
    #[doc(hidden)]
    pub const fn new(declaration: &'static Declaration) -> Handle {
        Handle {
            declaration,
            breaker: OnceLock::new(),
        }
    }

    #[doc(hidden)]
    #[inline]
    pub fn get(&'static self) -> &'static Breaker {
        // Only with `test-util`: a test's own breaker, inside `testing::isolated`.
        #[cfg(feature = "test-util")]
        if let Some(breaker) = scope::scoped(self.declaration) {
            return breaker;
        }
        self.breaker
            .get_or_init(|| registry().declared(self.declaration))
    }
}
