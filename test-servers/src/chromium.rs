//! A headless Chromium of the test's own, driven over the DevTools protocol.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// How long Chromium may take to answer anything before the test fails instead of hanging.
const ANSWER_WITHIN: Duration = Duration::from_secs(15);

/// How long it may take to start: its first run on a machine builds the font cache, which took
/// more than 15 s once on a 2-core machine busy with the rest of the suite.
const START_WITHIN: Duration = Duration::from_secs(90);

/// A headless `chromium` with a profile folder of its own and its DevTools endpoint on a free
/// loopback port; on drop it is killed with every process it started, and the folder removed.
pub struct Chromium {
    child: Child,
    dir: PathBuf,
    /// Its DevTools port.
    pub port: u16,
}

impl Chromium {
    /// Starts one, a blank page in a 1200×800 window, and waits until its DevTools endpoint answers.
    pub fn start() -> Chromium {
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "breaker-chromium-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        // Left by a run killed before its drop, the folder could hold a stale port.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = std::fs::File::create(dir.join("chromium.log")).unwrap();
        let spawned = Command::new("chromium")
            // Port 0: Chromium takes a free one and writes it to `DevToolsActivePort`.
            .args(["--headless", "--remote-debugging-port=0"])
            .arg(format!("--user-data-dir={}", dir.display()))
            // `--no-sandbox`: CI runs as root, which the sandbox refuses. The page is the test's.
            .args(["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            .args([
                "--window-size=1200,800",
                "--hide-scrollbars",
                "--mute-audio",
            ])
            .args([
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-sync",
            ])
            .args([
                "--disable-background-networking",
                "--disable-component-update",
            ])
            // A page in the background is still the test's page: its timers run on time.
            .args([
                "--disable-background-timer-throttling",
                "--disable-renderer-backgrounding",
            ])
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(log)
            // A group of its own, so that drop can kill its renderers and helpers with it.
            .process_group(0)
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                panic!("chromium does not run ({e}): install chromium; .ci/run does");
            }
        };
        let mut chromium = Chromium {
            child,
            dir,
            port: 0,
        };
        let started = Instant::now();
        loop {
            if let Some(port) = chromium.active_port() {
                chromium.port = port;
                if chromium.get("/json/version").is_ok() {
                    return chromium;
                }
            }
            if let Ok(Some(status)) = chromium.child.try_wait() {
                panic!("chromium exited ({status}): {}", chromium.log());
            }
            assert!(
                started.elapsed() < START_WITHIN,
                "chromium's DevTools did not answer: {}",
                chromium.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Loads `url` in its page, and returns the page to read and photograph.
    pub fn open(&self, url: &str) -> Page {
        let targets: Value = serde_json::from_str(&self.get("/json/list").unwrap()).unwrap();
        let socket_url = targets
            .as_array()
            .into_iter()
            .flatten()
            .find(|target| target["type"] == "page")
            .and_then(|target| target["webSocketDebuggerUrl"].as_str())
            .unwrap_or_else(|| panic!("chromium has no page: {targets}"))
            .to_string();
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(ANSWER_WITHIN)).unwrap();
        stream.set_write_timeout(Some(ANSWER_WITHIN)).unwrap();
        let (socket, _) = tungstenite::client(socket_url.as_str(), stream)
            .unwrap_or_else(|e| panic!("the DevTools socket of the page: {e}"));
        let mut page = Page { socket, sent: 0 };
        let navigated = page.command("Page.navigate", json!({ "url": url }));
        assert!(
            navigated.get("errorText").is_none(),
            "chromium did not load {url}: {navigated}"
        );
        page
    }

    /// The port Chromium wrote to its profile folder, once it has.
    fn active_port(&self) -> Option<u16> {
        let written = std::fs::read_to_string(self.dir.join("DevToolsActivePort")).ok()?;
        written.lines().next()?.trim().parse().ok()
    }

    /// The body of a `GET` of the DevTools endpoint (which keeps the connection open whatever
    /// the request says, so the body is read by its length).
    fn get(&self, path: &str) -> std::io::Result<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(ANSWER_WITHIN))?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        )?;
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status)?;
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().map_err(std::io::Error::other)?;
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let body = String::from_utf8(body).map_err(std::io::Error::other)?;
        if status.starts_with("HTTP/1.1 200") {
            Ok(body)
        } else {
            Err(std::io::Error::other(format!("GET {path}: {status}{body}")))
        }
    }

    /// The end of what Chromium wrote to stderr, for a failure's message.
    fn log(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("chromium.log")).unwrap_or_default();
        let start = log.len().saturating_sub(2_000);
        let start = (start..log.len())
            .find(|&i| log.is_char_boundary(i))
            .unwrap_or(log.len());
        log[start..].to_string()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // The whole group (the browser, its zygotes, renderers and helpers), while the browser,
        // not yet waited for, still holds the group's id.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A helper killed in the middle of writing a file may leave it a moment after.
        for _ in 0..20 {
            if std::fs::remove_dir_all(&self.dir).is_ok() || !self.dir.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A page of a [`Chromium`], over its DevTools socket.
pub struct Page {
    socket: WebSocket<TcpStream>,
    sent: u64,
}

impl Page {
    /// The value of a JavaScript expression evaluated in the page (a promise is awaited);
    /// `null` for `undefined`. Panics on an exception.
    pub fn evaluate(&mut self, expression: &str) -> Value {
        let evaluated = self.command(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(exception) = evaluated.get("exceptionDetails") {
            panic!("`{expression}` threw: {exception}");
        }
        evaluated["result"]
            .get("value")
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// A PNG of the whole page, below the window's bottom edge too.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let metrics = self.command("Page.getLayoutMetrics", json!({}));
        let size = &metrics["cssContentSize"];
        let clip =
            json!({ "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1 });
        let shot = self.command(
            "Page.captureScreenshot",
            json!({ "format": "png", "captureBeyondViewport": true, "clip": clip }),
        );
        let data = shot["data"].as_str().expect("the screenshot's data");
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64")
    }

    /// Sends one DevTools command and returns its result, skipping the events meanwhile.
    pub fn command(&mut self, method: &str, params: Value) -> Value {
        self.sent += 1;
        let id = self.sent;
        let sent = json!({ "id": id, "method": method, "params": params });
        self.socket
            .send(Message::text(sent.to_string()))
            .unwrap_or_else(|e| panic!("{method} to chromium: {e}"));
        loop {
            let message = self
                .socket
                .read()
                .unwrap_or_else(|e| panic!("chromium's answer to {method}: {e}"));
            let Message::Text(text) = message else {
                continue;
            };
            let mut answer: Value = serde_json::from_str(text.as_str()).unwrap();
            if answer["id"] != id {
                continue;
            }
            if let Some(error) = answer.get("error") {
                panic!("chromium refused {method}: {error}");
            }
            return answer["result"].take();
        }
    }
}
