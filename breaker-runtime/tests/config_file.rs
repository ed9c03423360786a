//! A configuration file applied to live breakers: whole or not at all, and again as it changes.
//!
//! Tests run in parallel in one process and share the registry, so each names its own
//! breakers and its own file.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use breaker_runtime::config_file::{ConfigFile, FileError};
use breaker_runtime::{Breaker, Config, ConfigSource, Mode, registry};

#[path = "support/logged.rs"]
mod logged;
use logged::Logged;

fn registered(name: &str) -> Arc<Breaker> {
    let config = Config::builder().name(name.to_string()).probes(3);
    let breaker = Arc::new(Breaker::new(config.build().unwrap()));
    registry().register(Arc::clone(&breaker)).unwrap();
    breaker
}

/// A file of the test's own, removed when the test ends.
struct TempFile(PathBuf);

impl TempFile {
    fn new(test: &str, ext: &str) -> TempFile {
        let name = format!("breaker-config-{}-{test}.{ext}", std::process::id());
        TempFile(std::env::temp_dir().join(name))
    }

    fn write(&self, text: &str) {
        std::fs::write(&self.0, text).unwrap();
        self.touch();
    }

    /// Moves the file's modification time, as a save or `touch` does. Each write gets a time
    /// of its own: two writes within one tick of the file system's clock would otherwise read
    /// the same, as no two saves by hand do.
    fn touch(&self) {
        static SAVES: AtomicU64 = AtomicU64::new(0);
        let save = SAVES.fetch_add(1, Ordering::Relaxed);
        let at = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + save);
        let file = std::fs::File::options().write(true).open(&self.0).unwrap();
        file.set_modified(at).unwrap();
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn refused(error: FileError) -> Vec<(String, Option<&'static str>, String)> {
    match error {
        FileError::Refused { problems, .. } => problems
            .into_iter()
            .map(|p| (p.breaker, p.option, p.message))
            .collect(),
        other => panic!("expected problems with tables, got {other}"),
    }
}

#[test]
fn a_file_reconfigures_its_breakers_and_keeps_the_options_it_does_not_name() {
    let breaker = registered("file::named-only");
    let file = TempFile::new("named-only", "toml");
    file.write("[\"file::named-only\"]\nthreshold = \"40%\"\ntimeout = \"2s\"\n");

    let applied = ConfigFile::new(&file.0).load().unwrap();
    assert_eq!(applied.changed.len(), 1);
    assert_eq!(applied.changed[0].breaker, "file::named-only");
    assert_eq!(applied.changed[0].options, ["threshold", "timeout"]);

    let config = breaker.config();
    assert_eq!(config.threshold().percent(), 40.0);
    assert_eq!(config.timeout(), Some(Duration::from_secs(2)));
    assert_eq!(config.probes(), 3, "not named, so kept");
    assert_eq!(config.name(), "file::named-only");
}

#[test]
fn a_json_file_is_read_as_json() {
    let breaker = registered("file::json");
    let file = TempFile::new("json", "json");
    file.write(r#"{ "file::json": { "mode": "shadow", "window": 50 } }"#);

    let applied = ConfigFile::new(&file.0).load().unwrap();
    assert_eq!(applied.changed[0].options, ["window", "min_calls", "mode"]);
    assert_eq!(breaker.config().mode(), Mode::Shadow);
    assert_eq!(breaker.config().min_calls(), 50, "the new window's default");
}

#[test]
fn a_bad_value_applies_nothing_and_names_the_file_the_breaker_and_the_option() {
    let breaker = registered("file::bad-value");
    let file = TempFile::new("bad-value", "toml");
    file.write("[\"file::bad-value\"]\nthreshold = \"140%\"\nwindow = \"30s\"\n");

    let error = ConfigFile::new(&file.0).load().unwrap_err();
    let line = error.to_string();
    assert!(
        line.starts_with(&format!(
            "{}: breaker `file::bad-value`: invalid `threshold`: ",
            file.0.display()
        )),
        "{line}"
    );
    assert_eq!(refused(error)[0].1, Some("threshold"));
    assert_eq!(
        breaker.config().settings(),
        Config::builder().probes(3).build().unwrap().settings()
    );
}

#[test]
fn a_name_no_breaker_has_is_reported_and_applies_nothing() {
    let breaker = registered("file::known");
    let file = TempFile::new("unknown-name", "toml");
    file.write(
        "[\"file::known\"]\nthreshold = \"30%\"\n\n[\"file::nobody\"]\nthreshold = \"30%\"\n",
    );

    let problems = refused(ConfigFile::new(&file.0).load().unwrap_err());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "file::nobody");
    assert!(
        problems[0].2.starts_with("no breaker has this name"),
        "{problems:?}"
    );
    assert_eq!(
        breaker.config().threshold().percent(),
        50.0,
        "nothing applied"
    );
}

#[test]
fn a_partly_bad_file_applies_nothing_and_lists_every_problem() {
    let good = registered("file::partly-good");
    let _bad = registered("file::partly-bad");
    let _worse = registered("file::partly-worse");
    let file = TempFile::new("partly", "toml");
    file.write(concat!(
        "[\"file::partly-good\"]\nthreshold = \"30%\"\n\n",
        "[\"file::partly-bad\"]\nmin_calls = 30\n\n",
        "[\"file::partly-worse\"]\nretries = 2\n",
    ));

    let error = ConfigFile::new(&file.0).load().unwrap_err();
    assert_eq!(error.to_string().lines().count(), 2, "{error}");
    let problems = refused(error);
    assert_eq!(problems[0].0, "file::partly-bad");
    assert_eq!(problems[0].1, Some("min_calls"));
    assert!(
        problems[0]
            .2
            .contains("cannot exceed the count window (20)"),
        "{problems:?}"
    );
    assert_eq!(problems[1].0, "file::partly-worse");
    assert_eq!(problems[1].1, Some("retries"));
    assert!(problems[1].2.contains("is a policy option"), "{problems:?}");
    assert_eq!(good.config().threshold().percent(), 50.0, "nothing applied");
}

#[test]
fn a_file_that_is_not_a_table_of_tables_says_so() {
    let file = TempFile::new("not-tables", "toml");
    file.write("threshold = \"30%\"\n");
    let problems = refused(ConfigFile::new(&file.0).load().unwrap_err());
    assert!(problems[0].2.contains("is not a table"), "{problems:?}");

    file.write("[\"file::broken\"\nthreshold = \"30%\"\n");
    let error = ConfigFile::new(&file.0).load().unwrap_err();
    assert!(matches!(error, FileError::Syntax { .. }), "{error}");
    assert!(
        error.to_string().contains("not valid TOML, line 1"),
        "{error}"
    );
    assert_eq!(error.to_string().lines().count(), 1, "{error}");
}

#[test]
fn a_missing_file_is_an_error() {
    let file = TempFile::new("missing", "toml");
    let error = ConfigFile::new(&file.0).load().unwrap_err();
    assert!(matches!(error, FileError::Read { .. }), "{error}");
}

const EVERY: Duration = Duration::from_secs(1);

/// Starts watching `file`, and lets the test run half an interval apart from the watch's looks,
/// so that its writes never race a look.
async fn watched(file: &TempFile) -> breaker_runtime::config_file::WatchHandle {
    let watch = ConfigFile::new(&file.0).every(EVERY).watch();
    tokio::time::sleep(EVERY / 2).await;
    watch
}

/// Lets the watch take `n` looks, on the paused clock.
async fn looks(n: u32) {
    for _ in 0..n {
        tokio::time::sleep(EVERY).await;
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_watched_file_applies_at_once_and_again_when_it_changes() {
    let logged = Logged::capture();
    let breaker = registered("file::watched");
    let file = TempFile::new("watched", "toml");
    file.write("[\"file::watched\"]\nthreshold = \"40%\"\n");

    let watch = watched(&file).await;
    looks(2).await;
    assert_eq!(
        logged.lines(tracing::Level::INFO).len(),
        1,
        "applied at start"
    );
    assert_eq!(breaker.config().threshold().percent(), 40.0);

    file.write("[\"file::watched\"]\nthreshold = \"30%\"\nwindow = \"30s\"\n");
    looks(2).await;
    let info = logged.lines(tracing::Level::INFO);
    assert_eq!(info.len(), 2, "{info:?}");
    assert!(
        info[1].starts_with("breaker `file::watched` reconfigured from "),
        "{info:?}"
    );
    assert_eq!(breaker.config().threshold().percent(), 30.0);
    assert_eq!(
        breaker.config().window(),
        breaker_runtime::Window::Time(Duration::from_secs(30))
    );

    // The same contents written again are no change.
    file.write("[\"file::watched\"]\nthreshold = \"30%\"\nwindow = \"30s\"\n");
    looks(2).await;
    assert_eq!(logged.lines(tracing::Level::INFO).len(), 2);

    watch.stop();
    file.write("[\"file::watched\"]\nthreshold = \"20%\"\n");
    looks(3).await;
    assert_eq!(logged.lines(tracing::Level::INFO).len(), 2, "stopped");
    assert_eq!(breaker.config().threshold().percent(), 30.0);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_bad_version_is_logged_once_applies_nothing_and_the_next_good_one_applies() {
    let logged = Logged::capture();
    let good = registered("file::watched-good");
    let _bad = registered("file::watched-bad");
    let file = TempFile::new("watched-bad", "toml");
    file.write(concat!(
        "[\"file::watched-good\"]\nthreshold = \"40%\"\n\n",
        "[\"file::watched-bad\"]\nslow_threshold = \"40%\"\n",
    ));

    let _watch = watched(&file).await;
    looks(4).await;
    let errors = logged.lines(tracing::Level::ERROR);
    assert_eq!(errors.len(), 1, "once, not every look: {errors:?}");
    let expected = format!(
        "{}: breaker `file::watched-bad`: `slow_threshold` needs `slow_call`",
        file.0.display()
    );
    assert!(errors[0].starts_with(&expected), "{errors:?}");
    assert!(
        errors[0].ends_with("every breaker keeps its options"),
        "{errors:?}"
    );
    assert!(!errors[0].contains('\n'), "one line: {errors:?}");
    assert!(logged.lines(tracing::Level::INFO).is_empty());
    assert_eq!(good.config().threshold().percent(), 50.0, "nothing applied");

    file.write(concat!(
        "[\"file::watched-good\"]\nthreshold = \"40%\"\n\n",
        "[\"file::watched-bad\"]\nslow_call = \"1s\"\nslow_threshold = \"40%\"\n",
    ));
    looks(2).await;
    let info = logged.lines(tracing::Level::INFO);
    assert_eq!(
        info.len(),
        3,
        "one line per breaker changed, and the file's: {info:?}"
    );
    assert!(
        info[2].starts_with(&format!(
            "{} applied again, after: {expected}",
            file.0.display()
        )),
        "{info:?}"
    );
    assert_eq!(logged.lines(tracing::Level::ERROR).len(), 1);
    assert_eq!(good.config().threshold().percent(), 40.0);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_breaker_registered_after_the_watch_started_gets_the_file_as_it_is() {
    let logged = Logged::capture();
    let file = TempFile::new("late", "toml");
    file.write("[\"file::late\"]\nprobes = 5\n");

    let _watch = watched(&file).await;
    looks(3).await;
    let errors = logged.lines(tracing::Level::ERROR);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("breaker `file::late`: no breaker has this name"),
        "{errors:?}"
    );

    let breaker = registered("file::late");
    looks(1).await;
    let info = logged.lines(tracing::Level::INFO);
    assert_eq!(info.len(), 2, "applied, the file unchanged: {info:?}");
    assert!(info[1].contains(" applied again, after: "), "{info:?}");
    assert_eq!(logged.lines(tracing::Level::ERROR).len(), 1);
    assert_eq!(breaker.config().probes(), 5);
}

/// Issue 45: a save with the contents of the last one is applied whole, so an option changed
/// meanwhile from code, the endpoint or `reset_config` gets the file's value back, and the
/// snapshot says where the options in force came from.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn every_save_is_applied_whole_even_with_the_contents_of_the_last() {
    let breaker = registered("file::truth");
    let file = TempFile::new("truth", "toml");
    let text = "[\"file::truth\"]\nbreak_duration = \"8s\"\n";
    file.write(text);
    let _watch = watched(&file).await;
    looks(1).await;
    assert_eq!(breaker.config().break_duration(), Duration::from_secs(8));
    assert_eq!(
        breaker.snapshot().config_source,
        ConfigSource::File(file.0.clone())
    );

    breaker
        .update(Config::builder().break_duration(Duration::from_secs(9)))
        .unwrap();
    assert_eq!(breaker.snapshot().config_source, ConfigSource::Code);
    looks(2).await;
    assert_eq!(
        breaker.config().break_duration(),
        Duration::from_secs(9),
        "no save, no change: the drift shows in the source"
    );
    file.write(text);
    looks(1).await;
    assert_eq!(
        breaker.config().break_duration(),
        Duration::from_secs(8),
        "saved again as it was: applied"
    );
    assert_eq!(
        breaker.snapshot().config_source,
        ConfigSource::File(file.0.clone())
    );

    breaker.reset_config();
    assert_eq!(breaker.snapshot().config_source, ConfigSource::Built);
    file.touch();
    looks(1).await;
    assert_eq!(
        breaker.config().break_duration(),
        Duration::from_secs(8),
        "touched: applied"
    );
}

/// A broken save, then a fix back to the contents applied before: the fix applies (the
/// breaker was changed from code meanwhile) and says it applied again.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_fix_back_to_the_last_contents_after_a_broken_save_is_applied_again() {
    let logged = Logged::capture();
    let breaker = registered("file::fixed-back");
    let file = TempFile::new("fixed-back", "toml");
    let text = "[\"file::fixed-back\"]\nthreshold = \"40%\"\n";
    file.write(text);
    let _watch = watched(&file).await;
    looks(1).await;
    assert_eq!(breaker.config().threshold().percent(), 40.0);
    breaker.update(Config::builder().threshold(35.0)).unwrap();

    file.write("[\"file::fixed-back\"]\nthreshold = \"40\"\n");
    looks(2).await;
    assert_eq!(logged.lines(tracing::Level::ERROR).len(), 1);
    assert_eq!(
        breaker.config().threshold().percent(),
        35.0,
        "broken: nothing"
    );
    file.write(text);
    looks(1).await;
    assert_eq!(
        breaker.config().threshold().percent(),
        40.0,
        "fixed: applied"
    );
    let info = logged.lines(tracing::Level::INFO);
    assert!(
        info.last().unwrap().contains(" applied again, after: "),
        "{info:?}"
    );
}
