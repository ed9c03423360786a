//! The committed sample trace is the generator's output, byte for byte.

#[allow(dead_code)]
#[path = "../examples/generate.rs"]
mod generate;

#[test]
fn the_committed_sample_is_what_the_generator_writes() {
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(generate::PATH),
    )
    .unwrap();
    let generated = breaker_runtime::trace::to_json_lines(&generate::outage_trace());
    assert!(
        committed == generated,
        "run `cargo run -p breaker-replay --example generate`"
    );
    assert!(committed.len() < 1_000_000, "the sample stays small");
}

#[test]
fn the_sample_has_one_outage_in_the_middle_of_steady_traffic() {
    let trace = generate::outage_trace();
    let outages = breaker_replay::outages(&trace);
    assert_eq!(outages.len(), 1, "{outages:?}");
    assert!(
        (120_000..121_000).contains(&outages[0].start_ms),
        "{outages:?}"
    );
    assert_eq!(outages[0].end_ms, 180_000);
    let per_second = trace.len() as f64 / 300.0;
    assert!(
        (10.0..=50.0).contains(&per_second),
        "{per_second} calls a second"
    );
}
