//! Circuit breakers for async Rust.
//!
//! A slow or failing dependency must not take its callers down. A circuit breaker watches the
//! calls to one dependency; when too many of them fail (or run too slowly), it *opens* and
//! answers at once instead of calling, so callers stop piling up behind a dependency that is not
//! answering. After a break it lets a few probe calls through; if they succeed it closes again.
//!
//! Most users put the `#[circuit_breaker]` attribute on the async fn that calls the dependency:
//!
//! ```
//! use breaker_runtime::{circuit_breaker, BreakerError, IsFailure};
//!
//! #[derive(Debug, IsFailure)]
//! enum PayError {
//!     Unavailable,
//!     #[breaker(healthy)]
//!     Declined,
//!     #[breaker(transparent)]
//!     Breaker(BreakerError),
//! }
//!
//! impl From<BreakerError> for PayError {
//!     fn from(e: BreakerError) -> Self {
//!         PayError::Breaker(e)
//!     }
//! }
//!
//! #[circuit_breaker(threshold = "50%", window = "20", timeout_ms = 2000, fallback = queue_charge)]
//! async fn charge(order_id: u64) -> Result<&'static str, PayError> {
//!     Err(PayError::Unavailable) // the payment API is down
//! }
//!
//! async fn queue_charge(order_id: u64) -> Result<&'static str, PayError> {
//!     Ok("queued")
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! assert_eq!(charge(7).await.unwrap(), "queued", "the failure was served by the fallback");
//! # }
//! ```
//!
//! This crate is its runtime: the [`Breaker`] state machine, the windows it judges over, the
//! call path (permit, timeout, classify, record), the [`IsFailure`] classification, the
//! [`registry`] of every breaker, and transition [events](Transition). A breaker built by hand
//! runs the same state machine, for closures and integrations:
//!
//! ```
//! use std::time::Duration;
//! use breaker_runtime::{Breaker, Config, State};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let breaker = Breaker::new(
//!     Config::builder()
//!         .name("payments")
//!         .threshold(50.0)
//!         .count_window(4)
//!         .break_duration(Duration::from_secs(30))
//!         .build()?,
//! );
//! let down = || async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) };
//! for _ in 0..4 {
//!     let _ = breaker.call(down()).await;
//! }
//! assert_eq!(breaker.state(), State::Open);
//!
//! tokio::time::advance(Duration::from_secs(30)).await;
//! breaker.call(async { Ok::<_, std::io::Error>(()) }).await?; // the probe
//! assert_eq!(breaker.state(), State::Closed);
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! | feature | what it brings |
//! |---|---|
//! | `tower` | [`tower::CircuitBreakerLayer`](crate::tower): one breaker per key of the request; a rejected request never reaches the inner service |
//! | `http` | `IsFailure` for `http::StatusCode` and `http::Response`; with `tower`, the gRPC layer |
//! | `tonic` | `IsFailure` for `tonic::Status`, and rejections as `UNAVAILABLE` marked as local |
//! | `reqwest` | `IsFailure` for `reqwest::Error` and `reqwest::Response` |
//! | `anyhow` | `IsFailure` for `anyhow::Error`, through its chain of sources |
//! | `metrics` | every breaker's state, transitions, calls and durations through the `metrics` facade |
//! | `opentelemetry` | the same instruments through an OpenTelemetry meter: [`opentelemetry::install`] |
//! | `serde` | `Serialize` for snapshots, states and configurations; `Deserialize` for a [`Config`] spelled as in the attribute (`{ "threshold": "50%", "window": "30s" }`) |
//! | `config-file` | [`config_file::ConfigFile`](crate::config_file): options of live breakers from a TOML (or JSON) file, one table per breaker, applied whole or not at all and watched for changes |
//! | `test-util` | [`testing::isolated`](crate::testing): a test's own breakers, so tests of one guarded fn do not fail each other |
//! | `simulation` | [`simulation::SimulatedClock`](crate::simulation): a thread's breaker clock set by hand, so recorded traffic replays as fast as the machine goes (what `breaker-replay` runs on); never needed by a service |
//!
//! # Semantics in brief
//!
//! * **Closed**: calls run; each outcome (success, slow success or failure) is recorded in the
//!   window. After every record, once the window holds `min_calls` outcomes, the circuit opens if
//!   the failure rate, or the slow rate, is at or above its threshold (`>=`).
//! * **Open**: calls are rejected with [`BreakerError::Open`] without running. From the instant
//!   the break has passed, the next call moves the circuit to half-open and runs as a probe.
//! * **Half-open**: up to `probes` calls run at once; others are rejected. A failed probe reopens
//!   the circuit (for a doubled break when `max_break_duration` is set); `probes` successes in a
//!   row close it with an empty window.
//! * Every transition empties the window, and an outcome counts only in the state period its
//!   call was admitted in. Timeouts and panics are failures; cancelled calls record nothing.
//!
//! # From outside a call
//!
//! A message consumer or a fleet of processes runs the breaker without handing it a future:
//! [`Breaker::admitted`] waits for admission (the end of the break, a free probe slot) on
//! tokio's clock, [`Breaker::apply_order`] applies another process's decision by generation,
//! and [`Breaker::counts`] reads monotonic outcome counts to export. None costs a closed call
//! anything until it is used.
//!
//! # Traces
//!
//! [`Breaker::start_trace`] records a breaker's calls, one line each (when admitted, how long,
//! how it ended), in the [`trace`] format that `breaker-replay` replays against candidate
//! options. Record in shadow mode, where every call runs, to tune from real traffic.
//!
//! # Rates
//!
//! Every rate in the API is a percentage: the builder's `threshold(50.0)`, [`Rate::percent`],
//! a snapshot's `failure_rate`, a transition's. [`Rate`] keeps it exactly (to four decimals).
//!
//! # Layout
//!
//! The source is in folders, each importing only from those below it:
//!
//! | folder | its job |
//! |---|---|
//! | `adapters/` | tower, tonic, http, reqwest, metrics, OpenTelemetry, serde, the operator's HTTP endpoint and the configuration file, each behind its feature (top) |
//! | `policy/` | around the breaker's calls: retries with backoff and budget, the deadline, the bulkhead |
//! | `registry/` | every breaker in the program: declarations gathered by the linker, the handle a guarded fn reads its breaker through, name conflicts, test scopes |
//! | `core/` | the state machine: the state word, the configuration (options themselves are defined once in `breaker-options`) and the live one a reconfiguration replaces, windows, probe slots, why it opened, transition events, the [`trace`] of its calls and its format, and `breaker/` (admission, recording, transitions, commands, reconfiguration, orders, waiting, counts, snapshot, traces, permit, call observers), then the call path (`call.rs`) |
//! | `outcome/` | classification and errors: [`IsFailure`], [`Verdict`], [`Classify`], [`BreakerError`], error chains |
//! | `base/` | the clock, the atomics (std's or loom's), names, per-thread numbers for sharded counts, the list that keeps what a reconfiguration replaced (bottom) |
//!
//! The core announces transitions and call events to whoever subscribed (the registry, the
//! `metrics` adapter, your listeners); it calls nothing above it.
//!
//! # Time
//!
//! Every reading comes from `tokio::time`, so `tokio::time::pause()` and `advance()` drive every
//! behaviour in tests. Guarded calls need a tokio runtime with the time driver enabled (for the
//! timeout), as `tokio::time::timeout` does. Where tokio's clock runs and a test cannot pause it
//! (outside a runtime, or on a multi-thread one), two things read the kernel's coarse clock
//! instead, anchored to tokio's, for a quarter of the price: a rejection far from the end of the
//! break, and the dating of outcomes in a time window of 1 s or more (bucket edges move by a
//! kernel tick, a tenth of a bucket at most). A paused clock is always read exactly.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
// On docs.rs every feature is documented, each gated item marked with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod adapters;
mod base;
mod core;
mod fallback;
mod outcome;
mod policy;
mod registry;
#[cfg(all(feature = "simulation", not(breaker_loom)))]
#[cfg_attr(docsrs, doc(cfg(feature = "simulation")))]
pub mod simulation;
#[cfg(feature = "test-util")]
pub mod testing;

#[cfg(all(test, breaker_loom))]
mod loom_tests;

/// The pages under `docs/`, compiled only to run their code blocks as doctests: a published crate
/// cannot read files outside its folder, so its docs do not show them; the README links them.
#[cfg(doctest)]
mod guide {
    #[doc = include_str!("../../docs/operating.md")]
    mod operating {}
    #[doc = include_str!("../../docs/policy.md")]
    mod policy {}
    #[cfg(feature = "test-util")]
    #[doc = include_str!("../../docs/testing.md")]
    mod testing {}
    #[doc = include_str!("../../docs/consumer.md")]
    mod consumer {}
    #[doc = include_str!("../../docs/features.md")]
    mod features {}
    #[doc = include_str!("../../docs/fleet.md")]
    mod fleet {}
    #[doc = include_str!("../../docs/traces.md")]
    mod traces {}
}

#[cfg(feature = "config-file")]
#[doc(inline)]
pub use adapters::config_file;
#[cfg(feature = "http-endpoint")]
#[doc(inline)]
pub use adapters::endpoint;
#[cfg(feature = "metrics")]
#[doc(inline)]
pub use adapters::metrics;
#[cfg(feature = "opentelemetry")]
#[cfg_attr(docsrs, doc(cfg(feature = "opentelemetry")))]
#[doc(inline)]
pub use adapters::opentelemetry;
#[cfg(feature = "tonic")]
#[doc(inline)]
pub use adapters::tonic;
#[cfg(feature = "tower")]
#[doc(inline)]
pub use adapters::tower;
pub use base::name::Name;
#[cfg(feature = "serde")]
pub use breaker_options::Patch;
pub use breaker_options::{
    Backoff, MAX_CONCURRENT, MAX_RETRIES, PolicySettings, RETRY_BUDGET_FLOOR, RETRY_BUDGET_WINDOW,
    RetryBudget,
};
pub use core::breaker::counts::Counts;
#[allow(deprecated)]
pub use core::breaker::observer::set_call_observer;
pub use core::breaker::observer::{
    CallEvent, CallObserver, Ending, ObserverAlreadySet, add_call_observer,
};
pub use core::breaker::permit::{OwnedPermit, Permit};
pub use core::breaker::remote::{Heeded, Order};
pub use core::breaker::snapshot::Snapshot;
pub use core::breaker::{Breaker, ConfigSource, DrillError, Reconfigured};
pub use core::call::{Call, OwnedCall};
pub use core::config::{
    BreakGrowth, Config, ConfigBuilder, ConfigError, MAX_BREAK_GROWTH, MAX_COUNT_WINDOW,
    MAX_DURATION, MAX_MIN_CALLS, MAX_PROBES, MIN_TIME_WINDOW, Mode, Rate, Record, Settings, Window,
    WindowKind,
};
pub use core::events::{Origin, Subscription, Transition};
pub use core::injection::{Fault, InjectError, Injecting, Injection, MAX_INJECTION};
pub use core::opening::{OpenReason, Opening};
pub use core::saved::{
    RestoreError, Restored, SAVED_STATE_VERSION, SavedBucket, SavedOutcome, SavedState,
    SavedStates, SavedWindow,
};
pub use core::state::State;
pub use core::trace;
pub use fallback::stale::StaleCache;
pub use outcome::classify::{ByIsFailure, Classify};
pub use outcome::classify::{IsFailure, Verdict};
pub use outcome::error::{BreakerError, ProbeTime};
pub use policy::bulkhead::Slot;
pub use policy::{Policy, PolicyBuilder};
pub use registry::conflict::{Conflict, NameClash, RegistryError};
pub use registry::declaration::Location;
pub use registry::health::{Degraded, Health, HealthStatus};
pub use registry::{Registry, registry};

/// Derives [`IsFailure`](trait@IsFailure) for an error enum or struct.
///
/// Every variant is a failure unless marked: `#[breaker(healthy)]` (the dependency answered
/// correctly, recorded as a success), `#[breaker(ignore)]` (record nothing) or
/// `#[breaker(transparent)]` (ask the variant's one field). `#[breaker(default = "healthy")]` on
/// the enum changes the mark of unmarked variants. Structs take the container attributes.
///
/// ```
/// use breaker_runtime::IsFailure;
///
/// #[derive(Debug, IsFailure)]
/// enum PayError {
///     Unavailable,
///     #[breaker(healthy)]
///     Declined,
///     #[breaker(ignore)]
///     Cancelled,
///     #[breaker(transparent)]
///     Io(std::io::Error),
/// }
///
/// assert!(PayError::Unavailable.is_failure());
/// assert!(!PayError::Declined.is_failure());
/// assert!(PayError::Cancelled.is_ignored());
/// assert!(!PayError::Io(std::io::ErrorKind::NotFound.into()).is_failure());
/// ```
pub use breaker_macros::IsFailure;
/// Guards an async fn with a circuit breaker.
///
/// ```
/// use breaker_runtime::{circuit_breaker, BreakerError, IsFailure};
///
/// #[derive(Debug, IsFailure)]
/// enum PayError {
///     Unavailable,
///     #[breaker(healthy)]
///     Declined,
///     #[breaker(transparent)]
///     Breaker(BreakerError),
/// }
///
/// impl From<BreakerError> for PayError {
///     fn from(e: BreakerError) -> Self {
///         PayError::Breaker(e)
///     }
/// }
///
/// struct Order { id: u64 }
/// struct Receipt { id: u64, queued: bool }
///
/// #[circuit_breaker(threshold = "50%", window = "20", timeout_ms = 2000, fallback = queue_charge)]
/// async fn charge(order: &Order) -> Result<Receipt, PayError> {
///     Err(PayError::Unavailable) // the payment API is down
/// }
///
/// async fn queue_charge(order: &Order) -> Result<Receipt, PayError> {
///     Ok(Receipt { id: order.id, queued: true })
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let receipt = charge(&Order { id: 7 }).await.unwrap();
/// assert!(receipt.queued, "the failure was served by the fallback");
/// let breakers = breaker_runtime::registry().breakers();
/// let breaker = breakers.iter().find(|b| *b.name() == concat!(module_path!(), "::charge")).unwrap();
/// assert_eq!(breaker.snapshot().failures, 1);
/// # }
/// ```
///
/// # Options
///
/// | option | value | default | meaning |
/// |---|---|---|---|
/// | `threshold` | `"N%"`, 0 < N ≤ 100, up to 4 decimals | `"50%"` | open when the failure rate in the window is **≥** N% |
/// | `window` | `"N"` calls (1 to 10 000) or a duration `"30s"` | `"20"` | the window: the last N recorded calls, or every outcome of the last D (none older than D + D/10); a time window slides unless `window_kind = "fixed"` |
/// | `window_kind` | `"sliding"` or `"fixed"` | `"sliding"` | `"fixed"` makes a time window tumble: every count clears at each edge of an interval as long as the window, the edges on the process's clock, so the window holds what the current interval recorded so far (gobreaker's `Interval`, Polly's sampling duration); a time window only. A change of kind starts the window empty ([semantics](https://github.com/breaker-rs/breaker/blob/main/docs/semantics.md#fixed-windows)); changes live |
/// | `min_calls` | integer ≥ 1 (≤ N for a count window, ≤ 1 000 000 for a time window) | the window size (count window), 10 (time window) | outcomes the window must hold before the rates are judged |
/// | `timeout_ms` / `timeout` | integer ms > 0 / a duration, or `"off"` | 10 000 ms | a call still running at the deadline is cancelled and counts as a failure |
/// | `break_duration` | a duration | `"30s"` | how long the circuit stays open before it lets a probe through |
/// | `max_break_duration` | a duration ≥ `break_duration` | none (no growth) | after the k-th failed probe in a row the break is min(`break_duration` × growth^k, this) |
/// | `break_growth` | `"1.5x"`, `"2"`: 1 to 10, to the hundredth | `"2x"` (with `max_break_duration`) | the growth factor above; needs `max_break_duration` |
/// | `break_jitter` | a percentage such as `"10%"` (to the hundredth) | none | adds a random share of each break, up to this, so breakers that opened together do not probe together; a break is never shorter than computed above |
/// | `probes` | integer 1 to 1 000 | 1 | half-open: at most this many calls at once; this many successes in a row close the circuit |
/// | `probe_threshold` | `"N%"`, 0 < N ≤ 100 | none (every probe must succeed) | judge a half-open period's probes together, as Resilience4j's `permittedNumberOfCallsInHalfOpenState` does: at most `probes` probes are admitted in the period (an answered probe's slot is spent; an ignored, cancelled or hung one frees its slot), and once all have answered the circuit closes if their failure rate is below N% and their slow-call rate below `slow_threshold`, and opens again otherwise ([semantics](https://github.com/breaker-rs/breaker/blob/main/docs/semantics.md#half-open-by-a-rate)); changes live, from the circuit's next closing |
/// | `slow_call` | a duration shorter than the timeout | off | a success slower than this is slow |
/// | `slow_threshold` | `"N%"` (needs `slow_call`) | `"100%"` | open when slow successes ÷ outcomes in the window is ≥ N% |
/// | `mode` | `"enforce"` or `"shadow"` | `"enforce"` | `"shadow"`: records, judges, transitions and announces as usual but never rejects; what it would have rejected runs and is reported (`CallEvent::ShadowRejected`, `circuit_breaker_shadow_rejected_total`); `Breaker::set_mode` switches a live breaker |
/// | `record` | a span such as `"30m"` (at least `"1s"`), or `"off"` | `"10m"` (the process's default) | the flight recorder: the breaker's calls of that last span (at most the last 20 000) and its transitions, kept from its first call without anyone asking, read with `Breaker::recent` or `GET {name}/trace?last=5m` and replayed by `breaker-replay` ([traces](https://github.com/breaker-rs/breaker/blob/main/docs/traces.md)); changes live |
/// | `warm_up` | a duration such as `"30s"` | none | for that long after the breaker's first call (not its build) the circuit does not open, whatever the window says; outcomes are still recorded and the first judgement after it sees them (opossum's `allowWarmUp`). A reset leaves it as it is; a change moves its end, from the same first call; an order from a fleet, an operator or a drill opens the circuit all the same ([semantics](https://github.com/breaker-rs/breaker/blob/main/docs/semantics.md#warm-up)); changes live |
/// | `retries` | integer 1 to 10 | 0 | more attempts after a counted failure or a timeout, never after a success, a healthy or ignored answer, or a rejection; each goes through the breaker and is recorded |
/// | `backoff` | `"<initial>..<max>"`, two durations, initial ≤ max (needs `retries`) | `"100ms..10s"` (with `retries`) | full jitter: the n-th retry waits a random time in [0, min(initial × 2ⁿ, max)] |
/// | `retry_budget` | `"N%"` or `"off"` (needs `retries`) | `"20%"` (with `retries`) | retries at most N% of the calls of the last 10 s, and at least 10 a second; an empty budget means no retry, not a failure |
/// | `deadline` | a duration | none | one bound on all attempts and the waits between them; `timeout` stays per attempt |
/// | `max_concurrent` | integer 1 to 1 000 000 | none (no bulkhead) | a bulkhead: more calls at once are rejected with `BreakerError::BulkheadFull`, never recorded |
/// | `max_wait` | a duration (needs `max_concurrent`) | none (reject at once) | how long a call over `max_concurrent` waits for a slot |
/// | `stale_for` | a duration such as `"10m"` | none | a failed, timed-out or rejected call answers with the last success (an `Ok`, never an error, not even a healthy one) for the same arguments, no older than this, before any `fallback`; arguments (owned) `Hash + Eq + Clone`, the return type `Clone` |
/// | `stale_entries` | integer 1 to 1 000 000 | 1 000 (with `stale_for`) | how many answers `stale_for` keeps for the fn |
/// | `fallback` | a path to an async fn (in a method: a bare name or `Self::name` is a method on `self`, and with the attribute on the `impl` block too, a bare name must be one of the block's methods; any other path, such as `self::queue_charge`, a free fn) | none | called with the same arguments when the call is rejected, times out or fails |
/// | `name` | string literal | `module_path!()::fn_name` | the breaker's identity: functions with the same `name` share one breaker; methods in an `impl` block that carries `#[circuit_breaker]` too are named `module_path!()::Type::method` |
/// | `is_failure` | a path to `fn(&Return) -> bool` | the `IsFailure` impl | classify the return value without implementing the trait |
/// | `crate` | a path | `::breaker_runtime` | where the runtime is, if you renamed the dependency |
///
/// Durations are `"<integer><unit>"` with unit `ms`, `s`, `m` or `h`, at most `"720h"`
/// ([`MAX_DURATION`]). Every value is checked at compile time, by the same rules as the
/// [`ConfigBuilder`].
///
/// # Methods
///
/// A method's own attribute cannot see its type, so put `#[circuit_breaker]` (without options)
/// on the `impl` block too: each guarded method's breaker is then named after the type, names
/// that do not change when code moves. In a trait impl the type reads `<Type as Trait>`;
/// generic arguments are left out, as one breaker serves every instantiation.
///
/// ```
/// use breaker_runtime::{BreakerError, circuit_breaker, registry};
///
/// struct Catalog;
///
/// async fn price_list(sku: u32) -> Result<u32, BreakerError> {
///     Ok(sku)
/// }
///
/// #[circuit_breaker]
/// impl Catalog {
///     #[circuit_breaker(fallback = cached)] // a method: `self.cached(sku)`
///     async fn get(&self, sku: u32) -> Result<u32, BreakerError> {
///         Ok(sku * 10)
///     }
///
///     #[circuit_breaker(fallback = self::price_list)] // a free fn: `price_list(sku)`
///     async fn price(&self, sku: u32) -> Result<u32, BreakerError> {
///         Ok(sku * 100)
///     }
///
///     async fn cached(&self, sku: u32) -> Result<u32, BreakerError> {
///         Ok(sku)
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// assert_eq!(Catalog.get(4).await, Ok(40));
/// assert!(registry().get(concat!(module_path!(), "::Catalog::get")).is_some());
/// assert!(registry().get(concat!(module_path!(), "::Catalog::price")).is_some());
/// # }
/// ```
///
/// # What it expands to
///
/// The signature, attributes, docs and visibility stay as written; the body becomes, in
/// outline (the real names are hygienic):
///
/// ```text
/// async fn charge(order: &Order) -> Result<Receipt, PayError> {
///     // Gathered by the linker, so registry() lists the breaker before its first call.
///     #[linkme::distributed_slice(DECLARATIONS)]
///     static DECLARATION: Declaration = Declaration {
///         name: None,
///         default_name: concat!(module_path!(), "::", "charge"),
///         // Only the options written; every other field is its one default.
///         config: Config::__checked(
///             Name::from_static(concat!(module_path!(), "::", "charge")),
///             Settings { threshold: Rate::from_ppm(500_000), window: Window::Count(20),
///                        timeout: Some(Duration::from_millis(2000)), ..Settings::DEFAULT },
///         ),
///         location: Location { file: file!(), line: line!(), column: column!() },
///         // How often the fallback (and stale answers) served: see testing::fallback_report.
///         fallbacks: Fallbacks::new(Some("queue_charge"), false),
///     };
///     static HANDLE: Handle = Handle::new(&DECLARATION);
///
///     let breaker: &'static Breaker = HANDLE.get();         // one atomic load after the first call
///     let outcome = breaker
///         .call_with(
///             async {
///                 let value = async {
///                     let ret: Result<Receipt, PayError> = { /* the original body */ };
///                     ret
///                 }
///                 .await;
///                 let verdict = classify::<Result<Receipt, PayError>>(&value); // IsFailure
///                 (value, verdict)
///             },
///             |(_, verdict)| *verdict,
///         )
///         .await;                                            // permit, timeout, record
///     match outcome {
///         Ok((value, Verdict::Success | Verdict::Ignore)) => value,
///         Ok((_, Verdict::Failure)) | Err(_) => {
///             DECLARATION.fallbacks.ran();
///             queue_charge(order).await
///         }
///     }
/// }
/// ```
///
/// Without a `fallback`, a rejection or timeout returns `Err(E::from(breaker_error))` and a
/// counted failure is returned as it is. Arguments taken by value are cloned before the body
/// runs only when there is a fallback to hand them to.
pub use breaker_macros::circuit_breaker;

/// What the attribute's expansion reaches the runtime through. Not public API.
#[doc(hidden)]
pub mod __private;
