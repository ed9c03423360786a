//! Real servers for the tests, and a real browser: each starts on free loopback ports, is ready
//! only once its own process answers its own protocol, and is stopped when its guard drops,
//! whatever the test's outcome. A server whose port another process took in the meantime is
//! started again on fresh ports; one that never starts fails the test with its own output. The
//! machine needs the programs installed: `scripts/test` (which `.ci/run` calls) installs what is
//! missing.

mod chromium;
mod log;
mod rabbit;
mod redis;

pub use chromium::{Chromium, Page};
pub use rabbit::{QueueRecord, RabbitServer};
pub use redis::RedisServer;

/// A loopback port nobody listens on now. Nothing holds it for the caller: another process may
/// take it before the caller binds it, so a server started on it must be checked to be the one
/// answering there (as every server of this crate is) and started again on a fresh port if not.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}
