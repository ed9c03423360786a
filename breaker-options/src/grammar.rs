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
use crate::window::Window;

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

/// `"<integer><unit>"`, unit `ms`, `s`, `m` or `h`, at most `"720h"`. Zero is allowed here;
/// the options that forbid it say so.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::grammar;
///
/// assert_eq!(grammar::duration("30s"), Ok(Duration::from_secs(30)));
/// assert!(grammar::duration("1.5s").unwrap_err().contains("\"1500ms\""));
/// ```
pub fn duration(text: &str) -> Result<Duration, String> {
    millis(text).map(Duration::from_millis)
}

fn millis(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    if number.is_empty() {
        return Err(format!(
            "`{text}` is not a duration; write an integer and a unit, such as \"500ms\", \"30s\", \"5m\" or \"1h\""
        ));
    }
    if let Some(rest) = unit.strip_prefix('.') {
        let whole_unit: String = rest.chars().skip_while(char::is_ascii_digit).collect();
        let hint = match whole_unit.as_str() {
            "s" => " such as \"1500ms\" for 1.5s",
            "m" => " such as \"90s\" for 1.5m",
            "h" => " such as \"90m\" for 1.5h",
            _ => "",
        };
        return Err(format!(
            "`{text}` has a fraction; durations take a whole number: use a smaller unit{hint}"
        ));
    }
    if unit.starts_with(char::is_whitespace) {
        return Err(format!(
            "`{text}` has a space before its unit; write \"{number}{}\"",
            unit.trim_start()
        ));
    }
    if unit.starts_with('_') {
        return Err(format!(
            "`{text}` has an underscore in its number; write the digits alone, such as \"{}\"",
            text.replace('_', "")
        ));
    }
    let per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => {
            return Err(format!(
                "`{text}` needs a unit: write \"{number}ms\", \"{number}s\", \"{number}m\" or \"{number}h\""
            ));
        }
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{text}`; use ms, s, m or h"
            ));
        }
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(per_unit))
        .filter(|ms| *ms <= MAX_DURATION_MS)
        .ok_or_else(|| format!("`{text}` is too long; a duration is at most \"720h\" (30 days)"))
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
    let trimmed = text.trim();
    if trimmed.contains('_') && trimmed.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return Err(format!(
            "`{trimmed}` has underscores; write the number of calls as digits alone, such as \"{}\"",
            trimmed.replace('_', "")
        ));
    }
    if !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return count_window(trimmed.parse::<u64>().unwrap_or(u64::MAX));
    }
    match duration(trimmed) {
        Ok(d) if d.is_zero() => Err("a time window must be longer than zero".to_string()),
        Ok(d) => Ok(Window::Time(d)),
        Err(message) if message.contains("too long") || message.contains("a space") => Err(message),
        Err(_) if trimmed.bytes().next().is_some_and(|b| b.is_ascii_digit()) => {
            let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
            Err(format!(
                "unknown unit `{}` in window `{trimmed}`; write a number of calls such as \"20\", or a duration such as \"30s\" (ms, s, m, h)",
                &trimmed[digits..]
            ))
        }
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
    match duration(text)? {
        d if d.is_zero() => Err("it must be longer than zero".to_string()),
        d => Ok(d),
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
/// ```
pub fn backoff(text: &str) -> Result<Backoff, String> {
    let Some((initial, max)) = text.split_once("..") else {
        return Err(format!(
            "`{text}` is not a backoff; write its bounds as \"<initial>..<max>\", such as \"100ms..10s\""
        ));
    };
    let bound = |which: &str, text: &str| {
        nonzero_duration(text).map_err(|message| format!("its {which} bound: {message}"))
    };
    let (initial_text, max_text) = (initial.trim(), max.trim());
    let backoff = Backoff {
        initial: bound("initial", initial_text)?,
        max: bound("maximum", max_text)?,
    };
    if backoff.initial > backoff.max {
        return Err(format!(
            "its bounds are reversed: the initial wait comes first, write \"{max_text}..{initial_text}\""
        ));
    }
    Ok(backoff)
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
