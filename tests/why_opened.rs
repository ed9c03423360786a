//! Why a circuit opened: the rule, the counts, and what the failure it opened on said, in the
//! snapshot and in a sentence. On tokio's paused clock.

use std::time::Duration;

use breaker_runtime::{BreakerError, IsFailure, OpenReason, circuit_breaker, registry};
use breaker_tests::{breaker, count, ms};

#[derive(Debug, thiserror::Error, IsFailure)]
enum LedgerError {
    #[error("ledger-db refused the connection on port {0}")]
    Refused(u16),
    #[breaker(healthy)]
    #[error("no such account")]
    NoAccount,
    #[breaker(transparent)]
    #[error(transparent)]
    Breaker(#[from] BreakerError),
}

async fn cached_balance(_account: u32) -> Result<u64, LedgerError> {
    Ok(0)
}

/// With a fallback (or `stale_for`), the caller never sees the failure, so the attribute tells
/// the breaker what it said.
#[circuit_breaker(
    window = "2",
    threshold = "100%",
    break_duration = "1s",
    timeout = "100ms",
    fallback = cached_balance
)]
async fn balance(account: u32) -> Result<u64, LedgerError> {
    match account {
        0 => Err(LedgerError::Refused(5432)),
        1 => Err(LedgerError::NoAccount),
        2 => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok(0)
        }
        _ => Ok(100),
    }
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_says_what_the_failure_that_opened_the_circuit_said() {
    let b = registry().get("why_opened::balance").unwrap();
    assert!(balance(1).await.is_err(), "a business answer");
    assert_eq!(balance(0).await.unwrap(), 0, "the fallback");
    assert!(
        b.snapshot().last_opened.is_none(),
        "not open yet: nothing kept"
    );
    assert_eq!(balance(0).await.unwrap(), 0);
    let opened = b.snapshot().last_opened.expect("open");
    assert_eq!(opened.reason, OpenReason::FailureRate);
    assert_eq!(
        opened.last_failure.as_deref(),
        Some("ledger-db refused the connection on port 5432")
    );
    assert_eq!(
        opened.to_string(),
        "failure rate 100% reached the threshold of 100% over 2 calls (2 failed, 0 slow)"
    );

    // The probe times out: the circuit opens again, and the timeout is what it opened on.
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(
        balance(2).await.unwrap(),
        0,
        "timed out, and the fallback served"
    );
    let reopened = b.snapshot().last_opened.unwrap();
    assert_eq!(reopened.reason, OpenReason::ProbeFailed);
    assert_eq!(
        reopened.last_failure.as_deref(),
        Some("call through circuit breaker `why_opened::balance` timed out after 100 ms")
    );
}

#[derive(Debug, IsFailure)]
enum Quiet {
    Down {
        #[allow(dead_code)] // Read through `Debug`, which is the point.
        code: u16,
    },
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for Quiet {
    fn from(e: BreakerError) -> Self {
        Quiet::Breaker(e)
    }
}

async fn quietly() -> Result<(), Quiet> {
    Ok(())
}

#[circuit_breaker(window = "1", fallback = quietly)]
async fn quiet() -> Result<(), Quiet> {
    Err(Quiet::Down { code: 503 })
}

#[tokio::test(start_paused = true)]
async fn an_error_without_display_is_told_by_its_debug() {
    assert!(quiet().await.is_ok(), "the fallback");
    let opened = registry()
        .get("why_opened::quiet")
        .unwrap()
        .snapshot()
        .last_opened
        .unwrap();
    assert_eq!(opened.last_failure.as_deref(), Some("Down { code: 503 }"));
}

#[tokio::test(start_paused = true)]
async fn breaker_call_tells_it_for_the_error_types_the_crate_knows() {
    let b = breaker(count(2).name("why-call").break_duration(ms(1_000)));
    for port in [1, 2] {
        let failed = b
            .call(async move {
                Err::<(), _>(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    format!("refused on replica {port}"),
                ))
            })
            .await;
        assert!(failed.unwrap().is_err());
    }
    let opened = b.snapshot().last_opened.unwrap();
    assert_eq!(
        opened.last_failure.as_deref(),
        Some("refused on replica 2"),
        "the one it opened on"
    );

    // A failure that arrives later (admitted before the opening) does not rewrite the record.
    b.note_failure(&"a late failure");
    assert_eq!(
        b.snapshot().last_opened.unwrap().last_failure.as_deref(),
        Some("refused on replica 2")
    );
}

#[tokio::test(start_paused = true)]
async fn a_long_message_is_cut() {
    let b = breaker(count(1).name("why-long"));
    b.try_acquire().unwrap().failure();
    b.note_failure(&"x".repeat(10_000));
    let kept = b.snapshot().last_opened.unwrap().last_failure.unwrap();
    assert!(
        kept.len() <= 243 && kept.ends_with('…'),
        "{} bytes",
        kept.len()
    );
}

#[circuit_breaker(window = "1")]
async fn unfallen() -> Result<(), LedgerError> {
    Err(LedgerError::Refused(6379))
}

/// Issue 45: without a fallback the caller gets the failure back, and the breaker keeps what
/// it said as well, as it does with one.
#[tokio::test(start_paused = true)]
async fn without_a_fallback_the_failure_goes_back_to_the_caller_and_is_kept() {
    let err = unfallen().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "ledger-db refused the connection on port 6379",
        "the caller has it"
    );
    let b = registry().get("why_opened::unfallen").unwrap();
    let opened = b.snapshot().last_opened.unwrap();
    assert_eq!(
        (opened.reason, opened.calls, opened.failures),
        (OpenReason::FailureRate, 1, 1)
    );
    assert_eq!(
        opened.last_failure.as_deref(),
        Some("ledger-db refused the connection on port 6379"),
        "kept without the caller passing it on"
    );
}

async fn served(_port: u16) -> Result<(), LedgerError> {
    Ok(())
}

#[circuit_breaker(window = "1", fallback = served)]
async fn with_fallback(port: u16) -> Result<(), LedgerError> {
    Err(LedgerError::Refused(port))
}

#[circuit_breaker(window = "1")]
async fn without_fallback(port: u16) -> Result<(), LedgerError> {
    Err(LedgerError::Refused(port))
}

/// The report: two fns failing with the same error, and the one without a fallback read `null`.
#[tokio::test(start_paused = true)]
async fn two_fns_failing_alike_keep_the_same_failure_with_or_without_a_fallback() {
    assert!(with_fallback(6380).await.is_ok(), "the fallback");
    assert!(without_fallback(6380).await.is_err());
    for name in ["why_opened::with_fallback", "why_opened::without_fallback"] {
        let opened = registry()
            .get(name)
            .unwrap()
            .snapshot()
            .last_opened
            .unwrap();
        assert_eq!(
            opened.last_failure.as_deref(),
            Some("ledger-db refused the connection on port 6380"),
            "{name}"
        );
    }
}

/// No fallback: the rejection goes back to the caller, and says why the circuit is open.
#[circuit_breaker(window = "2", threshold = "100%", break_duration = "10s")]
async fn statement(account: u32) -> Result<u64, LedgerError> {
    match account {
        0 => Err(LedgerError::Refused(5432)),
        _ => Ok(100),
    }
}

#[tokio::test(start_paused = true)]
async fn a_registered_breakers_open_rejection_says_why_it_opened() {
    let b = registry().get("why_opened::statement").unwrap();
    assert!(statement(0).await.is_err());
    let failed = statement(0).await.unwrap_err();
    b.note_failure(&failed);
    let rejection = match statement(7).await {
        Err(LedgerError::Breaker(e)) => e,
        other => panic!("expected a rejection, got {other:?}"),
    };
    assert_eq!(
        rejection.to_string(),
        "circuit breaker `why_opened::statement` is open; next probe in 10 s. Why: failure rate \
         100% reached the threshold of 100% over 2 calls (2 failed, 0 slow); last failure: \
         ledger-db refused the connection on port 5432"
    );

    // Noting a rejection as the failure formats it with no lock held: no deadlock. (Opened by
    // hand-recorded failures, which say nothing, so the rejection is the first message.)
    b.force_open();
    b.reset();
    b.try_acquire().unwrap().failure();
    b.try_acquire().unwrap().failure();
    let Err(LedgerError::Breaker(rejection)) = statement(7).await else {
        panic!("open again");
    };
    b.note_failure(&rejection);
    let kept = b.snapshot().last_opened.unwrap().last_failure.unwrap();
    assert!(kept.starts_with("circuit breaker `why_opened::statement` is open; next probe in 10 s. Why: failure rate 100%"), "{kept}");

    // Once that opening is over, the old rejection no longer claims its evidence.
    tokio::time::advance(Duration::from_secs(10)).await;
    assert!(
        statement(0).await.is_err(),
        "the probe fails: a new opening"
    );
    assert_eq!(
        rejection.to_string(),
        "circuit breaker `why_opened::statement` is open; next probe in 0 ms"
    );
}

#[tokio::test(start_paused = true)]
async fn a_breaker_nobody_registered_names_itself_only() {
    let b = breaker(count(1).name("unlisted").break_duration(ms(2_000)));
    let _ = b
        .call(async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) })
        .await;
    let rejection = b.try_acquire().unwrap_err();
    assert_eq!(
        rejection.to_string(),
        "circuit breaker `unlisted` is open; next probe in 2 s"
    );
}
