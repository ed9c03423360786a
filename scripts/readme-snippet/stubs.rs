// What the README's "Use" example calls, stubbed: a payment API that is down and an outbox. Put
// in front of the example as the README writes it, by `scripts/check-package` (a project of its
// own, made from the README's install snippet) and by `tests/readme.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};

/// How many calls reached the payment API.
static REACHED: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug)]
struct Order;
#[derive(Debug, PartialEq)]
struct Receipt(&'static str);
#[derive(Debug)]
struct ChargeId;
#[derive(Debug, PartialEq)]
struct Refund;

struct Payments;
impl Payments {
    async fn charge(&self, _: &Order) -> Result<Receipt, PayError> {
        REACHED.fetch_add(1, Ordering::SeqCst);
        Err(PayError::Unavailable)
    }
    async fn refund(&self, _: &ChargeId) -> Result<Refund, PayError> {
        Ok(Refund)
    }
}
#[allow(non_upper_case_globals)] // named as the README's call sites name it
static payments: Payments = Payments;

struct Outbox;
impl Outbox {
    async fn enqueue(&self, _: &Order) -> Result<Receipt, PayError> {
        Ok(Receipt("queued"))
    }
}
#[allow(non_upper_case_globals)]
static outbox: Outbox = Outbox;
