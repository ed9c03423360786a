//! The stale-value fallback: a failed or rejected call answers with the last good answer for
//! the same arguments, no older than `stale_for`, from a bounded cache. On tokio's paused clock.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use breaker_runtime::{BreakerError, IsFailure, circuit_breaker, registry};

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
