//! Random fractions for the backoff's jitter: a xorshift generator per thread, seeded from the
//! standard library's random hasher keys. Jitter only needs to differ between callers, not to
//! be unpredictable.

use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

thread_local! {
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// A number in `[0, 1)`.
pub(crate) fn fraction() -> f64 {
    STATE.with(|state| {
        let mut x = state.get();
        if x == 0 {
            // Each `RandomState` draws fresh keys; `| 1` keeps xorshift off its fixed point.
            x = RandomState::new().hash_one(0u8) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.set(x);
        (x >> 11) as f64 / (1u64 << 53) as f64
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn fractions_stay_in_range_and_spread() {
        let draws: Vec<f64> = (0..10_000).map(|_| super::fraction()).collect();
        assert!(draws.iter().all(|f| (0.0..1.0).contains(f)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((0.45..0.55).contains(&mean), "mean {mean}");
        let low = draws.iter().filter(|f| **f < 0.1).count();
        assert!((800..1200).contains(&low), "{low} of 10 000 below 0.1");
    }
}
