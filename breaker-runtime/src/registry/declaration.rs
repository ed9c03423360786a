//! What each `#[circuit_breaker]` function declares, gathered by the linker before `main`.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::config::Config;

/// Where a breaker was declared.
///
/// ```
/// use breaker_runtime::{circuit_breaker, registry, BreakerError};
///
/// #[circuit_breaker(name = "located")]
/// async fn located() -> Result<(), BreakerError> {
///     Ok(())
/// }
///
/// let at = registry().declared_at("located");
/// assert_eq!(at.len(), 1);
/// assert!(at[0].file.ends_with(".rs"), "{}", at[0].file);
/// assert!(at[0].line >= 3, "the line of the fn, after the attribute");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The source file.
    pub file: &'static str,
    /// The line of the function.
    pub line: u32,
    /// The column of the function.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One `#[circuit_breaker]` function, as the attribute declares it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Declaration {
    /// The `name = "..."` option, if given: declarations sharing it share one breaker.
    pub name: Option<&'static str>,
    /// `module_path!()::fn_name`, made unique by the registry where two would collide.
    pub default_name: &'static str,
    /// The configuration, validated by the attribute at compile time.
    pub config: Config,
    /// Where the function is.
    pub location: Location,
    /// Its fallback and stale answers, and how often they served.
    pub fallbacks: Fallbacks,
}

/// What a guarded fn serves in place of an answer, and how often it did in this process: what
/// [`testing::fallback_report`](crate::testing) reads (feature `test-util`). Counted on the
/// fallback's path alone, so a call that is answered pays nothing for it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Fallbacks {
    /// The `fallback` as written, if there is one.
    pub fallback: Option<&'static str>,
    /// Whether `stale_for` serves the last good answer.
    pub stale: bool,
    ran: AtomicU64,
    served_stale: AtomicU64,
}

impl Fallbacks {
    /// A guarded fn's fallbacks, none served yet.
    pub const fn new(fallback: Option<&'static str>, stale: bool) -> Fallbacks {
        Fallbacks {
            fallback,
            stale,
            ran: AtomicU64::new(0),
            served_stale: AtomicU64::new(0),
        }
    }

    /// The fallback is about to run.
    #[cold]
    pub fn ran(&self) {
        // Relaxed: a count read after the calls it counts have ended.
        self.ran.fetch_add(1, Ordering::Relaxed);
    }

    /// A stale answer is about to be served.
    #[cold]
    pub fn served_stale(&self) {
        self.served_stale.fetch_add(1, Ordering::Relaxed);
    }

    /// How often the fallback ran, and how often a stale answer was served.
    #[cfg_attr(not(feature = "test-util"), allow(dead_code))]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.ran.load(Ordering::Relaxed),
            self.served_stale.load(Ordering::Relaxed),
        )
    }
}

/// Every declaration in the program, gathered by the linker.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static DECLARATIONS: [Declaration];
