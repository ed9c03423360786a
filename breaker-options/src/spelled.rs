//! Options as a configuration file spells them (feature `serde`): the attribute's own keys and
//! strings, read by the same grammar, so `threshold = "50%"` in a file means what it means in
//! `#[circuit_breaker(threshold = "50%")]`.

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::grammar;
use crate::policy::PolicySettings;
use crate::rate::Rate;
use crate::settings::Settings;
use crate::spelling::{did_you_mean, nearest};
use crate::table::{OPTIONS, canonical, option_list};
use crate::window::Window;

/// A breaker's name, if the file gives one, and its settings, each absent option at its
/// default. Unknown keys are refused with the list of options; the attribute's compile-time
/// options (`fallback`, `is_failure`, `crate`) are refused with a reason.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{Spelled, Window};
///
/// let spelled: Spelled = serde_json::from_str(
///     r#"{ "name": "payments", "threshold": "25%", "window": "30s", "timeout": "off" }"#,
/// )?;
/// assert_eq!(spelled.name.as_deref(), Some("payments"));
/// assert_eq!(spelled.settings.window, Window::Time(Duration::from_secs(30)));
/// assert_eq!(spelled.settings.timeout, None);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Spelled {
    /// The `name`, when given.
    pub name: Option<String>,
    /// The breaker's options; not yet checked against each other ([`Settings::check`]).
    pub settings: Settings,
    /// The options around its calls (`retries`, `deadline`, `max_concurrent`, ...); not yet
    /// checked ([`PolicySettings::check`]).
    pub policy: PolicySettings,
}

/// A value as a file or a request may write it. Each option takes what the attribute takes: a
/// count is a whole number, written bare; a value with a unit or a word (a percentage, a
/// duration, `off`, a range, a mode) is a string that carries it; `window`, a count or a
/// duration, takes either; and `break_growth`, a factor, a number or a string.
pub(crate) enum Value {
    Text(String),
    Whole(u64),
    Fraction(f64),
    Negative(i64),
    /// What no option takes (null, a boolean, a list, a map), by what it is, so that the
    /// refusal names the option as every other does.
    Other(&'static str),
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;
        impl<'v> Visitor<'v> for ValueVisitor {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string such as \"50%\" or \"30s\", or a whole number")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Value, E> {
                Ok(Value::Text(text.to_string()))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
                Ok(Value::Whole(n))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
                Ok(Value::Fraction(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
                Ok(u64::try_from(n).map_or(Value::Negative(n), Value::Whole))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
                Ok(Value::Other("null"))
            }
            fn visit_none<E: de::Error>(self) -> Result<Value, E> {
                Ok(Value::Other("null"))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
                Ok(Value::Other(if b { "true" } else { "false" }))
            }
            fn visit_seq<A: de::SeqAccess<'v>>(self, mut seq: A) -> Result<Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Value::Other("a list"))
            }
            fn visit_map<A: MapAccess<'v>>(self, mut map: A) -> Result<Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Value::Other("a map"))
            }
        }
        deserializer.deserialize_any(ValueVisitor)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Text(text) => write!(f, "\"{text}\""),
            Value::Whole(n) => write!(f, "{n}"),
            Value::Fraction(n) => write!(f, "{n}"),
            Value::Negative(n) => write!(f, "{n}"),
            Value::Other(what) => f.write_str(what),
        }
    }
}

/// What the option `key` holds, and an example of it as the attribute writes it, for the
/// options written as strings.
fn spelled_as(key: &str) -> (&'static str, &'static str) {
    match key {
        "threshold" | "slow_threshold" | "break_jitter" | "probe_threshold" => {
            ("a percentage", "\"50%\"")
        }
        "retry_budget" => ("a percentage (or \"off\")", "\"20%\""),
        "timeout" => ("a duration (or \"off\")", "\"2s\""),
        "backoff" => ("a range of two durations", "\"100ms..10s\""),
        "mode" => ("a mode", "\"shadow\""),
        "window_kind" => ("a window kind", "\"fixed\""),
        "record" => ("a duration (or \"off\")", "\"10m\""),
        "name" => ("a name", "\"payments\""),
        _ => ("a duration", "\"30s\""),
    }
}

impl Value {
    fn text<E: de::Error>(self, key: &str) -> Result<String, E> {
        match self {
            Value::Text(text) => Ok(text),
            number => {
                let (what, example) = spelled_as(key);
                Err(E::custom(format!(
                    "invalid `{key}`: {what} is written as a string with its unit, as the attribute writes it ({example}), not {number}"
                )))
            }
        }
    }

    fn number<E: de::Error>(self, key: &str) -> Result<u64, E> {
        match self {
            Value::Whole(n) => Ok(n),
            Value::Text(text) if text.trim().parse::<u64>().is_ok() => Err(E::custom(format!(
                "invalid `{key}`: a count is a whole number written bare, as the attribute writes it ({}), not a string (\"{text}\")",
                text.trim()
            ))),
            Value::Text(text) => Err(E::custom(format!(
                "invalid `{key}`: `{text}` is not a whole number"
            ))),
            Value::Fraction(n) => Err(E::custom(format!(
                "invalid `{key}`: a count is a whole number, not {n}"
            ))),
            Value::Negative(n) => Err(E::custom(format!("invalid `{key}`: {n} is negative"))),
            Value::Other(what) => Err(E::custom(format!(
                "invalid `{key}`: a count is a whole number written bare, not {what}"
            ))),
        }
    }

    fn read<T, E: de::Error>(
        self,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, E> {
        let text = self.text(key)?;
        parse(&text).map_err(|message| E::custom(format!("invalid `{key}`: {message}")))
    }
}

impl<'de> Deserialize<'de> for Spelled {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SpelledVisitor)
    }
}

struct SpelledVisitor;

impl<'de> Visitor<'de> for SpelledVisitor {
    type Value = Spelled;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of circuit breaker options, such as { threshold = \"50%\" }")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Spelled, A::Error> {
        let mut name = None;
        let mut settings = Settings::DEFAULT;
        let mut policy = PolicySettings::DEFAULT;
        read_options(map, unknown, |key, canonical, map| match kind(canonical) {
            Kind::Name => {
                name = Some(map.next_value::<Value>()?.text("name")?);
                Ok(())
            }
            Kind::Setting => set_setting(&mut settings, key, map.next_value()?),
            Kind::Policy => set_policy(&mut policy, key, map.next_value()?),
            Kind::Typed | Kind::Code => Err(de::Error::custom(attribute_only(key, canonical))),
        })?;
        Ok(Spelled {
            name,
            settings,
            policy,
        })
    }
}

/// What an option is, for what a configuration may do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `name`.
    Name,
    /// One of the breaker's own options, a field of [`Settings`].
    Setting,
    /// An option around the breaker's calls, a field of [`PolicySettings`].
    Policy,
    /// An option that keeps values of the fn's own types (`stale_for`, `stale_entries`).
    Typed,
    /// An option that names code (`fallback`, `is_failure`, `crate`).
    Code,
}

/// The kind of the option `canonical` (as [`canonical`] names it).
pub(crate) fn kind(canonical: &str) -> Kind {
    match canonical {
        "name" => Kind::Name,
        "retries" | "backoff" | "retry_budget" | "deadline" | "max_concurrent" | "max_wait" => {
            Kind::Policy
        }
        "stale_for" | "stale_entries" => Kind::Typed,
        "fallback" | "is_failure" | "crate" => Kind::Code,
        _ => Kind::Setting,
    }
}

/// Why an option of kind [`Kind::Typed`] or [`Kind::Code`] has no place in a configuration.
pub(crate) fn attribute_only(key: &str, canonical: &str) -> String {
    if kind(canonical) == Kind::Typed {
        format!(
            "`{key}` keeps answers of the fn's own types, so it can only be given in the attribute, not in a configuration"
        )
    } else {
        format!(
            "`{key}` names code, so it can only be given in the attribute, not in a configuration"
        )
    }
}

/// Walks a map of options, refusing unknown keys and options given twice (`timeout` and
/// `timeout_ms` are one option), and hands `each` every key with its canonical name; `each`
/// reads the value.
pub(crate) fn read_options<'de, A: MapAccess<'de>>(
    mut map: A,
    unknown: fn(&str) -> String,
    mut each: impl FnMut(&str, &'static str, &mut A) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    let mut seen: Vec<&'static str> = Vec::new();
    while let Some(key) = map.next_key::<String>()? {
        let Some(canonical) = canonical(&key) else {
            return Err(de::Error::custom(unknown(&key)));
        };
        if seen.contains(&canonical) {
            return Err(de::Error::custom(format!(
                "`{key}` sets `{canonical}`, which is given more than once; keep one"
            )));
        }
        seen.push(canonical);
        each(&key, canonical, &mut map)?;
    }
    Ok(())
}

/// Reads `value` as the breaker option `key` (of [`Kind::Setting`]) onto `s`.
pub(crate) fn set_setting<E: de::Error>(
    s: &mut Settings,
    key: &str,
    value: Value,
) -> Result<(), E> {
    match key {
        "threshold" => s.threshold = value.read(key, grammar::percentage)?,
        "slow_threshold" => s.slow_threshold = Some(value.read(key, grammar::percentage)?),
        "window" => {
            s.window = match value {
                Value::Whole(n) => grammar::count_window(n)
                    .map_err(|m| E::custom(format!("invalid `window`: {m}")))?,
                Value::Fraction(n) => {
                    return Err(E::custom(format!(
                        "invalid `window`: a count of calls is a whole number (such as 30), and a duration a string with its unit (such as \"30s\"), not {n}"
                    )));
                }
                Value::Negative(n) => {
                    return Err(E::custom(format!("invalid `window`: {n} is negative")));
                }
                text => text.read(key, grammar::window)?,
            }
        }
        "min_calls" => s.min_calls = Some(bounded(key, value.number(key)?)?),
        "probes" => s.probes = bounded(key, value.number(key)?)?,
        "timeout" => s.timeout = value.read(key, grammar::timeout)?,
        "timeout_ms" => {
            s.timeout = match value.number(key)? {
                0 => {
                    return Err(E::custom(
                        "invalid `timeout_ms`: it must be at least 1; for no timeout write `timeout = \"off\"`",
                    ));
                }
                ms => Some(Duration::from_millis(ms)),
            }
        }
        "break_duration" => s.break_duration = value.read(key, grammar::nonzero_duration)?,
        "max_break_duration" => {
            s.max_break_duration = Some(value.read(key, grammar::nonzero_duration)?);
        }
        "mode" => s.mode = value.read(key, grammar::mode)?,
        "window_kind" => s.window_kind = value.read(key, grammar::window_kind)?,
        "break_growth" => {
            // A factor, so a number as well as its text: `break_growth = 1.5` is "1.5".
            let value = match value {
                Value::Whole(n) => Value::Text(n.to_string()),
                Value::Fraction(n) => Value::Text(n.to_string()),
                other => other,
            };
            s.break_growth = Some(value.read(key, grammar::break_growth)?);
        }
        "break_jitter" => s.break_jitter = Some(value.read(key, grammar::percentage)?),
        "probe_threshold" => s.probe_threshold = Some(value.read(key, grammar::percentage)?),
        "slow_call" => s.slow_call = Some(value.read(key, grammar::nonzero_duration)?),
        "record" => s.record = Some(value.read(key, grammar::record)?),
        "warm_up" => s.warm_up = Some(value.read(key, grammar::nonzero_duration)?),
        _ => return Err(E::custom(unknown(key))),
    }
    Ok(())
}

/// Reads `value` as the policy option `key` (of [`Kind::Policy`]) onto `p`.
fn set_policy<E: de::Error>(p: &mut PolicySettings, key: &str, value: Value) -> Result<(), E> {
    match key {
        "retries" => p.retries = bounded(key, value.number(key)?)?,
        "backoff" => p.backoff = Some(value.read(key, grammar::backoff)?),
        "retry_budget" => p.retry_budget = Some(value.read(key, grammar::retry_budget)?),
        "deadline" => p.deadline = Some(value.read(key, grammar::nonzero_duration)?),
        "max_concurrent" => p.max_concurrent = Some(bounded(key, value.number(key)?)?),
        "max_wait" => p.max_wait = Some(value.read(key, grammar::nonzero_duration)?),
        _ => return Err(E::custom(unknown(key))),
    }
    Ok(())
}

fn unknown(key: &str) -> String {
    let keys = OPTIONS.iter().flat_map(|(keys, _)| keys.iter().copied());
    format!(
        "unknown option `{key}`{}; the options are {}",
        did_you_mean(&nearest(key, keys)),
        option_list()
    )
}

/// An unknown key in a change of a live breaker's options: the nearest options it can change,
/// and those alone listed.
pub(crate) fn unknown_live(key: &str) -> String {
    let live: Vec<&str> = OPTIONS
        .iter()
        .flat_map(|(keys, _)| keys.iter().copied())
        .filter(|key| canonical(key).is_some_and(|c| kind(c) == Kind::Setting))
        .collect();
    let list: Vec<String> = live.iter().map(|key| format!("`{key}`")).collect();
    format!(
        "unknown option `{key}`{}; the options a live breaker can change are {}",
        did_you_mean(&nearest(key, live.iter().copied())),
        list.join(", ")
    )
}

fn bounded<E: de::Error>(key: &str, n: u64) -> Result<u32, E> {
    u32::try_from(n).map_err(|_| E::custom(format!("invalid `{key}`: {n} is too large")))
}

impl Serialize for Rate {
    /// As a percentage.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.percent())
    }
}

impl Serialize for Window {
    /// `{"calls": n}` or `{"ms": d}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Window", 1)?;
        match self {
            Window::Count(n) => s.serialize_field("calls", n)?,
            Window::Time(d) => {
                let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
                s.serialize_field("ms", &ms)?
            }
        }
        s.end()
    }
}
