//! The option grammar, as the attribute, the config file and the endpoint read it.

use breaker_options::{Patch, Settings, grammar};

/// Every value reader of the grammar on the input as text; and the input as a patch of
/// options, read as JSON (the endpoint's `PUT {name}/config`) and, written as TOML, as the
/// config file reads it: **a patch one reader accepts the other accepts, and it means the
/// same settings**.
pub fn options(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = grammar::percentage(text);
    let _ = grammar::duration(text);
    let _ = grammar::window(text);
    let _ = grammar::nonzero_duration(text);
    let _ = grammar::timeout(text);
    let _ = grammar::backoff(text);
    let _ = grammar::retry_budget(text);
    let _ = grammar::mode(text);
    let _ = grammar::window_kind(text);
    let _ = grammar::record(text);
    let _ = grammar::break_growth(text);
    if let Ok(calls) = text.trim().parse::<u64>() {
        let _ = grammar::count_window(calls);
    }

    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    let from_json = serde_json::from_value::<Patch>(json.clone());
    let Ok(as_toml) = toml::Value::try_from(&json) else {
        // JSON that TOML cannot say (null, a top-level scalar): nothing to compare.
        return;
    };
    let Ok(toml_text) = toml::to_string(&as_toml) else {
        return;
    };
    let from_toml = toml::from_str::<Patch>(&toml_text);
    match (from_json, from_toml) {
        (Ok(a), Ok(b)) => {
            let applied = |p: &Patch| p.apply(Settings::DEFAULT).map_err(|e| e.to_string());
            assert_eq!(
                applied(&a),
                applied(&b),
                "JSON {text} and TOML {toml_text} mean different settings"
            );
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "JSON {text} read as {:?}, TOML {toml_text} as {:?}",
            a.map(|_| "a patch").map_err(|e| e.to_string()),
            b.map(|_| "a patch").map_err(|e| e.to_string())
        ),
    }
}
