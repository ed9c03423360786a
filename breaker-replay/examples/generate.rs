//! Writes the sample trace, `traces/outage.jsonl`: five minutes of checkout-like traffic
//! (about 20 calls a second, a few business answers, a rare failure) with a 60-second outage in
//! the middle, when most calls time out at 2 s or are refused at once. Seeded, so the file is
//! the same every time; a test holds the committed file to this program's output.
//!
//! `cargo run -p breaker-replay --example generate`

use breaker_runtime::trace::{Entry, Outcome, to_json_lines};

/// Where the trace goes, from the crate's root.
pub const PATH: &str = "traces/outage.jsonl";

const SPAN_MS: u64 = 300_000;
const OUTAGE_MS: std::ops::Range<u64> = 120_000..180_000;
/// The timeout the traffic was recorded under: a timed-out call ran this long.
const TIMEOUT_MS: u64 = 2_000;
const MEAN_GAP_MS: f64 = 50.0;

/// xorshift64*: enough randomness for traffic, and the same from the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A fraction in [0, 1).
    fn fraction(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A whole number in `range`.
    fn within(&mut self, range: std::ops::Range<u64>) -> u64 {
        range.start + self.next() % (range.end - range.start)
    }
}

/// The sample trace's calls, in order.
pub fn outage_trace() -> Vec<Entry> {
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let mut entries = Vec::new();
    let mut at = 0.0f64;
    loop {
        // Exponential gaps: arrivals of a steady, memoryless stream of customers.
        at += -MEAN_GAP_MS * (1.0 - rng.fraction()).ln();
        let at_ms = at as u64;
        if at_ms >= SPAN_MS {
            break;
        }
        let roll = rng.fraction();
        let (outcome, duration_ms) = if OUTAGE_MS.contains(&at_ms) {
            match roll {
                r if r < 0.65 => (Outcome::Timeout, TIMEOUT_MS),
                r if r < 0.90 => (Outcome::Failure, rng.within(5..40)),
                r if r < 0.95 => (Outcome::Healthy, rng.within(300..1_500)),
                _ => (Outcome::Success, rng.within(300..1_500)),
            }
        } else {
            match roll {
                r if r < 0.01 => (Outcome::Failure, rng.within(5..40)),
                r if r < 0.06 => (Outcome::Healthy, rng.within(40..120)),
                _ => (Outcome::Success, rng.within(40..160)),
            }
        };
        entries.push(Entry {
            at_ms,
            duration_ms,
            outcome,
        });
    }
    entries
}

#[allow(
    dead_code,
    reason = "the test that includes this file uses only the trace"
)]
fn main() -> std::process::ExitCode {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PATH);
    match std::fs::write(&path, to_json_lines(&outage_trace())) {
        Ok(()) => {
            println!("wrote {PATH}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {PATH}: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
