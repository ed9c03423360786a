//! What each `#[circuit_breaker]` function declares, gathered by the linker before `main`.

use std::fmt;

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
/// assert!(at[0].line > 0);
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
}

/// Every declaration in the program, gathered by the linker.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static DECLARATIONS: [Declaration];
