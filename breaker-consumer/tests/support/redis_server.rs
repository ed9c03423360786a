//! A Redis server of the test's own on a free loopback port, stopped whatever the outcome.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub port: u16,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (.ci/run installs it: apt-get install redis-server)");
        let server = RedisServer { child, port };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
