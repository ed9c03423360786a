//! The `tonic` feature against a real tonic server and client over loopback: the server fails,
//! stalls or answers NOT_FOUND on command; the client's breaker opens on failures only,
//! rejects with a status marked as local, half-opens and closes after recovery, and guards a
//! streaming RPC at stream creation; the same through `CircuitBreakerLayer::for_grpc` on a
//! `Channel`, with the server counting what reaches it. Real time, briefly: breaks of 300 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use breaker_runtime::tonic::is_local_rejection;
use breaker_runtime::tower::CircuitBreakerLayer;
use breaker_runtime::{Breaker, Config, State, circuit_breaker, registry};
use tokio::sync::Notify;
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;
use tonic::{Code, Request, Response, Status};

pub mod orders {
    tonic::include_proto!("orders");
}

use orders::orders_client::OrdersClient;
use orders::orders_server::{Orders, OrdersServer};
use orders::{OrderReply, OrderRequest};

use breaker_runtime::tower::{CircuitBreakerError, CircuitBreakerService, GrpcClassifier};

const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const NOT_FOUND: u8 = 2;
const STALLING: u8 = 3;

const HOLDING: u8 = 4;
const STREAM_FAILS: u8 = 5;

/// The test's server: answers as its mode says, and counts what reaches it.
#[derive(Clone, Default)]
struct Server {
    mode: Arc<AtomicU8>,
    /// Requests received.
    received: Arc<AtomicUsize>,
    /// Requests being handled now, and the most at once.
    in_flight: Arc<AtomicUsize>,
    most_in_flight: Arc<AtomicUsize>,
    /// Lets every held request (mode `HOLDING`) answer.
    release: Arc<Notify>,
}

impl Server {
    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    fn received(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }

    async fn answer(&self, id: u64) -> Result<OrderReply, Status> {
        self.received.fetch_add(1, Ordering::SeqCst);
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(now, Ordering::SeqCst);
        let answer = self.answer_by_mode(id).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    async fn answer_by_mode(&self, id: u64) -> Result<OrderReply, Status> {
        match self.mode.load(Ordering::SeqCst) {
            FAILING => Err(Status::unavailable("orders database down")),
            NOT_FOUND => Err(Status::not_found(format!("no order {id}"))),
            STALLING => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(OrderReply {
                    id,
                    status: "late".into(),
                })
            }
            HOLDING => {
                let released = self.release.notified();
                tokio::pin!(released);
                released.as_mut().enable();
                // Re-checked once the waiter is in place, so a release never slips between.
                if self.mode.load(Ordering::SeqCst) == HOLDING {
                    released.await;
                }
                Ok(OrderReply {
                    id,
                    status: "held".into(),
                })
            }
            _ => Ok(OrderReply {
                id,
                status: "shipped".into(),
            }),
        }
    }
}

#[tonic::async_trait]
impl Orders for Server {
    async fn get(&self, request: Request<OrderRequest>) -> Result<Response<OrderReply>, Status> {
        self.answer(request.into_inner().id)
            .await
            .map(Response::new)
    }

    type WatchStream = tokio_stream_like::Once;

    async fn watch(
        &self,
        request: Request<OrderRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let reply = self.answer(request.into_inner().id).await?;
        if self.mode.load(Ordering::SeqCst) == STREAM_FAILS {
            // The stream is established; its one message is an error, sent in the trailers.
            let broken = Status::unavailable("lost the orders feed mid-stream");
            return Ok(Response::new(tokio_stream_like::Once(Some(Err(broken)))));
        }
        Ok(Response::new(tokio_stream_like::Once(Some(Ok(reply)))))
    }
}

/// A one-item stream, so the test needs no stream crate.
mod tokio_stream_like {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::{OrderReply, Status};

    pub struct Once(pub Option<Result<OrderReply, Status>>);

    impl tonic::codegen::tokio_stream::Stream for Once {
        type Item = Result<OrderReply, Status>;

        fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            Poll::Ready(self.0.take())
        }
    }
}

async fn serve() -> (OrdersClient<Channel>, Arc<AtomicU8>) {
    let (channel, server) = serve_counted().await;
    (OrdersClient::new(channel), server.mode)
}

/// A server on a free loopback port, and a channel to it.
async fn serve_counted() -> (Channel, Server) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let incoming: TcpIncoming = listener.into();
    let server = Server::default();
    let serving = server.clone();
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(OrdersServer::new(serving))
            .serve_with_incoming(incoming)
            .await
            .unwrap();
    });
    let channel = Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    (channel, server)
}

#[circuit_breaker(
    name = "grpc-orders",
    window = "4",
    break_duration = "300ms",
    timeout_ms = 500
)]
async fn get_order(client: &OrdersClient<Channel>, id: u64) -> Result<OrderReply, Status> {
    client
        .clone()
        .get(OrderRequest { id })
        .await
        .map(Response::into_inner)
}

#[circuit_breaker(name = "grpc-watch", window = "2", break_duration = "300ms")]
async fn watch_order(
    client: &OrdersClient<Channel>,
    id: u64,
) -> Result<tonic::Streaming<OrderReply>, Status> {
    client
        .clone()
        .watch(OrderRequest { id })
        .await
        .map(Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_opens_on_failures_only_and_closes_after_recovery() {
    let (client, mode) = serve().await;
    let breaker = registry().get("grpc-orders").unwrap();
    assert_eq!(get_order(&client, 1).await.unwrap().status, "shipped");

    mode.store(NOT_FOUND, Ordering::SeqCst);
    for id in 0..10 {
        assert_eq!(
            get_order(&client, id).await.unwrap_err().code(),
            Code::NotFound
        );
    }
    assert_eq!(
        breaker.state(),
        State::Closed,
        "NOT_FOUND answers never trip it"
    );

    mode.store(FAILING, Ordering::SeqCst);
    for id in 0..2 {
        let status = get_order(&client, id).await.unwrap_err();
        assert!(!is_local_rejection(&status), "the server's own UNAVAILABLE");
    }
    assert_eq!(
        breaker.state(),
        State::Open,
        "2 failures among the last 4 outcomes is 50%"
    );
    let rejected = get_order(&client, 9).await.unwrap_err();
    assert_eq!(rejected.code(), Code::Unavailable);
    assert!(
        is_local_rejection(&rejected),
        "marked as the local breaker's, for retry policies"
    );

    mode.store(HEALTHY, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(
        get_order(&client, 2).await.unwrap().status,
        "shipped",
        "the probe"
    );
    assert_eq!(breaker.state(), State::Closed);

    mode.store(STALLING, Ordering::SeqCst);
    let timed_out = get_order(&client, 3).await.unwrap_err();
    assert_eq!(timed_out.code(), Code::DeadlineExceeded);
    assert!(!is_local_rejection(&timed_out));
    assert_eq!(breaker.snapshot().failures, 1, "the timeout counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_rpc_is_guarded_at_stream_creation() {
    let (client, mode) = serve().await;
    let breaker = registry().get("grpc-watch").unwrap();
    let mut stream = watch_order(&client, 5).await.unwrap();
    assert_eq!(stream.message().await.unwrap().unwrap().id, 5);

    mode.store(FAILING, Ordering::SeqCst);
    for _ in 0..2 {
        assert_eq!(
            watch_order(&client, 5).await.unwrap_err().code(),
            Code::Unavailable
        );
    }
    assert_eq!(breaker.state(), State::Open);
    assert!(is_local_rejection(
        &watch_order(&client, 5).await.unwrap_err()
    ));
}

/// A client whose channel runs through `CircuitBreakerLayer::for_grpc`, tonic's way: the layer
/// under the client, its answers turned into a `Status`.
fn guarded_client(channel: Channel, layer: &GrpcLayer) -> OrdersClient<Guarded> {
    let into_status: fn(CircuitBreakerError<tonic::transport::Error>) -> Status = Status::from;
    OrdersClient::new(
        tower::ServiceBuilder::new()
            .map_err(into_status)
            .layer(layer.clone())
            .service(channel),
    )
}

type GrpcLayer = CircuitBreakerLayer<http::Request<tonic::body::Body>, GrpcClassifier>;
type Guarded = tower::util::MapErr<
    CircuitBreakerService<Channel, http::Request<tonic::body::Body>, GrpcClassifier>,
    fn(CircuitBreakerError<tonic::transport::Error>) -> Status,
>;

fn layer(prefix: &str, probes: u32) -> GrpcLayer {
    let config = Config::builder()
        .count_window(2)
        .probes(probes)
        .break_duration(Duration::from_millis(300))
        .build()
        .unwrap();
    CircuitBreakerLayer::for_grpc(config).prefix(prefix.to_string())
}

fn orders_breaker(layer: &GrpcLayer) -> Arc<Breaker> {
    layer.breaker("orders.Orders").expect("a request used it")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_layer_an_open_circuit_sends_the_server_nothing_and_half_open_at_most_probes() {
    let (channel, server) = serve_counted().await;
    let layer = layer("layer-unary-", 2);
    let client = guarded_client(channel, &layer);
    let get = |id| {
        let mut client = client.clone();
        async move { client.get(OrderRequest { id }).await }
    };

    server.set(FAILING);
    for id in 0..2 {
        let status = get(id).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable);
        assert!(!is_local_rejection(&status), "the server's own answer");
    }
    assert_eq!(server.received(), 2);
    let breaker = orders_breaker(&layer);
    assert_eq!(breaker.state(), State::Open);
    assert_eq!(breaker.name(), "layer-unary-orders.Orders");

    for id in 0..200 {
        let status = get(id).await.unwrap_err();
        assert_eq!(status.code(), Code::Unavailable);
        assert!(
            is_local_rejection(&status),
            "the breaker's answer, marked as local"
        );
    }
    assert_eq!(
        server.received(),
        2,
        "nothing reached the server while it was open"
    );

    // Half-open: ten callers at once, the server holding every request it gets.
    server.set(HOLDING);
    tokio::time::sleep(Duration::from_millis(350)).await;
    let callers: Vec<_> = (0..10).map(|id| tokio::spawn(get(id))).collect();
    // Bounded, so probes that never reach the server fail the test instead of hanging it.
    tokio::time::timeout(Duration::from_secs(10), async {
        while server.in_flight.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("two probes reached the server within 10 s");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        server.received(),
        4,
        "two probes reached the server, no more"
    );
    server.set(HEALTHY);
    server.release.notify_waiters();
    let mut answered = 0;
    for caller in callers {
        match caller.await.unwrap() {
            Ok(reply) => {
                assert_eq!(reply.into_inner().status, "held");
                answered += 1;
            }
            Err(status) => assert!(is_local_rejection(&status), "{status:?}"),
        }
    }
    assert_eq!(answered, 2);
    assert_eq!(
        server.most_in_flight.load(Ordering::SeqCst),
        2,
        "at most `probes` at once"
    );
    assert_eq!(breaker.state(), State::Closed, "two probes succeeded");
    assert_eq!(get(7).await.unwrap().into_inner().status, "shipped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_layer_a_stream_is_judged_at_creation_and_not_by_its_messages() {
    let (channel, server) = serve_counted().await;
    let layer = layer("layer-stream-", 1);
    let client = guarded_client(channel, &layer);
    let watch = |id| {
        let mut client = client.clone();
        async move { client.watch(OrderRequest { id }).await }
    };

    // Established, then broken mid-stream: the error comes in the trailers, after the breaker
    // judged the stream's creation a success.
    server.set(STREAM_FAILS);
    for id in 0..3 {
        let mut stream = watch(id).await.unwrap().into_inner();
        assert_eq!(
            stream.message().await.unwrap_err().code(),
            Code::Unavailable
        );
    }
    let breaker = orders_breaker(&layer);
    assert_eq!(breaker.state(), State::Closed);
    assert_eq!(
        breaker.snapshot().failures,
        0,
        "messages inside a stream are not counted"
    );

    // Refused at creation: the status comes in the headers, and counts.
    server.set(FAILING);
    for id in 0..2 {
        assert_eq!(watch(id).await.unwrap_err().code(), Code::Unavailable);
    }
    assert_eq!(breaker.state(), State::Open);
    let received = server.received();
    let rejected = watch(9).await.unwrap_err();
    assert!(
        is_local_rejection(&rejected),
        "rejected before the stream starts"
    );
    assert_eq!(server.received(), received, "the server never saw it");
}
