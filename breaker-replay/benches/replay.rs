//! How long a replay and a search take (issue 46):
//!
//! - one million calls (about 17 minutes of traffic at 1 000 calls a second, with a two-minute
//!   outage in the middle) replayed against one candidate;
//! - `suggest` over 1 000 candidates on a trace shaped as the checkout demo's (48 000 calls:
//!   200 orders a second for four minutes, answers in 80 ms, a minute of timeouts at 2 s);
//! - `suggest` over 100 candidates on the million calls.
//!
//! `cargo bench -p breaker-replay`

use std::hint::black_box;
use std::time::Duration;

use breaker_replay::suggest::Request;
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

/// The checkout demo's shadow trace, in shape: 200 orders a second (Poisson arrivals) for 234 s,
/// each answered in 80 ms, but from 40 s to 100 s, when each times out at the demo's 2 s.
fn demo_shaped() -> Vec<Entry> {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut at = 0.0f64;
    let mut trace = Vec::new();
    while at < 234_000.0 {
        at += -(1.0 - uniform()).ln() * 5.0;
        let at_ms = at as u64;
        let (duration_ms, outcome) = if (40_000..100_000).contains(&at_ms) {
            (2_000, Outcome::Timeout)
        } else {
            (80, Outcome::Success)
        };
        trace.push(Entry {
            at_ms,
            duration_ms,
            outcome,
        });
    }
    trace
}

fn suggest(c: &mut Criterion) {
    let demo = demo_shaped();
    let million = trace();
    let current = || {
        breaker_replay::parse_options(r#"threshold = "50%", window = "20", timeout_ms = 2000"#)
            .unwrap()
    };
    let mut group = c.benchmark_group("suggest");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(40));
    let request = Request::new(current());
    assert_eq!(
        breaker_replay::suggest::suggest(&demo, &request)
            .unwrap()
            .searched,
        1_000
    );
    group.bench_function(
        format!("{} calls (the demo's shape), 1000 candidates", demo.len()),
        |b| {
            b.iter(|| {
                black_box(breaker_replay::suggest::suggest(black_box(&demo), &request).unwrap())
            })
        },
    );
    let request = Request {
        budget: 100,
        ..Request::new(current())
    };
    group.bench_function("1M calls, 100 candidates", |b| {
        b.iter(|| {
            black_box(breaker_replay::suggest::suggest(black_box(&million), &request).unwrap())
        })
    });
    group.finish();
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

criterion_group!(benches, replay, suggest);
criterion_main!(benches);
