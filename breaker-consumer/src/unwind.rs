//! A future that turns its body's panic into a value, so the task that handled a message can
//! still settle it.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    pub(crate) struct CatchUnwind<F> {
        #[pin]
        body: F,
    }
}

impl<F> CatchUnwind<F> {
    pub(crate) fn new(body: F) -> Self {
        CatchUnwind { body }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let body = self.project().body;
        // The body is never polled again after it panicked: the result ends this future.
        match catch_unwind(AssertUnwindSafe(|| body.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}
