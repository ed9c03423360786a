//! Real servers for the tests, and a real browser: each starts on free loopback ports, answers
//! before `start` returns, and is stopped when its guard drops, whatever the test's outcome. The
//! machine needs the program installed (`.ci/run` installs what is missing).

mod chromium;
mod rabbit;
mod redis;

pub use chromium::{Chromium, Page};
pub use rabbit::{QueueRecord, RabbitServer};
pub use redis::RedisServer;

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}
