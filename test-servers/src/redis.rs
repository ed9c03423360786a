//! A Redis server of the test's own.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::free_port;

/// A `redis-server` on a free loopback port, with `DEBUG` enabled (for `DEBUG SLEEP`), no
/// persistence, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    /// The port it listens on, kept across [`restart`](RedisServer::restart).
    pub port: u16,
}

impl RedisServer {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> RedisServer {
        let mut server = RedisServer {
            child: None,
            port: free_port(),
        };
        server.restart();
        server
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Kills it, as a crash or an outage would: connections drop, data is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (after [`kill`](RedisServer::kill)), and waits until it
    /// accepts connections.
    pub fn restart(&mut self) {
        self.kill();
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--enable-debug-command", "yes"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (.ci/run installs it: apt-get install redis-server)");
        self.child = Some(child);
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}
