//! Options as the attribute's arguments are written, `threshold = "40%", timeout_ms = 2000`,
//! split into keys and values the way the attribute's parser sees them: a string literal, an
//! integer or float literal, a path, or any other expression.

use breaker_options::option_list;

/// A value as written, classified as the attribute's parser classifies its expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A string literal, its escapes resolved.
    Str(String),
    /// An integer literal: its digits without underscores or suffix.
    Int(String),
    /// A float literal: its digits without underscores or suffix.
    Float(String),
    /// A path such as `queue_charge` or `crate::fallbacks::queue`.
    Path(String),
    /// Any other expression, as written.
    Other(String),
}

/// One `key = value` pair.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    pub(crate) key: String,
    pub(crate) value: Value,
}

/// The pairs of `text`, or the message the attribute gives for arguments it cannot read.
pub(crate) fn pairs(text: &str) -> Result<Vec<Pair>, String> {
    let mut pairs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let key_len = rest
            .char_indices()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        let key = &rest[..key_len];
        let starts_like_a_name = key
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if !starts_like_a_name || key == "_" {
            return Err(format!(
                "expected an option name; the options are {}",
                option_list()
            ));
        }
        rest = rest[key_len..].trim_start();
        let Some(after_eq) = rest.strip_prefix('=').filter(|r| !r.starts_with('=')) else {
            return Err(format!(
                "expected `=` after `{key}`: write `{key} = <value>`"
            ));
        };
        let (written, after) = split_value(after_eq);
        let written = written.trim();
        if written.is_empty() {
            return Err(format!("expected an expression after `{key} =`"));
        }
        pairs.push(Pair {
            key: key.to_string(),
            value: classify(written),
        });
        rest = after.trim_start();
    }
    Ok(pairs)
}

/// The value's text up to the comma that ends it (one outside quotes and brackets), and what
/// follows that comma.
fn split_value(text: &str) -> (&str, &str) {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        let before = std::mem::replace(&mut previous, c);
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            // Angle brackets too: a closure's `Result<u32, E>` is one value, as the attribute's
            // parser reads it. (`->` is an arrow, not a closing bracket.)
            '(' | '[' | '{' | '<' => depth += 1,
            '>' if before == '-' => {}
            ')' | ']' | '}' | '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return (&text[..i], &text[i + 1..]),
            _ => {}
        }
    }
    (text, "")
}

fn classify(written: &str) -> Value {
    if let Some(text) = string_literal(written) {
        return Value::Str(text);
    }
    if let Some(value) = number_literal(written) {
        return value;
    }
    if is_path(written) {
        return Value::Path(written.split_whitespace().collect());
    }
    Value::Other(written.to_string())
}

/// The text of a whole string literal (`"..."` with escapes, or raw `r"..."`, `r#"..."#`).
fn string_literal(written: &str) -> Option<String> {
    if let Some(raw) = written.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let fence = "#".repeat(hashes);
        let body = raw[hashes..].strip_prefix('"')?;
        let body = body.strip_suffix(&format!("\"{fence}"))?;
        return (!body.contains(&format!("\"{fence}")) || hashes > 0).then(|| body.to_string());
    }
    let body = written.strip_prefix('"')?.strip_suffix('"')?;
    let mut text = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return None,
            '\\' => text.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '0' => '\0',
                '\\' => '\\',
                '"' => '"',
                '\'' => '\'',
                _ => return None,
            }),
            c => text.push(c),
        }
    }
    Some(text)
}

/// An integer or float literal as the attribute reads its digits: underscores dropped, a type
/// suffix (`u32`, `f64`) dropped.
fn number_literal(written: &str) -> Option<Value> {
    if !written.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let end = written
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '_' || *c == '.'))
        .map_or(written.len(), |(i, _)| i);
    let (digits, suffix) = written.split_at(end);
    let float_suffix = matches!(suffix, "f32" | "f64");
    let int_suffix = matches!(
        suffix,
        "" | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    );
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    let dots = digits.matches('.').count();
    match dots {
        0 if int_suffix => Some(Value::Int(digits)),
        0 if float_suffix => Some(Value::Float(digits)),
        1 if suffix.is_empty() || float_suffix => Some(Value::Float(digits)),
        _ => None,
    }
}

/// Whether `written` is a path (`a::b`, `::c`), as the attribute would read a bare one.
pub(crate) fn is_path(written: &str) -> bool {
    let trimmed = written.strip_prefix("::").unwrap_or(written);
    !trimmed.is_empty()
        && trimmed.split("::").all(|segment| {
            let segment = segment.trim();
            segment
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
        && !matches!(trimmed, "true" | "false")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_told_apart_as_the_attribute_tells_them() {
        let read = pairs(
            r#"threshold = "40%", timeout_ms = 2_000, break_growth = 1.5, fallback = a::b, x = 1 + 2"#,
        )
        .unwrap();
        let values: Vec<Value> = read.into_iter().map(|p| p.value).collect();
        assert_eq!(
            values,
            [
                Value::Str("40%".into()),
                Value::Int("2000".into()),
                Value::Float("1.5".into()),
                Value::Path("a::b".into()),
                Value::Other("1 + 2".into()),
            ]
        );
    }

    #[test]
    fn a_comma_inside_a_string_does_not_end_the_value() {
        let read = pairs(r#"name = "a, b", window = "20""#).unwrap();
        assert_eq!(read[0].value, Value::Str("a, b".into()));
        assert_eq!(read[1].key, "window");
    }

    #[test]
    fn a_missing_equals_sign_says_how_to_write_it() {
        assert_eq!(
            pairs("threshold \"40%\"").unwrap_err(),
            "expected `=` after `threshold`: write `threshold = <value>`"
        );
    }
}
