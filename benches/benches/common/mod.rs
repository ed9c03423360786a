//! What both benchmarks need: the poll every benchmarked future gets, and the dependency that
//! the tower layers wrap.

use std::future::Future;
use std::hint::black_box;
use std::io;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Polls a future once with a no-op waker: every benchmarked future is ready at once.
#[inline(always)]
pub fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => unreachable!("benchmarked futures are ready at once"),
    }
}

/// The dependency behind a tower layer: request 0 fails, any other succeeds, at once.
#[derive(Clone, Copy)]
pub struct Dependency;

impl tower::Service<u64> for Dependency {
    type Response = u64;
    type Error = io::Error;
    type Future = std::future::Ready<io::Result<u64>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    #[inline(always)]
    fn call(&mut self, request: u64) -> Self::Future {
        std::future::ready(if request == 0 {
            Err(io::Error::from(io::ErrorKind::ConnectionRefused))
        } else {
            black_box(Ok(request))
        })
    }
}
