//! The attribute's value grammar: percentages, counts and durations, as strings.
//!
//! Pure functions from text to a value or to the sentence a user reads, so the attribute (at
//! compile time) and the runtime (reading a configuration file) take the same text to mean the
//! same thing, and both can be tested without a compiler around them.

use std::time::Duration;

use crate::growth::{BreakGrowth, MAX_BREAK_GROWTH};
use crate::limits::{MAX_COUNT_WINDOW, MAX_DURATION};
use crate::mode::Mode;
use crate::policy::{Backoff, RetryBudget};
use crate::rate::Rate;
use crate::record::Record;
use crate::window::{Window, WindowKind};

/// [`MAX_DURATION`] in milliseconds, the unit the grammar counts in.
const MAX_DURATION_MS: u64 = MAX_DURATION.as_secs() * 1_000;

/// `"N%"` with 0 < N ≤ 100 and at most four decimals.
///
/// ```
/// use breaker_options::{grammar, Rate};
///
/// assert_eq!(grammar::percentage("12.5%"), Ok(Rate::from_percent(12.5).unwrap()));
/// assert!(grammar::percentage("50").unwrap_err().contains("\"50%\""));
/// assert_eq!(
///     grammar::percentage("0.5").unwrap_err(),
///     "0.5 of what? write \"50%\" or \"0.5%\""
/// );
/// ```
pub fn percentage(text: &str) -> Result<Rate, String> {
    let trimmed = text.trim();
    let example = "write a percentage such as \"50%\" or \"12.5%\"";
    let Some(number) = trimmed.strip_suffix('%') else {
        return Err(match decimal(trimmed) {
            // A share of one or a percent: both readings are common, so neither is guessed.
            Some(Decimal::Ppm(ppm)) if (1..=10_000).contains(&ppm) => format!(
                "{trimmed} of what? write \"{}%\" or \"{trimmed}%\"",
                percent_text(ppm * 100)
            ),
            Some(_) => {
                let with_sign = format!("{trimmed}%");
                match percentage(&with_sign) {
                    Ok(_) => format!("a percentage needs its `%` sign: write \"{with_sign}\""),
                    // Signed, it would still be refused: that is the mistake to tell too.
                    Err(refused) => format!("a percentage needs its `%` sign, and {refused}"),
                }
            }
            None => format!("`{text}` is not a percentage; {example}"),
        });
    };
    if number.ends_with(char::is_whitespace) {
        let together = format!("{}%", number.trim());
        return Err(match percentage(&together) {
            Ok(_) => format!("`{text}` has a space before its `%`; write \"{together}\""),
            Err(refused) => refused,
        });
    }
    let Some(ppm) = decimal(number.trim()) else {
        return Err(format!("`{text}` is not a percentage; {example}"));
    };
    match ppm {
        Decimal::TooPrecise => Err(format!(
            "`{text}` has more than 4 decimals; round it, e.g. \"33.3333%\""
        )),
        Decimal::Ppm(0) => Err("the percentage must be greater than 0%".to_string()),
        Decimal::Ppm(ppm) if ppm > 1_000_000 => {
            Err(format!("`{text}` is above 100%; use at most \"100%\""))
        }
        Decimal::Ppm(ppm) => Ok(Rate::from_ppm(ppm as u32)),
    }
}

/// Millionths as the percentage they are, as short as exact: `500000` is `50`, `1` is `0.0001`.
fn percent_text(ppm: u64) -> String {
    let (whole, fraction) = (ppm / 10_000, ppm % 10_000);
    if fraction == 0 {
        return whole.to_string();
    }
    let fraction = format!("{fraction:04}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

enum Decimal {
    /// Millionths of the whole: the percentage × 10 000.
    Ppm(u64),
    TooPrecise,
}

/// `12` or `12.5`, scaled by 10 000 (so `50` percent is 500 000 millionths).
fn decimal(text: &str) -> Option<Decimal> {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (text, ""),
    };
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || (text.contains('.') && fraction.is_empty())
    {
        return None;
    }
    if fraction.len() > 4 {
        return Some(Decimal::TooPrecise);
    }
    let whole: u64 = whole.parse().ok().filter(|w| *w <= 1_000)?;
    let padded = format!("{fraction:0<4}");
    let fraction: u64 = padded.parse().ok()?;
    Some(Decimal::Ppm(whole * 10_000 + fraction))
}

/// A value a message offers, spelled as the whole option is written, if the option takes it:
/// a hint the grammar then refuses would send the user round in circles. Each option's
/// grammar passes its own, so a duration's hint inside a backoff is a whole backoff.
type Offer<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Offers nothing: what a candidate is checked with, so checking never offers in turn.
fn no_offer(_: &str) -> Option<String> {
    None
}

/// The candidates the option takes, quoted: `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn offered(candidates: &[String], offer: Offer<'_>) -> Option<String> {
    let mut taken: Vec<String> = Vec::new();
    for candidate in candidates {
        if let Some(value) = offer(candidate).filter(|v| !taken.contains(v)) {
            taken.push(value);
        }
    }
    let quoted: Vec<String> = taken.iter().map(|v| format!("\"{v}\"")).collect();
    match quoted.split_last() {
        None => None,
        Some((last, [])) => Some(last.clone()),
        Some((last, rest)) => Some(format!("{} or {last}", rest.join(", "))),
    }
}

/// The grammar's units.
const UNITS: &str = "ms, s, m or h";

/// A unit as people write it, in the grammar's: the unit, and how many of it make one of the
/// word (a day is 24 h).
fn unit_word(word: &str) -> Option<(&'static str, u64)> {
    Some(match word.to_ascii_lowercase().as_str() {
        "ms" | "msec" | "msecs" | "milli" | "millis" | "millisecond" | "milliseconds" => ("ms", 1),
        "s" | "sec" | "secs" | "second" | "seconds" => ("s", 1),
        "m" | "min" | "mins" | "minute" | "minutes" => ("m", 1),
        "h" | "hr" | "hrs" | "hour" | "hours" => ("h", 1),
        "d" | "day" | "days" => ("h", 24),
        _ => return None,
    })
}

/// `number` and a unit word as the grammar spells them: `2`, `sec` is `2s`, `2`, `days` `48h`.
fn respelled(number: &str, word: &str) -> Option<String> {
    let (unit, times) = unit_word(word)?;
    let n = number.parse::<u64>().ok()?.checked_mul(times)?;
    Some(format!("{n}{unit}"))
}

/// Milliseconds in one of a grammar unit.
fn unit_millis(unit: &str) -> Option<u64> {
    match unit {
        "ms" => Some(1),
        "s" => Some(1_000),
        "m" => Some(60_000),
        "h" => Some(3_600_000),
        _ => None,
    }
}

/// A whole number of milliseconds in the largest unit it is a whole number of.
fn in_largest_unit(ms: u64) -> String {
    match ms {
        0 => "0ms".to_string(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}

/// `1.5s` as a whole number of a smaller unit, `1500ms`, when it is one.
fn without_fraction(whole: &str, rest: &str) -> Option<String> {
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (fraction, word) = rest.split_at(digits);
    let (unit, times) = unit_word(word.trim())?;
    let scale = 10u128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    // The number without its point, so `scale` of it is the number: exact, where floats are not.
    let pointless: u128 = format!("{whole}{fraction}").parse().ok()?;
    let per_unit = u128::from(unit_millis(unit)?) * u128::from(times);
    let scaled = pointless.checked_mul(per_unit)?;
    (scaled % scale == 0)
        .then(|| u64::try_from(scaled / scale).ok())
        .flatten()
        .map(in_largest_unit)
}

/// `"<integer><unit>"`, unit `ms`, `s`, `m` or `h`, at most `"720h"`. Zero is allowed here;
/// the options that forbid it say so.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::grammar;
///
/// assert_eq!(grammar::duration("30s"), Ok(Duration::from_secs(30)));
/// assert!(grammar::duration("1.5s").unwrap_err().contains("\"1500ms\""));
/// assert!(grammar::duration("2 sec").unwrap_err().contains("\"2s\""));
/// ```
pub fn duration(text: &str) -> Result<Duration, String> {
    let offer = |candidate: &str| {
        millis(candidate, &no_offer)
            .is_ok()
            .then(|| candidate.to_string())
    };
    millis(text, &offer).map(Duration::from_millis)
}

fn millis(text: &str, offer: Offer<'_>) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let such_as = |candidates: &[&str]| {
        let candidates: Vec<String> = candidates.iter().map(|c| c.to_string()).collect();
        offered(&candidates, offer).map_or_else(String::new, |o| format!(", such as {o}"))
    };
    if number.is_empty() {
        return Err(format!(
            "`{text}` is not a duration; write an integer and a unit ({UNITS}){}",
            such_as(&["500ms", "30s", "5m", "1h"])
        ));
    }
    if let Some(rest) = unit.strip_prefix('.') {
        let fix = without_fraction(number, rest).and_then(|fix| offer(&fix));
        return Err(match fix {
            Some(fix) => {
                format!("`{text}` has a fraction; durations take a whole number: write \"{fix}\"")
            }
            None => format!(
                "`{text}` has a fraction; durations take a whole number: use a smaller unit ({UNITS})"
            ),
        });
    }
    if unit.starts_with(char::is_whitespace) {
        let word = unit.trim_start();
        return Err(match respelled(number, word) {
            Some(together) => match offer(&together) {
                Some(fix) => format!("`{text}` has a space before its unit; write \"{fix}\""),
                None => format!(
                    "`{text}` has a space before its unit; write an integer and {UNITS} together"
                ),
            },
            None => format!(
                "`{text}` has a space before its unit, and `{word}` is not one: write an integer and {UNITS} together{}",
                such_as(&[&format!("{number}s")])
            ),
        });
    }
    if unit.starts_with('_') {
        let digits_alone = offered(&[text.replace('_', "")], offer)
            .map_or_else(String::new, |o| format!(", such as {o}"));
        return Err(format!(
            "`{text}` has an underscore in its number; write the digits alone{digits_alone}"
        ));
    }
    let per_unit = match unit_millis(unit) {
        Some(per_unit) => per_unit,
        None if unit.is_empty() => {
            let units: Vec<String> = ["ms", "s", "m", "h"]
                .iter()
                .map(|u| format!("{number}{u}"))
                .collect();
            return Err(match offered(&units, offer) {
                Some(units) => format!("`{text}` needs a unit: write {units}"),
                None => format!("`{text}` needs a unit: {UNITS}"),
            });
        }
        None => {
            return Err(match respelled(number, unit).and_then(|fix| offer(&fix)) {
                Some(fix) => format!("unknown unit `{unit}` in `{text}`; write \"{fix}\""),
                None => format!("unknown unit `{unit}` in `{text}`; use {UNITS}"),
            });
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(per_unit))
        .filter(|ms| *ms <= MAX_DURATION_MS)
        .ok_or_else(|| match offer("720h") {
            Some(longest) => {
                format!("`{text}` is too long; a duration is at most \"{longest}\" (30 days)")
            }
            None => format!("`{text}` is too long; a duration is at most 720h (30 days)"),
        })
}

/// A window: `"N"` calls, or a duration.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{grammar, Window};
///
/// assert_eq!(grammar::window("20"), Ok(Window::Count(20)));
/// assert_eq!(grammar::window("30s"), Ok(Window::Time(Duration::from_secs(30))));
/// ```
pub fn window(text: &str) -> Result<Window, String> {
    let offer = |candidate: &str| {
        window_offering(candidate, &no_offer)
            .is_ok()
            .then(|| candidate.to_string())
    };
    window_offering(text, &offer)
}

fn window_offering(text: &str, offer: Offer<'_>) -> Result<Window, String> {
    let trimmed = text.trim();
    if trimmed.contains('_') && trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        let digits_alone = offered(&[trimmed.replace('_', "")], offer)
            .map_or_else(String::new, |o| format!(", such as {o}"));
        return Err(format!(
            "`{trimmed}` has underscores; write the number of calls as digits alone{digits_alone}"
        ));
    }
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return count_window(trimmed.parse::<u64>().unwrap_or(u64::MAX));
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    let unit = &trimmed[digits..];
    // A number followed by no unit anyone writes may as well be a count mistyped.
    let strange_unit = digits > 0
        && unit_word(unit).is_none()
        && !unit.starts_with(|c: char| c == '.' || c == '_' || c.is_whitespace());
    match millis(trimmed, offer) {
        Ok(0) => Err("a time window must be longer than zero".to_string()),
        Ok(ms) => Ok(Window::Time(Duration::from_millis(ms))),
        Err(_) if strange_unit => Err(format!(
            "unknown unit `{unit}` in window `{trimmed}`; write a number of calls such as \"20\", or a duration such as \"30s\" ({UNITS})"
        )),
        Err(message) if digits > 0 => Err(message),
        Err(_) => Err(format!(
            "`{trimmed}` is not a window; write a number of calls such as \"20\", or a duration such as \"30s\""
        )),
    }
}

/// A count window of `calls` calls, 1 to [`MAX_COUNT_WINDOW`].
pub fn count_window(calls: u64) -> Result<Window, String> {
    match calls {
        0 => Err("the window must hold at least 1 call".to_string()),
        n if n > u64::from(MAX_COUNT_WINDOW) => Err(format!(
            "a count window holds at most {MAX_COUNT_WINDOW} calls; use a time window such as \"60s\" for more"
        )),
        n => Ok(Window::Count(n as u32)),
    }
}

/// A duration an option needs longer than zero: `break_duration`, `max_break_duration`,
/// `slow_call` and `timeout`.
pub fn nonzero_duration(text: &str) -> Result<Duration, String> {
    let offer = |candidate: &str| {
        nonzero_offering(candidate, &no_offer)
            .is_ok()
            .then(|| candidate.to_string())
    };
    nonzero_offering(text, &offer)
}

fn nonzero_offering(text: &str, offer: Offer<'_>) -> Result<Duration, String> {
    match millis(text, offer)? {
        0 => Err("it must be longer than zero".to_string()),
        ms => Ok(Duration::from_millis(ms)),
    }
}

/// The timeout: a duration longer than zero, or `"off"` for none.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::grammar;
///
/// assert_eq!(grammar::timeout("2s"), Ok(Some(Duration::from_secs(2))));
/// assert_eq!(grammar::timeout("off"), Ok(None));
/// ```
pub fn timeout(text: &str) -> Result<Option<Duration>, String> {
    if text.trim() == "off" {
        return Ok(None);
    }
    nonzero_duration(text)
        .map(Some)
        .map_err(|message| format!("{message} (or \"off\" for no timeout)"))
}

/// A backoff's bounds, `"<initial>..<max>"`: two durations longer than zero, the first at
/// most the second.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{grammar, Backoff};
///
/// assert_eq!(
///     grammar::backoff("50ms..2s"),
///     Ok(Backoff { initial: Duration::from_millis(50), max: Duration::from_secs(2) })
/// );
/// assert!(grammar::backoff("10s..100ms").unwrap_err().contains("\"100ms..10s\""));
/// assert!(grammar::backoff("50 ms..2s").unwrap_err().contains("\"50ms..2s\""));
/// ```
pub fn backoff(text: &str) -> Result<Backoff, String> {
    let Some((initial, max)) = text.split_once("..") else {
        return Err(format!(
            "`{text}` is not a backoff; write its bounds as `<initial>..<max>`, such as \"100ms..10s\""
        ));
    };
    let (initial_text, max_text) = (initial.trim(), max.trim());
    // A bound's hint is the whole backoff with that bound mended, if the backoff then holds.
    let whole = |initial: &str, max: &str| {
        let candidate = format!("{initial}..{max}");
        backoff_holds(&candidate).then_some(candidate)
    };
    let initial = nonzero_offering(initial_text, &|c| whole(c, max_text))
        .map_err(|message| format!("its initial bound: {message}"))?;
    let max = nonzero_offering(max_text, &|c| whole(initial_text, c))
        .map_err(|message| format!("its maximum bound: {message}"))?;
    let backoff = Backoff { initial, max };
    if backoff.initial > backoff.max {
        return Err(format!(
            "its bounds are reversed: the initial wait comes first, write \"{max_text}..{initial_text}\""
        ));
    }
    Ok(backoff)
}

/// Whether [`backoff`] takes `text`, asked without hints: how a hint is checked.
fn backoff_holds(text: &str) -> bool {
    let Some((initial, max)) = text.split_once("..") else {
        return false;
    };
    match (
        nonzero_offering(initial.trim(), &no_offer),
        nonzero_offering(max.trim(), &no_offer),
    ) {
        (Ok(initial), Ok(max)) => initial <= max,
        _ => false,
    }
}

/// The retry budget: a percentage of calls, or `"off"`.
///
/// ```
/// use breaker_options::{grammar, Rate, RetryBudget};
///
/// assert_eq!(grammar::retry_budget("20%"), Ok(RetryBudget::DEFAULT));
/// assert_eq!(grammar::retry_budget("off"), Ok(RetryBudget::Off));
/// ```
pub fn retry_budget(text: &str) -> Result<RetryBudget, String> {
    if text.trim() == "off" {
        return Ok(RetryBudget::Off);
    }
    percentage(text)
        .map(RetryBudget::Share)
        .map_err(|message| format!("{message} (or \"off\" for no budget)"))
}

/// A breaker's mode: `"enforce"` (the default) or `"shadow"`.
///
/// ```
/// use breaker_options::{grammar, Mode};
///
/// assert_eq!(grammar::mode("enforce"), Ok(Mode::Enforce));
/// assert!(grammar::mode("dry-run").unwrap_err().contains("\"shadow\""));
/// ```
pub fn mode(text: &str) -> Result<Mode, String> {
    match text.trim() {
        "enforce" => Ok(Mode::Enforce),
        "shadow" => Ok(Mode::Shadow),
        other => Err(format!(
            "`{other}` is not a mode: write \"enforce\" (reject while open, the default) or \"shadow\" (never reject, only report)"
        )),
    }
}

/// A time window's kind: `"sliding"` (the default) or `"fixed"`.
///
/// ```
/// use breaker_options::{grammar, WindowKind};
///
/// assert_eq!(grammar::window_kind("fixed"), Ok(WindowKind::Fixed));
/// assert!(grammar::window_kind("tumbling").unwrap_err().contains("write \"fixed\""));
/// ```
pub fn window_kind(text: &str) -> Result<WindowKind, String> {
    match text.trim() {
        "sliding" => Ok(WindowKind::Sliding),
        "fixed" => Ok(WindowKind::Fixed),
        other @ ("tumbling" | "interval" | "fixed-interval" | "reset") => Err(format!(
            "`{other}` is what this library calls a fixed window: write \"fixed\""
        )),
        other => Err(format!(
            "`{other}` is not a window kind: write \"sliding\" (the default: the last span's outcomes) or \"fixed\" (the counts clear at each edge of the span)"
        )),
    }
}

/// What the flight recorder keeps (`record`): a span of at least a second, such as `"10m"`,
/// or `"off"`.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{grammar, Record};
///
/// assert_eq!(grammar::record("1h"), Ok(Record::Last(Duration::from_secs(3_600))));
/// assert!(grammar::record("500ms").unwrap_err().contains("at least 1s"));
/// assert!(grammar::record("always").unwrap_err().contains("\"off\""));
/// ```
pub fn record(text: &str) -> Result<Record, String> {
    if text.trim() == "off" {
        return Ok(Record::Off);
    }
    let span = nonzero_duration(text)
        .map_err(|message| format!("{message} (or \"off\" to record nothing)"))?;
    if span < Duration::from_secs(1) {
        return Err(format!(
            "the recorder keeps at least 1s of calls, not {}ms; write \"1s\" or more, or \"off\"",
            span.as_millis()
        ));
    }
    Ok(Record::Last(span))
}

/// A break's growth factor: `"1.5"` or `"1.5x"`, from 1 to 10, to the hundredth.
///
/// ```
/// use breaker_options::{grammar, BreakGrowth};
///
/// assert_eq!(grammar::break_growth("1.5x"), Ok(BreakGrowth::from_factor(1.5).unwrap()));
/// assert_eq!(grammar::break_growth("3"), Ok(BreakGrowth::from_factor(3.0).unwrap()));
/// assert!(grammar::break_growth("0.5").unwrap_err().contains("at least 1"));
/// ```
pub fn break_growth(text: &str) -> Result<BreakGrowth, String> {
    let trimmed = text.trim();
    let number = trimmed.strip_suffix('x').unwrap_or(trimmed).trim();
    let digits_ok = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.split('.').count() <= 2
        && number
            .split('.')
            .nth(1)
            .is_none_or(|d| !d.is_empty() && d.len() <= 2);
    let factor: Option<f64> = if digits_ok { number.parse().ok() } else { None };
    let Some(factor) = factor else {
        return Err(format!(
            "`{text}` is not a growth factor: write how much longer each break gets, such as \"1.5x\" or \"2\" (at most two decimals)"
        ));
    };
    BreakGrowth::from_factor(factor).ok_or_else(|| {
        format!(
            "a growth factor must be at least 1 (no growth) and at most {MAX_BREAK_GROWTH}, got {factor}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoffs() {
        assert_eq!(
            backoff(" 1s .. 1s "),
            Ok(Backoff {
                initial: Duration::from_secs(1),
                max: Duration::from_secs(1)
            })
        );
        for bad in [
            "100ms", "0ms..1s", "1s..0s", "1s..", "..1s", "2s..1s", "1.5s..2s", "1s...2s",
        ] {
            assert!(backoff(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn percentages() {
        let ppm = |p: &str| percentage(p).map(Rate::ppm);
        assert_eq!(ppm("50%"), Ok(500_000));
        assert_eq!(ppm("100%"), Ok(1_000_000));
        assert_eq!(ppm("12.5%"), Ok(125_000));
        assert_eq!(ppm("0.0001%"), Ok(1));
        assert_eq!(ppm(" 33.3333% "), Ok(333_333));
        for bad in [
            "0%",
            "0.0%",
            "101%",
            "100.0001%",
            "50",
            "abc",
            "%",
            "-5%",
            "5.%",
            ".5%",
            "1e2%",
            "50.12345%",
            "",
        ] {
            assert!(percentage(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(
            percentage("50").unwrap_err().contains("\"50%\""),
            "the fix is spelled out"
        );
    }

    #[test]
    fn durations() {
        let ms = |d: &str| duration(d).map(|d| d.as_millis() as u64);
        assert_eq!(ms("250ms"), Ok(250));
        assert_eq!(ms("30s"), Ok(30_000));
        assert_eq!(ms("5m"), Ok(300_000));
        assert_eq!(ms("2h"), Ok(7_200_000));
        assert_eq!(ms("0s"), Ok(0));
        for bad in [
            "30",
            "s",
            "10x",
            "1.5s",
            "-1s",
            "99999999999999999999h",
            "",
            "10 s",
            "2562048h",
            "9223372036855ms",
            "721h",
        ] {
            assert!(duration(bad).is_err(), "{bad:?} must be refused");
        }
        assert_eq!(ms("720h"), Ok(MAX_DURATION_MS));
        assert!(
            duration("721h").unwrap_err().contains("\"720h\""),
            "the limit is named"
        );
        assert!(
            duration("30 s").unwrap_err().contains("\"30s\""),
            "the fix is spelled out"
        );
    }

    #[test]
    fn a_space_is_refused_alike_before_a_percent_sign_and_before_a_unit() {
        assert!(percentage("50 %").unwrap_err().contains("\"50%\""));
        assert!(duration("30 s").unwrap_err().contains("\"30s\""));
    }

    #[test]
    fn underscores_are_named_not_taken_for_a_unit() {
        let count = window("10_000").unwrap_err();
        assert!(
            count.contains("\"10000\"") && !count.contains("unit"),
            "{count}"
        );
        let time = duration("1_000ms").unwrap_err();
        assert!(time.contains("\"1000ms\""), "{time}");
    }

    #[test]
    fn unit_words_are_answered_in_the_grammars_units() {
        for (written, fix) in [
            ("2 sec", "\"2s\""),
            ("2sec", "\"2s\""),
            ("2 Seconds", "\"2s\""),
            ("250msec", "\"250ms\""),
            ("5 min", "\"5m\""),
            ("3hours", "\"3h\""),
            ("2 days", "\"48h\""),
            ("1.5 sec", "\"1500ms\""),
            ("0.5m", "\"30s\""),
            ("1.25h", "\"75m\""),
        ] {
            let refused = duration(written).unwrap_err();
            assert!(refused.contains(fix), "{written:?}: {refused}");
        }
        let refused = duration("31 days").unwrap_err();
        assert!(!refused.contains("744h"), "too long to offer: {refused}");
    }

    #[test]
    fn a_bare_share_of_one_asks_which_it_means() {
        assert_eq!(
            percentage("0.5").unwrap_err(),
            "0.5 of what? write \"50%\" or \"0.5%\""
        );
        assert_eq!(
            percentage("1").unwrap_err(),
            "1 of what? write \"100%\" or \"1%\""
        );
        assert_eq!(
            percentage("0.0001").unwrap_err(),
            "0.0001 of what? write \"0.01%\" or \"0.0001%\""
        );
        assert_eq!(
            percentage("1.5").unwrap_err(),
            "a percentage needs its `%` sign: write \"1.5%\""
        );
    }

    #[test]
    fn windows() {
        assert_eq!(window("20"), Ok(Window::Count(20)));
        assert_eq!(window("10000"), Ok(Window::Count(10_000)));
        assert_eq!(window("30s"), Ok(Window::Time(Duration::from_secs(30))));
        for bad in [
            "0",
            "10001",
            "10x",
            "0s",
            "abc",
            "",
            "99999999999999999999999",
            "2562048h",
            "9223372036855ms",
        ] {
            assert!(window(bad).is_err(), "{bad:?} must be refused");
        }
        assert!(window("2562048h").unwrap_err().contains("\"720h\""));
        assert!(window("10x").unwrap_err().contains("unknown unit `x`"));
    }
}
