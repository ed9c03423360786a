//! Properties of the value grammar: no input panics the macro, valid values mean what they say,
//! and every invalid value becomes a compile error on its token.

use proptest::prelude::*;
use quote::ToTokens;

use crate::attr::Parsed;
use breaker_options::{MAX_COUNT_WINDOW, MAX_DURATION, Window, grammar};

/// Parses `key = "text"` as the attribute would: the compile errors it emits, if any.
fn parse_option(key: &str, text: &str) -> String {
    let source = format!("{key} = {}", proc_macro2::Literal::string(text));
    let parsed: Parsed = syn::parse_str(&source).expect("`key = \"..\"` always parses as options");
    parsed
        .errors
        .into_compile_errors()
        .to_token_stream()
        .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn no_text_panics_the_grammar(text in ".{0,24}") {
        let _ = grammar::percentage(&text);
        let _ = grammar::duration(&text);
        let _ = grammar::window(&text);
    }

    #[test]
    fn accepted_values_are_in_range(text in "[0-9.%smh ]{0,12}") {
        if let Ok(rate) = grammar::percentage(&text) {
            prop_assert!(rate.ppm() > 0 && rate.ppm() <= 1_000_000);
        }
        if let Ok(Window::Count(n)) = grammar::window(&text) {
            prop_assert!((1..=MAX_COUNT_WINDOW).contains(&n));
        }
        if let Ok(Window::Time(d)) = grammar::window(&text) {
            prop_assert!(!d.is_zero());
        }
    }

    #[test]
    fn percentages_with_up_to_four_decimals_mean_what_they_say(whole in 0u64..=100, fraction in 0u64..10_000, digits in 0usize..=4) {
        let scale = 10u64.pow(4 - digits as u32);
        let fraction = if digits == 0 { 0 } else { fraction / scale % 10u64.pow(digits as u32) };
        let text = if digits == 0 { format!("{whole}%") } else { format!("{whole}.{fraction:0digits$}%") };
        let ppm = whole * 10_000 + fraction * scale;
        match grammar::percentage(&text) {
            Ok(parsed) => prop_assert_eq!(u64::from(parsed.ppm()), ppm),
            Err(_) => prop_assert!(ppm == 0 || ppm > 1_000_000, "{} refused", text),
        }
    }

    #[test]
    fn durations_mean_what_they_say_and_none_wraps(
        n in prop_oneof![0u64..1_000_000, any::<u64>()],
        unit in prop::sample::select(vec![("ms", 1u64), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]),
    ) {
        let text = format!("{n}{}", unit.0);
        let max_ms = MAX_DURATION.as_secs() * 1_000;
        match n.checked_mul(unit.1).filter(|ms| *ms <= max_ms) {
            Some(ms) => prop_assert_eq!(grammar::duration(&text), Ok(std::time::Duration::from_millis(ms))),
            None => {
                let refused = grammar::duration(&text).unwrap_err();
                prop_assert!(refused.contains("\"720h\""), "the limit is named: {}", refused);
            }
        }
        // In nanoseconds, every accepted duration stays clear of the bit the runtime keeps for
        // itself (a time window is flagged in the top bit of its nanoseconds).
        if let Ok(d) = grammar::duration(&text) {
            prop_assert!(d.as_nanos() < 1 << 62);
        }
    }

    #[test]
    fn every_invalid_value_is_a_compile_error_and_every_valid_one_is_taken(
        key in prop::sample::select(vec!["threshold", "slow_threshold", "window", "break_duration", "max_break_duration", "slow_call", "timeout", "name"]),
        text in prop_oneof![".{0,12}", "[0-9]{1,4}(ms|s|m|h|%|x)?", "[0-9]{1,3}\\.[0-9]{1,5}%"],
    ) {
        let rendered = parse_option(key, &text);
        let valid = match key {
            "threshold" | "slow_threshold" => grammar::percentage(&text).is_ok(),
            "window" => grammar::window(&text).is_ok(),
            "timeout" => text.trim() == "off" || grammar::duration(&text).is_ok_and(|d| !d.is_zero()),
            "name" => !text.trim().is_empty(),
            _ => grammar::duration(&text).is_ok_and(|d| !d.is_zero()),
        };
        prop_assert_eq!(rendered.is_empty(), valid, "`{} = {:?}` gave: {}", key, text, rendered);
        if !valid {
            prop_assert!(rendered.contains("compile_error"), "an error, emitted as compile_error!: {}", rendered);
        }
    }
}

/// Every message the attribute gives for `args` on a small fn: parse, grammar, the rules
/// between options and the expansion's own checks, as the user reads them.
fn messages(args: &str) -> Vec<String> {
    let args: proc_macro2::TokenStream = args.parse().expect("arguments tokenize");
    let function: syn::ItemFn = syn::parse_quote! {
        async fn fetch(id: u32) -> Result<u32, E> { Ok(id) }
    };
    let mut found = Vec::new();
    compile_errors(crate::guard::guard(args, function, None), &mut found);
    found
}

fn compile_errors(tokens: proc_macro2::TokenStream, found: &mut Vec<String>) {
    use proc_macro2::TokenTree;
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (at, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) if ident == "compile_error" => {
                if let Some(TokenTree::Group(group)) = tokens.get(at + 2) {
                    let message: syn::LitStr =
                        syn::parse2(group.stream()).expect("compile_error! takes a string");
                    found.push(message.value());
                }
            }
            TokenTree::Group(group) => compile_errors(group.stream(), found),
            _ => {}
        }
    }
}

/// A value a message tells the user to write, as an attribute argument.
#[derive(Debug)]
struct Hint {
    key: String,
    /// As written in the attribute: `"2s"` or `3`.
    value: String,
    /// An option to add beside the others ("add `key = value`"), not a value to write.
    added: bool,
}

/// The hints in a message: each `key = value` it writes out, and each quoted value, for the
/// option the message is about (the first option it names). Backticks quote what the user
/// wrote, so quotes inside them are not hints.
fn hints(message: &str) -> Vec<Hint> {
    let mut found = Vec::new();
    let mut about: Option<&str> = None;
    let mut before = "";
    for (at, part) in message.split('`').enumerate() {
        if at % 2 == 0 {
            for (quoted, value) in part.split('"').enumerate() {
                if quoted % 2 == 1 {
                    found.push(Hint {
                        key: about
                            .expect("a quoted value follows its option")
                            .to_string(),
                        value: format!("\"{value}\""),
                        added: false,
                    });
                }
            }
            before = part;
            continue;
        }
        match part.split_once(" = ") {
            Some((key, value))
                if breaker_options::canonical(key).is_some()
                    && (value.starts_with('"') || value.bytes().all(|b| b.is_ascii_digit())) =>
            {
                found.push(Hint {
                    key: key.to_string(),
                    value: value.to_string(),
                    added: before.ends_with("add "),
                });
            }
            _ if about.is_none() && breaker_options::canonical(part).is_some() => {
                about = Some(part)
            }
            _ => {}
        }
    }
    found
}

/// What the attribute refuses of a hint: a value, by its option's own grammar; an option to
/// add, anything in the arguments with it added.
fn refused(args: &str, hint: &Hint) -> Vec<String> {
    let written = format!("{} = {}", hint.key, hint.value);
    if hint.added {
        return messages(&format!("{args}, {written}"));
    }
    let parsed: Parsed = syn::parse_str(&written).expect("a hint parses as an argument");
    let mut refused = Vec::new();
    compile_errors(parsed.errors.into_compile_errors(), &mut refused);
    refused
}

/// Every hint in what the attribute says about `args`, each held to the grammar.
fn every_hint_is_taken(args: &str) -> Result<Vec<Hint>, String> {
    let mut all = Vec::new();
    for message in messages(args) {
        for hint in hints(&message) {
            let refused = refused(args, &hint);
            if !refused.is_empty() {
                return Err(format!(
                    "`{args}` says {message:?}, but its hint {hint:?} is refused: {refused:?}"
                ));
            }
            all.push(hint);
        }
    }
    Ok(all)
}

/// Every place the grammar and the attribute suggest a value, with a mistake that makes it
/// speak, and a value it must suggest there: so a new hint that is refused, or a hint that
/// stops being given, fails here.
#[test]
fn every_hint_the_attribute_gives_is_a_value_it_takes() {
    let cases: &[(&str, &[&str])] = &[
        // Durations.
        (r#"timeout = "2 sec""#, &[r#""2s""#]),
        (r#"break_duration = "2sec""#, &[r#""2s""#]),
        (r#"stale_for = "2 days""#, &[r#""48h""#]),
        (r#"deadline = "5 minutes""#, &[r#""5m""#]),
        (r#"max_wait = "250 msec""#, &[r#""250ms""#]),
        (r#"slow_call = "1.5s""#, &[r#""1500ms""#]),
        (r#"window = "1.5m""#, &[r#""90s""#]),
        (r#"break_duration = "30""#, &[r#""30s""#]),
        (r#"break_duration = "forever""#, &[r#""30s""#]),
        (r#"break_duration = "3 parsecs""#, &[r#""3s""#]),
        (r#"break_duration = "1_000ms""#, &[r#""1000ms""#]),
        (r#"break_duration = "721h""#, &[r#""720h""#]),
        (r#"timeout = "0ms""#, &[r#""off""#]),
        // Mended, these would still be refused, so nothing is offered in their place.
        (r#"break_duration = "0 s""#, &[]),
        (r#"window = "0 s""#, &[]),
        (r#"timeout = "31 days""#, &[]),
        (r#"break_duration = "0""#, &[]),
        (r#"break_duration = "1_000sec""#, &[]),
        (r#"break_duration = "0.0001s""#, &[]),
        (r#"retries = 2, backoff = "1s..0 s""#, &[]),
        // Windows.
        (r#"window = "10_000""#, &[r#""10000""#]),
        (r#"window = "20000""#, &[r#""60s""#]),
        (r#"window = "10x""#, &[r#""20""#]),
        (r#"window = "often""#, &[r#""30s""#]),
        (r#"window = "2562048h""#, &[r#""720h""#]),
        // Percentages.
        (r#"threshold = "0.5""#, &[r#""50%""#, r#""0.5%""#]),
        (r#"threshold = "1""#, &[r#""100%""#, r#""1%""#]),
        (r#"break_jitter = "0.1""#, &[r#""10%""#, r#""0.1%""#]),
        (r#"threshold = "50""#, &[r#""50%""#]),
        (r#"threshold = "150""#, &[r#""100%""#]),
        (r#"slow_threshold = "50 %""#, &[r#""50%""#]),
        (r#"threshold = "half""#, &[r#""50%""#]),
        (r#"threshold = "33.333333%""#, &[r#""33.3333%""#]),
        (r#"threshold = "150%""#, &[r#""100%""#]),
        (
            r#"retries = 2, retry_budget = "20""#,
            &[r#""20%""#, r#""off""#],
        ),
        // Backoffs, modes, growth.
        (r#"retries = 2, backoff = "100ms""#, &[r#""100ms..10s""#]),
        (
            r#"retries = 2, backoff = "10s..100ms""#,
            &[r#""100ms..10s""#],
        ),
        (r#"retries = 2, backoff = "1 s..2s""#, &[r#""1s..2s""#]),
        (r#"retries = 2, backoff = "30..60s""#, &[r#""30s..60s""#]),
        (r#"retries = 2, backoff = "1s..1000h""#, &[r#""1s..720h""#]),
        (r#"mode = "dry-run""#, &[r#""shadow""#]),
        (
            r#"max_break_duration = "5m", break_growth = "fast""#,
            &[r#""1.5x""#],
        ),
        // Values that are not strings.
        ("threshold = 50", &[r#""50%""#]),
        ("window = 1.5", &[r#""30s""#]),
        ("break_duration = 30", &[r#""30s""#]),
        ("timeout = 30", &[r#""off""#]),
        ("mode = shadow", &[r#""shadow""#]),
        ("retries = 2, backoff = 1", &[r#""100ms..10s""#]),
        ("retries = 2, retry_budget = 20", &[r#""20%""#]),
        ("name = payments", &[r#""payments""#]),
        (
            "max_break_duration = \"5m\", break_growth = fast",
            &[r#""1.5x""#],
        ),
        (r#"timeout_ms = "2s""#, &[r#""2s""#]),
        ("timeout_ms = 0", &[r#""off""#]),
        (r#"probes = "3""#, &["5"]),
        (r#"stale_entries = "5""#, &["5"]),
        // Options to add.
        (r#"break_growth = "1.5x""#, &[r#""5m""#]),
        (
            r#"break_duration = "10m", break_growth = "1.5x""#,
            &[r#""100m""#],
        ),
        (r#"slow_threshold = "50%""#, &[r#""1s""#]),
        (
            r#"timeout = "500ms", slow_threshold = "50%""#,
            &[r#""250ms""#],
        ),
        (r#"backoff = "100ms..10s""#, &["3"]),
        (r#"retry_budget = "10%""#, &["3"]),
        (r#"max_wait = "1s""#, &["16"]),
        ("stale_entries = 5", &[r#""10m""#]),
    ];
    for (args, expected) in cases {
        let hints = every_hint_is_taken(args).unwrap_or_else(|refused| panic!("{refused}"));
        for value in *expected {
            assert!(
                hints.iter().any(|hint| hint.value == *value),
                "`{args}` no longer suggests {value}: {:?}",
                messages(args)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    /// Whatever was written, the values the message suggests are values the option takes.
    #[test]
    fn no_message_suggests_a_value_it_would_refuse(
        key in prop::sample::select(vec![
            "threshold", "slow_threshold", "break_jitter", "retry_budget", "window", "timeout",
            "break_duration", "max_break_duration", "slow_call", "deadline", "max_wait",
            "stale_for", "backoff", "mode", "break_growth",
        ]),
        text in prop_oneof![
            "[0-9a-zA-Z .%_-]{0,10}",
            "[0-9]{1,4}( )?(ms|s|m|h|x|sec|secs|second|seconds|min|minutes|hr|hours|d|days|msec|millis|MS|S)?",
            "[0-9]{1,3}\\.[0-9]{0,5}( )?(%|ms|s|m|h|sec)?",
            "[0-9]{1,3}( )?(%)?",
            "[0-9]{1,4}( )?(ms|s|m|h|sec)?\\.\\.[0-9]{1,4}( )?(ms|s|m|h|sec)?",
        ],
    ) {
        let args = format!("{key} = {}", proc_macro2::Literal::string(&text));
        let args = match key {
            "retry_budget" | "backoff" => format!("retries = 2, {args}"),
            "max_wait" => format!("max_concurrent = 4, {args}"),
            _ => args,
        };
        if let Err(refused) = every_hint_is_taken(&args) {
            prop_assert!(false, "{}", refused);
        }
    }
}
