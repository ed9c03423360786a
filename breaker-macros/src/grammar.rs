//! The attribute's value grammar: percentages, counts and durations, as strings.
//!
//! Pure functions from text to a value or to the sentence a user reads, so they can be tested
//! (and property-tested) without a compiler around them.

/// The largest count window the runtime keeps (its tallies share one atomic word).
pub(crate) const MAX_COUNT_WINDOW: u64 = 10_000;
/// The most probes the runtime runs at once.
pub(crate) const MAX_PROBES: u64 = 1_000;
/// The longest duration any option takes, in milliseconds: 720h (30 days), the runtime's
/// `MAX_DURATION`.
pub(crate) const MAX_DURATION_MS: u64 = 30 * 24 * 3_600_000;
/// The largest `min_calls` of a time window, the runtime's `MAX_MIN_CALLS`.
pub(crate) const MAX_MIN_CALLS: u64 = 1_000_000;

/// A window: the last N calls, or the last D milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    Count(u32),
    Millis(u64),
}

/// `"N%"` with 0 < N ≤ 100 and at most four decimals, as parts per million.
pub(crate) fn percentage(text: &str) -> Result<u32, String> {
    let example = "write a percentage such as \"50%\" or \"12.5%\"";
    let Some(number) = text.trim().strip_suffix('%') else {
        return Err(if decimal(text.trim()).is_some() {
            format!(
                "a percentage needs its `%` sign: write \"{}%\"",
                text.trim()
            )
        } else {
            format!("`{text}` is not a percentage; {example}")
        });
    };
    if number.ends_with(char::is_whitespace) {
        return Err(format!(
            "`{text}` has a space before its `%`; write \"{}%\"",
            number.trim()
        ));
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
        Decimal::Ppm(ppm) => Ok(ppm as u32),
    }
}

enum Decimal {
    /// Hundredths of a thousandth: the value × 10 000.
    Ppm(u64),
    TooPrecise,
}

/// `12` or `12.5`, scaled by 10 000 (so `50` percent is 500 000 parts per million).
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

/// `"<integer><unit>"`, unit `ms`, `s`, `m` or `h`, in milliseconds. Zero is allowed here; the
/// options that forbid it say so.
pub(crate) fn duration(text: &str) -> Result<u64, String> {
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
pub(crate) fn window(text: &str) -> Result<Window, String> {
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
        Ok(0) => Err("a time window must be longer than zero".to_string()),
        Ok(ms) => Ok(Window::Millis(ms)),
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

pub(crate) fn count_window(calls: u64) -> Result<Window, String> {
    match calls {
        0 => Err("the window must hold at least 1 call".to_string()),
        n if n > MAX_COUNT_WINDOW => Err(format!(
            "a count window holds at most {MAX_COUNT_WINDOW} calls; use a time window such as \"60s\" for more"
        )),
        n => Ok(Window::Count(n as u32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages() {
        assert_eq!(percentage("50%"), Ok(500_000));
        assert_eq!(percentage("100%"), Ok(1_000_000));
        assert_eq!(percentage("12.5%"), Ok(125_000));
        assert_eq!(percentage("0.0001%"), Ok(1));
        assert_eq!(percentage(" 33.3333% "), Ok(333_333));
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
        assert_eq!(duration("250ms"), Ok(250));
        assert_eq!(duration("30s"), Ok(30_000));
        assert_eq!(duration("5m"), Ok(300_000));
        assert_eq!(duration("2h"), Ok(7_200_000));
        assert_eq!(duration("0s"), Ok(0));
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
        assert_eq!(duration("720h"), Ok(MAX_DURATION_MS));
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
        assert_eq!(window("30s"), Ok(Window::Millis(30_000)));
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
