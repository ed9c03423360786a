//! The stale-value fallback: a failed or rejected call answers with the last good answer for
//! the same arguments, no older than `stale_for`, from a bounded cache. On tokio's paused clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use breaker_runtime::{
    Breaker, BreakerError, Config, IsFailure, StaleCache, circuit_breaker, registry,
};

#[derive(Debug, Clone, PartialEq, IsFailure)]
enum PriceError {
    Down,
    #[breaker(healthy)]
    NotFound,
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for PriceError {
    fn from(e: BreakerError) -> Self {
        PriceError::Breaker(e)
    }
}

/// What the price service answers, by SKU: a price, or an error.
static PRICES: Mutex<Option<HashMap<String, Result<u32, PriceError>>>> = Mutex::new(None);

fn answer(sku: &str, with: Result<u32, PriceError>) {
    PRICES
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(sku.to_string(), with);
}

fn lookup(sku: &str) -> Result<u32, PriceError> {
    PRICES
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|prices| prices.get(sku).cloned())
        .unwrap_or(Err(PriceError::Down))
}

#[circuit_breaker(window = "100", stale_for = "10m", timeout = "1s")]
async fn price(sku: &str) -> Result<u32, PriceError> {
    if sku.starts_with("slow") {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    lookup(sku)
}

#[tokio::test(start_paused = true)]
async fn a_failure_answers_with_the_last_good_answer_for_the_same_arguments() {
    answer("pen", Ok(120));
    assert_eq!(price("pen").await, Ok(120));
    answer("pen", Err(PriceError::Down));
    assert_eq!(price("pen").await, Ok(120), "stale, but an answer");
    assert_eq!(
        price("ink").await,
        Err(PriceError::Down),
        "nothing kept for these arguments"
    );

    answer("pen", Ok(130));
    assert_eq!(
        price("pen").await,
        Ok(130),
        "a fresh answer replaces the kept one"
    );
    answer("pen", Err(PriceError::Down));
    tokio::time::advance(Duration::from_secs(600)).await;
    assert_eq!(price("pen").await, Ok(130), "10 minutes old: still served");
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(
        price("pen").await,
        Err(PriceError::Down),
        "older than stale_for"
    );
}

#[tokio::test(start_paused = true)]
async fn a_healthy_answer_is_neither_kept_nor_masked() {
    answer("cap", Ok(90));
    assert_eq!(price("cap").await, Ok(90));
    answer("cap", Err(PriceError::NotFound));
    assert_eq!(
        price("cap").await,
        Err(PriceError::NotFound),
        "a business answer is the answer, not an outage"
    );
}

#[tokio::test(start_paused = true)]
async fn a_rejection_or_a_timeout_serves_the_kept_answer_too() {
    answer("slow-mug", Ok(700));
    answer("bag", Ok(800));
    assert_eq!(price("bag").await, Ok(800));
    // The slow one never answered in time: nothing kept, so its timeout is the answer.
    assert!(matches!(price("slow-mug").await, Err(PriceError::Breaker(e)) if e.is_timeout()));

    let breaker = registry().get("stale::price").unwrap();
    breaker.force_open();
    assert_eq!(price("bag").await, Ok(800), "rejected, and served stale");
    assert!(
        matches!(price("hat").await, Err(PriceError::Breaker(e)) if e.is_rejection()),
        "the usual rejection when nothing is kept"
    );
    breaker.reset();
}

static FALLBACKS: Mutex<u32> = Mutex::new(0);

async fn list_price(_sku: String, _region: u8) -> Result<u32, PriceError> {
    *FALLBACKS.lock().unwrap() += 1;
    Ok(999)
}

#[circuit_breaker(window = "100", stale_for = "1m", stale_entries = 2, fallback = list_price)]
async fn regional(sku: String, region: u8) -> Result<u32, PriceError> {
    lookup(&format!("{sku}@{region}"))
}

#[tokio::test(start_paused = true)]
async fn the_stale_answer_comes_before_a_named_fallback_and_the_cache_is_bounded() {
    for (sku, price) in [("a", 1), ("b", 2), ("c", 3)] {
        answer(&format!("{sku}@1"), Ok(price));
        assert_eq!(regional(sku.to_string(), 1).await, Ok(price));
        answer(&format!("{sku}@1"), Err(PriceError::Down));
    }
    assert_eq!(
        regional("c".to_string(), 2).await,
        Ok(999),
        "other arguments: the named fallback"
    );
    let mut stale = 0;
    for (sku, price) in [("a", 1), ("b", 2), ("c", 3)] {
        match regional(sku.to_string(), 1).await {
            Ok(999) => {}
            Ok(kept) => {
                assert_eq!(kept, price);
                stale += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        stale, 2,
        "two entries kept, so one of the three fell through"
    );
    assert_eq!(*FALLBACKS.lock().unwrap(), 2);
}

#[circuit_breaker(window = "100", stale_for = "10m")]
async fn stock(sku: &str) -> Result<u32, PriceError> {
    lookup(sku)
}

#[tokio::test(start_paused = true)]
async fn a_healthy_error_is_never_kept_nor_served_without_a_fallback() {
    answer("sock", Err(PriceError::NotFound));
    assert_eq!(stock("sock").await, Err(PriceError::NotFound));
    answer("shoe", Ok(40));
    assert_eq!(stock("shoe").await, Ok(40));
    answer("shoe", Err(PriceError::NotFound));
    assert_eq!(stock("shoe").await, Err(PriceError::NotFound));
    answer("boot", Err(PriceError::NotFound));
    assert_eq!(stock("boot").await, Err(PriceError::NotFound));
    answer("boot", Err(PriceError::Down));
    assert_eq!(
        stock("boot").await,
        Err(PriceError::Down),
        "a failure after a healthy error: the failure, not the error before it"
    );

    let breaker = registry().get("stale::stock").unwrap();
    breaker.force_open();
    assert!(
        matches!(stock("sock").await, Err(PriceError::Breaker(e)) if e.is_rejection()),
        "only a healthy error recorded before: the rejection, not that error again"
    );
    assert_eq!(
        stock("shoe").await,
        Ok(40),
        "the success kept before the healthy error is still the one served"
    );
    breaker.reset();
}

static LISTED: Mutex<u32> = Mutex::new(0);

async fn list_stock(_sku: &str) -> Result<u32, PriceError> {
    *LISTED.lock().unwrap() += 1;
    Ok(555)
}

#[circuit_breaker(window = "100", stale_for = "10m", fallback = list_stock)]
async fn listed_stock(sku: &str) -> Result<u32, PriceError> {
    lookup(sku)
}

#[tokio::test(start_paused = true)]
async fn a_healthy_error_is_never_kept_nor_served_with_a_fallback() {
    answer("lace", Err(PriceError::NotFound));
    assert_eq!(
        listed_stock("lace").await,
        Err(PriceError::NotFound),
        "a business answer is the answer, not masked by the fallback"
    );
    assert_eq!(*LISTED.lock().unwrap(), 0);

    let breaker = registry().get("stale::listed_stock").unwrap();
    breaker.force_open();
    assert_eq!(
        listed_stock("lace").await,
        Ok(555),
        "only a healthy error recorded before: the fallback answers"
    );
    assert_eq!(*LISTED.lock().unwrap(), 1);
    breaker.reset();

    answer("lace", Err(PriceError::Down));
    assert_eq!(
        listed_stock("lace").await,
        Ok(555),
        "a failure: the fallback"
    );
    assert_eq!(*LISTED.lock().unwrap(), 2);
}

/// A guarded call by hand, with a `StaleCache` beside the breaker: a success kept, and a
/// failure or a rejection answered by the kept answer, else by the fallback, if any, else as
/// it is.
async fn by_hand(
    breaker: &Breaker,
    kept: &StaleCache<String, Result<u32, PriceError>>,
    sku: &str,
    fallback: Option<u32>,
) -> Result<u32, PriceError> {
    let outcome = breaker.call(async { lookup(sku) }).await;
    if let Some(answer) = outcome.as_ref().ok().filter(|answer| !answer.is_failure()) {
        kept.keep_ok(sku.to_string(), answer);
        return answer.clone();
    }
    if let Some(stale) = kept.stale(&sku.to_string()) {
        return stale;
    }
    match (fallback, outcome) {
        (Some(value), _) => Ok(value),
        (None, Ok(failed)) => failed,
        (None, Err(rejected)) => Err(rejected.into()),
    }
}

#[tokio::test(start_paused = true)]
async fn a_stale_cache_keeps_an_ok_and_never_an_error() {
    let kept: StaleCache<String, Result<u32, PriceError>> =
        StaleCache::new(Duration::from_secs(600), 10);
    assert!(!kept.keep_ok("tie".to_string(), &Err(PriceError::NotFound)));
    assert!(!kept.keep_ok("tie".to_string(), &Err(PriceError::Down)));
    assert_eq!(kept.stale(&"tie".to_string()), None);
    assert!(kept.is_empty());
    assert!(kept.keep_ok("tie".to_string(), &Ok(12)));
    assert!(!kept.keep_ok("tie".to_string(), &Err(PriceError::NotFound)));
    assert_eq!(
        kept.stale(&"tie".to_string()),
        Some(Ok(12)),
        "an error leaves the kept answer in place"
    );

    for fallback in [None, Some(777)] {
        let breaker = Breaker::new(Config::builder().count_window(100).build().unwrap());
        let kept: StaleCache<String, Result<u32, PriceError>> =
            StaleCache::new(Duration::from_secs(600), 10);
        answer("belt", Err(PriceError::NotFound));
        assert_eq!(
            by_hand(&breaker, &kept, "belt", fallback).await,
            Err(PriceError::NotFound)
        );
        assert!(kept.is_empty(), "a healthy error is not kept");
        breaker.force_open();
        let rejected = by_hand(&breaker, &kept, "belt", fallback).await;
        match fallback {
            Some(value) => assert_eq!(rejected, Ok(value), "the fallback, not the error"),
            None => assert!(
                matches!(&rejected, Err(PriceError::Breaker(e)) if e.is_rejection()),
                "the rejection, not the error: {rejected:?}"
            ),
        }
    }
}

fn out_of_stock(count: &u32) -> bool {
    *count == 0
}

async fn unknown_count(_sku: &str) -> u32 {
    u32::MAX
}

/// Not a `Result`: what the classifier calls a success is kept.
#[circuit_breaker(window = "100", stale_for = "10m", is_failure = out_of_stock, fallback = unknown_count)]
async fn in_stock(sku: &str) -> u32 {
    lookup(sku).unwrap_or(0)
}

#[tokio::test(start_paused = true)]
async fn a_value_that_is_not_a_result_is_kept_when_its_classifier_calls_it_a_success() {
    answer("pin", Ok(7));
    assert_eq!(in_stock("pin").await, 7);
    answer("pin", Err(PriceError::Down));
    assert_eq!(
        in_stock("pin").await,
        7,
        "counted a failure: the kept count"
    );
    assert_eq!(
        in_stock("nail").await,
        u32::MAX,
        "nothing kept for these arguments: the fallback"
    );
}
