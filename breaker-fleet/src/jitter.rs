//! Random numbers enough for jitter and member ids, from the standard library's hasher seed.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

/// A xorshift generator seeded by the process's random hasher keys.
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn seeded() -> Jitter {
        Jitter(random_u64() | 1)
    }

    /// A number in `[0, 1)`.
    pub(crate) fn fraction(&mut self) -> f64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random number: each `RandomState` draws fresh keys.
pub(crate) fn random_u64() -> u64 {
    RandomState::new().hash_one(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_stay_in_range_and_vary() {
        let mut jitter = Jitter::seeded();
        let draws: Vec<f64> = (0..1000).map(|_| jitter.fraction()).collect();
        assert!(draws.iter().all(|f| (0.0..1.0).contains(f)));
        let mean = draws.iter().sum::<f64>() / 1000.0;
        assert!((0.4..0.6).contains(&mean), "{mean}");
    }
}
