//! The runtime reads a configuration as the attribute reads its arguments: at every limit of
//! every option, a file spelling `window = "10001"` is refused exactly when the attribute
//! refuses it. The attribute's side of the table is checked in breaker-macros.

use breaker_runtime::Config;

/// `key = value, key = value` as a JSON object; the values are already JSON (strings, numbers).
fn json(options: &str) -> String {
    let fields: Vec<String> = options
        .split(", ")
        .map(|pair| {
            let (key, value) = pair.split_once(" = ").expect("`key = value`");
            format!("\"{key}\": {value}")
        })
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

include!("../../breaker-options/tests/support/limit_cases.rs");

#[test]
fn a_configuration_file_is_held_to_the_attributes_answer_at_every_limit() {
    for (options, taken) in limit_cases() {
        let read = serde_json::from_str::<Config>(&json(options));
        if taken {
            assert!(read.is_ok(), "`{options}` must be taken: {read:?}");
        } else {
            assert!(read.is_err(), "`{options}` must be refused: {read:?}");
        }
    }
}

#[test]
fn a_configuration_means_what_the_attribute_means() {
    let config: Config = serde_json::from_str(
        r#"{ "threshold": "12.5%", "window": "30s", "timeout_ms": 2000, "slow_call": "500ms",
             "slow_threshold": "80%", "break_duration": "1m", "max_break_duration": "10m",
             "probes": 3, "min_calls": 5, "name": "payments" }"#,
    )
    .unwrap();
    let built = Config::builder()
        .name("payments")
        .threshold(12.5)
        .time_window(std::time::Duration::from_secs(30))
        .timeout(std::time::Duration::from_secs(2))
        .slow_call(std::time::Duration::from_millis(500))
        .slow_threshold(80.0)
        .break_duration(std::time::Duration::from_secs(60))
        .max_break_duration(std::time::Duration::from_secs(600))
        .probes(3)
        .min_calls(5)
        .build()
        .unwrap();
    assert_eq!(format!("{config:?}"), format!("{built:?}"));
    assert_eq!(
        serde_json::from_str::<Config>("{}").unwrap().settings(),
        Config::default().settings(),
        "absent options take the attribute's defaults"
    );
}

#[test]
fn keys_the_file_cannot_mean_are_refused_with_a_reason() {
    let unknown = serde_json::from_str::<Config>(r#"{ "treshold": "50%" }"#).unwrap_err();
    assert!(
        unknown.to_string().contains("unknown option `treshold`"),
        "{unknown}"
    );
    let code = serde_json::from_str::<Config>(r#"{ "fallback": "queue" }"#).unwrap_err();
    assert!(
        code.to_string().contains("only be given in the attribute"),
        "{code}"
    );
    let number = serde_json::from_str::<Config>(r#"{ "threshold": 50 }"#).unwrap_err();
    assert!(number.to_string().contains("as a string"), "{number}");
}
