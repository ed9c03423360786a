//! The endpoint's router as a whole: method, path, headers and body, commands and bodies of
//! every route (a change of options, a drill, an injection) among them.

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::body::Body;
use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, registry};
use tower::ServiceExt;

const OPERATOR: &str = "fuzz-operator-token";
const READER: &str = "fuzz-reader-token";
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"];
/// More than any route's body limit: a body this long is refused before it is read whole.
const MAX_READ: usize = 64 * 1024;

pub(crate) static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime")
});

/// Breakers the inputs can name: `fuzz::a` and `fuzz::b`.
pub(crate) fn registered() {
    static ONCE: LazyLock<()> = LazyLock::new(|| {
        for name in ["fuzz::a", "fuzz::b"] {
            let config = Config::builder().name(name).build().expect("valid");
            let _ = registry().register(Arc::new(Breaker::new(config)));
        }
    });
    LazyLock::force(&ONCE);
}

static ROUTER: LazyLock<Router> = LazyLock::new(|| {
    registered();
    // Inside the runtime: building the router starts the history's task.
    RUNTIME.block_on(async {
        Endpoint::new()
            .token(OPERATOR)
            .read_token(READER)
            .command_limit(0)
            .router()
    })
});

/// One request through the router. The input is a byte of method, a byte of flags (bit 0 adds
/// the operator's bearer, bit 1 the reader's), the path up to a newline, header lines
/// (`name: value`) up to an empty line, and the body. **Every refusal (4xx, 5xx) is JSON with
/// an `error`**, as the docs promise.
pub fn endpoint(data: &[u8]) {
    let [method, flags, rest @ ..] = data else {
        return;
    };
    let method = METHODS[usize::from(*method) % METHODS.len()];
    let (path, mut rest) = split_line(rest);
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("/{}", path.trim_start_matches('/')));
    if flags & 1 != 0 {
        request = request.header("authorization", format!("Bearer {OPERATOR}"));
    }
    if flags & 2 != 0 {
        request = request.header("authorization", format!("Bearer {READER}"));
    }
    loop {
        let (line, after) = split_line(rest);
        rest = after;
        if line.is_empty() {
            break;
        }
        if let Some(colon) = line.iter().position(|&b| b == b':') {
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name),
                http::HeaderValue::from_bytes(value),
            ) {
                request = request.header(name, value);
            }
        }
    }
    let Ok(request) = request.body(Body::from(rest.to_vec())) else {
        // Not a request HTTP can carry (a bad path): no server would hand it over.
        return;
    };
    let router = ROUTER.clone();
    RUNTIME.block_on(async move {
        let Ok(response) = router.oneshot(request).await;
        let status = response.status();
        if status.as_u16() < 400 || method == "HEAD" {
            // A success may be the events' stream, which never ends: not read.
            return;
        }
        let body = axum::body::to_bytes(response.into_body(), MAX_READ)
            .await
            .expect("a refusal is short");
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_else(|_| {
            panic!(
                "{method} {path}: {status} is not JSON: {:?}",
                String::from_utf8_lossy(&body)
            )
        });
        assert!(
            json["error"].is_string(),
            "{method} {path}: {status} without an error: {json}"
        );
    });
}

/// The bytes up to the first newline, and those after it.
fn split_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == b'\n') {
        Some(end) => (&bytes[..end], &bytes[end + 1..]),
        None => (bytes, &[]),
    }
}
