//! What a permit was admitted as: the one fact admission hands to recording.

use crate::core::probes::ProbeId;
use crate::core::state::Word;

/// What a permit was admitted as.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// A call through the closed circuit of this generation.
    Closed { generation: u32 },
    /// The same, on a breaker whose outcomes are counted ([`Breaker::counts`]): its outcome
    /// must be recorded even where a `Closed` one may be skipped. A variant of its own rather
    /// than a field, so the permit keeps the layout the hot path copies in whole words (a
    /// field beside the generation cost a closed call 8 ns in a failed store-to-load forward).
    ///
    /// [`Breaker::counts`]: crate::Breaker::counts
    Counted { generation: u32 },
    /// A half-open probe holding slot `id`.
    Probe { generation: u32, id: ProbeId },
    /// A call that records nothing: the breaker is disabled.
    Unrecorded,
    /// The outcome was given.
    Done,
}

impl Kind {
    /// A call through the closed circuit whose state word is `word`.
    #[inline]
    pub(crate) fn closed(word: Word) -> Kind {
        let generation = word.generation();
        if word.counted() {
            Kind::Counted { generation }
        } else {
            Kind::Closed { generation }
        }
    }
}
