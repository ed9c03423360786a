//! The fallback report (feature `test-util`): a suite in which one guarded fn's fallback ran
//! and another's never did fails naming exactly the second; stale answers count as served.

use std::panic::{AssertUnwindSafe, catch_unwind};

use breaker_runtime::testing::{self, assert_every_fallback_ran, fallback_report};

mod suite {
    use std::sync::atomic::{AtomicBool, Ordering};

    use breaker_runtime::{BreakerError, circuit_breaker};

    fn down() -> BreakerError {
        BreakerError::Timeout {
            breaker: "payments".into(),
            limit: std::time::Duration::from_secs(1),
        }
    }

    #[circuit_breaker(name = "report-charge", fallback = queue)]
    pub async fn charge(up: bool) -> Result<u32, BreakerError> {
        if up { Ok(1) } else { Err(down()) }
    }

    #[circuit_breaker(name = "report-refund", fallback = later)]
    pub async fn refund(up: bool) -> Result<u32, BreakerError> {
        if up { Ok(2) } else { Err(down()) }
    }

    /// Whether the quotes' dependency is down: a stale answer is for the same arguments.
    pub static QUOTES_DOWN: AtomicBool = AtomicBool::new(false);

    #[circuit_breaker(name = "report-quote", stale_for = "1m")]
    pub async fn quote(sku: u32) -> Result<u32, BreakerError> {
        if QUOTES_DOWN.load(Ordering::Relaxed) {
            Err(down())
        } else {
            Ok(sku)
        }
    }

    async fn queue(_up: bool) -> Result<u32, BreakerError> {
        Ok(10)
    }

    async fn later(_up: bool) -> Result<u32, BreakerError> {
        Ok(20)
    }
}

fn failure_of(under: &str) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| assert_every_fallback_ran(under)))
        .err()
        .map(|panic| panic.downcast_ref::<String>().cloned().unwrap_or_default())
}

#[tokio::test]
async fn a_suite_fails_naming_exactly_the_guarded_fn_whose_fallback_never_ran() {
    let under = concat!(module_path!(), "::suite::");
    testing::isolated(async {
        assert_eq!(suite::charge(false).await, Ok(10), "the fallback served");
        assert_eq!(suite::refund(true).await, Ok(2), "answered: no fallback");
        assert_eq!(suite::quote(3).await, Ok(3));
        suite::QUOTES_DOWN.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(suite::quote(3).await, Ok(3), "the last good answer");
    })
    .await;

    let report: Vec<_> = fallback_report()
        .into_iter()
        .filter(|r| r.function.starts_with(under))
        .map(|r| {
            (
                r.function.rsplit("::").next().unwrap(),
                r.fallback,
                r.fallback_ran,
                r.stale_served,
            )
        })
        .collect();
    assert_eq!(
        report,
        [
            ("charge", Some("queue"), 1, 0),
            ("quote", None, 0, 1),
            ("refund", Some("later"), 0, 0),
        ]
    );

    let message = failure_of(under).expect("refund's fallback never ran");
    assert!(
        message.contains("suite::refund` (fallback `later`"),
        "{message}"
    );
    assert!(message.starts_with("1 guarded fn(s)"), "{message}");
    assert!(!message.contains("suite::charge"), "{message}");
    assert!(!message.contains("suite::quote"), "{message}");

    // Down its fallback without failing the dependency: the scope's breaker held open.
    assert!(
        matches!(
            testing::open("report-refund"),
            Err(testing::TestingError::NotIsolated { call: "open", .. })
        ),
        "outside a scope"
    );
    testing::isolated(async {
        assert!(matches!(
            testing::open("no-such-breaker"),
            Err(testing::TestingError::Unknown { .. })
        ));
        testing::open("report-refund").expect("refund's breaker, made in this scope");
        assert_eq!(suite::refund(true).await, Ok(20));
    })
    .await;
    assert_eq!(
        suite::refund(true).await,
        Ok(2),
        "the process-wide breaker is closed"
    );
    assert_eq!(failure_of(under), None, "every fallback has served now");
}

mod injected {
    use breaker_runtime::{BreakerError, circuit_breaker};

    #[circuit_breaker(name = "report-stock", timeout_ms = 1000, fallback = unknown)]
    pub async fn stock(sku: u32) -> Result<u32, BreakerError> {
        Ok(sku)
    }

    async fn unknown(_sku: u32) -> Result<u32, BreakerError> {
        Ok(0)
    }
}

#[tokio::test(start_paused = true)]
async fn an_injected_fault_sends_a_guarded_fn_down_its_fallback_without_a_mock() {
    use std::time::Duration;

    use breaker_runtime::Injection;

    let under = concat!(module_path!(), "::injected::");
    let ran = || {
        fallback_report()
            .into_iter()
            .find(|r| r.function.starts_with(under))
            .map(|r| r.fallback_ran)
    };
    assert!(
        matches!(
            testing::inject("report-stock", Injection::new().fail(100.0)),
            Err(testing::TestingError::NotIsolated { call: "inject", .. })
        ),
        "outside a scope"
    );
    assert_eq!(ran(), Some(0));
    testing::isolated(async {
        assert!(matches!(
            testing::inject("no-such-breaker", Injection::new().fail(100.0)),
            Err(testing::TestingError::Unknown { .. })
        ));
        let breaker = testing::inject("report-stock", Injection::new().fail(100.0))
            .expect("stock's breaker, made in this scope");
        assert_eq!(injected::stock(5).await, Ok(0), "an injected failure");
        breaker.stop_injection().unwrap();
        assert_eq!(
            injected::stock(5).await,
            Ok(5),
            "stopped, the dependency answers"
        );
        // A delay past the timeout: the fallback again, once the timeout has cut the call.
        testing::inject(
            "report-stock",
            Injection::new().delay(Duration::from_secs(5), 100.0),
        )
        .unwrap();
        let start = tokio::time::Instant::now();
        assert_eq!(injected::stock(5).await, Ok(0), "an injected delay");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    })
    .await;
    assert_eq!(ran(), Some(2));
    assert_eq!(
        injected::stock(5).await,
        Ok(5),
        "the process-wide breaker has nothing injected"
    );
}

mod named_elsewhere {
    use breaker_runtime::{BreakerError, circuit_breaker};

    /// Named under a prefix of its own, living in this module.
    #[circuit_breaker(name = "guide-report::price", fallback = list_price)]
    pub async fn price(sku: u32) -> Result<u32, BreakerError> {
        Ok(sku * 100)
    }

    async fn list_price(_sku: u32) -> Result<u32, BreakerError> {
        Ok(99)
    }
}

/// Issue 45: a prefix that takes no guarded fn with a fallback panics, naming the prefixes
/// that take some, where it passed checking nothing; a breaker's `name` is a prefix too.
#[tokio::test]
async fn a_prefix_that_takes_no_fallback_fails_and_names_the_prefixes_that_exist() {
    let typo = failure_of("fallback_report::suite_").expect("a typo takes nothing");
    assert!(
        typo.starts_with(
            "testing::assert_every_fallback_ran(`fallback_report::suite_`) checks nothing: no guarded fn under it declares a fallback or `stale_for` (did you mean `fallback_report::suite::`"
        ),
        "{typo}"
    );
    assert!(typo.contains("`report-charge`"), "names count: {typo}");
    assert!(
        typo.contains("`guide-report::`"),
        "and what names read as under: {typo}"
    );
    let half = failure_of("fallback_report::sui").expect("a prefix stops at a `::`");
    assert!(half.contains("checks nothing"), "{half}");

    // By its breaker's name, though it lives in another module: it can fail, then pass.
    let never = failure_of("guide-report::").expect("its fallback never ran");
    assert!(never.contains("named_elsewhere::price"), "{never}");
    testing::isolated(async {
        testing::open("guide-report::price").expect("its breaker");
        assert_eq!(named_elsewhere::price(1).await, Ok(99));
    })
    .await;
    assert_eq!(failure_of("guide-report::"), None);
    assert_eq!(failure_of("guide-report::price"), None, "a whole name");
    assert_eq!(
        failure_of(concat!(module_path!(), "::named_elsewhere")),
        None,
        "its path, without the `::`"
    );
}

/// The errors of `open` and `inject` say which mistake it was.
#[tokio::test]
async fn open_and_inject_say_why_they_could_not() {
    let outside = testing::open("report-charge").unwrap_err();
    assert!(
        outside
            .to_string()
            .starts_with("testing::open(`report-charge`) runs outside `testing::isolated`"),
        "{outside}"
    );
    testing::isolated(async {
        let typo = testing::open("report-chrage").unwrap_err();
        assert_eq!(
            typo.to_string(),
            "no guarded fn has a breaker named `report-chrage`; the nearest names: `report-charge`"
        );
        let nothing = breaker_runtime::Injection::new();
        let refused = testing::inject("report-charge", nothing).unwrap_err();
        assert!(
            matches!(refused, testing::TestingError::Refused { .. }),
            "{refused}"
        );
    })
    .await;
}
