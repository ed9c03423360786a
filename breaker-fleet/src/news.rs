//! What the fleet tells its members: a decision on one breaker, by whom, of which generation.
//! Times travel as durations from now, never as instants, so no two clocks need agree.

use std::fmt;
use std::time::Duration;

/// A fleet decision on one breaker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct News {
    /// The breaker's name.
    pub breaker: String,
    /// The member that decided.
    pub origin: u64,
    /// Grows with every decision on this breaker, fleet-wide: older news is dropped.
    pub generation: u64,
    /// What was decided.
    pub decision: Decision,
}

/// What the fleet decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Open on the fleet's evidence (or after a failed probe), for this long from now.
    Open {
        /// The time left of the break.
        remaining: Duration,
    },
    /// One member holds the probe lease and probes; everyone else keeps rejecting.
    Probing,
    /// The probes succeeded: close, with empty windows.
    Close,
}

/// Text that is not news of this version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not fleet news: {0:?}")]
pub struct Garbled(pub String);

impl News {
    /// The wire form: `1 <generation> <origin> <o|p|c> <milliseconds> <breaker>`.
    pub fn encode(&self) -> String {
        let (kind, millis) = match self.decision {
            Decision::Open { remaining } => ('o', remaining.as_millis()),
            Decision::Probing => ('p', 0),
            Decision::Close => ('c', 0),
        };
        format!(
            "1 {} {:x} {kind} {millis} {}",
            self.generation, self.origin, self.breaker
        )
    }

    /// Reads the wire form back.
    pub fn decode(text: &str) -> Result<News, Garbled> {
        let garbled = || Garbled(text.chars().take(120).collect());
        let mut parts = text.splitn(6, ' ');
        let mut next = || parts.next().ok_or_else(garbled);
        if next()? != "1" {
            return Err(garbled());
        }
        let generation = next()?.parse().map_err(|_| garbled())?;
        let origin = u64::from_str_radix(next()?, 16).map_err(|_| garbled())?;
        let kind = next()?;
        let millis: u64 = next()?.parse().map_err(|_| garbled())?;
        let breaker = next()?.to_owned();
        let decision = match kind {
            "o" => Decision::Open {
                remaining: Duration::from_millis(millis),
            },
            "p" => Decision::Probing,
            "c" => Decision::Close,
            _ => return Err(garbled()),
        };
        Ok(News {
            breaker,
            origin,
            generation,
            decision,
        })
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Open { remaining } => write!(f, "open for {remaining:?}"),
            Decision::Probing => f.write_str("probing"),
            Decision::Close => f.write_str("close"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_reads_back_as_it_was_written() {
        for decision in [
            Decision::Open {
                remaining: Duration::from_millis(1500),
            },
            Decision::Probing,
            Decision::Close,
        ] {
            let news = News {
                breaker: "payments api".into(),
                origin: 0xdead_beef,
                generation: 42,
                decision,
            };
            assert_eq!(News::decode(&news.encode()), Ok(news));
        }
    }

    #[test]
    fn anything_else_is_garbled_not_a_panic() {
        for text in [
            "",
            "1",
            "2 1 a o 0 x",
            "1 x a o 0 x",
            "1 1 zz o 0 x",
            "1 1 a q 0 x",
            "1 1 a o",
        ] {
            assert!(News::decode(text).is_err(), "{text:?}");
        }
    }
}
