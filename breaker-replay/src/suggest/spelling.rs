//! A point of the search written out: as the attribute takes it (a row of the front, to paste)
//! and as the body of `PUT {name}/config` that turns the current options into it.

use std::fmt::Write as _;
use std::time::Duration;

use breaker_options::{BreakGrowth, Settings, Window, WindowKind};

use super::knobs::{Knob, Ladders, Point, Value, default_min_calls, value_of};

impl Ladders {
    /// The options at `point`, spelled as the attribute takes them: each option that differs
    /// from the library's default, in a fixed order. Options the search does not move are
    /// carried from the current options (`break_growth`, where a cap lets it grow, `warm_up`,
    /// `probe_threshold`, and a fixed `window_kind`, where the window is a time window).
    pub fn spell(&self, point: Point, current: &Settings) -> String {
        let mut spelled = String::new();
        let mut option = |text: String| {
            if !spelled.is_empty() {
                spelled.push_str(", ");
            }
            spelled.push_str(&text);
        };
        let value = |knob: Knob| self.value(point, knob);
        let defaults = Settings::DEFAULT;
        for knob in Knob::ALL {
            let here = value(knob);
            if here == value_of(knob, &defaults) {
                continue;
            }
            let skipped = match knob {
                Knob::SlowThreshold => value(Knob::SlowCall) == Value::Duration(None),
                // The window's own default, written out, is the default.
                Knob::MinCalls => here == Value::Count(default_min_calls(value(Knob::Window))),
                _ => false,
            };
            // Left to its default when it has no token: off, none, or the window's own.
            if let Some((key, token)) = token(knob, here).filter(|_| !skipped) {
                option(match token {
                    Token::Text(text) => format!("{key} = \"{text}\""),
                    Token::Number(n) => format!("{key} = {n}"),
                });
            }
        }
        let growth = current
            .break_growth
            .filter(|g| g.hundredths() != BreakGrowth::DEFAULT.hundredths());
        if let (Some(growth), Value::Duration(Some(_))) = (growth, value(Knob::MaxBreakDuration)) {
            option(format!("break_growth = \"{}x\"", growth.factor()));
        }
        if let Some(warm_up) = current.warm_up {
            option(format!("warm_up = \"{}\"", duration(warm_up)));
        }
        if let Some(rate) = current.probe_threshold {
            option(format!("probe_threshold = \"{rate}\""));
        }
        let time_window = matches!(value(Knob::Window), Value::Window(Window::Time(_)));
        if current.window_kind == WindowKind::Fixed && time_window {
            option("window_kind = \"fixed\"".to_string());
        }
        spelled
    }

    /// What `PUT {name}/config` takes to turn the current options into those at `point`: a
    /// JSON map of each option whose value differs, spelled as the attribute spells it; or the
    /// option a change of live options cannot turn off (`slow_call` and `max_break_duration`
    /// are set by a duration, and cleared only by `reset_config` or the attribute).
    pub fn change(&self, point: Point) -> Result<serde_json::Map<String, serde_json::Value>, Knob> {
        use serde_json::Value as Json;
        let value = |p: Point, knob: Knob| self.value(p, knob);
        let mut change = serde_json::Map::new();
        let window_moved = value(point, Knob::Window) != value(self.current(), Knob::Window);
        for knob in Knob::ALL {
            let (here, was) = (value(point, knob), value(self.current(), knob));
            // A window named without `min_calls` puts it back to the window's default: a
            // moved window names it too.
            let min_calls_anew = knob == Knob::MinCalls && window_moved;
            if here == was && !min_calls_anew {
                continue;
            }
            if knob == Knob::SlowThreshold && value(point, Knob::SlowCall) == Value::Duration(None)
            {
                continue;
            }
            let token = match (knob, here) {
                (Knob::MinCalls, Value::Count(n)) => n
                    .or_else(|| default_min_calls(value(point, Knob::Window)))
                    .map(|n| ("min_calls", Token::Number(u64::from(n)))),
                // Off or none, which a change of live options cannot write.
                (_, Value::Duration(None)) if knob != Knob::Timeout => return Err(knob),
                _ => token(knob, here),
            };
            if let Some((key, token)) = token {
                let json = match token {
                    Token::Text(text) => Json::from(text),
                    Token::Number(n) => Json::from(n),
                };
                change.insert(key.into(), json);
            }
        }
        Ok(change)
    }
}

/// A value as the attribute writes it: a string with its unit or word, or a bare count.
enum Token {
    Text(String),
    Number(u64),
}

/// The option and token that write `value` of `knob` (`timeout_ms` for a timeout); `None` for
/// a value written by leaving the option out (off, none, the window's own `min_calls`).
fn token(knob: Knob, value: Value) -> Option<(&'static str, Token)> {
    let name = knob.name();
    match (knob, value) {
        (_, Value::Rate(rate)) => Some((name, Token::Text(rate.to_string()))),
        (_, Value::Window(Window::Count(n))) => Some((name, Token::Text(n.to_string()))),
        (_, Value::Window(Window::Time(d))) => Some((name, Token::Text(duration(d)))),
        (_, Value::Count(Some(n))) => Some((name, Token::Number(u64::from(n)))),
        (Knob::Timeout, Value::Duration(Some(d))) => Some((
            "timeout_ms",
            Token::Number(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        )),
        (Knob::Timeout, Value::Duration(None)) => Some(("timeout", Token::Text("off".into()))),
        (_, Value::Duration(Some(d))) => Some((name, Token::Text(duration(d)))),
        (_, Value::Count(None) | Value::Duration(None)) => None,
    }
}

/// A duration as the attribute takes it: whole minutes, whole seconds, or milliseconds.
fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    let mut text = String::new();
    let _ = match ms {
        0 => write!(text, "{}us", d.as_micros().max(1)),
        ms if ms % 60_000 == 0 => write!(text, "{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => write!(text, "{}s", ms / 1_000),
        ms => write!(text, "{ms}ms"),
    };
    text
}

#[cfg(test)]
mod tests {
    use breaker_runtime::trace::{Entry, Outcome};

    use super::super::knobs::call;
    use super::*;

    #[test]
    fn the_defaults_spell_as_nothing_and_every_ladder_holds_the_current_value() {
        let trace: Vec<Entry> = (1..=100).map(|i| call(i * 10, Outcome::Success)).collect();
        let ladders = Ladders::new(&trace, &Settings::DEFAULT);
        assert_eq!(ladders.spell(ladders.current(), &Settings::DEFAULT), "");

        let odd = crate::parse_options(
            r#"threshold = "33%", window = "7", timeout_ms = 1234, break_duration = "9s", probes = 4"#,
        )
        .unwrap()
        .settings();
        let ladders = Ladders::new(&trace, &odd);
        assert_eq!(
            ladders.spell(ladders.current(), &odd),
            r#"threshold = "33%", window = "7", timeout_ms = 1234, break_duration = "9s", probes = 4"#
        );
    }

    #[test]
    fn every_spelled_point_reads_back_as_the_attribute_reads_it() {
        let trace: Vec<Entry> = (1..=50).map(|i| call(i * 7, Outcome::Success)).collect();
        let ladders = Ladders::new(&trace, &Settings::DEFAULT);
        for knob in Knob::ALL {
            for at in 0..ladders.len(knob) {
                let mut point = ladders.current();
                point.0[knob.index()] = at;
                let spelled = ladders.spell(point, &Settings::DEFAULT);
                // Some points break a rule between options (min_calls over a count window);
                // the rest read back.
                if let Ok(candidate) = crate::parse_options(&spelled) {
                    let back = Ladders::new(&trace, &candidate.settings());
                    assert_eq!(back.spell(back.current(), &candidate.settings()), spelled);
                }
            }
        }
    }

    #[test]
    fn a_fixed_window_stays_fixed_while_the_window_is_a_time_window() {
        let trace: Vec<Entry> = (1..=50).map(|i| call(i * 7, Outcome::Success)).collect();
        let fixed = crate::parse_options(r#"window = "30s", window_kind = "fixed""#)
            .unwrap()
            .settings();
        let ladders = Ladders::new(&trace, &fixed);
        assert_eq!(
            ladders.spell(ladders.current(), &fixed),
            r#"window = "30s", window_kind = "fixed""#
        );
        let mut spelled = Vec::new();
        for at in 0..ladders.len(Knob::Window) {
            let mut point = ladders.current();
            point.0[Knob::Window.index()] = at;
            let options = ladders.spell(point, &fixed);
            crate::parse_options(&options).expect("every window spelled reads back");
            spelled.push(options);
        }
        assert!(
            spelled.iter().any(|o| o == r#"window = "5""#),
            "{spelled:?}"
        );
        assert!(
            spelled
                .iter()
                .any(|o| o == r#"window = "1m", window_kind = "fixed""#),
            "{spelled:?}"
        );
    }
}
