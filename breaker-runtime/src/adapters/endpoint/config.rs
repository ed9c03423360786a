//! `PUT {name}/config`: some of a live breaker's options changed by its operator, behind the
//! same token as the commands; the breaker logs the options changed.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use breaker_options::{Patch, canonical};
use serde_json::{Map, Value};

use super::guard::Asked;
use super::{Endpoint, json};
use crate::core::breaker::Requester;

/// The largest body a change of options takes. A map of every option a breaker has fits in
/// well under 1 KiB (the commands' limit), but tools pretty-print and indent what they send;
/// 16 KiB leaves them room while still bounding what a request makes the server hold.
pub(super) const MAX_BODY: usize = 16 * 1_024;

const EXAMPLE: &str = r#"{"threshold": "40%", "window": "30s"}"#;

pub(super) async fn put(
    State(endpoint): State<Endpoint>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let asked = Asked {
        breaker: &name,
        command: "reconfigure",
    };
    let breaker = match asked.operated(&endpoint, &headers) {
        Ok(breaker) => breaker,
        Err(refused) => return refused.answer(),
    };
    let body = match asked.body(body, MAX_BODY) {
        Ok(body) => body,
        Err(refused) => return refused.answer(),
    };
    let options = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(options)) => options,
        _ => {
            return asked.refuse(
                StatusCode::BAD_REQUEST,
                &format!("the body must be a JSON map of options, such as {EXAMPLE}"),
            );
        }
    };
    if options.is_empty() {
        return asked.refuse(
            StatusCode::BAD_REQUEST,
            &format!("name at least one option to change, such as {EXAMPLE}"),
        );
    }
    let patch = match read(&options) {
        Ok(patch) => patch,
        Err(refused) => return refused.answer(&asked),
    };
    // Applied to the options in force under the breaker's lock, so that two operators changing
    // different options at once each keep the other's change. The breaker logs the change.
    match breaker.reconfigure_with(Requester::Endpoint, |now| patch.apply(now)) {
        Ok(change) => {
            let changed = change.changed();
            let done = if changed.is_empty() {
                "applied: nothing changed".to_string()
            } else {
                format!("applied: {}", changed.join(", "))
            };
            asked.answer(&breaker.snapshot(), done)
        }
        Err(error) => BadOption {
            option: Some(error.field()),
            message: error.to_string(),
        }
        .answer(&asked),
    }
}

/// The patch `options` spell, or a 400 naming the option at fault.
fn read(options: &Map<String, Value>) -> Result<Patch, BadOption<'_>> {
    let whole = match serde_json::from_value::<Patch>(Value::Object(options.clone())) {
        Ok(patch) => return Ok(patch),
        Err(error) => error,
    };
    // The patch's message names the option in prose only; reading each option alone finds the
    // one refused, for tools. An error no single option causes (one option given twice under
    // two keys) names none.
    let option = options.iter().find_map(|(key, value)| {
        let alone = Map::from_iter([(key.clone(), value.clone())]);
        serde_json::from_value::<Patch>(Value::Object(alone))
            .is_err()
            .then(|| canonical(key).unwrap_or(key))
    });
    Err(BadOption {
        option,
        message: whole.to_string(),
    })
}

/// A value refused: 400 with `{"error": the rule, "option": the option}`, the option `null`
/// when the error is not one option's.
struct BadOption<'a> {
    option: Option<&'a str>,
    message: String,
}

impl BadOption<'_> {
    fn answer(self, asked: &Asked<'_>) -> Response {
        let body = serde_json::json!({ "error": self.message, "option": self.option });
        asked.audited(
            json(StatusCode::BAD_REQUEST, body.to_string()),
            self.message,
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    #[test]
    fn a_refused_value_is_traced_to_its_option() {
        let options: Map<String, Value> =
            serde_json::from_str(r#"{"window": "30s", "probes": "many"}"#).unwrap();
        let refused = super::read(&options).err().unwrap();
        assert_eq!(refused.option, Some("probes"));
        assert!(refused.message.contains("probes"), "{}", refused.message);
    }
}
