//! What the fleet reads back from Redis besides its news, which any process with access to
//! that Redis can write: the fleet window's counts, judged against a breaker's thresholds.

use std::time::Duration;

use breaker_fleet::{Rule, Tally};
use breaker_runtime::Config;

/// Reads the input as a window (calls, failures, slow: three little-endian `u64`), a
/// `min_calls` and a threshold, and judges it. **Never panics, whatever the counts (failures
/// above calls, every `u64`); never trips under `min_calls` or on an empty window; a window
/// of nothing but failures always trips.**
pub fn fleet(data: &[u8]) {
    let word = |i: usize| {
        data.get(i * 8..i * 8 + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    };
    let tally = Tally {
        calls: word(0),
        failures: word(1),
        slow: word(2),
    };
    let min_calls = word(3);
    let threshold = 1.0 + (word(4) % 100) as f64;
    let Ok(config) = Config::builder()
        .threshold(threshold)
        .slow_call(Duration::from_millis(100))
        .build()
    else {
        return;
    };
    let judged = tally.trips(&config, min_calls);
    if tally.calls == 0 || tally.calls < min_calls {
        assert_eq!(judged, None, "{tally:?} under min_calls {min_calls}");
    } else if tally.failures >= tally.calls {
        assert_eq!(judged, Some(Rule::FailureRate), "{tally:?}");
    }
}
