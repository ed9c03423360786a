//! Breakers of a test's own (feature `test-util`): inside [`isolated`], every
//! `#[circuit_breaker]` function resolves to a fresh breaker of that scope instead of the
//! process-wide one, so tests that drive the same guarded function do not fail each other.
//!
//! ```
//! use breaker_runtime::{circuit_breaker, registry, testing, BreakerError, State};
//!
//! #[circuit_breaker(name = "isolated-doc", window = "2")]
//! async fn lookup(up: bool) -> Result<u32, BreakerError> {
//!     if up { Ok(1) } else { Err(BreakerError::Timeout { breaker: "db".into(), limit: std::time::Duration::from_secs(1) }) }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // One test drives the circuit open...
//! testing::isolated(async {
//!     for _ in 0..2 {
//!         let _ = lookup(false).await;
//!     }
//!     assert_eq!(testing::breaker("isolated-doc").unwrap().state(), State::Open);
//! })
//! .await;
//! // ...and another, or the rest of the process, never sees it.
//! assert_eq!(registry().get("isolated-doc").unwrap().state(), State::Closed);
//! testing::isolated(async { assert_eq!(lookup(true).await.unwrap(), 1) }).await;
//! # }
//! ```
//!
//! The scope belongs to the task that awaits `isolated`: a task spawned inside it uses the
//! process-wide breakers unless its future is wrapped in `isolated` too. `registry()` keeps
//! listing the process-wide breakers; [`breaker`] finds the scope's. A scope's breakers are
//! made on first use and kept for the life of the process (a few hundred bytes each: test
//! processes are short). With the feature off none of this exists, and a guarded call costs
//! exactly what it costs without it.

use std::fmt;
use std::future::Future;

use crate::core::breaker::Breaker;
use crate::core::injection::{InjectError, Injection, MAX_INJECTION};
use crate::registry::declaration::{DECLARATIONS, Location};
use crate::registry::{registry, scope};

/// Runs `future` with breakers of its own: every `#[circuit_breaker]` function it calls (on
/// this task) gets a fresh breaker, closed and empty, with the function's name and options.
pub async fn isolated<F: Future>(future: F) -> F::Output {
    scope::enter(future).await
}

/// The current scope's breaker named `name`, once a call in the scope made it.
pub fn breaker(name: &str) -> Option<&'static Breaker> {
    scope::find(name)
}

/// Why [`open`] or [`inject`] could not act on the breaker asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TestingError {
    /// Called outside [`isolated`]: there is no scope whose breaker to act on, and the
    /// process-wide one is never touched.
    #[error(
        "testing::{call}(`{name}`) runs outside `testing::isolated`: wrap the test's body in `testing::isolated(async {{ .. }})`, whose breakers it acts on"
    )]
    NotIsolated {
        /// `open` or `inject`.
        call: &'static str,
        /// The name asked for.
        name: String,
    },
    /// No guarded fn's breaker has this name.
    #[error("{}", unknown_name(.name, .nearest))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names of guarded fns' breakers nearest it, nearest first.
        nearest: Vec<String>,
    },
    /// The breaker refused the injection ([`Breaker::inject`]).
    #[error("the breaker `{name}` refused the injection: {error}")]
    Refused {
        /// The breaker.
        name: String,
        /// Why.
        error: InjectError,
    },
}

fn unknown_name(name: &str, nearest: &[String]) -> String {
    match nearest {
        [] => format!(
            "no guarded fn has a breaker named `{name}`: a guarded fn's breaker is named by its `name` option, or `module::path::fn` without one (`testing::fallback_report()` lists those with a fallback)"
        ),
        near => {
            let near: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            format!(
                "no guarded fn has a breaker named `{name}`; the nearest names: {}",
                near.join(", ")
            )
        }
    }
}

/// The scope's breaker named `name`, made now if no call in the scope made it yet.
fn scoped(call: &'static str, name: &str) -> Result<&'static Breaker, TestingError> {
    if !scope::active() {
        return Err(TestingError::NotIsolated {
            call,
            name: name.to_string(),
        });
    }
    scope::find_or_make(name).ok_or_else(|| {
        let names = scope::guarded_names();
        TestingError::Unknown {
            name: name.to_string(),
            nearest: breaker_options::nearest(name, names.iter().map(String::as_str))
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
    })
}

/// Holds the current scope's breaker named `name` open (made now if no call in the scope made
/// it yet), so that every call of its guarded fn in this scope goes down its fallback (or
/// answers with the rejection), without a mock of the dependency. Returns the breaker, or why
/// it could not: outside [`isolated`], or a name no guarded fn's breaker has (with the nearest
/// names). `reset()` it to let calls through again.
///
/// ```
/// use breaker_runtime::{circuit_breaker, testing, BreakerError};
///
/// #[circuit_breaker(name = "forced-doc", fallback = cached)]
/// async fn rate(pair: &str) -> Result<f64, BreakerError> {
///     Ok(1.08) // the live dependency, which a unit test would rather not mock
/// }
///
/// async fn cached(_pair: &str) -> Result<f64, BreakerError> {
///     Ok(1.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// testing::isolated(async {
///     testing::open("forced-doc").expect("a guarded fn's breaker");
///     assert_eq!(rate("EURUSD").await, Ok(1.0), "served by the fallback");
///     let typo = testing::open("forcd-doc").unwrap_err();
///     assert_eq!(typo.to_string(), "no guarded fn has a breaker named `forcd-doc`; the nearest names: `forced-doc`");
/// })
/// .await;
/// assert_eq!(rate("EURUSD").await, Ok(1.08), "outside the scope, untouched");
/// assert!(testing::open("forced-doc").is_err(), "outside a scope, nothing to open");
/// # }
/// ```
pub fn open(name: &str) -> Result<&'static Breaker, TestingError> {
    let breaker = scoped("open", name)?;
    breaker.force_open();
    Ok(breaker)
}

/// Injects `injection` into the current scope's breaker named `name` (made now if no call in
/// the scope made it yet) for the rest of the scope, so that a unit test sends its guarded fn
/// down the fallback (an injected failure), or past its timeout (an injected delay), through
/// the real call path and without a mock of the dependency. Returns the breaker, or why it
/// could not: outside [`isolated`], a name no guarded fn's breaker has (with the nearest
/// names), or the breaker refused (one injection runs already, shadow mode, terms that inject
/// nothing: see [`Breaker::inject`]). Call `stop_injection()` on it to let calls through
/// untouched again.
///
/// ```
/// use breaker_runtime::{circuit_breaker, testing, BreakerError, Injection};
///
/// #[circuit_breaker(name = "inject-doc", fallback = cached)]
/// async fn rate(pair: &str) -> Result<f64, BreakerError> {
///     Ok(1.08) // the live dependency, which a unit test would rather not mock
/// }
///
/// async fn cached(_pair: &str) -> Result<f64, BreakerError> {
///     Ok(1.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// testing::isolated(async {
///     testing::inject("inject-doc", Injection::new().fail(100.0)).expect("a guarded fn's breaker");
///     assert_eq!(rate("EURUSD").await, Ok(1.0), "the fallback, for an injected failure");
/// })
/// .await;
/// assert_eq!(rate("EURUSD").await, Ok(1.08), "outside the scope, untouched");
/// # }
/// ```
pub fn inject(name: &str, injection: Injection) -> Result<&'static Breaker, TestingError> {
    let breaker = scoped("inject", name)?;
    breaker
        .inject(injection, MAX_INJECTION)
        .map_err(|error| TestingError::Refused {
            name: name.to_string(),
            error,
        })?;
    Ok(breaker)
}

/// Closes every breaker in the registry with an empty window: a clean slate between tests
/// that share the process-wide breakers.
pub fn reset_all() {
    for breaker in registry().breakers() {
        breaker.reset();
    }
}

/// One guarded fn that serves something in place of an answer (a `fallback`, or `stale_for`'s
/// last good answer), and how often it did in this process: a line of [`fallback_report`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FallbackRuns {
    /// The guarded fn, as `module::path::fn` (`module::Type::method` for a method).
    pub function: &'static str,
    /// Where it is declared.
    pub location: Location,
    /// Its `fallback`, as written, if it has one.
    pub fallback: Option<&'static str>,
    /// Whether it serves stale answers (`stale_for`).
    pub stale: bool,
    /// How often its fallback ran.
    pub fallback_ran: u64,
    /// How often a stale answer was served.
    pub stale_served: u64,
}

impl FallbackRuns {
    /// Whether anything it serves in place of an answer has: the fallback, or a stale answer.
    pub fn exercised(&self) -> bool {
        self.fallback_ran + self.stale_served > 0
    }
}

impl fmt::Display for FallbackRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` (", self.function)?;
        match (self.fallback, self.stale) {
            (Some(fallback), true) => write!(f, "fallback `{fallback}` and stale answers")?,
            (Some(fallback), false) => write!(f, "fallback `{fallback}`")?,
            (None, _) => f.write_str("stale answers")?,
        }
        write!(
            f,
            ", {}): fallback ran {} times, stale served {} times",
            self.location, self.fallback_ran, self.stale_served
        )
    }
}

/// Every `#[circuit_breaker]` fn of the program that declares a `fallback` or `stale_for`,
/// with how often each served in this process (calls inside [`isolated`] count too), sorted
/// by function. Fallbacks are real code that only runs in an outage: this says which ones a
/// test suite has exercised.
///
/// ```
/// use breaker_runtime::{circuit_breaker, testing, BreakerError};
///
/// #[circuit_breaker(name = "report-doc", window = "1", fallback = cached)]
/// async fn shelf_price(sku: u32) -> Result<u32, BreakerError> {
///     Err(BreakerError::Timeout { breaker: "prices".into(), limit: std::time::Duration::from_secs(1) })
/// }
///
/// async fn cached(_sku: u32) -> Result<u32, BreakerError> {
///     Ok(0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// assert_eq!(shelf_price(7).await, Ok(0));
/// let runs = testing::fallback_report();
/// let line = runs.iter().find(|r| r.function.ends_with("::shelf_price")).unwrap();
/// assert_eq!((line.fallback, line.fallback_ran), (Some("cached"), 1));
/// # }
/// ```
pub fn fallback_report() -> Vec<FallbackRuns> {
    let mut runs: Vec<FallbackRuns> = DECLARATIONS
        .iter()
        .filter(|d| d.fallbacks.fallback.is_some() || d.fallbacks.stale)
        .map(|d| {
            let (fallback_ran, stale_served) = d.fallbacks.counts();
            FallbackRuns {
                function: d.default_name,
                location: d.location,
                fallback: d.fallbacks.fallback,
                stale: d.fallbacks.stale,
                fallback_ran,
                stale_served,
            }
        })
        .collect();
    runs.sort_by(|a, b| (a.function, a.location).cmp(&(b.function, b.location)));
    runs
}

/// Fails, naming each one, if a guarded fn under `prefix` declares a fallback (or `stale_for`)
/// that has never served in this process. Call it at the end of a test suite (see
/// `docs/testing.md`: a last step of a `harness = false` test, or after the scenarios of one
/// test). Panics, as an assertion does.
///
/// A guarded fn is under `prefix` when its path (`shop::payments::charge`) or its breaker's
/// `name` starts with it, at a `::`: `"shop"` and `"shop::"` take `shop::charge` and
/// `shop::payments::charge`, not `shopping::cart`; a whole name or path takes that fn alone.
/// `""` takes every guarded fn of the program. A prefix that takes no guarded fn that declares
/// a fallback or `stale_for` (a typo, a module without fallbacks) panics too, naming the
/// prefixes that do take some: an assertion that checks nothing would pass for ever.
///
/// ```
/// use breaker_runtime::{circuit_breaker, testing, BreakerError};
///
/// #[circuit_breaker(name = "never-drilled", fallback = cached)]
/// async fn stock(sku: u32) -> Result<u32, BreakerError> {
///     Ok(sku)
/// }
///
/// async fn cached(_sku: u32) -> Result<u32, BreakerError> {
///     Ok(0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// assert_eq!(stock(7).await, Ok(7));
/// // `stock` answered, so its fallback never ran: the assertion panics, naming `...::stock`.
/// let failed = std::panic::catch_unwind(|| testing::assert_every_fallback_ran("never-drilled"));
/// let message = failed.unwrap_err().downcast::<String>().unwrap();
/// assert!(message.starts_with("1 guarded fn(s) never served their fallback"), "{message}");
/// assert!(message.contains("::stock` (fallback `cached`"), "{message}");
/// # }
/// ```
#[track_caller]
pub fn assert_every_fallback_ran(prefix: &str) {
    let runs = fallback_report();
    let named = breaker_names();
    let under: Vec<&FallbackRuns> = runs
        .iter()
        .filter(|r| {
            prefix.is_empty()
                || starts_at_a_path(r.function, prefix)
                || named
                    .iter()
                    .any(|(f, name)| *f == r.function && starts_at_a_path(name, prefix))
        })
        .collect();
    if under.is_empty() && !prefix.is_empty() {
        panic!("{}", no_fallback_under(prefix, &runs, &named));
    }
    let never: Vec<String> = under
        .iter()
        .filter(|r| !r.exercised())
        .map(|r| format!("  {r}"))
        .collect();
    if !never.is_empty() {
        panic!(
            "{} guarded fn(s) never served their fallback in this run; an untested fallback is a bug scheduled for the worst day. Exercise each (force its breaker open, `testing::isolated` and `Breaker::force_open`):\n{}",
            never.len(),
            never.join("\n")
        );
    }
}

/// Whether `path` starts with `prefix` at a `::` (or is it).
fn starts_at_a_path(path: &str, prefix: &str) -> bool {
    match path.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || prefix.ends_with("::") || rest.starts_with("::"),
        None => false,
    }
}

/// Each guarded fn's path beside its breaker's name, where the two differ (a `name` option).
fn breaker_names() -> Vec<(&'static str, String)> {
    DECLARATIONS
        .iter()
        .filter_map(|d| {
            let name = registry().declared(d).name().as_str().to_string();
            (name != d.default_name).then_some((d.default_name, name))
        })
        .collect()
}

/// The panic for a prefix that takes no guarded fn with a fallback: the prefixes that do.
fn no_fallback_under(prefix: &str, runs: &[FallbackRuns], named: &[(&str, String)]) -> String {
    let mut prefixes: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !prefixes.contains(&p) {
            prefixes.push(p);
        }
    };
    for run in runs {
        let names = named.iter().filter(|(f, _)| *f == run.function);
        for path in std::iter::once(run.function).chain(names.map(|(_, n)| n.as_str())) {
            // Every module the fn lives under (or its name reads as under), and the whole.
            let mut at = 0;
            while let Some(found) = path[at..].find("::") {
                at += found + 2;
                add(path[..at].to_string());
            }
            add(path.to_string());
        }
    }
    prefixes.sort();
    // A program of hundreds of guarded fns: the top of the list says enough.
    if prefixes.len() > 40 {
        prefixes.truncate(40);
        prefixes.push("…".to_string());
    }
    let near = breaker_options::nearest(prefix, prefixes.iter().map(String::as_str));
    let near = match near.as_slice() {
        [] => String::new(),
        near => {
            let near: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
            format!(" (did you mean {}?)", near.join(" or "))
        }
    };
    if prefixes.is_empty() {
        return format!(
            "testing::assert_every_fallback_ran(`{prefix}`) checks nothing: no guarded fn of the program declares a fallback or `stale_for`"
        );
    }
    format!(
        "testing::assert_every_fallback_ran(`{prefix}`) checks nothing: no guarded fn under it declares a fallback or `stale_for`{near}. A prefix is the start of a guarded fn's path or of its breaker's name, at a `::`; those that take some are: {}",
        prefixes
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
