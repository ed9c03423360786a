//! The `tonic` feature against a real tonic server and client over loopback: the server fails,
//! stalls or answers NOT_FOUND on command; the client's breaker opens on failures only,
//! rejects with a status marked as local, half-opens and closes after recovery, and guards a
//! streaming RPC at stream creation. Real time, briefly: breaks of 300 ms.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use breaker_runtime::tonic::is_local_rejection;
use breaker_runtime::{State, circuit_breaker, registry};
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;
use tonic::{Code, Request, Response, Status};

pub mod orders {
    tonic::include_proto!("orders");
}

use orders::orders_client::OrdersClient;
use orders::orders_server::{Orders, OrdersServer};
use orders::{OrderReply, OrderRequest};

const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const NOT_FOUND: u8 = 2;
const STALLING: u8 = 3;

#[derive(Clone)]
struct Server(Arc<AtomicU8>);

impl Server {
    async fn answer(&self, id: u64) -> Result<OrderReply, Status> {
        match self.0.load(Ordering::SeqCst) {
            FAILING => Err(Status::unavailable("orders database down")),
            NOT_FOUND => Err(Status::not_found(format!("no order {id}"))),
            STALLING => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok(OrderReply {
                    id,
                    status: "late".into(),
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
    let mode = Arc::new(AtomicU8::new(HEALTHY));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let incoming: TcpIncoming = listener.into();
    let server = Server(Arc::clone(&mode));
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(OrdersServer::new(server))
            .serve_with_incoming(incoming)
            .await
            .unwrap();
    });
    let client = OrdersClient::connect(format!("http://{address}"))
        .await
        .unwrap();
    (client, mode)
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
