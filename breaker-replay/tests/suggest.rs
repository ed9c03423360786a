//! `suggest`: its front is the front of every point when the space fits the budget, its rows
//! replay to the figures it shows, constraints and kept options hold, and the current options
//! are placed truly.

use std::collections::BTreeSet;
use std::time::Duration;

use breaker_replay::front::{Figures, front};
use breaker_replay::suggest::knobs::Knob;
use breaker_replay::suggest::{HealthyLost, Request, Suggestion, suggest};
use breaker_replay::{parse_options, report};
use breaker_runtime::trace::Entry;

fn sample() -> Vec<Entry> {
    breaker_replay::read_trace(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/outage.jsonl"
    )))
    .unwrap()
}

fn request(current: &str) -> Request {
    Request::new(parse_options(current).unwrap())
}

fn figures_of(suggestion: &Suggestion) -> BTreeSet<(u64, u64, Option<u64>, u64)> {
    suggestion
        .front
        .iter()
        .map(|row| key(&row.figures))
        .collect()
}

fn key(f: &Figures) -> (u64, u64, Option<u64>, u64) {
    (
        f.failures_through,
        f.healthy_lost,
        f.delay_ms,
        f.not_closed_ms,
    )
}

#[test]
fn a_space_within_the_budget_is_searched_whole_and_its_front_is_every_points_front() {
    let trace = sample();
    let mut asked = request(r#"window = "10s""#);
    asked.keep = Knob::ALL
        .into_iter()
        .filter(|k| !matches!(k, Knob::Threshold | Knob::Probes))
        .collect();
    let suggestion = suggest(&trace, &asked).unwrap();
    assert_eq!(suggestion.method, "every point");

    // Every point, tried by hand: the ladders the docs give for the two options moved.
    let mut every = Vec::new();
    for threshold in [10, 20, 25, 30, 40, 50, 60, 75, 90, 100] {
        for probes in [1, 2, 3, 5, 10] {
            every.push(
                parse_options(&format!(
                    r#"window = "10s", threshold = "{threshold}%", probes = {probes}"#
                ))
                .unwrap(),
            );
        }
    }
    assert_eq!(suggestion.searched, every.len());
    let rows = report(&trace, &every).unwrap().rows;
    let all: Vec<Figures> = rows.iter().map(Figures::of).collect();
    let expected: BTreeSet<_> = front(&all).into_iter().map(|i| key(&all[i])).collect();
    assert!(expected.len() > 1, "a front worth the name: {expected:?}");
    assert_eq!(figures_of(&suggestion), expected);
}

#[test]
fn each_row_replays_to_the_figures_it_shows_and_none_beats_another() {
    let trace = sample();
    let suggestion = suggest(&trace, &request("")).unwrap();
    assert_eq!(suggestion.method, "grid, then refinement");
    assert!(suggestion.searched <= 1_000);
    let pasted: Vec<_> = suggestion
        .front
        .iter()
        .map(|row| parse_options(&row.options).unwrap())
        .collect();
    let replayed = report(&trace, &pasted).unwrap().rows;
    for (row, again) in suggestion.front.iter().zip(&replayed) {
        assert_eq!(Figures::of(again), row.figures, "{}", row.options);
    }
    for a in &suggestion.front {
        for b in &suggestion.front {
            assert!(
                !a.figures.dominates(&b.figures),
                "{} beats {}",
                a.options,
                b.options
            );
        }
    }
}

#[test]
fn the_same_trace_and_request_give_the_same_front() {
    let trace = sample();
    let first = suggest(&trace, &request(r#"threshold = "40%""#)).unwrap();
    let again = suggest(&trace, &request(r#"threshold = "40%""#)).unwrap();
    let options = |s: &Suggestion| {
        s.front
            .iter()
            .map(|r| r.options.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(options(&first), options(&again));
}

#[test]
fn the_current_options_are_shown_on_the_front_or_beside_the_row_that_beats_them() {
    let trace = sample();
    let suggestion = suggest(&trace, &request("")).unwrap();
    let current = &suggestion.current;
    assert_eq!(current.figures, Figures::of(&current.row));
    // The defaults are beaten on this trace: the row named beats them on every figure.
    let by = current.dominated_by.expect("the defaults are beaten");
    assert!(suggestion.front[by - 1].figures.dominates(&current.figures));
    assert_eq!(current.on_front, None);

    // A row of the front, made the current options, is on the front.
    let on = suggestion.front[2].options.clone();
    let again = suggest(&trace, &request(&on)).unwrap();
    let row = again.current.on_front.expect("on the front");
    assert_eq!(again.front[row - 1].figures, again.current.figures);
    assert_eq!(again.current.dominated_by, None);
}

#[test]
fn constraints_and_kept_options_narrow_the_front() {
    let trace = sample();
    let mut asked = request(r#"window = "30s", threshold = "40%""#);
    asked.max_delay = Some(Duration::from_secs(5));
    asked.max_healthy_lost = Some(HealthyLost::Share(breaker_options::Rate::from_ppm(50_000)));
    asked.keep = vec![Knob::Window];
    let suggestion = suggest(&trace, &asked).unwrap();
    assert!(!suggestion.front.is_empty());
    let most_lost = suggestion.healthy_calls * 5 / 100;
    assert_eq!(suggestion.constraints.max_healthy_lost, Some(most_lost));
    for row in &suggestion.front {
        assert!(
            row.figures.delay_ms.is_some_and(|d| d <= 5_000),
            "{}",
            row.options
        );
        assert!(row.figures.healthy_lost <= most_lost, "{}", row.options);
        let config = parse_options(&row.options).unwrap().config;
        assert_eq!(
            config.window(),
            breaker_runtime::Window::Time(Duration::from_secs(30))
        );
    }
    // The unconstrained front holds rows the constraints leave out.
    let mut free = request(r#"window = "30s", threshold = "40%""#);
    free.keep = vec![Knob::Window];
    let unconstrained = suggest(&trace, &free).unwrap();
    assert!(unconstrained.front.iter().any(|row| {
        row.figures.delay_ms.is_none_or(|d| d > 5_000) || row.figures.healthy_lost > most_lost
    }));
}

#[test]
fn a_limit_on_healthy_calls_lost_reads_as_a_count_or_a_share() {
    assert_eq!(HealthyLost::parse("20"), Ok(HealthyLost::Calls(20)));
    assert!(matches!(
        HealthyLost::parse(" 1% "),
        Ok(HealthyLost::Share(_))
    ));
    assert!(
        HealthyLost::parse("150%")
            .unwrap_err()
            .contains("0% to 100%")
    );
    assert!(HealthyLost::parse("some").unwrap_err().contains("(1%)"));
}

/// Each row's `put` is the body of `PUT {name}/config` that turns the current options into the
/// row's, as the endpoint reads it; a row that turns off what a live change cannot says so.
#[test]
fn each_rows_put_turns_the_current_options_into_the_rows() {
    let trace = sample();
    let written = r#"window = "100", min_calls = 50, slow_call = "300ms", slow_threshold = "80%", max_break_duration = "2m""#;
    let current = parse_options(written).unwrap().settings();
    let suggestion = suggest(&trace, &request(written)).unwrap();
    let mut put = 0;
    for row in &suggestion.front {
        let target = parse_options(&row.options).unwrap().settings();
        match &row.put {
            Some(body) => {
                put += 1;
                let patch: breaker_options::Patch =
                    serde_json::from_value(serde_json::Value::Object(body.clone())).unwrap();
                assert_eq!(
                    patch.apply(current).unwrap(),
                    target,
                    "{}: {body:?}",
                    row.options
                );
            }
            None => {
                let note = row.put_note.as_deref().unwrap();
                let off = |knob: &str| note.contains(&format!("`{knob}` off"));
                assert!(
                    (off("slow_call") && target.slow_call.is_none())
                        || (off("max_break_duration") && target.max_break_duration.is_none()),
                    "{note}"
                );
            }
        }
    }
    assert!(put > 0, "some rows are a live change away");
}
