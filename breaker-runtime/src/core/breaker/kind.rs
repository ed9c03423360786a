//! What a permit was admitted as: the one fact admission hands to recording.

use crate::core::injection::Fault;
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
    /// A closed call (counted or not) or a probe, with a fault injected
    /// ([`Breaker::inject`]): recorded as the kind it was admitted as, and announced as
    /// injected. One variant whose fields fill the room the probe's leaves, so the permit
    /// keeps its size.
    ///
    /// [`Breaker::inject`]: crate::Breaker::inject
    Injected {
        generation: u32,
        /// The probe's slot; unused for a closed call.
        id: ProbeId,
        fault: Fault,
        counted: bool,
        probe: bool,
    },
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

    /// Whether a fault may be injected into the call: it is recorded, and has none yet.
    pub(crate) fn injectable(&self) -> bool {
        matches!(
            self,
            Kind::Closed { .. } | Kind::Counted { .. } | Kind::Probe { .. }
        )
    }

    /// The same admission, carrying `fault`; unchanged if it cannot carry one.
    pub(crate) fn injected(self, fault: Fault) -> Kind {
        match self {
            Kind::Closed { generation } | Kind::Counted { generation } => Kind::Injected {
                generation,
                id: ProbeId::NONE,
                fault,
                counted: matches!(self, Kind::Counted { .. }),
                probe: false,
            },
            Kind::Probe { generation, id } => Kind::Injected {
                generation,
                id,
                fault,
                counted: false,
                probe: true,
            },
            other => other,
        }
    }

    /// The admission it carries a fault for, and the fault; itself and `None` otherwise.
    pub(crate) fn uninjected(self) -> (Kind, Option<Fault>) {
        match self {
            Kind::Injected {
                generation,
                id,
                fault,
                counted,
                probe,
            } => {
                let kind = match (probe, counted) {
                    (true, _) => Kind::Probe { generation, id },
                    (false, true) => Kind::Counted { generation },
                    (false, false) => Kind::Closed { generation },
                };
                (kind, Some(fault))
            }
            other => (other, None),
        }
    }
}
