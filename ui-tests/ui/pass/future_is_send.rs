#![deny(warnings)]

use std::sync::Arc;

use breaker_runtime::{BreakerError, circuit_breaker};

fn assert_send<T: Send>(_: T) {}
fn assert_static<T: 'static>(_: T) {}

#[derive(Clone)]
struct Client {
    base: Arc<str>,
}

impl Client {
    #[circuit_breaker]
    async fn get(&self, path: &str) -> Result<usize, BreakerError> {
        tokio::task::yield_now().await;
        Ok(self.base.len() + path.len())
    }

    #[circuit_breaker(fallback = cached)]
    async fn get_or_cached(self: Arc<Self>, path: String) -> Result<usize, BreakerError> {
        tokio::task::yield_now().await;
        Ok(self.base.len() + path.len())
    }

    async fn cached(self: Arc<Self>, path: String) -> Result<usize, BreakerError> {
        Ok(path.len())
    }
}

#[circuit_breaker(timeout = "1s", fallback = later)]
async fn generic<T: ToString + Clone + Send>(value: T) -> Result<String, BreakerError> {
    tokio::task::yield_now().await;
    Ok(value.to_string())
}

async fn later<T: ToString>(value: T) -> Result<String, BreakerError> {
    Ok(value.to_string())
}

fn main() {
    let client = Client {
        base: Arc::from("https://"),
    };
    assert_send(client.get("/a"));
    let shared = Arc::new(client.clone());
    assert_send(shared.clone().get_or_cached(String::from("/b")));
    assert_static(shared.get_or_cached(String::from("/c")));
    assert_send(generic(1));
    assert_static(generic(String::from("x")));

    // `tokio::spawn` needs the future to be `Send + 'static`, and it runs.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let answer = runtime.block_on(async move {
        let spawned = tokio::spawn(Arc::new(client).get_or_cached(String::from("/d")));
        spawned.await.unwrap()
    });
    assert_eq!(answer.unwrap(), 10);
}
