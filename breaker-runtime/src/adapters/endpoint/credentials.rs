//! The tokens a request offers, and whether one of them is right: `Authorization: Bearer
//! <token>` from tools and scripts, or HTTP Basic with the token as its password, which a
//! browser asks its user for and then sends with every request of the page, its events
//! stream included (an `EventSource` cannot set a header of its own).

use axum::http::{HeaderMap, header};

/// The token of the request's `Authorization: Bearer` header, if it has one.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    authorization(headers)?.strip_prefix("Bearer ")
}

/// Whether the request carries `Authorization: Bearer <token>`, compared in constant time.
pub(super) fn bears(headers: &HeaderMap, token: &str) -> bool {
    bearer(headers).is_some_and(|offered| same(offered.as_bytes(), token.as_bytes()))
}

/// Whether the request carries one of `tokens`, as a bearer or as a Basic password (any user
/// name), each compared in constant time.
pub(super) fn carries_any(headers: &HeaderMap, tokens: &[&str]) -> bool {
    let password;
    let offered = match bearer(headers) {
        Some(token) => token.as_bytes(),
        None => {
            let basic = authorization(headers).and_then(|value| value.strip_prefix("Basic "));
            match basic.and_then(basic_password) {
                Some(decoded) => {
                    password = decoded;
                    &password[..]
                }
                None => return false,
            }
        }
    };
    // Every token is compared, so the time does not say which one matched.
    tokens
        .iter()
        .fold(false, |any, token| same(offered, token.as_bytes()) | any)
}

fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
}

/// The password of Basic credentials (`base64(user:password)`); `None` when they do not
/// decode or hold no colon.
fn basic_password(encoded: &str) -> Option<Vec<u8>> {
    let decoded = base64_decode(encoded.trim())?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some(decoded[colon + 1..].to_vec())
}

/// Standard base64 with its padding, as browsers send Basic credentials; `None` for anything
/// else. Credentials are short, so a table-free decoder is all it takes.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let quads = text.chunks_exact(4);
    let last = quads.len().saturating_sub(1);
    for (index, quad) in quads.enumerate() {
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && index != last) {
            return None;
        }
        let mut bits = 0u32;
        for &c in &quad[..4 - padding] {
            bits = bits << 6 | value(c)?;
        }
        bits <<= 6 * padding as u32;
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - padding]);
    }
    Some(out)
}

/// Whether two byte strings are equal, in a time that depends on their lengths only, not on
/// where they first differ: a wrong token's answer says nothing about the right one.
pub(super) fn same(offered: &[u8], expected: &[u8]) -> bool {
    let mut difference = offered.len() ^ expected.len();
    for (i, byte) in expected.iter().enumerate() {
        let other = offered.get(i).copied().unwrap_or(0);
        difference |= usize::from(byte ^ other);
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::*;

    #[test]
    fn tokens_are_equal_only_when_every_byte_and_the_length_agree() {
        assert!(same(b"s3cret", b"s3cret"));
        assert!(!same(b"s3cre", b"s3cret"));
        assert!(!same(b"s3cret!", b"s3cret"));
        assert!(!same(b"S3cret", b"s3cret"));
        assert!(!same(b"", b"s3cret"));
    }

    #[test]
    fn base64_decodes_as_browsers_encode_and_refuses_the_rest() {
        assert_eq!(base64_decode("b3A6czNjcmV0").unwrap(), b"op:s3cret");
        assert_eq!(base64_decode("OnM=").unwrap(), b":s");
        assert_eq!(base64_decode("Ong6").unwrap(), b":x:");
        assert_eq!(base64_decode("").unwrap(), b"");
        for bad in ["b3A", "b3A6c*Nj", "b3A==A6c", "====", "b==="] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    fn with(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(authorization).unwrap(),
        );
        headers
    }

    #[test]
    fn a_token_is_carried_as_a_bearer_or_as_a_basic_password_under_any_user() {
        let tokens = ["read-1", "operate-2"];
        assert!(carries_any(&with("Bearer read-1"), &tokens));
        assert!(carries_any(&with("Bearer operate-2"), &tokens));
        // base64("anyone:read-1"), base64(":operate-2")
        assert!(carries_any(&with("Basic YW55b25lOnJlYWQtMQ=="), &tokens));
        assert!(carries_any(&with("Basic Om9wZXJhdGUtMg=="), &tokens));
        // base64("read-1"): no colon, so no password.
        assert!(!carries_any(&with("Basic cmVhZC0x"), &tokens));
        assert!(!carries_any(&with("Bearer read-2"), &tokens));
        assert!(!carries_any(&with("bearer read-1"), &tokens));
        assert!(!carries_any(&HeaderMap::new(), &tokens));
        assert!(bears(&with("Bearer read-1"), "read-1"));
        assert!(!bears(&with("Basic YW55b25lOnJlYWQtMQ=="), "read-1"));
    }
}
