//! What a permit was admitted as: the one fact admission hands to recording.

use crate::core::probes::ProbeId;
use crate::core::state::Word;

/// What a permit was admitted as.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// A call through the closed circuit of this generation.
    Closed {
        generation: u32,
    },
    /// The same, on a breaker whose outcomes are counted ([`Breaker::counts`]): its outcome
    /// must be recorded even where a `Closed` one may be skipped. A variant of its own rather
    /// than a field, so the permit keeps the layout the hot path copies in whole words (a
    /// field beside the generation cost a closed call 8 ns in a failed store-to-load forward).
    ///
    /// [`Breaker::counts`]: crate::Breaker::counts
    Counted {
        generation: u32,
    },
    /// A half-open probe holding slot `id`.
    Probe {
        generation: u32,
        id: ProbeId,
    },
    /// A call that records nothing: the breaker is disabled.
    Unrecorded,
    /// The three kinds above while an injected delay holds the call, or held it
    /// ([`Breaker::inject`]): recorded as the kind it was admitted as, and its end announced
    /// as injected. Each the shape of the kind it stands for: a variant of another shape (the
    /// fault and the kind as small fields) took the compiler's layout elsewhere, and the
    /// permit API's closed call from 5 to 14 ns (benchmarked).
    ///
    /// [`Breaker::inject`]: crate::Breaker::inject
    DelayedClosed {
        generation: u32,
    },
    DelayedCounted {
        generation: u32,
    },
    DelayedProbe {
        generation: u32,
        id: ProbeId,
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

    /// The same admission, held by an injected delay; unchanged if it cannot be.
    pub(crate) fn delayed(self) -> Kind {
        match self {
            Kind::Closed { generation } => Kind::DelayedClosed { generation },
            Kind::Counted { generation } => Kind::DelayedCounted { generation },
            Kind::Probe { generation, id } => Kind::DelayedProbe { generation, id },
            other => other,
        }
    }

    /// The admission an injected delay held, and whether one did.
    pub(crate) fn undelayed(self) -> (Kind, bool) {
        match self {
            Kind::DelayedClosed { generation } => (Kind::Closed { generation }, true),
            Kind::DelayedCounted { generation } => (Kind::Counted { generation }, true),
            Kind::DelayedProbe { generation, id } => (Kind::Probe { generation, id }, true),
            other => (other, false),
        }
    }
}
