//! The Grafana dashboard in `dashboards/` asks only for series the `metrics` feature emits, and
//! shows every one of them: a renamed series fails here, not on an on-call engineer's screen.

use std::collections::BTreeSet;

const DASHBOARD: &str = include_str!("../../dashboards/circuit-breakers.json");
const EMITTER: &str = include_str!("../src/adapters/metrics.rs");

/// Every `circuit_breaker_…` name in `text`.
fn series(text: &str) -> BTreeSet<String> {
    text.match_indices("circuit_breaker_")
        .map(|(at, _)| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect()
        })
        .collect()
}

/// The names the crate records, as `metrics::counter!("name"` and its kin write them (the
/// name may sit on the next line).
fn emitted() -> BTreeSet<String> {
    ["counter!(", "gauge!(", "histogram!("]
        .iter()
        .flat_map(|call| {
            EMITTER
                .match_indices(call)
                .map(move |(at, _)| at + call.len())
        })
        .filter_map(|start| {
            let rest = EMITTER[start..].trim_start().strip_prefix('"')?;
            rest.split('"').next().map(str::to_string)
        })
        .collect()
}

fn queries() -> Vec<String> {
    let dashboard: serde_json::Value = serde_json::from_str(DASHBOARD).expect("valid JSON");
    let mut found = Vec::new();
    let mut stack = vec![&dashboard];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    match (key.as_str(), inner) {
                        ("expr" | "definition", serde_json::Value::String(q)) => {
                            found.push(q.clone())
                        }
                        _ => stack.push(inner),
                    }
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

#[test]
fn every_query_names_a_series_the_crate_emits_and_every_series_is_shown() {
    let emitted = emitted();
    assert!(
        emitted.len() >= 8 && emitted.contains("circuit_breaker_transitions_total"),
        "the emitter's names were found: {emitted:?}"
    );
    let queries = queries();
    assert!(queries.len() >= 6, "{queries:?}");
    let mut shown = BTreeSet::new();
    for query in &queries {
        let named = series(query);
        assert!(
            !named.is_empty(),
            "a query that names no series of ours: {query}"
        );
        for name in named {
            assert!(
                emitted.contains(&name),
                "`{name}` in `{query}` is not emitted; the crate emits {emitted:?}"
            );
            shown.insert(name);
        }
    }
    assert_eq!(shown, emitted, "every series the crate emits has a panel");
}
