//! The flight recorder's process-wide default span: what a breaker whose options name no
//! `record` keeps. Beside the configuration, which reads it when it is built.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use breaker_options::{ConfigError, Record, Settings};

use crate::base::clock;

/// The process's default `record`, as nanoseconds (0 for off), or `UNSET`.
static DEFAULT_RECORD: AtomicU64 = AtomicU64::new(UNSET);
const UNSET: u64 = u64::MAX;

/// Sets what the flight recorder keeps for every breaker whose options name no `record`
/// ([`Record::DEFAULT`], the last 10 minutes, until this is called). Read when a breaker is
/// built (a guarded fn's breaker at its first call): call it at the start of `main`. A value
/// the option would refuse (under a second, over 30 days) is refused here, and the default
/// stays.
///
/// ```
/// use std::time::Duration;
/// use breaker_runtime::trace::{default_record, set_default_record};
/// use breaker_runtime::{Breaker, Config, Record};
///
/// set_default_record(Record::Last(Duration::from_secs(1_800)))?;
/// assert_eq!(default_record(), Record::Last(Duration::from_secs(1_800)));
/// let breaker = Breaker::new(Config::default());
/// assert_eq!(breaker.config().record(), Some(Record::Last(Duration::from_secs(1_800))));
/// assert!(set_default_record(Record::Last(Duration::from_millis(10))).is_err());
/// # Ok::<(), breaker_runtime::ConfigError>(())
/// ```
pub fn set_default_record(record: Record) -> Result<(), ConfigError> {
    Settings {
        record: Some(record),
        ..Settings::DEFAULT
    }
    .check()?;
    let nanos = match record {
        Record::Off => 0,
        Record::Last(span) => clock::duration_nanos(span),
    };
    DEFAULT_RECORD.store(nanos, Ordering::Relaxed);
    Ok(())
}

/// What the flight recorder keeps for a breaker whose options name no `record`.
pub fn default_record() -> Record {
    match DEFAULT_RECORD.load(Ordering::Relaxed) {
        // The models of the concurrent core check the recorder on its own: a breaker of theirs
        // with 20 000 modelled atomics in its ring would take loom's search out of reach.
        UNSET if cfg!(breaker_loom) => Record::Off,
        UNSET => Record::DEFAULT,
        0 => Record::Off,
        nanos => Record::Last(Duration::from_nanos(nanos)),
    }
}
