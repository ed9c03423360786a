//! The service the layer makes, and its response future.

use super::classify::{ByResponse, ErrorsAreFailures, ResponseClassifier};
use super::error::CircuitBreakerError;
use super::keys::Shared;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;

use crate::core::breaker::Breaker;
use crate::core::call::OwnedCall;
use crate::outcome::error::BreakerError;

/// The service [`CircuitBreakerLayer`](super::CircuitBreakerLayer) produces.
pub struct CircuitBreakerService<S, Req, C = ErrorsAreFailures> {
    pub(super) inner: S,
    pub(super) shared: Arc<Shared<Req>>,
    pub(super) classifier: C,
}

impl<S: Clone, Req, C: Clone> Clone for CircuitBreakerService<S, Req, C> {
    fn clone(&self) -> Self {
        CircuitBreakerService {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            classifier: self.classifier.clone(),
        }
    }
}

impl<S: fmt::Debug, Req, C> fmt::Debug for CircuitBreakerService<S, Req, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerService")
            .field("inner", &self.inner)
            .field("prefix", &self.shared.settings.prefix)
            .finish_non_exhaustive()
    }
}

impl<S, Req, C> CircuitBreakerService<S, Req, C> {
    /// The breaker of `key`, once a request has used it (or, for a layer without a key
    /// function, once the service exists).
    pub fn breaker(&self, key: &str) -> Option<Arc<Breaker>> {
        self.shared.breaker(key)
    }
}

impl<S, Req, C> Service<Req> for CircuitBreakerService<S, Req, C>
where
    S: Service<Req>,
    C: ResponseClassifier<S::Response, S::Error> + Clone,
{
    type Response = S::Response;
    type Error = CircuitBreakerError<S::Error>;
    type Future = ResponseFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner
            .poll_ready(cx)
            .map_err(CircuitBreakerError::Inner)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // Admitted before the inner service sees the request: a rejected one never reaches it.
        match Breaker::admit_owned(self.shared.breaker_for(&request)) {
            Ok(permit) => ResponseFuture::admitted(permit.run_classified(
                self.inner.call(request),
                ByResponse(self.classifier.clone()),
            )),
            Err(rejection) => ResponseFuture::rejected(rejection),
        }
    }
}

pin_project! {
    /// The response future of [`CircuitBreakerService`]: the inner service's future run through
    /// its key's breaker, or the rejection, ready at once.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<F, C> {
        #[pin]
        answer: Answer<F, C>,
    }
}

pin_project! {
    #[project = AnswerProj]
    enum Answer<F, C> {
        // The breaker admitted the request; the inner service is working on it.
        Admitted {
            #[pin]
            call: OwnedCall<F, ByResponse<C>>,
        },
        // The breaker turned the request away; the inner service never saw it.
        Rejected {
            rejection: Option<BreakerError>,
        },
    }
}

impl<F, C> ResponseFuture<F, C> {
    fn admitted(call: OwnedCall<F, ByResponse<C>>) -> Self {
        ResponseFuture {
            answer: Answer::Admitted { call },
        }
    }

    fn rejected(rejection: BreakerError) -> Self {
        ResponseFuture {
            answer: Answer::Rejected {
                rejection: Some(rejection),
            },
        }
    }
}

impl<F, C> fmt::Debug for ResponseFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let admitted = matches!(self.answer, Answer::Admitted { .. });
        f.debug_struct("ResponseFuture")
            .field("admitted", &admitted)
            .finish_non_exhaustive()
    }
}

impl<F, C, R, E> Future for ResponseFuture<F, C>
where
    F: Future<Output = Result<R, E>>,
    C: ResponseClassifier<R, E>,
{
    type Output = Result<R, CircuitBreakerError<E>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().answer.project() {
            AnswerProj::Admitted { call } => call.poll(cx).map(|answer| match answer {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(error)) => Err(CircuitBreakerError::Inner(error)),
                Err(timeout) => Err(CircuitBreakerError::Timeout(timeout)),
            }),
            AnswerProj::Rejected { rejection } => match rejection.take() {
                Some(rejection) => Poll::Ready(Err(CircuitBreakerError::Rejected(rejection))),
                // Polled again after it answered: like every finished call here, it never
                // completes twice.
                None => Poll::Pending,
            },
        }
    }
}
