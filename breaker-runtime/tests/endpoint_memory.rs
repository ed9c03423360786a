//! No request makes the endpoint hold more than its body limit (issue 48): a body of 8 MiB,
//! sent in chunks that cost the sender nothing, to every route that reads a body, and to
//! routes that read none. A counting global allocator watches the bytes held at once on the
//! one thread the request runs on.

// A global allocator is an unsafe trait; this one only counts and defers to the system's.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use axum::body::{Body, Bytes};
use breaker_runtime::endpoint::Endpoint;
use breaker_runtime::{Breaker, Config, registry};
use tower::ServiceExt;

struct Counting;

thread_local! {
    /// Bytes this thread holds (allocated less freed), and the most it held since the reset.
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    HELD.with(|held| {
        let now = held.get() + bytes;
        held.set(now);
        PEAK.with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds the
// `GlobalAlloc` contract; counting touches only const-initialised thread-locals.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// 8 MiB, as 128 chunks of one static 64 KiB block: the sender allocates nothing for them.
fn huge_body() -> Body {
    static BLOCK: [u8; 64 * 1024] = [b' '; 64 * 1024];
    let chunks = (0..128).map(|_| Ok::<_, std::io::Error>(Bytes::from_static(&BLOCK)));
    Body::from_stream(futures_util::stream::iter(chunks))
}

#[test]
fn no_body_makes_the_endpoint_hold_more_than_its_limit() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = Config::builder().name("memory::guarded").build().unwrap();
    registry()
        .register(std::sync::Arc::new(Breaker::new(config)))
        .unwrap();
    let router = runtime.block_on(async { Endpoint::new().token("m").router() });
    for (method, path, limit) in [
        ("POST", "/memory::guarded/reset", 1_024),
        ("POST", "/memory::guarded/drill", 1_024),
        ("POST", "/memory::guarded/inject", 1_024),
        ("PUT", "/memory::guarded/config", 16 * 1_024),
        ("GET", "/memory::guarded", 0),
        ("POST", "/nowhere/at/all", 0),
    ] {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", "Bearer m")
            .body(huge_body())
            .unwrap();
        let router = router.clone();
        let (status, peak) = runtime.block_on(async move {
            PEAK.with(|peak| peak.set(HELD.with(Cell::get)));
            let start = HELD.with(Cell::get);
            let response = router.oneshot(request).await.unwrap();
            let status = response.status();
            drop(response);
            (status, PEAK.with(Cell::get) - start)
        });
        // The limit, one chunk read past it, and the answer's own few KiB.
        let allowed = limit + 64 * 1024 + 32 * 1024;
        assert!(
            peak <= allowed as isize,
            "{method} {path} ({status}) held {peak} bytes at once, over {allowed}"
        );
        println!("{method} {path}: {status}, at most {peak} bytes held");
    }
}
