//! The command line: its answers, and its errors naming the file, the line and the field.

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_breaker-replay"))
        .args(args)
        .output()
        .unwrap()
}

fn sample() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/traces/outage.jsonl").to_string()
}

/// A file of the test's own, holding `text`.
fn file(name: &str, text: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_bad_line_is_named_with_its_file_line_and_field() {
    let path = file(
        "bad_outcome.jsonl",
        "{\"at_ms\": 0, \"duration_ms\": 5, \"outcome\": \"success\"}\n\
         {\"at_ms\": 9, \"duration_ms\": 5, \"outcome\": \"fine\"}\n",
    );
    let output = run(&["--trace", &path, "--config", r#"window = "20""#]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {path}: line 2, field `outcome`: unknown outcome `fine`"
        )),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn times_going_backwards_are_named_too() {
    let path = file(
        "backwards.csv",
        "at_ms,duration_ms,outcome\n50,5,success\n40,5,success\n",
    );
    let output = run(&["--trace", &path, "--config", ""]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error: {path}: line 3, field `at_ms`: 40 goes back in time"
        )),
        "{stderr}"
    );
}

#[test]
fn a_refused_option_gets_the_attributes_message_and_names_the_config() {
    let output = run(&[
        "--trace",
        &sample(),
        "--config",
        r#"window = "20""#,
        "--config",
        "threshold = 50",
    ]);
    assert!(!output.status.success());
    let expected = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ui-tests/ui/fail/threshold_not_a_string.stderr"
    ))
    .unwrap();
    let attribute = expected
        .lines()
        .next()
        .unwrap()
        .strip_prefix("error: ")
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("error: --config #2 `threshold = 50`: {attribute}\n")
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let output = run(&["--trace", "no/such/trace.jsonl", "--config", ""]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: no/such/trace.jsonl: "));
}

#[test]
fn the_sample_trace_gives_a_row_per_config_and_the_same_figures_as_json() {
    let configs = [
        r#"threshold = "40%", window = "30s""#,
        r#"window = "20", timeout_ms = 1000"#,
    ];
    let args = [
        "--trace",
        &sample(),
        "--config",
        configs[0],
        "--config",
        configs[1],
    ];
    let output = run(&args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(table.contains("outages: 1\n"), "{table}");
    assert!(table.contains(&format!("#1: {}\n", configs[0])), "{table}");
    assert!(table.contains(&format!("#2: {}\n", configs[1])), "{table}");

    let svg = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sample.svg");
    let svg_arg = svg.display().to_string();
    let mut with_json = args.to_vec();
    with_json.extend(["--json", "--svg", &svg_arg]);
    let output = run(&with_json);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["options"], configs[0]);
    for row in rows {
        let rejected = row["rejected"].as_u64().unwrap();
        let parts: u64 = [
            "rejected_failing",
            "rejected_healthy",
            "rejected_ignored",
            "rejected_unknown",
        ]
        .iter()
        .map(|k| row[k].as_u64().unwrap())
        .sum();
        assert_eq!(parts, rejected, "every rejected call is counted once");
        assert!(
            row["opened"].as_u64().unwrap() >= 1,
            "the outage opens every candidate"
        );
        assert_eq!(row["outages_caught"], 1);
    }
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<svg"));
    assert!(drawn.contains("#2: window = &quot;20&quot;") || drawn.contains("#2: window = \"20\""));
}

#[test]
fn help_states_the_outage_rule() {
    let output = run(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.contains("A second is failing when at least half"),
        "{help}"
    );
}

/// Issue 45: a trace with nothing to judge says so on stderr, and the report still prints with
/// a success: there is no error, just nothing learnt.
#[test]
fn an_empty_trace_warns_that_there_is_nothing_to_judge() {
    let empty = file("empty.jsonl", "");
    let output = run(&["--trace", &empty, "--config", r#"window = "20""#]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "warning: {empty} holds no call: there is nothing to judge"
        )),
        "{stderr}"
    );
    assert!(!output.stdout.is_empty(), "the report, all the same");

    let rejected = file(
        "rejected.jsonl",
        "{\"at_ms\": 0, \"duration_ms\": 0, \"outcome\": \"rejected\"}\n",
    );
    let output = run(&["--trace", &rejected, "--config", ""]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "warning: {rejected} holds only rejected calls (1), whose outcomes are unknown"
        )),
        "{stderr}"
    );

    let output = run(&["--trace", &sample(), "--config", ""]);
    assert!(output.status.success());
    assert!(
        output.stderr.is_empty(),
        "a trace with outcomes: no warning"
    );
}

/// Issue 46: `suggest` prints the front with the current options marked, the same as JSON,
/// and the front as a picture.
#[test]
fn suggest_prints_the_front_and_where_the_current_options_stand() {
    let current = r#"window = "100""#;
    let args = [
        "suggest",
        "--trace",
        &sample(),
        "--current",
        current,
        "--max-delay",
        "10s",
        "--keep",
        "probes,slow_call",
        "--budget",
        "200",
    ];
    let output = run(&args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("searched 200 candidates (grid, then refinement)"),
        "{table}"
    );
    assert!(
        table.contains("constraints: delay at most 10.0s; kept: slow_call, probes"),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("current") && l.ends_with(current)),
        "{table}"
    );
    assert!(table.contains("\ncurrent: "), "{table}");

    let svg = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("front.svg");
    let svg_arg = svg.display().to_string();
    let mut with_json = args.to_vec();
    with_json.extend(["--json", "--svg", &svg_arg]);
    let output = run(&with_json);
    assert!(output.status.success());
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let front = json["front"].as_array().unwrap();
    assert!(!front.is_empty());
    assert_eq!(json["searched"], 200);
    assert_eq!(json["current"]["options"], current);
    assert_eq!(
        json["constraints"]["keep"],
        serde_json::json!(["slow_call", "probes"])
    );
    for row in front {
        let delay = row["figures"]["delay_ms"]
            .as_u64()
            .expect("within the delay");
        assert!(delay <= 10_000);
        assert!(row["options"].as_str().is_some());
    }
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.starts_with("<svg"), "{drawn}");
    assert!(drawn.contains("current"));
}

#[test]
fn suggest_refuses_what_it_cannot_read_and_names_it() {
    let output = run(&[
        "suggest",
        "--trace",
        &sample(),
        "--current",
        r#"treshold = "40%""#,
        "--keep",
        "windows",
        "--max-delay",
        "soon",
        "--max-healthy-lost",
        "many",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    for expected in [
        "--current `treshold = \"40%\"`: ",
        "unknown option `treshold`; the options are `threshold`",
        "--max-delay `soon`: ",
        "--max-healthy-lost `many` is neither a count of calls (20) nor a share",
        "--keep `windows`: suggest moves none such; it moves threshold, window, min_calls",
    ] {
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
}
