//! Whether a breaker enforces what it decides, or only reports it.

use std::fmt;

/// Whether a breaker turns calls away.
///
/// ```
/// use breaker_options::{grammar, Mode};
///
/// assert_eq!(grammar::mode("shadow"), Ok(Mode::Shadow));
/// assert_eq!(Mode::default(), Mode::Enforce);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Rejects calls while the circuit is open (the default).
    #[default]
    Enforce,
    /// Records, judges, transitions and announces as usual, but never rejects: every call it
    /// would have turned away runs, and is reported as one it would have rejected. For rolling
    /// a breaker out and watching what it would do before it acts.
    Shadow,
}

impl Mode {
    /// `Shadow` if `shadow`, else `Enforce`: for a mode kept as a flag.
    pub const fn shadow_if(shadow: bool) -> Mode {
        if shadow { Mode::Shadow } else { Mode::Enforce }
    }

    /// The mode as the attribute spells it: `"enforce"` or `"shadow"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Shadow => "shadow",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
