//! The options an operator changes on a live breaker (feature `serde`), spelled as in the
//! attribute; the options a patch does not name keep the breaker's current values.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use crate::error::ConfigError;
use crate::settings::Settings;
use crate::spelled::{Kind, attribute_only, kind, read_options, set_setting, unknown_live};

/// Options to change on a live breaker, spelled as in the attribute: `{ "threshold": "40%" }`
/// in JSON, `threshold = "40%"` in TOML. [`Patch::apply`] lays them over the breaker's
/// current settings; every option the patch does not name keeps its value.
///
/// Four options follow another, as they do in the attribute, so a patch means what the same
/// options written in the attribute would:
///
/// * naming `window` without `min_calls` puts `min_calls` back to the new window's default
///   (the window's size, or 10 for a time window): a `min_calls` fitted to the old window
///   could be above the new one, or far below it;
/// * naming `window` without `window_kind` keeps a fixed window fixed when the new window is a
///   time window too (a new span for the same kind), and makes it sliding when it is a count
///   window (which has no edges to clear at);
/// * naming `slow_call` without `slow_threshold` keeps the current `slow_threshold`;
/// * naming `max_break_duration` without `break_growth` keeps the current `break_growth`.
///
/// A patch refuses what cannot change on a live breaker, with the reason: `name` (a live
/// breaker keeps its name), the options that name code or keep values of the fn's types
/// (`fallback`, `is_failure`, `crate`, `stale_for`, `stale_entries`), and the policy options
/// (`retries`, `backoff`, `retry_budget`, `deadline`, `max_concurrent`, `max_wait`), which are
/// built into the guarded fn's wrapper. Unknown keys and options given twice are refused as
/// [`Spelled`](crate::Spelled) refuses them.
///
/// ```
/// use std::time::Duration;
/// use breaker_options::{Patch, Settings, Window};
///
/// let patch: Patch = serde_json::from_str(r#"{ "threshold": "40%", "window": "30s" }"#)?;
/// assert_eq!(patch.options().collect::<Vec<_>>(), ["threshold", "window"]);
///
/// let live = Settings { window: Window::Count(50), min_calls: Some(40), probes: 3, ..Settings::DEFAULT };
/// let next = patch.apply(live)?;
/// assert_eq!(next.threshold.percent(), 40.0);
/// assert_eq!(next.window, Window::Time(Duration::from_secs(30)));
/// assert_eq!(next.min_calls(), 10, "the time window's default, not the old window's 40");
/// assert_eq!(next.probes, 3, "not named, so kept");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Patch {
    /// The values read, onto the defaults; only the fields of `named` mean anything.
    values: Settings,
    /// The options named, by their canonical names, in the order given.
    named: Vec<&'static str>,
}

impl Patch {
    /// Whether the patch names no option.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty()
    }

    /// The options the patch names, by their canonical names (`timeout_ms` is `timeout`), in
    /// the order given.
    pub fn options(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.named.iter().copied()
    }

    /// `base` with the options this patch names replaced, checked ([`Settings::check`]): the
    /// first rule the result breaks, such as a `min_calls` above the new count window, is the
    /// error.
    ///
    /// ```
    /// use breaker_options::{ConfigError, Patch, Settings, Window};
    ///
    /// let patch: Patch = serde_json::from_str(r#"{ "min_calls": 30 }"#)?;
    /// let live = Settings { window: Window::Count(20), ..Settings::DEFAULT };
    /// assert_eq!(patch.apply(live), Err(ConfigError::MinCallsAboveWindow { min_calls: 30, window: 20 }));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn apply(&self, base: Settings) -> Result<Settings, ConfigError> {
        base.patched(&self.values, &self.named)
    }
}

impl<'de> Deserialize<'de> for Patch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PatchVisitor)
    }
}

struct PatchVisitor;

impl<'de> Visitor<'de> for PatchVisitor {
    type Value = Patch;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of the options to change, such as { threshold = \"40%\" }")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Patch, A::Error> {
        let mut patch = Patch::default();
        read_options(map, unknown_live, |key, canonical, map| {
            match kind(canonical) {
                Kind::Setting => set_setting(&mut patch.values, key, map.next_value()?)?,
                Kind::Name => {
                    return Err(de::Error::custom(
                        "`name` cannot change: a live breaker keeps its name",
                    ));
                }
                Kind::Policy => {
                    return Err(de::Error::custom(format!(
                        "`{key}` is a policy option: it is built into the guarded fn's wrapper and cannot change on a live breaker"
                    )));
                }
                Kind::Typed | Kind::Code => {
                    return Err(de::Error::custom(attribute_only(key, canonical)));
                }
            }
            patch.named.push(canonical);
            Ok(())
        })?;
        Ok(patch)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{ConfigError, Mode, Patch, Settings, Window, WindowKind};

    fn patch(json: &str) -> Result<Patch, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_warm_up_is_read_as_the_attribute_reads_it_and_changes_live() {
        let next = patch(r#"{ "warm_up": "45s" }"#)
            .unwrap()
            .apply(Settings::DEFAULT)
            .unwrap();
        assert_eq!(next.warm_up, Some(std::time::Duration::from_secs(45)));
        let error = patch(r#"{ "warm_up": 30 }"#).unwrap_err();
        assert!(error.contains("invalid `warm_up`"), "{error}");
        let error = patch(r#"{ "warm_up": "0s" }"#).unwrap_err();
        assert!(error.contains("longer than zero"), "{error}");
    }

    #[test]
    fn a_window_kind_changes_live_and_a_new_window_keeps_it_while_it_is_a_time_window() {
        let fixed = patch(r#"{ "window_kind": "fixed" }"#)
            .unwrap()
            .apply(Settings {
                window: Window::Time(Duration::from_secs(60)),
                ..Settings::DEFAULT
            })
            .unwrap();
        assert_eq!(fixed.window_kind, WindowKind::Fixed);
        let longer = patch(r#"{ "window": "2m" }"#)
            .unwrap()
            .apply(fixed)
            .unwrap();
        assert_eq!(
            (longer.window, longer.window_kind),
            (Window::Time(Duration::from_secs(120)), WindowKind::Fixed)
        );
        let counted = patch(r#"{ "window": 50 }"#).unwrap().apply(fixed).unwrap();
        assert_eq!(
            (counted.window, counted.window_kind),
            (Window::Count(50), WindowKind::Sliding)
        );
        assert_eq!(
            patch(r#"{ "window_kind": "fixed" }"#)
                .unwrap()
                .apply(Settings::DEFAULT),
            Err(ConfigError::FixedCountWindow { window: 20 })
        );
        let error = patch(r#"{ "window_kind": "tumbling" }"#).unwrap_err();
        assert!(error.contains("write \"fixed\""), "{error}");
    }

    #[test]
    fn a_partial_patch_keeps_every_other_option() {
        let live = Settings {
            window: Window::Time(Duration::from_secs(60)),
            min_calls: Some(50),
            probes: 4,
            slow_call: Some(Duration::from_secs(1)),
            mode: Mode::Shadow,
            ..Settings::DEFAULT
        };
        let next = patch(r#"{ "threshold": "25%" }"#)
            .unwrap()
            .apply(live)
            .unwrap();
        assert_eq!(
            next,
            Settings {
                threshold: next.threshold,
                ..live
            }
        );
        assert_eq!(next.threshold.percent(), 25.0);
    }

    #[test]
    fn an_empty_patch_changes_nothing() {
        let empty = patch("{}").unwrap();
        assert!(empty.is_empty());
        let live = Settings {
            probes: 2,
            ..Settings::DEFAULT
        };
        assert_eq!(empty.apply(live), Ok(live));
    }

    #[test]
    fn a_bad_value_names_its_option() {
        let error = patch(r#"{ "window": "30s", "threshold": "140%" }"#).unwrap_err();
        assert!(error.starts_with("invalid `threshold`: "), "{error}");
        let error = patch(r#"{ "probes": "many" }"#).unwrap_err();
        assert!(
            error.starts_with("invalid `probes`: `many` is not a whole number"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_key_is_refused_with_the_nearest_and_the_options_that_change_live() {
        let error = patch(r#"{ "treshold": "40%" }"#).unwrap_err();
        assert!(
            error.starts_with(
                "unknown option `treshold` (did you mean `threshold`?); the options a live \
                 breaker can change are `threshold`, `window`, `window_kind`, `min_calls`"
            ),
            "{error}"
        );
        assert!(error.contains("`mode`"), "{error}");
        for not_live in ["`retries`", "`fallback`", "`name`", "`stale_for`"] {
            assert!(
                !error.contains(not_live),
                "{not_live} cannot change live: {error}"
            );
        }
        for (body, says) in [
            (
                r#"{ "threshold": null }"#,
                "invalid `threshold`: a percentage is written as a string with its unit, as the attribute writes it (\"50%\"), not null",
            ),
            (
                r#"{ "probes": true }"#,
                "invalid `probes`: a count is a whole number written bare, not true",
            ),
            (
                r#"{ "window": [30] }"#,
                "invalid `window`: a duration is written as a string with its unit, as the attribute writes it (\"30s\"), not a list",
            ),
            (
                r#"{ "slow_call": {"ms": 5}, "probes": 2 }"#,
                "invalid `slow_call`: a duration is written as a string with its unit, as the attribute writes it (\"30s\"), not a map",
            ),
        ] {
            let error = patch(body).unwrap_err();
            assert!(error.starts_with(says), "{body}: {error}");
        }
        let error = patch(r#"{ "Threshold": "40%" }"#).unwrap_err();
        assert!(
            error.starts_with("unknown option `Threshold` (did you mean `threshold`?)"),
            "options are lower case: {error}"
        );
        let error = patch(r#"{ "colour": "red" }"#).unwrap_err();
        assert!(
            error.starts_with("unknown option `colour`; the options a live breaker"),
            "nothing near: {error}"
        );
    }

    #[test]
    fn each_option_takes_what_the_attribute_takes_numbers_bare_units_in_strings() {
        let live = Settings::DEFAULT;
        // Counts are bare whole numbers; `window` takes a count bare or a string.
        let next = patch(r#"{ "window": 30, "probes": 3 }"#)
            .unwrap()
            .apply(live)
            .unwrap();
        assert_eq!((next.window, next.probes), (Window::Count(30), 3));
        let next = patch(r#"{ "window": "30" }"#).unwrap().apply(live).unwrap();
        assert_eq!(next.window, Window::Count(30));
        for (json, says) in [
            (
                r#"{ "threshold": 50 }"#,
                "invalid `threshold`: a percentage is written as a string with its unit, as the attribute writes it (\"50%\"), not 50",
            ),
            (
                r#"{ "timeout": 2000 }"#,
                "invalid `timeout`: a duration (or \"off\") is written as a string",
            ),
            (
                r#"{ "probes": "3" }"#,
                "invalid `probes`: a count is a whole number written bare, as the attribute writes it (3), not a string (\"3\")",
            ),
            (
                r#"{ "min_calls": 10.5 }"#,
                "invalid `min_calls`: a count is a whole number, not 10.5",
            ),
            (
                r#"{ "window": 30.5 }"#,
                "invalid `window`: a count of calls is a whole number (such as 30), and a duration a string",
            ),
            (r#"{ "probes": -2 }"#, "invalid `probes`: -2 is negative"),
        ] {
            let error = patch(json).unwrap_err();
            assert!(error.starts_with(says), "{json}: {error}");
        }
    }

    #[test]
    fn an_option_given_twice_is_refused() {
        let error = patch(r#"{ "timeout": "1s", "timeout_ms": 500 }"#).unwrap_err();
        assert!(
            error.starts_with("`timeout_ms` sets `timeout`, which is given more than once"),
            "{error}"
        );
    }

    #[test]
    fn what_a_live_breaker_cannot_change_is_refused_with_the_reason() {
        let error = patch(r#"{ "retries": 3 }"#).unwrap_err();
        assert!(
            error.starts_with("`retries` is a policy option: it is built into the guarded fn's wrapper and cannot change on a live breaker"),
            "{error}"
        );
        for key in [
            "backoff",
            "retry_budget",
            "deadline",
            "max_concurrent",
            "max_wait",
        ] {
            let error = patch(&format!(r#"{{ "{key}": "1s" }}"#)).unwrap_err();
            assert!(
                error.starts_with(&format!("`{key}` is a policy option")),
                "{error}"
            );
        }
        let error = patch(r#"{ "name": "other" }"#).unwrap_err();
        assert!(error.contains("a live breaker keeps its name"), "{error}");
        let error = patch(r#"{ "fallback": "queue" }"#).unwrap_err();
        assert!(error.starts_with("`fallback` names code"), "{error}");
        let error = patch(r#"{ "stale_for": "1m" }"#).unwrap_err();
        assert!(
            error.starts_with("`stale_for` keeps answers of the fn's own types"),
            "{error}"
        );
    }

    #[test]
    fn a_new_window_takes_its_own_min_calls() {
        let live = Settings {
            window: Window::Count(100),
            min_calls: Some(80),
            ..Settings::DEFAULT
        };
        let next = patch(r#"{ "window": "20" }"#).unwrap().apply(live).unwrap();
        assert_eq!((next.window, next.min_calls()), (Window::Count(20), 20));
        let next = patch(r#"{ "window": 40, "min_calls": 30 }"#)
            .unwrap()
            .apply(live)
            .unwrap();
        assert_eq!((next.window, next.min_calls()), (Window::Count(40), 30));
    }

    #[test]
    fn slow_call_and_max_break_keep_the_options_that_follow_them() {
        let live = patch(r#"{ "slow_call": "1s", "slow_threshold": "30%", "max_break_duration": "5m", "break_growth": "3x" }"#)
            .unwrap()
            .apply(Settings::DEFAULT)
            .unwrap();
        let next = patch(r#"{ "slow_call": "2s", "max_break_duration": "10m" }"#)
            .unwrap()
            .apply(live)
            .unwrap();
        assert_eq!(next.slow_call, Some(Duration::from_secs(2)));
        assert_eq!(next.slow_threshold, live.slow_threshold);
        assert_eq!(next.max_break_duration, Some(Duration::from_secs(600)));
        assert_eq!(next.break_growth, live.break_growth);
    }

    #[test]
    fn a_rule_between_options_is_broken_in_apply() {
        let min_calls = patch(r#"{ "min_calls": 30 }"#).unwrap();
        assert_eq!(
            min_calls.apply(Settings::DEFAULT),
            Err(ConfigError::MinCallsAboveWindow {
                min_calls: 30,
                window: 20
            })
        );
        let live = Settings {
            slow_call: Some(Duration::from_secs(2)),
            ..Settings::DEFAULT
        };
        let error = patch(r#"{ "timeout": "1s" }"#)
            .unwrap()
            .apply(live)
            .unwrap_err();
        assert_eq!(error.field(), "slow_call");
    }

    #[test]
    fn a_growth_written_as_a_number_is_read_as_its_text() {
        let growth = patch(r#"{ "max_break_duration": "2m", "break_growth": 1.5 }"#).unwrap();
        let next = growth.apply(Settings::DEFAULT).unwrap();
        assert_eq!(next.break_growth().hundredths(), 150);
    }
}
