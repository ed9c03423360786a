//! One million calls (about 17 minutes of traffic at 1 000 calls a second, with a two-minute
//! outage in the middle) replayed against one candidate: how long a replay takes.
//!
//! `cargo bench -p breaker-replay`

use std::hint::black_box;
use std::time::Duration;

use breaker_runtime::trace::{Entry, Outcome};
use criterion::{Criterion, criterion_group, criterion_main};

const CALLS: u64 = 1_000_000;

/// Steady traffic, a call every millisecond, 1% failures; from 400 s to 520 s, 90% of calls
/// time out at 2 s.
fn trace() -> Vec<Entry> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    (0..CALLS)
        .map(|i| {
            let roll = next() % 100;
            let at_ms = i;
            let (outcome, duration_ms) = if (400_000..520_000).contains(&at_ms) && roll < 90 {
                (Outcome::Timeout, 2_000)
            } else if roll == 0 {
                (Outcome::Failure, 20)
            } else {
                (Outcome::Success, 40 + next() % 80)
            };
            Entry {
                at_ms,
                duration_ms,
                outcome,
            }
        })
        .collect()
}

fn replay(c: &mut Criterion) {
    let trace = trace();
    let candidate = breaker_replay::parse_options(
        r#"threshold = "40%", window = "30s", timeout_ms = 2000, break_duration = "10s""#,
    )
    .unwrap();
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(40));
    group.bench_function("1M calls, one config", |b| {
        b.iter(|| black_box(breaker_replay::replay(black_box(&trace), &candidate.config).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
