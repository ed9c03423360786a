//! A Redis server of the test's own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::{free_port, log};

/// A process that neither answers nor exits in this long is hung, not slow.
const START_WITHIN: Duration = Duration::from_secs(60);

/// How many fresh ports [`RedisServer::start`] tries when another process takes the port.
const PORTS_TRIED: usize = 10;

/// A `redis-server` on a free loopback port, with `DEBUG` enabled (for `DEBUG SLEEP`), no
/// persistence, killed on drop.
pub struct RedisServer {
    child: Option<Child>,
    dir: PathBuf,
    /// The port it listens on, kept across [`restart`](RedisServer::restart).
    pub port: u16,
}

/// Why a start did not give a server.
enum NotStarted {
    /// Another process listens on the port: worth a fresh port.
    PortTaken(String),
    /// Anything else, with the server's own output.
    Failed(String),
}

impl RedisServer {
    /// Starts one, and returns once it answers `PING` and `INFO` names its own process.
    pub fn start() -> RedisServer {
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "breaker-redis-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut server = RedisServer {
            child: None,
            dir,
            port: 0,
        };
        let mut taken = Vec::new();
        for _ in 0..PORTS_TRIED {
            server.port = free_port();
            match server.launch() {
                Ok(child) => {
                    server.child = Some(child);
                    return server;
                }
                Err(NotStarted::PortTaken(_)) => taken.push(server.port),
                Err(NotStarted::Failed(why)) => panic!("redis-server did not start: {why}"),
            }
        }
        panic!("redis-server found each of its ports {taken:?} taken by another process")
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

    /// Starts it again on the same port (after [`kill`](RedisServer::kill)), and returns once
    /// it answers as [`start`](RedisServer::start) does. The port can be taken by another
    /// process while the server is down; it is tried again for as long as a start may take.
    pub fn restart(&mut self) {
        self.kill();
        let started = Instant::now();
        loop {
            match self.launch() {
                Ok(child) => {
                    self.child = Some(child);
                    return;
                }
                Err(NotStarted::PortTaken(_)) if started.elapsed() < START_WITHIN => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(NotStarted::PortTaken(why) | NotStarted::Failed(why)) => {
                    panic!("redis-server did not start again on {}: {why}", self.port)
                }
            }
        }
    }

    /// Runs `redis-server` on `self.port` and waits until it is the one answering there.
    fn launch(&self) -> Result<Child, NotStarted> {
        let log_path = self.dir.join(format!("redis-{}.log", self.port));
        let (stdout, stderr) = log::create(&log_path);
        let mut child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--enable-debug-command", "yes"])
            .current_dir(&self.dir)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("redis-server does not run ({e}): `scripts/test` installs it")
            });
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let said = log::tail(&log_path);
                let why = format!("it exited ({status}) saying:\n{said}");
                return Err(if said.contains("Address already in use") {
                    NotStarted::PortTaken(why)
                } else {
                    NotStarted::Failed(why)
                });
            }
            // Another process's server may answer on the port until ours finds it taken.
            if answering_pid(self.port) == Some(child.id()) {
                return Ok(child);
            }
            if started.elapsed() > START_WITHIN {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotStarted::Failed(format!(
                    "no answer in {START_WITHIN:?}; it said:\n{}",
                    log::tail(&log_path)
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The process id of the Redis answering on `port`, if one answers `PING` with `PONG`.
fn answering_pid(port: u16) -> Option<u32> {
    let stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    reader
        .get_mut()
        .write_all(b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")
        .ok()?;
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    if line != "+PONG\r\n" {
        return None;
    }
    line.clear();
    reader.read_line(&mut line).ok()?;
    let length: usize = line.strip_prefix('$')?.trim_end().parse().ok()?;
    let mut info = vec![0; length];
    reader.read_exact(&mut info).ok()?;
    String::from_utf8_lossy(&info)
        .lines()
        .find_map(|line| line.strip_prefix("process_id:"))
        .and_then(|pid| pid.trim().parse().ok())
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // A test failing with the server up: what the server said may be why (a crash of its own).
        if std::thread::panicking() {
            eprintln!(
                "-- redis-server on port {} said --\n{}",
                self.port,
                log::tail(&self.dir.join(format!("redis-{}.log", self.port)))
            );
        }
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(all(test, feature = "self-test"))]
mod tests {
    use super::*;

    #[test]
    fn a_redis_whose_port_is_taken_is_not_mistaken_for_the_one_there() {
        let first = RedisServer::start();
        // What a bare connect, the old judge of readiness, would have taken for a second server.
        assert!(TcpStream::connect(("127.0.0.1", first.port)).is_ok());
        let mut second = RedisServer::start();
        second.kill();
        second.port = first.port;
        match second.launch() {
            Err(NotStarted::PortTaken(why)) => assert!(why.contains("Address already in use")),
            Err(NotStarted::Failed(why)) => panic!("not told apart from a port taken: {why}"),
            Ok(child) => panic!("pid {} judged ready on {}'s port", child.id(), first.port),
        }
        let first_pid = first.child.as_ref().map(Child::id);
        assert_eq!(answering_pid(first.port), first_pid);
    }

    #[test]
    fn servers_started_together_each_answer_as_themselves_on_ports_of_their_own() {
        let servers: Vec<RedisServer> = std::thread::scope(|scope| {
            let starting: Vec<_> = (0..6).map(|_| scope.spawn(RedisServer::start)).collect();
            starting.into_iter().map(|s| s.join().unwrap()).collect()
        });
        let mut ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), servers.len(), "{ports:?}");
        for server in &servers {
            assert_eq!(
                answering_pid(server.port),
                server.child.as_ref().map(Child::id)
            );
        }
    }

    #[test]
    fn a_restart_answers_from_the_new_process_on_the_same_port() {
        let mut server = RedisServer::start();
        let (port, before) = (server.port, server.child.as_ref().map(Child::id));
        server.kill();
        assert_eq!(answering_pid(port), None);
        server.restart();
        let after = server.child.as_ref().map(Child::id);
        assert_eq!(server.port, port);
        assert_ne!(after, before);
        assert_eq!(answering_pid(port), after);
    }
}
