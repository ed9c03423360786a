//! How the middleware judges the inner service's answers, and the gRPC key.

use crate::outcome::classify::{Classify, Verdict};

/// The classifier the layer starts with: the inner service's errors are failures, its responses
/// successes. Replace it with [`CircuitBreakerLayer::classifier`](super::CircuitBreakerLayer::classifier) (for instance with
/// [`Verdict::of_result`] when responses carry a status).
#[derive(Debug, Clone, Copy, Default)]
pub struct ErrorsAreFailures;

/// Turns the inner service's result into a verdict.
pub trait ResponseClassifier<R, E> {
    /// The verdict for one result.
    fn classify(&self, result: &Result<R, E>) -> Verdict;
}

impl<R, E> ResponseClassifier<R, E> for ErrorsAreFailures {
    fn classify(&self, result: &Result<R, E>) -> Verdict {
        if result.is_err() {
            Verdict::Failure
        } else {
            Verdict::Success
        }
    }
}

impl<R, E, F: Fn(&Result<R, E>) -> Verdict> ResponseClassifier<R, E> for F {
    fn classify(&self, result: &Result<R, E>) -> Verdict {
        self(result)
    }
}

/// The classifier of [`CircuitBreakerLayer::for_grpc`](super::CircuitBreakerLayer::for_grpc): a gRPC call is judged by what its
/// response headers say (feature `http` too).
///
/// * The transport's error (no connection, a reset stream) is a failure.
/// * An HTTP status other than 200 (a proxy in the way) is classified as an HTTP answer: 5xx
///   fails, 429 is ignored.
/// * A `grpc-status` in the headers (a trailers-only answer: the server refused the call) is
///   classified by its code: `UNAVAILABLE`, `INTERNAL`, `UNKNOWN` and `DEADLINE_EXCEEDED` fail,
///   `CANCELLED` is ignored, every other code is the server answering.
/// * No `grpc-status` in the headers: the call (or the stream) was accepted, a success. What the
///   trailers say later is not counted.
///
/// ```
/// use breaker_runtime::Verdict;
/// use breaker_runtime::tower::{GrpcClassifier, ResponseClassifier};
///
/// let refused = http::Response::builder().header("grpc-status", "14").body(()).unwrap();
/// let missing = http::Response::builder().header("grpc-status", "5").body(()).unwrap();
/// let streaming = http::Response::builder().body(()).unwrap();
/// let judge = |response| GrpcClassifier.classify(&Ok::<_, std::io::Error>(response));
/// assert_eq!(judge(refused), Verdict::Failure);
/// assert_eq!(judge(missing), Verdict::Success, "NOT_FOUND is an answer");
/// assert_eq!(judge(streaming), Verdict::Success);
/// ```
#[cfg(feature = "http")]
#[derive(Debug, Clone, Copy, Default)]
pub struct GrpcClassifier;

#[cfg(feature = "http")]
impl<B, E> ResponseClassifier<http::Response<B>, E> for GrpcClassifier {
    fn classify(&self, result: &Result<http::Response<B>, E>) -> Verdict {
        let response = match result {
            Ok(response) => response,
            Err(_) => return Verdict::Failure,
        };
        if response.status() != http::StatusCode::OK {
            return Verdict::of(&response.status());
        }
        let code = response
            .headers()
            .get("grpc-status")
            .and_then(|code| code.to_str().ok())
            .and_then(|code| code.trim().parse::<i32>().ok());
        code.map_or(Verdict::Success, crate::adapters::grpc::verdict)
    }
}

/// A [`ResponseClassifier`] as the call path's classifier.
pub(super) struct ByResponse<C>(pub(super) C);

impl<R, E, C: ResponseClassifier<R, E>> Classify<Result<R, E>> for ByResponse<C> {
    #[inline]
    fn classify(self, result: &Result<R, E>) -> Verdict {
        self.0.classify(result)
    }
}

/// The gRPC service of a request, from its path `/package.Service/Method`: the key that gives
/// each remote service its own breaker (feature `http` too). Borrowed from the request, so
/// keying by it allocates nothing.
///
/// ```
/// let request = http::Request::builder().uri("/shop.Payments/Charge").body(()).unwrap();
/// assert_eq!(breaker_runtime::tower::grpc_service(&request), "shop.Payments");
/// ```
#[cfg(feature = "http")]
pub fn grpc_service<B>(request: &http::Request<B>) -> &str {
    let path = request.uri().path().trim_start_matches('/');
    path.split('/').next().unwrap_or_default()
}
