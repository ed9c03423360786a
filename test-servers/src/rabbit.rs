//! A RabbitMQ node of the test's own, on free loopback ports with a private `epmd`, its files
//! in a temporary folder, stopped whatever the outcome.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::{free_port, log};

/// A node that neither answers nor exits in this long is hung, not slow.
const START_WITHIN: Duration = Duration::from_secs(90);

/// How many sets of fresh ports [`RabbitServer::start`] tries when another process takes one.
const PORTS_TRIED: usize = 5;

/// Why a start did not give a node.
enum NotStarted {
    /// Another process listens on one of its ports (AMQP, distribution, epmd): worth fresh ones.
    PortTaken([u16; 3]),
    /// Anything else, with the node's own output.
    Failed(String),
}

/// A RabbitMQ node of its own, stopped (with its `epmd`) on drop.
pub struct RabbitServer {
    child: Child,
    node: String,
    epmd_port: u16,
    dir: PathBuf,
    /// Its AMQP port.
    pub port: u16,
}

impl RabbitServer {
    /// Starts one, and returns once `rabbitmqctl status` answers for it and its AMQP port
    /// answers a protocol header with a `Connection.Start` that names this node (about 4 s).
    /// A node that finds one of its ports taken is started again on fresh ones.
    pub fn start() -> RabbitServer {
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let mut taken = Vec::new();
        for _ in 0..PORTS_TRIED {
            let n = STARTED.fetch_add(1, Ordering::Relaxed);
            match RabbitServer::launch(n, [free_port(), free_port(), free_port()]) {
                Ok(server) => return server,
                Err(NotStarted::PortTaken(ports)) => taken.push(ports),
                Err(NotStarted::Failed(why)) => panic!("rabbitmq-server did not start: {why}"),
            }
        }
        panic!("rabbitmq-server found one of its ports taken each time: {taken:?}")
    }

    /// Runs a node on these ports (AMQP, distribution, epmd), and waits until it answers.
    fn launch(n: u32, [port, dist_port, epmd_port]: [u16; 3]) -> Result<RabbitServer, NotStarted> {
        let name = format!("breaker-test-{}-{n}", std::process::id());
        let node = format!("{name}@localhost");
        let dir = std::env::temp_dir().join(&name);
        // Left by a run killed before its drop, the folder could hold a stale node.
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["mnesia", "log"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let log_path = dir.join("server.log");
        let (stdout, stderr) = log::create(&log_path);
        // The server drops root and runs as `rabbitmq`, which must own its files.
        let owned = Command::new("chown")
            .args(["-R", "rabbitmq:rabbitmq"])
            .arg(&dir)
            .status()
            .expect("chown runs");
        assert!(owned.success(), "chown of the node's folder");
        let child = Command::new("rabbitmq-server")
            .env("RABBITMQ_NODENAME", &node)
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", port.to_string())
            .env("RABBITMQ_DIST_PORT", dist_port.to_string())
            .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", dir.join("log"))
            .env("RABBITMQ_FEATURE_FLAGS_FILE", dir.join("feature_flags"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
            .env(
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
                // Queue figures refreshed every 100 ms (quorum queues report on a 5 s tick otherwise).
                "-kernel inet_dist_use_interface {127,0,0,1} -rabbit quorum_tick_interval 100 -rabbit collect_statistics_interval 100",
            )
            .env("ERL_EPMD_PORT", epmd_port.to_string())
            .env("ERL_EPMD_ADDRESS", "127.0.0.1")
            .stdout(stdout)
            .stderr(stderr)
            // A group of its own, so that drop can kill the Erlang VM the wrapper started.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("rabbitmq-server does not run ({e}): `scripts/test` installs it")
            });
        let mut server = RabbitServer {
            child,
            node,
            epmd_port,
            dir,
            port,
        };
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let said = server.log();
                let why = format!("it exited ({status}) saying:\n{said}");
                // `server` drops here: its epmd is stopped and its folder removed.
                return Err(if said.contains("eaddrinuse") {
                    NotStarted::PortTaken([port, dist_port, epmd_port])
                } else {
                    NotStarted::Failed(why)
                });
            }
            // Another node may answer on the AMQP port until ours finds it taken.
            if server.rabbitmqctl(&["status"]).status.success()
                && start_frame(port).is_some_and(|frame| contains(&frame, name.as_bytes()))
            {
                return Ok(server);
            }
            if started.elapsed() > START_WITHIN {
                return Err(NotStarted::Failed(format!(
                    "no answer in {START_WITHIN:?}; it said:\n{}",
                    server.log()
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// What the node wrote: its console output, then its own log file's first error report
    /// and its end.
    fn log(&self) -> String {
        let own = self.dir.join("log").join(format!("{}.log", self.node));
        let first_error = log::first(&own, "[error]");
        format!(
            "{}\n-- {}: its first error --\n{first_error}\n-- {}: its end --\n{}",
            log::tail(&self.dir.join("server.log")),
            own.display(),
            own.display(),
            log::tail(&own)
        )
    }

    /// Its AMQP URL, as the `guest` user (allowed from loopback).
    pub fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    fn rabbitmqctl(&self, args: &[&str]) -> Output {
        Command::new("rabbitmqctl")
            .args(["-n", &self.node, "-q"])
            .args(args)
            .env("ERL_EPMD_PORT", self.epmd_port.to_string())
            .stdin(Stdio::null())
            .output()
            .expect("rabbitmqctl runs")
    }

    /// What the broker says of `queue`: messages, ready, unacknowledged, consumers.
    pub fn queue(&self, queue: &str) -> QueueRecord {
        let out = self.rabbitmqctl(&[
            "list_queues",
            "--no-table-headers",
            "name",
            "messages",
            "messages_ready",
            "messages_unacknowledged",
            "consumers",
        ]);
        assert!(out.status.success(), "rabbitmqctl list_queues: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let row = text
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .find(|cols| cols.first() == Some(&queue))
            .unwrap_or_else(|| panic!("no queue {queue} in {text}"));
        let n = |i: usize| row[i].parse::<u64>().unwrap();
        QueueRecord {
            messages: n(1),
            ready: n(2),
            unacknowledged: n(3),
            consumers: n(4),
        }
    }

    /// Runs `rabbitmqctl` on this node with `args` and returns its output, whatever its exit:
    /// for what the helpers here do not cover.
    pub fn ctl(&self, args: &[&str]) -> Output {
        self.rabbitmqctl(args)
    }

    /// Deletes `queue` (with its messages) as its owner would: the broker cancels its consumers.
    pub fn delete_queue(&self, queue: &str) {
        let out = self.rabbitmqctl(&["delete_queue", queue]);
        assert!(out.status.success(), "rabbitmqctl delete_queue: {out:?}");
    }

    /// The queues the node has, by name.
    pub fn queue_names(&self) -> Vec<String> {
        let out = self.rabbitmqctl(&["list_queues", "--no-table-headers", "name"]);
        assert!(out.status.success(), "rabbitmqctl list_queues: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// How many client connections the node has open.
    pub fn connections(&self) -> usize {
        let out = self.rabbitmqctl(&["list_connections", "--no-table-headers", "pid"]);
        assert!(
            out.status.success(),
            "rabbitmqctl list_connections: {out:?}"
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|line| !line.trim().is_empty())
            .count()
    }

    /// Restarts the RabbitMQ application on the running node (`rabbitmqctl stop_app`, then
    /// `start_app`), and returns once it answers AMQP again: every client connection is
    /// closed, and what is not durable is gone (non-durable queues, transient messages), as
    /// after a restart of the node. The Erlang VM, its ports and its files stay: unlike a
    /// restart of the whole process, no port can be taken in between.
    pub fn restart_app(&self) {
        for step in [&["stop_app"][..], &["start_app"][..]] {
            let out = self.rabbitmqctl(step);
            assert!(out.status.success(), "rabbitmqctl {step:?}: {out:?}");
        }
        let started = Instant::now();
        while !start_frame(self.port).is_some_and(|frame| contains(&frame, self.name().as_bytes()))
        {
            assert!(
                started.elapsed() < START_WITHIN,
                "the node did not answer AMQP in {START_WITHIN:?} after start_app:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node's name before the `@`.
    fn name(&self) -> &str {
        self.node.split('@').next().unwrap_or(&self.node)
    }

    /// Closes every client connection, as a broker restart or a network cut would.
    pub fn close_all_connections(&self) {
        let out = self.rabbitmqctl(&["close_all_connections", "the test cuts the connection"]);
        assert!(
            out.status.success(),
            "rabbitmqctl close_all_connections: {out:?}"
        );
    }
}

/// One row of `rabbitmqctl list_queues`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueRecord {
    /// Messages in the queue.
    pub messages: u64,
    /// Messages ready for delivery.
    pub ready: u64,
    /// Messages delivered and not yet settled.
    pub unacknowledged: u64,
    /// Consumers.
    pub consumers: u64,
}

impl Drop for RabbitServer {
    fn drop(&mut self) {
        // A test failing with the node up: what the node said may be why.
        if std::thread::panicking() {
            eprintln!("-- rabbitmq node {} said --\n{}", self.node, self.log());
        }
        let _ = self.rabbitmqctl(&["stop"]);
        // A node that never answered is not stopped by `rabbitmqctl`: its whole group goes.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The private epmd refuses to die while the node's registration lingers: ask again.
        for _ in 0..50 {
            let Ok(out) = Command::new("epmd")
                .args(["-port", &self.epmd_port.to_string(), "-kill"])
                .output()
            else {
                break;
            };
            let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            if said.contains("Killed") || said.contains("Cannot connect") {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The payload of the first frame an AMQP 0-9-1 server sends after the protocol header: its
/// `Connection.Start`, whose server properties carry the cluster's name (the node's by default).
fn start_frame(port: u16) -> Option<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(b"AMQP\x00\x00\x09\x01").ok()?;
    let mut header = [0; 7];
    stream.read_exact(&mut header).ok()?;
    // A method frame on channel 0.
    if header[..3] != [1, 0, 0] {
        return None;
    }
    let size = u32::from_be_bytes([header[3], header[4], header[5], header[6]]);
    let mut payload = vec![0; usize::try_from(size).ok()?.min(1 << 20)];
    stream.read_exact(&mut payload).ok()?;
    // Class 10 (connection), method 10 (start).
    (payload.get(..4) == Some(&[0, 10, 0, 10])).then_some(payload)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[cfg(all(test, feature = "self-test"))]
mod tests {
    use super::*;

    #[test]
    fn a_node_whose_amqp_port_is_taken_says_so_and_the_next_start_is_on_fresh_ports() {
        let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let taken = squatter.local_addr().unwrap().port();
        match RabbitServer::launch(u32::MAX, [taken, free_port(), free_port()]) {
            Err(NotStarted::PortTaken(ports)) => assert_eq!(ports[0], taken),
            Err(NotStarted::Failed(why)) => panic!("not told apart from a port taken: {why}"),
            Ok(server) => panic!("a node on a taken port {} was judged ready", server.port),
        }
        let server = RabbitServer::start();
        assert_ne!(server.port, taken);
        let frame = start_frame(server.port).expect("its Connection.Start");
        let name = server.node.split('@').next().unwrap();
        assert!(contains(&frame, name.as_bytes()), "names {name}");
        assert!(!contains(&frame, b"breaker-test-none"));
    }
}
