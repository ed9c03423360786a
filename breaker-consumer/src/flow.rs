//! How much the broker may hand out, as the circuit moves: nothing while open, the probes while
//! half-open, the concurrency once closed. Tells a pushing source only when that changes.

/// What the source was last told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Not told anything yet: a source starts as its broker's defaults leave it.
    Unset,
    Paused,
    Flowing(usize),
}
