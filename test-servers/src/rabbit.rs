//! A RabbitMQ node of the test's own, on free loopback ports with a private `epmd`, its files
//! in a temporary folder, stopped whatever the outcome.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::free_port;

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
    /// Starts one and waits until `rabbitmqctl status` answers (about 4 s).
    pub fn start() -> RabbitServer {
        let (port, dist_port, epmd_port) = (free_port(), free_port(), free_port());
        let node = format!("breaker-test-{port}@localhost");
        let dir =
            std::env::temp_dir().join(format!("breaker-rabbit-{}-{port}", std::process::id()));
        for sub in ["mnesia", "log"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
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
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rabbitmq-server runs (.ci/run installs it: apt-get install rabbitmq-server)");
        let server = RabbitServer {
            child,
            node,
            epmd_port,
            dir,
            port,
        };
        let started = Instant::now();
        while !server.rabbitmqctl(&["status"]).status.success() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "rabbitmq-server did not start; its log is in {}",
                server.dir.display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        server
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
        let _ = self.rabbitmqctl(&["stop"]);
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
