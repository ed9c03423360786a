//! Breaker options from a file an operator edits (feature `config-file`), applied to the live
//! breakers of the [`registry`](crate::registry()), and watched for changes.
//!
//! ## Configuration file
//!
//! One table per breaker, under the breaker's name; each table is a [`Patch`]: the options to
//! change, spelled as in the attribute. Options a table does not name keep the breaker's
//! current value, so removing a line from the file does not undo it; write the value back
//! instead. A name with `::` (the attribute's default names, `module::fn`) must be quoted in
//! TOML, or it reads as nested tables:
//!
//! ```toml
//! ["payments::charge"]
//! threshold = "40%"
//! window = "30s"
//!
//! [search]
//! timeout = "800ms"
//! mode = "shadow"
//! ```
//!
//! A file whose name ends in `.json` is read as JSON (`{ "search": { "timeout": "800ms" } }`);
//! any other as TOML.
//!
//! A file applies whole or not at all: every table is checked against its breaker first (a
//! name no breaker has, a value the grammar refuses, an option a live breaker cannot change,
//! a rule between options the result would break), and one problem anywhere leaves every
//! breaker as it was. [`FileError`] lists every problem, one line each, naming the file, the
//! breaker and the option.
//!
//! ```
//! use std::sync::Arc;
//! use breaker_runtime::config_file::ConfigFile;
//! use breaker_runtime::{registry, Breaker, Config};
//!
//! let breaker = Arc::new(Breaker::new(Config::builder().name("docs::charge").build()?));
//! registry().register(Arc::clone(&breaker))?;
//!
//! let path = std::env::temp_dir().join(format!("breaker-docs-{}.toml", std::process::id()));
//! std::fs::write(&path, "[\"docs::charge\"]\nthreshold = \"40%\"\nwindow = \"30s\"\n")?;
//! let applied = ConfigFile::new(&path).load()?;
//! assert_eq!(applied.changed[0].breaker, "docs::charge");
//! assert_eq!(applied.changed[0].options, ["threshold", "window", "min_calls"]);
//! assert_eq!(breaker.config().threshold().percent(), 40.0);
//!
//! std::fs::write(&path, "[\"docs::charge\"]\nretries = 3\n")?;
//! let error = ConfigFile::new(&path).load().unwrap_err();
//! assert!(error.to_string().contains("breaker `docs::charge`: `retries` is a policy option"));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`ConfigFile::watch`] applies the file at once and again at every save, on tokio: a bad
//! version is logged (one `tracing` error naming the file, the breaker and the option) and
//! applies nothing, and the next good version applies, logged as applied again.
//!
//! ## The file is the source of truth when it changes
//!
//! Every save of a valid file is applied whole, whatever was applied before: each table's
//! options are laid over its breaker's options in force, even where the file reads as it did
//! at the last save. So a change made meanwhile from the endpoint or from code to an option the
//! file names lasts until the file is next saved (or touched), and then the file's value wins;
//! an option the file does not name keeps whatever value it has. A breaker's
//! [snapshot](crate::Snapshot::config_source) says where its options in force came from (as
//! built, code, the endpoint, or the file), and the endpoint's page shows it beside them, so a
//! breaker running options its file does not say shows at a glance.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use breaker_options::{Patch, canonical};
use serde::Deserialize;
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use crate::core::breaker::{Requester, changed};
use crate::registry::registry;

/// A configuration file of breaker options: [`load`](Self::load) applies it once,
/// [`watch`](Self::watch) keeps applying it as it changes.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    path: PathBuf,
    every: Duration,
}

impl ConfigFile {
    /// The file at `path`, looked at every second once watched.
    pub fn new(path: impl Into<PathBuf>) -> ConfigFile {
        ConfigFile {
            path: path.into(),
            every: Duration::from_secs(1),
        }
    }

    /// How often [`watch`](Self::watch) looks at the file's modification time and length (at
    /// least 1 ms).
    pub fn every(mut self, interval: Duration) -> ConfigFile {
        self.every = interval.max(Duration::from_millis(1));
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file and applies every table to its breaker, or, if any table has a problem,
    /// applies nothing and returns them all.
    ///
    /// It reads the file on the calling thread: call it at start-up, or from
    /// `spawn_blocking`, not from a task of the async runtime.
    pub fn load(&self) -> Result<Applied, FileError> {
        let text = std::fs::read_to_string(&self.path).map_err(|source| FileError::Read {
            path: self.path.clone(),
            source,
        })?;
        apply(&self.path, &text)
    }

    /// Applies the file now, then again at every save, until the handle is dropped or
    /// [stopped](WatchHandle::stop). Every interval it compares the file's modification time
    /// and length with the last look, and reads it when either moved: a save, or a touch. Each
    /// save is applied whole, even with the contents of the last one, so an option changed
    /// meanwhile by the endpoint or by code gets the file's value back. The file is read off
    /// the runtime's threads.
    ///
    /// While the file cannot be read or has a problem, every breaker keeps its options and the
    /// problem is logged once; the file is then read at every look, so that it applies as soon
    /// as it can (a breaker it names may be registered after the watch started). The version
    /// that applies after a problem is logged as applied again.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, or on one without its time driver, as `tokio::spawn` and
    /// `tokio::time::interval` do.
    pub fn watch(self) -> WatchHandle {
        WatchHandle {
            task: tokio::spawn(watch(Arc::from(self.path), self.every)),
        }
    }
}

/// A running [`ConfigFile::watch`]: dropping it ends the watch.
#[derive(Debug)]
#[must_use = "dropping the handle ends the watch"]
pub struct WatchHandle {
    task: JoinHandle<()>,
}

impl WatchHandle {
    /// Ends the watch.
    pub fn stop(self) {}
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        // The task awaits only between applies (an apply runs without an await), so aborting
        // it never leaves a file half applied.
        self.task.abort();
    }
}

/// What a file changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Applied {
    /// The breakers whose options changed, by name; a table that names only current values
    /// changes nothing and is not listed.
    pub changed: Vec<Change>,
}

/// One breaker's changed options.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The breaker's name.
    pub breaker: String,
    /// The options whose values changed, in the order of the attribute's table: the named
    /// ones, and those that follow them (a new `window` resets `min_calls`).
    pub options: Vec<&'static str>,
}

/// A configuration file that applied nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not TOML (or, named `.json`, not JSON), or is not a table of tables.
    #[error("{}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said, with the line.
        message: String,
    },
    /// Tables with problems: every one of them, one line each.
    #[error("{}", Lines(path, problems))]
    Refused {
        /// The file.
        path: PathBuf,
        /// Every problem, in the order of the breakers' names.
        problems: Vec<Problem>,
    },
}

/// A problem with one breaker's table.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Problem {
    /// The table's name: the breaker's.
    pub breaker: String,
    /// The option at fault, when the problem is one option's.
    pub option: Option<&'static str>,
    /// The rule broken, naming the option.
    pub message: String,
}

struct Lines<'a>(&'a Path, &'a [Problem]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.1.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(
                f,
                "{}: breaker `{}`: {}",
                self.0.display(),
                problem.breaker,
                problem.message
            )?;
        }
        Ok(())
    }
}

/// Parses `text` as the file at `path`, checks every table, and applies them all or none.
fn apply(path: &Path, text: &str) -> Result<Applied, FileError> {
    let mut tables = parse(text, is_json(path)).map_err(|message| FileError::Syntax {
        path: path.to_path_buf(),
        message,
    })?;
    tables.sort_by(|a, b| a.0.cmp(&b.0));
    let mut problems = Vec::new();
    let mut ready = Vec::new();
    for (name, table) in tables {
        let problem = |option, message| Problem {
            breaker: name.clone(),
            option,
            message,
        };
        if let Err(Misread::NotATable) = table {
            problems.push(problem(None, not_a_table(&name)));
            continue;
        }
        // A table under a name no breaker has may be wrong too: both are reported.
        let breaker = registry().get(&name);
        if breaker.is_none() {
            problems.push(problem(
                None,
                "no breaker has this name (declared with the attribute or registered)".into(),
            ));
        }
        let patch = match table {
            Ok(patch) => patch,
            Err(Misread::NotATable) => continue,
            Err(Misread::Invalid(message)) => {
                problems.push(problem(named_option(&message), message));
                continue;
            }
        };
        let Some(breaker) = breaker else { continue };
        let now = breaker.config().settings();
        match patch.apply(now) {
            Ok(next) => ready.push((name, breaker, patch, now, next)),
            Err(error) => problems.push(problem(Some(error.field()), error.to_string())),
        }
    }
    if !problems.is_empty() {
        return Err(FileError::Refused {
            path: path.to_path_buf(),
            problems,
        });
    }
    let mut applied = Applied::default();
    for (name, breaker, patch, now, next) in ready {
        if changed(&now, &next).is_empty() {
            continue;
        }
        // Checked above with the rules `reconfigure` checks, so it refuses nothing; applied to
        // the options in force under the breaker's lock, so that an operator's change of
        // another option meanwhile stays. The breaker logs the change.
        let options = match breaker.reconfigure_with(Requester::File(path), |now| patch.apply(now))
        {
            Ok(change) => change.changed(),
            Err(error) => {
                tracing::error!(file = %path.display(), breaker = %name, "breaker `{name}` refused its options: {error}");
                continue;
            }
        };
        applied.changed.push(Change {
            breaker: name,
            options,
        });
    }
    Ok(applied)
}

fn is_json(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"))
}

/// Each table by name, read as a patch or refused with the reason; or why the file is not a
/// table of tables.
type Tables = Vec<(String, Result<Patch, Misread>)>;

/// Why a table is no patch.
enum Misread {
    /// A value where a table should be, such as an option outside any table.
    NotATable,
    /// A table the patch refused, and why.
    Invalid(String),
}

fn parse(text: &str, json: bool) -> Result<Tables, String> {
    // Each table is read on its own, so one bad table does not hide the problems of others.
    if json {
        let file: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
        Ok(file
            .into_iter()
            .map(|(name, table)| {
                let patch = match table {
                    serde_json::Value::Object(_) => {
                        Patch::deserialize(table).map_err(|e| Misread::Invalid(e.to_string()))
                    }
                    _ => Err(Misread::NotATable),
                };
                (name, patch)
            })
            .collect())
    } else {
        let file: toml::Table = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            match line {
                Some(line) => format!("not valid TOML, line {line}: {}", e.message().trim()),
                None => format!("not valid TOML: {}", e.message().trim()),
            }
        })?;
        Ok(file
            .into_iter()
            .map(|(name, table)| {
                let patch = match table {
                    toml::Value::Table(_) => table
                        .try_into::<Patch>()
                        .map_err(|e| Misread::Invalid(e.message().trim().to_string())),
                    _ => Err(Misread::NotATable),
                };
                (name, patch)
            })
            .collect())
    }
}

fn not_a_table(name: &str) -> String {
    format!(
        "`{name}` is not a table: each breaker's options go in a table under its name, such as [\"payments::charge\"]"
    )
}

/// The option a patch's refusal is about: its messages start with the option's key in
/// backticks (`invalid \`threshold\`: ...`, `` `retries` is a policy option ``).
fn named_option(message: &str) -> Option<&'static str> {
    let key = message
        .strip_prefix("invalid `")
        .or_else(|| message.strip_prefix('`'))?;
    canonical(&key[..key.find('`')?])
}

/// The options whose effective values differ, defaults filled in, so that `min_calls` left to
/// its default and the same number written out are one value.
/// What the watch last saw of the file: a rewrite moves at least one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

/// A look at the file, off the runtime.
enum Look {
    Unchanged,
    Read(Stamp, String),
}

fn look(path: &Path, last: Option<Stamp>) -> io::Result<Look> {
    let meta = std::fs::metadata(path)?;
    let stamp = Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    };
    if last == Some(stamp) {
        return Ok(Look::Unchanged);
    }
    Ok(Look::Read(stamp, std::fs::read_to_string(path)?))
}

async fn watch(path: Arc<Path>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    // A slow disk delays the next look; it does not cause a burst of looks to catch up.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut stamp = None;
    // The last problem logged, so a problem that lasts is logged once, not every interval.
    let mut reported: Option<String> = None;
    loop {
        ticks.tick().await;
        let looked = {
            let path = Arc::clone(&path);
            tokio::task::spawn_blocking(move || look(&path, stamp)).await
        };
        let text = match looked {
            Ok(Ok(Look::Unchanged)) => continue,
            Ok(Ok(Look::Read(new_stamp, text))) => {
                stamp = Some(new_stamp);
                text
            }
            Ok(Err(error)) => {
                stamp = None;
                report(
                    &path,
                    &mut reported,
                    format!("cannot read {}: {error}", path.display()),
                );
                continue;
            }
            // The blocking look was cancelled as the runtime shuts down.
            Err(_) => return,
        };
        match apply(&path, &text) {
            Ok(applied) => {
                if let Some(problem) = reported.take() {
                    tracing::info!(
                        file = %path.display(),
                        changed = applied.changed.len(),
                        "{} applied again, after: {problem}",
                        path.display()
                    );
                }
            }
            Err(error) => {
                // Read again at the next look, though unchanged: a breaker the file names may
                // be registered after the watch started, and the same file then applies.
                stamp = None;
                report(&path, &mut reported, error.to_string().replace('\n', "; "));
            }
        }
    }
}

/// Logs `problem`, unless it is the one logged last.
fn report(path: &Path, reported: &mut Option<String>, problem: String) {
    if reported.as_ref() != Some(&problem) {
        tracing::error!(file = %path.display(), "{problem}; every breaker keeps its options");
        *reported = Some(problem);
    }
}
