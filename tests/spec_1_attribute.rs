//! SPEC section 1: the attribute goes on every kind of async fn, keeps the signature, and
//! applies its options. Each test guards functions of its own: every function has its own
//! breaker, shared by all the tests that call it.

use std::sync::Arc;
use std::time::Duration;

use breaker_runtime::{BreakerError, IsFailure, State, Window, circuit_breaker, registry};

#[derive(Debug, PartialEq, IsFailure)]
enum ApiError {
    Down,
    #[breaker(healthy)]
    NotFound,
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for ApiError {
    fn from(e: BreakerError) -> Self {
        ApiError::Breaker(e)
    }
}

type Answer<T = u32> = Result<T, ApiError>;

fn rejected<T: std::fmt::Debug>(answer: &Answer<T>) -> bool {
    matches!(answer, Err(ApiError::Breaker(e)) if e.is_rejection())
}

fn breaker_of(name: &str) -> Arc<breaker_runtime::Breaker> {
    registry()
        .get(name)
        .unwrap_or_else(|| panic!("`{name}` is registered"))
}

// --- Options ---------------------------------------------------------------------------------

#[circuit_breaker(
    threshold = "25.5%",
    window = "8",
    min_calls = 4,
    timeout_ms = 1500,
    break_duration = "2m",
    max_break_duration = "1h",
    probes = 3,
    slow_call = "250ms",
    slow_threshold = "80%"
)]
async fn fully_configured() -> Answer {
    Ok(1)
}

#[test]
fn every_option_reaches_the_breakers_configuration() {
    let c = breaker_of("spec_1_attribute::fully_configured")
        .config()
        .clone();
    assert_eq!(c.threshold().percent(), 25.5);
    assert_eq!(c.window(), Window::Count(8));
    assert_eq!(c.min_calls(), 4);
    assert_eq!(c.timeout(), Some(Duration::from_millis(1500)));
    assert_eq!(c.break_duration(), Duration::from_secs(120));
    assert_eq!(c.max_break_duration(), Some(Duration::from_secs(3600)));
    assert_eq!(c.probes(), 3);
    assert_eq!(c.slow_call(), Some(Duration::from_millis(250)));
    assert_eq!(c.slow_threshold().percent(), 80.0);
}

#[circuit_breaker]
async fn all_defaults() -> Answer {
    Ok(1)
}

#[test]
fn an_attribute_without_options_takes_the_defaults() {
    let c = breaker_of("spec_1_attribute::all_defaults")
        .config()
        .clone();
    let d = breaker_runtime::Config::default();
    assert!(
        c.threshold() == d.threshold() && c.window() == d.window() && c.timeout() == d.timeout()
    );
    assert_eq!(
        (c.min_calls(), c.probes(), c.break_duration()),
        (20, 1, Duration::from_secs(30))
    );
}

#[circuit_breaker(window = "30s", timeout = "off")]
async fn time_windowed() -> Answer {
    Ok(1)
}

#[test]
fn a_time_window_defaults_min_calls_to_ten_and_timeout_can_be_off() {
    let c = breaker_of("spec_1_attribute::time_windowed")
        .config()
        .clone();
    assert_eq!(c.window(), Window::Time(Duration::from_secs(30)));
    assert_eq!(c.min_calls(), 10);
    assert_eq!(c.timeout(), None);
}

#[test]
fn declared_breakers_are_listed_before_their_first_call() {
    let b = breaker_of("spec_1_attribute::never_called");
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.snapshot().calls, 0);
}

#[circuit_breaker]
#[allow(dead_code)]
async fn never_called() -> Answer {
    Ok(1)
}

// --- Names -----------------------------------------------------------------------------------

#[circuit_breaker(name = "spec1-inventory", window = "2")]
async fn reserve(fail: bool) -> Answer {
    if fail { Err(ApiError::Down) } else { Ok(1) }
}

#[circuit_breaker(name = "spec1-inventory", window = "2")]
async fn release(fail: bool) -> Answer {
    if fail { Err(ApiError::Down) } else { Ok(2) }
}

#[tokio::test(start_paused = true)]
async fn functions_with_the_same_name_share_one_breaker() {
    let _ = reserve(true).await;
    let _ = release(true).await;
    assert!(
        rejected(&reserve(false).await),
        "the failures through `release` opened `reserve` too"
    );
    assert_eq!(breaker_of("spec1-inventory").state(), State::Open);
}

struct Catalog;
struct Prices;

impl Catalog {
    #[circuit_breaker]
    async fn fetch(&self) -> Answer {
        Ok(1)
    }
}

impl Prices {
    #[circuit_breaker]
    async fn fetch(&self) -> Answer {
        Ok(2)
    }
}

#[tokio::test]
async fn two_methods_with_one_default_name_get_breakers_of_their_own() {
    assert_eq!(Catalog.fetch().await, Ok(1));
    assert_eq!(Prices.fetch().await, Ok(2));
    let a = breaker_of("spec_1_attribute::fetch");
    let b = breaker_of("spec_1_attribute::fetch#2");
    assert!(!Arc::ptr_eq(&a, &b));
}

/// With the attribute on the `impl` block too, a method's breaker is named after its type, so
/// two types' `get` methods are two names that do not depend on which one the linker met first.
mod typed {
    use super::*;

    pub struct Ledger;
    pub struct Invoices<T>(pub T);

    #[circuit_breaker]
    impl Ledger {
        #[circuit_breaker(window = "4")]
        pub async fn get(&self) -> Answer {
            Ok(1)
        }

        /// Not guarded: the block's attribute leaves it as written.
        pub fn plain(&self) -> u32 {
            3
        }
    }

    #[breaker_runtime::circuit_breaker]
    impl<T: Copy + Into<u32> + Send + Sync> Invoices<T> {
        #[breaker_runtime::circuit_breaker]
        pub async fn get(&self) -> Answer {
            Ok(self.0.into())
        }

        #[circuit_breaker(name = "spec1-invoices-named")]
        pub async fn named(&self) -> Answer {
            Ok(5)
        }
    }

    pub trait Source {
        fn get(&self) -> impl std::future::Future<Output = Answer> + Send;
    }

    #[circuit_breaker]
    impl Source for Ledger {
        #[circuit_breaker]
        async fn get(&self) -> Answer {
            Ok(4)
        }
    }

    #[async_trait::async_trait]
    pub trait Quoted {
        async fn quote(&self) -> Answer;
    }

    #[async_trait::async_trait]
    #[circuit_breaker]
    impl Quoted for Ledger {
        #[circuit_breaker]
        async fn quote(&self) -> Answer {
            Ok(6)
        }
    }

    /// The block's attribute above `#[async_trait]` expands first, while the methods are still
    /// `async fn`s.
    #[circuit_breaker]
    #[async_trait::async_trait]
    impl Quoted for Invoices<u8> {
        #[circuit_breaker]
        async fn quote(&self) -> Answer {
            Ok(8)
        }
    }
}

#[tokio::test]
async fn an_impl_block_attribute_names_each_method_breaker_after_its_type() {
    use typed::{Invoices, Ledger, Quoted, Source};
    assert_eq!(Ledger.get().await, Ok(1));
    assert_eq!(Ledger.plain(), 3);
    assert_eq!(Invoices(2u8).get().await, Ok(2));
    assert_eq!(Invoices(7u16).get().await, Ok(7));
    assert_eq!(Invoices(2u8).named().await, Ok(5));
    assert_eq!(Source::get(&Ledger).await, Ok(4));
    assert_eq!(Ledger.quote().await, Ok(6));
    assert_eq!(Invoices(1u8).quote().await, Ok(8));

    let ledger = breaker_of("spec_1_attribute::typed::Ledger::get");
    assert_eq!(ledger.config().window(), Window::Count(4));
    let invoices = breaker_of("spec_1_attribute::typed::Invoices::get");
    let source = breaker_of("spec_1_attribute::typed::<Ledger as Source>::get");
    let quoted = breaker_of("spec_1_attribute::typed::<Ledger as Quoted>::quote");
    breaker_of("spec_1_attribute::typed::<Invoices as Quoted>::quote");
    assert_eq!(invoices.snapshot().calls, 2, "one breaker for every `T`");
    for other in [&invoices, &source, &quoted] {
        assert!(!Arc::ptr_eq(&ledger, other));
    }
    assert!(
        registry().get("spec1-invoices-named").is_some(),
        "`name` still wins"
    );
    let names: Vec<String> = registry()
        .snapshot()
        .iter()
        .map(|s| s.name().to_string())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("spec_1_attribute::typed::") && n.contains('#')),
        "no typed name is numbered: {names:?}"
    );
}

// --- Shapes ----------------------------------------------------------------------------------

struct Client {
    base: u32,
    calls: u32,
}

impl Client {
    #[circuit_breaker]
    async fn shared(&self, add: u32) -> Answer {
        Ok(self.base + add)
    }

    #[circuit_breaker]
    async fn exclusive(&mut self) -> Answer {
        self.calls += 1;
        Ok(self.calls)
    }

    #[circuit_breaker]
    async fn owned(self: Arc<Self>) -> Answer {
        Ok(Arc::strong_count(&self) as u32)
    }

    #[circuit_breaker]
    async fn associated(x: u32) -> Answer {
        Ok(x)
    }
}

#[tokio::test]
async fn methods_with_every_receiver() {
    let mut client = Client { base: 40, calls: 0 };
    assert_eq!(client.shared(2).await, Ok(42));
    assert_eq!(client.exclusive().await, Ok(1));
    assert_eq!(client.exclusive().await, Ok(2));
    assert_eq!(Arc::new(client).owned().await, Ok(1));
    assert_eq!(Client::associated(5).await, Ok(5));
}

trait Store {
    async fn get(&self, key: &str) -> Answer<String>;
}

struct Memory;

impl Store for Memory {
    #[circuit_breaker]
    async fn get(&self, key: &str) -> Answer<String> {
        if key.is_empty() {
            Err(ApiError::NotFound)
        } else {
            Ok(key.to_uppercase())
        }
    }
}

#[tokio::test]
async fn async_fns_in_trait_impls() {
    assert_eq!(Memory.get("k").await, Ok("K".to_string()));
    assert_eq!(Memory.get("").await, Err(ApiError::NotFound));
}

#[circuit_breaker(window = "100")]
async fn generic<T>(value: T) -> Answer<String>
where
    T: ToString + Send + 'static,
{
    Ok(value.to_string())
}

#[tokio::test]
async fn a_generic_fn_has_one_breaker_for_all_instantiations() {
    assert_eq!(generic(5u8).await, Ok("5".to_string()));
    assert_eq!(generic("five").await, Ok("five".to_string()));
    assert_eq!(breaker_of("spec_1_attribute::generic").snapshot().calls, 2);
}

#[circuit_breaker]
async fn with_lifetimes<'a, 'b: 'a>(first: &'a str, _second: &'b str) -> Result<&'a str, ApiError> {
    Ok(first)
}

#[circuit_breaker]
async fn with_impl_trait(
    items: impl IntoIterator<Item = u32>,
    label: &impl std::fmt::Display,
) -> Answer<String> {
    Ok(format!("{label}: {}", items.into_iter().sum::<u32>()))
}

#[circuit_breaker]
async fn with_patterns((a, b): (u32, u32), [c, ..]: [u32; 2]) -> Answer {
    Ok(a + b + c)
}

#[tokio::test]
async fn lifetimes_impl_trait_and_patterns() {
    assert_eq!(with_lifetimes("a", "b").await, Ok("a"));
    assert_eq!(
        with_impl_trait(vec![1, 2], &"sum").await,
        Ok("sum: 3".to_string())
    );
    assert_eq!(with_patterns((1, 2), [3, 4]).await, Ok(6));
}

fn parse(text: &str) -> Result<u32, ApiError> {
    text.parse().map_err(|_| ApiError::NotFound)
}

#[circuit_breaker]
async fn question_mark_return_and_closures(text: &str) -> Answer {
    let n = parse(text)?;
    if n == 0 {
        return Ok(100);
    }
    let offset = 1;
    let add = move |x: u32| x + offset;
    let task = tokio::spawn(async move { n * 2 });
    Ok(add(task.await.unwrap_or_default()))
}

#[tokio::test]
async fn bodies_keep_question_mark_early_return_and_move_closures() {
    assert_eq!(question_mark_return_and_closures("4").await, Ok(9));
    assert_eq!(question_mark_return_and_closures("0").await, Ok(100));
    assert_eq!(
        question_mark_return_and_closures("x").await,
        Err(ApiError::NotFound)
    );
}

/// Documented, must-use, crate-visible.
#[must_use = "the quote matters"]
#[circuit_breaker]
pub(crate) async fn kept_attributes() -> Answer {
    Ok(3)
}

#[tokio::test]
async fn attributes_docs_and_visibility_are_kept() {
    assert_eq!(kept_attributes().await, Ok(3));
}

#[circuit_breaker(window = "2")]
#[tracing::instrument]
async fn breaker_then_instrument(fail: bool) -> Answer {
    tracing::info!("inside");
    if fail { Err(ApiError::Down) } else { Ok(1) }
}

#[tracing::instrument]
#[circuit_breaker(window = "2")]
async fn instrument_then_breaker(fail: bool) -> Answer {
    if fail { Err(ApiError::Down) } else { Ok(1) }
}

#[tokio::test(start_paused = true)]
async fn together_with_tracing_instrument_in_either_order() {
    assert_eq!(breaker_then_instrument(false).await, Ok(1));
    let _ = breaker_then_instrument(true).await;
    let _ = breaker_then_instrument(true).await;
    assert!(rejected(&breaker_then_instrument(false).await));

    assert_eq!(instrument_then_breaker(false).await, Ok(1));
    let _ = instrument_then_breaker(true).await;
    let _ = instrument_then_breaker(true).await;
    assert!(rejected(&instrument_then_breaker(false).await));
}

#[async_trait::async_trait]
trait Quotes {
    async fn quote(&self, sku: u32) -> Answer;
}

struct Supplier;

#[async_trait::async_trait]
impl Quotes for Supplier {
    #[circuit_breaker(window = "2")]
    async fn quote(&self, sku: u32) -> Answer {
        if sku == 0 {
            Err(ApiError::Down)
        } else {
            Ok(sku * 10)
        }
    }
}

#[tokio::test(start_paused = true)]
async fn together_with_async_trait() {
    let supplier: Box<dyn Quotes + Send + Sync> = Box::new(Supplier);
    assert_eq!(supplier.quote(2).await, Ok(20));
    let _ = supplier.quote(0).await;
    let _ = supplier.quote(0).await;
    assert!(rejected(&supplier.quote(2).await));
}

/// The runtime under another name, as a user who renamed the dependency has it.
mod renamed_runtime {
    pub use breaker_runtime::*;
}

#[circuit_breaker(crate = renamed_runtime, window = "3")]
async fn through_a_renamed_dependency() -> Result<u32, renamed_runtime::BreakerError> {
    Ok(8)
}

#[tokio::test]
async fn crate_path_serves_a_renamed_dependency() {
    assert_eq!(through_a_renamed_dependency().await.unwrap(), 8);
    assert_eq!(
        breaker_of("spec_1_attribute::through_a_renamed_dependency")
            .config()
            .window(),
        Window::Count(3)
    );
}

#[circuit_breaker]
async fn sends(value: u32) -> Answer {
    tokio::task::yield_now().await;
    Ok(value)
}

#[test]
fn the_returned_future_is_send_when_the_body_is() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let answers = runtime.block_on(async {
        let tasks: Vec<_> = (0..20).map(|i| tokio::spawn(sends(i))).collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap().unwrap());
        }
        answers
    });
    assert_eq!(answers, (0..20).collect::<Vec<_>>());
}
