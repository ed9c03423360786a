//! SPEC section 4 through the attribute: the fallback serves rejections, timeouts and counted
//! failures with the same arguments; business answers pass through untouched; without a
//! fallback the breaker's answer becomes the error type's `From<BreakerError>`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use breaker_runtime::{BreakerError, IsFailure, State, circuit_breaker, registry};

#[derive(Debug, PartialEq, IsFailure)]
enum PayError {
    Unavailable,
    #[breaker(healthy)]
    Declined,
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for PayError {
    fn from(e: BreakerError) -> Self {
        PayError::Breaker(e)
    }
}

#[derive(Debug, PartialEq)]
enum Receipt {
    Charged(u32),
    Queued(u32),
}

struct Order {
    id: u32,
}

/// Taken by value, so the fallback gets a clone.
#[derive(Debug, Clone)]
struct Card(#[allow(dead_code)] u32);

async fn queue(order: &Order, _card: Card, mode: &str) -> Result<Receipt, PayError> {
    assert_eq!(mode, "live", "the fallback gets the same arguments");
    Ok(Receipt::Queued(order.id))
}

#[circuit_breaker(window = "3", break_duration = "10s", timeout_ms = 100, fallback = queue)]
async fn charge(order: &Order, card: Card, mode: &str) -> Result<Receipt, PayError> {
    let _card: Card = card; // the body takes the card by value
    let _ = mode;
    match order.id {
        0 => Err(PayError::Unavailable),
        1 => Err(PayError::Declined),
        2 => {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(Receipt::Charged(2))
        }
        id => Ok(Receipt::Charged(id)),
    }
}

#[tokio::test(start_paused = true)]
async fn the_fallback_serves_failures_timeouts_and_rejections_but_never_masks_an_answer() {
    let breaker = registry().get("spec_4_fallback::charge").unwrap();
    assert_eq!(
        charge(&Order { id: 7 }, Card(1), "live").await,
        Ok(Receipt::Charged(7))
    );
    assert_eq!(
        charge(&Order { id: 1 }, Card(1), "live").await,
        Err(PayError::Declined),
        "a business answer passes through"
    );
    assert_eq!(
        charge(&Order { id: 0 }, Card(1), "live").await,
        Ok(Receipt::Queued(0)),
        "a counted failure is served by the fallback"
    );
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        charge(&Order { id: 2 }, Card(1), "live").await,
        Ok(Receipt::Queued(2)),
        "so is a timeout"
    );
    assert_eq!(
        breaker.state(),
        State::Open,
        "the failure and the timeout opened the circuit"
    );
    assert_eq!(
        charge(&Order { id: 9 }, Card(1), "live").await,
        Ok(Receipt::Queued(9)),
        "and a rejection"
    );
}

static BY_REFERENCE_CLONES: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug)]
struct Tracked;

impl Clone for Tracked {
    fn clone(&self) -> Self {
        BY_REFERENCE_CLONES.fetch_add(1, Ordering::SeqCst);
        Tracked
    }
}

static WALLET_CLONES: AtomicUsize = AtomicUsize::new(0);

/// Like `Card`, with a counter no other test touches.
struct Wallet;

impl Clone for Wallet {
    fn clone(&self) -> Self {
        WALLET_CLONES.fetch_add(1, Ordering::SeqCst);
        Wallet
    }
}

async fn pay_later(order: &Order, _wallet: Wallet) -> Result<Receipt, PayError> {
    Ok(Receipt::Queued(order.id))
}

#[circuit_breaker(fallback = pay_later)]
async fn keeps_the_wallet(order: &Order, wallet: Wallet) -> Result<Receipt, PayError> {
    let _taken: Wallet = wallet;
    Ok(Receipt::Charged(order.id))
}

async fn no_clone_needed(_t: &Tracked) -> Result<u32, PayError> {
    Ok(0)
}

#[circuit_breaker(fallback = no_clone_needed)]
async fn by_reference(_t: &Tracked) -> Result<u32, PayError> {
    Ok(1)
}

#[circuit_breaker]
async fn by_value_without_fallback(_t: Tracked) -> Result<u32, PayError> {
    Ok(1)
}

#[tokio::test]
async fn arguments_are_cloned_only_when_taken_by_value_with_a_fallback() {
    assert_eq!(
        keeps_the_wallet(&Order { id: 11 }, Wallet).await,
        Ok(Receipt::Charged(11))
    );
    assert_eq!(
        WALLET_CLONES.load(Ordering::SeqCst),
        1,
        "the by-value wallet is cloned once, before the body"
    );
    by_reference(&Tracked).await.unwrap();
    by_value_without_fallback(Tracked).await.unwrap();
    assert_eq!(BY_REFERENCE_CLONES.load(Ordering::SeqCst), 0);
}

#[circuit_breaker(window = "1", break_duration = "1h")]
async fn without_fallback(fail: bool) -> Result<u32, PayError> {
    if fail {
        Err(PayError::Unavailable)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn without_a_fallback_a_failure_is_returned_and_a_rejection_becomes_the_error_type() {
    assert_eq!(without_fallback(true).await, Err(PayError::Unavailable));
    match without_fallback(false).await {
        Err(PayError::Breaker(e)) => {
            assert!(e.is_rejection());
            assert_eq!(e.breaker(), "spec_4_fallback::without_fallback");
        }
        other => panic!("expected the rejection, got {other:?}"),
    }
}

#[circuit_breaker(timeout_ms = 50)]
async fn times_out_without_fallback() -> Result<u32, BreakerError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_without_a_fallback_is_the_breaker_error() {
    let err = times_out_without_fallback().await.unwrap_err();
    assert!(err.is_timeout());
    assert_eq!(
        err,
        BreakerError::Timeout {
            breaker: err.breaker().to_string().into(),
            limit: Duration::from_millis(50)
        }
    );
}

struct Gateway {
    region: &'static str,
}

impl Gateway {
    #[circuit_breaker(window = "1", break_duration = "1h", fallback = cached)]
    async fn price(&self, sku: u32) -> Result<String, PayError> {
        if sku == 0 {
            Err(PayError::Unavailable)
        } else {
            Ok(format!("{}-live-{sku}", self.region))
        }
    }

    async fn cached(&self, sku: u32) -> Result<String, PayError> {
        Ok(format!("{}-cached-{sku}", self.region))
    }
}

#[tokio::test(start_paused = true)]
async fn in_a_method_the_fallback_is_a_method_on_self() {
    let gateway = Gateway { region: "eu" };
    assert_eq!(gateway.price(3).await, Ok("eu-live-3".to_string()));
    assert_eq!(gateway.price(0).await, Ok("eu-cached-0".to_string()));
    assert_eq!(
        gateway.price(4).await,
        Ok("eu-cached-4".to_string()),
        "open: rejected into the fallback"
    );
}

/// A free fn serving a method: the arguments without the receiver.
async fn price_list(sku: u32) -> Result<String, PayError> {
    Ok(format!("list-{sku}"))
}

mod catalog {
    pub async fn price(sku: u32) -> Result<String, super::PayError> {
        Ok(format!("catalog-{sku}"))
    }
}

impl Gateway {
    #[circuit_breaker(window = "1", break_duration = "1h", fallback = self::price_list)]
    async fn quote(&self, sku: u32) -> Result<String, PayError> {
        let _ = self.region;
        if sku == 0 {
            Err(PayError::Unavailable)
        } else {
            Ok(format!("live-{sku}"))
        }
    }

    #[circuit_breaker(window = "1", break_duration = "1h", fallback = crate::catalog::price)]
    async fn listed(&self, sku: u32) -> Result<String, PayError> {
        let _ = self.region;
        if sku == 0 {
            Err(PayError::Unavailable)
        } else {
            Ok(format!("live-{sku}"))
        }
    }

    #[circuit_breaker(window = "1", break_duration = "1h", fallback = Self::cached)]
    async fn by_self_path(&self, sku: u32) -> Result<String, PayError> {
        if sku == 0 {
            Err(PayError::Unavailable)
        } else {
            Ok(format!("live-{sku}"))
        }
    }
}

#[tokio::test(start_paused = true)]
async fn in_a_method_a_path_other_than_self_is_a_free_fn_given_the_arguments_alone() {
    let gateway = Gateway { region: "us" };
    assert_eq!(gateway.quote(0).await, Ok("list-0".to_string()));
    assert_eq!(gateway.quote(5).await, Ok("list-5".to_string()), "open");
    assert_eq!(gateway.listed(0).await, Ok("catalog-0".to_string()));
    assert_eq!(gateway.by_self_path(0).await, Ok("us-cached-0".to_string()));
}

fn is_outage(result: &Result<u32, std::fmt::Error>) -> bool {
    result.is_err()
}

#[circuit_breaker(window = "1", break_duration = "1h", is_failure = is_outage, fallback = zero)]
async fn foreign_error_with_fallback(fail: bool) -> Result<u32, std::fmt::Error> {
    if fail { Err(std::fmt::Error) } else { Ok(1) }
}

async fn zero(_fail: bool) -> Result<u32, std::fmt::Error> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn is_failure_classifies_a_foreign_type() {
    assert_eq!(foreign_error_with_fallback(true).await, Ok(0));
    assert_eq!(
        foreign_error_with_fallback(false).await,
        Ok(0),
        "the failure opened it"
    );
    let breaker = registry()
        .get("spec_4_fallback::foreign_error_with_fallback")
        .unwrap();
    assert_eq!(breaker.state(), State::Open);
}

async fn unreached_fallback(_fail: bool) -> Result<u32, BreakerError> {
    Ok(100)
}

#[circuit_breaker(fallback = unreached_fallback)]
async fn ignored_outcome(_fail: bool) -> Result<u32, BreakerError> {
    // A nested breaker's rejection is ignored: not a failure, so no fallback either.
    Err(BreakerError::HalfOpenFull {
        breaker: "inner".into(),
        probes: 1,
        retry_after_ms: 0,
    })
}

#[tokio::test]
async fn an_ignored_outcome_is_returned_as_it_is() {
    assert!(ignored_outcome(false).await.unwrap_err().is_rejection());
    assert_eq!(
        registry()
            .get("spec_4_fallback::ignored_outcome")
            .unwrap()
            .snapshot()
            .calls,
        0
    );
}

#[derive(Clone, Debug, PartialEq)]
struct Point {
    x: u32,
    y: u32,
}

/// The fallback gets the argument whole, though the signature takes it apart.
#[circuit_breaker(window = "1", break_duration = "1h", fallback = plot_later)]
async fn plot((a, b): (u32, u32), Point { x, y }: Point) -> Result<u32, PayError> {
    if a == 0 {
        Err(PayError::Unavailable)
    } else {
        Ok(a + b + x + y)
    }
}

async fn plot_later(pair: (u32, u32), point: Point) -> Result<u32, PayError> {
    Ok(pair.0 * 1000 + pair.1 * 100 + point.x * 10 + point.y)
}

#[tokio::test(start_paused = true)]
async fn a_destructured_argument_reaches_the_fallback_whole() {
    assert_eq!(plot((1, 2), Point { x: 3, y: 4 }).await, Ok(10));
    assert_eq!(plot((0, 2), Point { x: 3, y: 4 }).await, Ok(234));
}
