//! `POST {name}/inject` and `DELETE {name}/inject`: faults injected into a breaker's calls by
//! its operator, and stopped, behind the same token as the commands; the breaker logs both.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use breaker_options::grammar;
use serde_json::{Map, Value};

use super::Endpoint;
use super::commands::MAX_BODY;
use super::guard::Asked;
use super::stop::{Running, stop_running};
use crate::core::injection::{InjectError, Injection};
use crate::outcome::error::humane;

const EXAMPLE: &str =
    r#"{"fail": "10%", "delay": "2s", "delay_share": "5%", "for": "5m", "seed": 7}"#;

pub(super) async fn start(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let asked = Asked {
        breaker: &name,
        command: "inject",
    };
    let breaker = match asked.operated(&endpoint, &headers) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.answer(),
    };
    let body = match asked.body(body, MAX_BODY) {
        Ok(body) => body,
        Err(refused) => return refused.answer(),
    };
    let (injection, length) = match terms(&body) {
        Ok(terms) => terms,
        Err(message) => return asked.refuse(StatusCode::BAD_REQUEST, &message),
    };
    // Well formed, but the breaker is not ready for it (one running, shadow mode): a conflict.
    // Terms the breaker would refuse for themselves were refused above, as a bad request.
    if let Err(error) = breaker.inject(injection, length) {
        let message = match error {
            InjectError::Injecting { ends } => format!(
                "an injection is running already and ends in {}; stop it first with `DELETE {name}/inject`",
                humane(ends.saturating_duration_since(tokio::time::Instant::now()))
            ),
            error => error.to_string(),
        };
        return asked.refuse(StatusCode::CONFLICT, &message);
    }
    asked.answer(
        &breaker.snapshot(),
        format!("injecting for {}", humane(length)),
    )
}

pub(super) async fn stop(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let running = Running {
        action: "inject_stop",
        a: "an injection",
        noun: "injection",
    };
    stop_running(&endpoint, &headers, &name, body, running, |breaker| {
        breaker.stop_injection().is_some()
    })
}

/// The injection and its length from a body such as [`EXAMPLE`]: shares and durations spelled
/// as in the attribute, `for` required (an injection always ends), `delay_share` 100% when a
/// delay is given without one.
fn terms(body: &[u8]) -> Result<(Injection, Duration), String> {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(body) else {
        return Err(format!("the body must be a JSON map such as {EXAMPLE}"));
    };
    if let Some(unknown) = map
        .keys()
        .find(|key| !["fail", "delay", "delay_share", "for", "seed"].contains(&key.as_str()))
    {
        return Err(format!(
            "unknown field `{unknown}`: the fields are fail, delay, delay_share, for and seed, as in {EXAMPLE}"
        ));
    }
    let length = text(&map, "for")?
        .ok_or_else(|| format!("`for` is required: an injection always ends, as in {EXAMPLE}"))?;
    let length = grammar::nonzero_duration(length).map_err(|error| format!("for: {error}"))?;
    let share = |field: &str| -> Result<Option<f64>, String> {
        text(&map, field)?
            .map(|text| {
                grammar::percentage(text)
                    .map(|rate| rate.percent())
                    .map_err(|error| format!("{field}: {error}"))
            })
            .transpose()
    };
    let mut injection = Injection::new();
    if let Some(fail) = share("fail")? {
        injection = injection.fail(fail);
    }
    let delay_share = share("delay_share")?;
    match text(&map, "delay")? {
        Some(delay) => {
            let delay =
                grammar::nonzero_duration(delay).map_err(|error| format!("delay: {error}"))?;
            injection = injection.delay(delay, delay_share.unwrap_or(100.0));
        }
        None if delay_share.is_some() => {
            return Err("`delay_share` needs a `delay`, such as \"2s\"".to_string());
        }
        None => {}
    }
    match map.get("seed") {
        None => {}
        Some(Value::Number(seed)) if seed.as_u64().is_some() => {
            injection = injection.seed(seed.as_u64().unwrap_or_default());
        }
        Some(_) => return Err("seed: a whole number from 0, unquoted".to_string()),
    }
    if injection.fail_percent() == 0.0 && injection.delay_of().is_none() {
        return Err(format!(
            "nothing to inject: give `fail`, `delay` or both, as in {EXAMPLE}"
        ));
    }
    if let Err(error) = injection.odds() {
        return Err(error.to_string());
    }
    if length > crate::core::injection::MAX_INJECTION {
        return Err("for: an injection lasts at most 24 h".to_string());
    }
    Ok((injection, length))
}

/// A field that must be a string, if present.
fn text<'a>(map: &'a Map<String, Value>, field: &str) -> Result<Option<&'a str>, String> {
    match map.get(field) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!(
            "{field}: write it as a string, such as {}, not {other}",
            match field {
                "fail" | "delay_share" => "\"10%\"",
                _ => "\"2s\"",
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::terms;
    use crate::core::injection::Injection;

    #[test]
    fn the_terms_are_spelled_as_in_the_attribute() {
        let (injection, length) = terms(
            br#"{"fail": "10%", "delay": "2s", "delay_share": "5%", "for": "5m", "seed": 7}"#,
        )
        .unwrap();
        assert_eq!(
            injection,
            Injection::new()
                .fail(10.0)
                .delay(Duration::from_secs(2), 5.0)
                .seed(7)
        );
        assert_eq!(length, Duration::from_secs(300));
        let (delays, _) = terms(br#"{"delay": "250ms", "for": "30s"}"#).unwrap();
        assert_eq!(delays.delay_of(), Some((Duration::from_millis(250), 100.0)));
    }

    #[test]
    fn bad_terms_say_what_is_wrong() {
        for (bad, says) in [
            (&br#"{"fail": "10%"}"#[..], "`for` is required"),
            (br#"{"fail": "10", "for": "1m"}"#, "fail:"),
            (
                br#"{"fail": 10, "for": "1m"}"#,
                "fail: write it as a string",
            ),
            (br#"{"fail": "10%", "for": "0s"}"#, "for:"),
            (br#"{"fail": "10%", "for": "25h"}"#, "at most 24 h"),
            (br#"{"fail": "120%", "for": "1m"}"#, "fail:"),
            (br#"{"for": "1m"}"#, "nothing to inject"),
            (br#"{"delay_share": "5%", "for": "1m"}"#, "needs a `delay`"),
            (br#"{"fail": "10%", "for": "1m", "seed": -1}"#, "seed:"),
            (
                br#"{"fail": "10%", "for": "1m", "rate": 1}"#,
                "unknown field `rate`",
            ),
            (br#"["10%"]"#, "a JSON map"),
            (b"", "a JSON map"),
        ] {
            let error = terms(bad).unwrap_err();
            assert!(
                error.contains(says),
                "{}: {error}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
