//! What a permit was admitted as: the one fact admission hands to recording.

use crate::core::probes::ProbeId;

/// What a permit was admitted as.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// A call through the closed circuit of this generation; `counted` when its outcome must
    /// reach the monotonic counts too, so it cannot skip recording.
    Closed { generation: u32, counted: bool },
    /// A half-open probe holding slot `id`.
    Probe { generation: u32, id: ProbeId },
    /// A call that records nothing: the breaker is disabled.
    Unrecorded,
    /// The outcome was given.
    Done,
}
