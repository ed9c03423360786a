//! How long a circuit stays open: the break's growth after failed probes, its cap, and the
//! jitter that keeps breakers that opened together from probing together. On tokio's paused
//! clock.

use std::collections::BTreeSet;
use std::time::Duration;

use breaker_runtime::{
    BreakGrowth, BreakerError, Config, ConfigError, Rate, circuit_breaker, registry,
};
use breaker_tests::{breaker, call, count, down, ms};

/// How long the open circuit says it stays open, read from a rejection.
fn open_for(b: &breaker_runtime::Breaker) -> Duration {
    b.try_acquire()
        .unwrap_err()
        .retry_after()
        .expect("open, not forced")
}

#[tokio::test(start_paused = true)]
async fn the_break_grows_by_its_factor_after_each_failed_probe_up_to_the_cap() {
    let b = breaker(
        count(1)
            .break_duration(ms(100))
            .max_break_duration(ms(1_000))
            .break_growth(1.5),
    );
    call(&b, down()).await;
    let mut seen = vec![open_for(&b)];
    for _ in 0..7 {
        tokio::time::advance(open_for(&b)).await;
        call(&b, down()).await; // the probe fails
        seen.push(open_for(&b));
    }
    let expected: Vec<Duration> = [
        100_000, 150_000, 225_000, 337_500, 506_250, 759_375, 1_000_000, 1_000_000,
    ]
    .into_iter()
    .map(Duration::from_micros)
    .collect();
    assert_eq!(seen, expected);
}

#[tokio::test(start_paused = true)]
async fn the_default_growth_doubles() {
    let b = breaker(count(1).break_duration(ms(100)).max_break_duration(ms(350)));
    assert_eq!(b.config().break_growth(), BreakGrowth::DEFAULT);
    call(&b, down()).await;
    let mut seen = vec![open_for(&b)];
    for _ in 0..3 {
        tokio::time::advance(open_for(&b)).await;
        call(&b, down()).await;
        seen.push(open_for(&b));
    }
    assert_eq!(seen, [ms(100), ms(200), ms(350), ms(350)]);
}

#[tokio::test(start_paused = true)]
async fn jitter_spreads_breakers_that_opened_together_and_never_shortens_a_break() {
    let breakers: Vec<_> = (0..200)
        .map(|_| breaker(count(1).break_duration(ms(1_000)).break_jitter(10.0)))
        .collect();
    for b in &breakers {
        call(b, down()).await;
    }
    let breaks: BTreeSet<Duration> = breakers.iter().map(open_for).collect();
    let (shortest, longest) = (*breaks.first().unwrap(), *breaks.last().unwrap());
    assert!(
        shortest >= ms(1_000),
        "never shorter than the break: {shortest:?}"
    );
    assert!(longest <= ms(1_100), "at most 10% longer: {longest:?}");
    assert!(
        breaks.len() > 150,
        "spread, not in lockstep: {} distinct",
        breaks.len()
    );
    assert!(
        shortest < ms(1_020) && longest > ms(1_080),
        "spread over the whole 10%: {shortest:?} to {longest:?}"
    );
    assert_eq!(
        breakers[0].config().break_jitter(),
        Rate::from_percent(10.0)
    );
}

#[tokio::test(start_paused = true)]
async fn a_jittered_probe_comes_when_the_rejection_said() {
    let b = breaker(count(1).break_duration(ms(1_000)).break_jitter(50.0));
    call(&b, down()).await;
    let wait = open_for(&b);
    tokio::time::advance(wait - Duration::from_nanos(1)).await;
    assert!(call(&b, down()).await, "still open a nanosecond before");
    tokio::time::advance(Duration::from_nanos(1)).await;
    assert!(!call(&b, breaker_tests::up()).await, "the probe, on time");
}

#[test]
fn growth_and_jitter_are_checked_by_the_builder() {
    let growth = |g: f64| {
        Config::builder()
            .max_break_duration(ms(60_000))
            .break_growth(g)
            .build()
    };
    assert_eq!(growth(1.25).unwrap().break_growth().factor(), 1.25);
    assert!(matches!(growth(0.5), Err(ConfigError::BreakGrowth { .. })));
    assert!(matches!(growth(10.5), Err(ConfigError::BreakGrowth { .. })));
    assert!(matches!(
        growth(f64::NAN),
        Err(ConfigError::BreakGrowth { .. })
    ));
    assert_eq!(
        Config::builder().break_growth(1.5).build().unwrap_err(),
        ConfigError::GrowthWithoutMaxBreak
    );
    for bad in [0.0, -1.0, 100.5, f64::INFINITY] {
        assert!(
            matches!(
                Config::builder().break_jitter(bad).build(),
                Err(ConfigError::Percentage {
                    field: "break_jitter",
                    ..
                })
            ),
            "{bad}"
        );
    }
}

#[circuit_breaker(
    window = "1",
    break_duration = "100ms",
    max_break_duration = "1s",
    break_growth = 1.5,
    break_jitter = "5%"
)]
async fn tuned() -> Result<(), BreakerError> {
    Ok(())
}

#[tokio::test]
async fn the_attribute_takes_growth_and_jitter() {
    tuned().await.unwrap();
    let config = registry().get("breaks::tuned").unwrap().config().clone();
    assert_eq!(config.break_growth().factor(), 1.5);
    assert_eq!(config.break_jitter(), Rate::from_percent(5.0));
    let from_settings = Config::builder()
        .settings(config.settings())
        .name("breaks::tuned")
        .build();
    assert_eq!(from_settings.unwrap(), config, "the settings round-trip");
}
